/**
 * The figures of the console's Quality page as the store computes them (dashboard.ts `qualitySql`), on rows
 * written straight into a fresh customer: agreement is over single-choice tasks with at least 2 labels
 * (issue 40 item 7: 4 tasks of one label each showed "Agreement 25.0%").
 */
import { randomBytes } from "node:crypto";
import { testDatabaseUrl } from "../../../test/env";
import { dashboardStore } from "../src/dashboard";
import { createDb, type Db } from "../src/database";

let db: Db;
const suffix = randomBytes(6).toString("hex");
const customer = `cus_q_${suffix}`;
const space = `ls_q_${suffix}`;

beforeAll(async () => {
  db = createDb({ url: testDatabaseUrl(), poolMax: 1 });
  await db.pool.query(`INSERT INTO customers (id, name, email, label_quota) VALUES ($1, 'q', $2, 100)`, [
    customer,
    `${customer}@example.com`,
  ]);
  await db.pool.query(`INSERT INTO label_spaces (id, customer_id, question, options) VALUES ($1, $2, 'q?', ARRAY['cat', 'dog'])`, [
    space,
    customer,
  ]);
});
afterAll(async () => {
  await db.pool.query(`DELETE FROM tasks WHERE customer_id = $1`, [customer]);
  await db.pool.query(`DELETE FROM label_spaces WHERE id = $1`, [space]);
  await db.pool.query(`DELETE FROM customers WHERE id = $1`, [customer]);
  await db.close();
});

/** Inserts a settled task of `type` with `counts` as its labels and `consensus` as its consensus label. */
async function settled(type: string, counts: Record<string, number>, consensus: string): Promise<void> {
  const n = Object.values(counts).reduce((a, b) => a + b, 0);
  await db.pool.query(
    `INSERT INTO tasks (id, customer_id, task_type, data_url, question, options, consensus_threshold, max_labels, label_space_id,
                        claim_cap, quota_reserved, status, labels_collected, label_counts, consensus_label, confidence, resolution, settled_at)
     VALUES ($1, $2, $3, 'https://img.example.com/1.jpg', 'q?', ARRAY['cat', 'dog'], 1, 5, $4, 0, $5, 'settled', $5, $6::jsonb, $7, 0.9,
             'consensus', now())`,
    [`task_${randomBytes(8).toString("hex")}`, customer, type, space, n, JSON.stringify(counts), consensus],
  );
}

const quality = () => dashboardStore(db).quality(customer);

it("tasks of one label each compare no labelers: no agreement to report", async () => {
  for (let i = 0; i < 3; i++) await settled("image_classification", { cat: 1 }, "cat");
  await settled("image_classification", { dog: 1 }, "dog");
  const q = await quality();
  expect(q.tasks_settled).toBe(4);
  expect({ labels: q.labels, agreeing: q.agreeing }).toEqual({ labels: 0, agreeing: 0 });
});

it("agreement is the share of labels equal to the consensus, over single-choice tasks of 2 labels or more", async () => {
  await settled("image_classification", { cat: 2, dog: 1 }, "cat");
  await settled("image_classification", { dog: 2 }, "dog");
  // a reserved type's label_counts count names (entity types), not answers equal to the consensus
  await settled("text_span", { person: 3 }, JSON.stringify({ spans: [] }));
  const q = await quality();
  expect(q.tasks_settled).toBe(7);
  expect({ labels: q.labels, agreeing: q.agreeing }).toEqual({ labels: 5, agreeing: 4 });
});
