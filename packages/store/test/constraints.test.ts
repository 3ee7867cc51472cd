/**
 * Keys the database itself enforces on tasks (prisma/schema.prisma, migration
 * 20261126000000_task_space_customer_key): a task's (label_space_id, customer_id) must name a label space of
 * that same customer, so a task can neither point at another customer's label space nor at a customer that
 * does not exist.
 */

import { randomBytes } from "node:crypto";
import { testDatabaseUrl } from "../../../test/env";
import { createDb, type Db } from "../src/database";

let db: Db;
const suffix = randomBytes(6).toString("hex");
const customerA = `cus_a_${suffix}`;
const customerB = `cus_b_${suffix}`;
const spaceOfA = `ls_a_${suffix}`;

beforeAll(async () => {
  db = createDb({ url: testDatabaseUrl(), poolMax: 1 });
  await db.pool.query(`INSERT INTO customers (id, name, email, label_quota) VALUES ($1, 'a', $2, 100), ($3, 'b', $4, 100)`, [
    customerA,
    `${customerA}@example.com`,
    customerB,
    `${customerB}@example.com`,
  ]);
  await db.pool.query(`INSERT INTO label_spaces (id, customer_id, question, options) VALUES ($1, $2, 'q?', ARRAY['x', 'y'])`, [
    spaceOfA,
    customerA,
  ]);
});
afterAll(async () => {
  await db.pool.query(`DELETE FROM tasks WHERE customer_id IN ($1, $2)`, [customerA, customerB]);
  await db.pool.query(`DELETE FROM label_spaces WHERE id = $1`, [spaceOfA]);
  await db.pool.query(`DELETE FROM customers WHERE id IN ($1, $2)`, [customerA, customerB]);
  await db.close();
});

/** Inserts a bare task row; resolves to the Postgres error code, or "ok". */
async function insertTask(customerId: string, labelSpaceId: string): Promise<string> {
  try {
    await db.pool.query(
      `INSERT INTO tasks (id, customer_id, task_type, data_url, question, options, consensus_threshold, max_labels,
                          label_space_id, claim_cap, quota_reserved)
       VALUES ($1, $2, 'image_classification', 'https://img.example.com/1.jpg', 'q?', ARRAY['x', 'y'], 3, 5, $3, 3, 3)`,
      [`task_${randomBytes(8).toString("hex")}`, customerId, labelSpaceId],
    );
    return "ok";
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

it("a task of the label space's own customer is stored", async () => {
  expect(await insertTask(customerA, spaceOfA)).toBe("ok");
});

it("a task pointing at another customer's label space is refused (foreign key violation)", async () => {
  expect(await insertTask(customerB, spaceOfA)).toBe("23503");
});

it("a task of a customer that does not exist is refused, and so is an unknown label space", async () => {
  expect(await insertTask(`cus_missing_${suffix}`, spaceOfA)).toBe("23503");
  expect(await insertTask(customerA, `ls_missing_${suffix}`)).toBe("23503");
});
