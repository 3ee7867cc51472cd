/**
 * The plan of a generic claim once the tables are analyzed (autovacuum does it in any real deployment; it is
 * off on the development machine). 20,000 pending tasks, 2,000 in labeling with claims of many labelers,
 * 5,000 settled, a labeler model for every labeler: the claim must walk the (status, created_at) index and stop
 * at its first claimable task, not check every open task and sort them (labeling.ts `claimable`, 50 ms per
 * claim at 16,000 pending tasks). A database of its own, so the backlog meets no other test's claims.
 */

import { randomBytes } from "node:crypto";
import { runId, testDatabaseUrl } from "../../../test/env";
import { type PlanNode, planNodes } from "../../../test/plans";
import { createDb, type Db } from "../src/database";
import { labelingStore, lockAndClaim } from "../src/labeling";
import { dropDatabase, migrateDatabase } from "../src/migrate";
import { withDatabase } from "../src/url";

const url = withDatabase(testDatabaseUrl(), `lgtest_${runId()}_plan_${randomBytes(3).toString("hex")}`);
let db: Db;
const LABELERS = 200;

beforeAll(async () => {
  await migrateDatabase(url);
  db = createDb({ url, poolMax: 2 });
  const q = (sql: string) => db.pool.query(sql);
  await q(`INSERT INTO customers (id, name, email, label_quota) VALUES ('cus_plan', 'plan', 'plan@example.com', 1000000)`);
  await q(`INSERT INTO label_spaces (id, customer_id, question, options) VALUES ('lsp_plan', 'cus_plan', 'q?', ARRAY['cat', 'dog'])`);
  await q(`INSERT INTO labelers (id, name, key_hash, hint)
           SELECT 'lbl_' || lpad(i::text, 3, '0'), 'l' || i, 'hash-' || i, 'h' FROM generate_series(0, ${LABELERS - 1}) i`);
  await q(`INSERT INTO labeler_models (label_space_id, labeler_id) SELECT 'lsp_plan', id FROM labelers`);
  // oldest first: 5,000 settled, 2,000 labeling, 20,000 pending, one a second
  await q(`INSERT INTO tasks (id, customer_id, label_space_id, task_type, data_url, question, options, consensus_threshold,
             max_labels, claim_cap, quota_reserved, status, labels_collected, created_at)
           SELECT 'tsk_' || lpad(i::text, 6, '0'), 'cus_plan', 'lsp_plan', 'image_classification', 'https://img.example/' || i, 'q?',
             ARRAY['cat', 'dog'], 3, 7, CASE WHEN i < 5000 THEN 0 ELSE 3 END, 3,
             (CASE WHEN i < 5000 THEN 'settled' WHEN i < 7000 THEN 'labeling' ELSE 'pending' END)::"TaskStatus",
             CASE WHEN i < 5000 THEN 3 WHEN i < 7000 THEN 1 ELSE 0 END,
             now() - interval '1 day' + i * interval '1 second'
           FROM generate_series(0, 26999) i`);
  // every settled task labeled by 3 labelers, every labeling task by 1, round-robin over the labelers
  await q(`INSERT INTO claims (id, task_id, labeler_id, status, expires_at)
           SELECT 'clm_' || t.id || '_' || k, t.id, 'lbl_' || lpad(((n * 3 + k) % ${LABELERS})::text, 3, '0'), 'labeled', now()
           FROM (SELECT id, row_number() OVER (ORDER BY id) AS n, status FROM tasks) t,
                generate_series(0, 2) k
           WHERE k < CASE WHEN t.status = 'settled' THEN 3 WHEN t.status = 'labeling' THEN 1 ELSE 0 END`);
  await q("VACUUM (ANALYZE) tasks, claims, labeler_models, labelers, customers, label_spaces");
}, 120_000);

afterAll(async () => {
  await db?.close();
  await dropDatabase(url);
});

it.each([
  ["a claim", undefined, false],
  ["a claim with an Idempotency-Key", "retry-key-1", false],
  // contract §qualification: the training check reads the candidate's customer and the labeler's row only
  ["a claim under a qualification setting", undefined, true],
])("%s walks the open tasks in order by index, with no scan and sort of every open task", async (_what, key, qualification) => {
  await db.pool.query(`UPDATE customers SET settings = $1::jsonb WHERE id = 'cus_plan'`, [
    JSON.stringify(qualification ? { quality: { qualification: { gold_tasks: 10, min_accuracy: 0.65 } } } : {}),
  ]);
  const sql = lockAndClaim(`clm_plan_${randomBytes(4).toString("hex")}`, "lbl_007", undefined, [], 60, key);
  const { rows } = await db.pool.query<{ "QUERY PLAN": { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) ${sql.text}`, sql.values);
  const plan = rows[0]?.["QUERY PLAN"][0]?.Plan as PlanNode;
  const taskScans = planNodes(plan).filter((n) => n["Relation Name"] === "tasks");
  // the two open statuses walk (status, created_at); a gold candidate walks the space's gold tasks
  const walks = ["tasks_status_created_at_idx", "tasks_label_space_id_gold_idx"];
  expect(taskScans.filter((n) => n["Index Name"] === "tasks_status_created_at_idx")).toHaveLength(2);
  expect(taskScans.filter((n) => n["Node Type"] !== "Index Scan" || !walks.includes(n["Index Name"] ?? ""))).toEqual([]);
  // a keyed insert stops on the labeler's active claim of the key: the partial unique index is its arbiter
  const arbiters = (plan as PlanNode & { "Conflict Arbiter Indexes"?: string[] })["Conflict Arbiter Indexes"];
  expect(arbiters).toEqual(key === undefined ? undefined : ["claims_labeler_id_idempotency_key_key"]);
  await db.pool.query(`UPDATE customers SET settings = '{}'::jsonb WHERE id = 'cus_plan'`);
});

it("claims the oldest task the labeler has not labeled, on the analyzed backlog", async () => {
  const store = labelingStore(db);
  // round-robin, lbl_003 labeled the oldest labeling task (tsk_005000): its claim is the next open task
  const { rows } = await db.pool.query<{ id: string }>(
    `SELECT t.id FROM tasks t WHERE t.status IN ('pending', 'labeling')
       AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.task_id = t.id AND c.labeler_id = 'lbl_003')
     ORDER BY t.created_at, t.id LIMIT 1`,
  );
  expect(rows[0]?.id).toBe("tsk_005001");
  const claim = await store.claim("lbl_003", undefined, 60);
  expect(claim?.task_id).toBe("tsk_005001");
});
