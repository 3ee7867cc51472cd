/**
 * The floor of claims and labels (bench/labels.ts): the least a claim and a label can cost on this stack,
 * in the pattern of bench/floor-server.ts. express + JSON body + SHA-256 of the bearer key (resolved to a
 * labeler id from a map loaded at start, no lookup per request) + the gateway's zod schemas of the two
 * bodies + ONE raw `pg` statement per request:
 *  - `POST /v1/labeling/claims`: an UPDATE ... RETURNING that takes the oldest task of CUSTOMER_ID with
 *    free slots this labeler has not claimed (`FOR UPDATE SKIP LOCKED`), counts the claim down from
 *    `claim_cap` (the last slot turns the task `labeling` and leaves `claim_cap` at 1, as the table's
 *    check `open_tasks_claimable` requires; the task stays `pending` while it has free slots, so the scan of the (customer_id,
 *    status, created_at) index stops at the first free task; the ORDER BY spells that index's order, so the
 *    planner does not walk the other customers' older pending tasks in (status, created_at) instead; the
 *    NOT EXISTS ends in `OFFSET 0`, as the store's claim does (packages/store/src/labeling.ts `claimable`), so
 *    that once the tables are analyzed the planner keeps that walk instead of checking every pending task and
 *    sorting them), and inserts the claim row;
 *  - `POST /v1/labeling/claims/{id}/label`: marks the claim labeled and INSERTs the label row (with its
 *    task's label space, a column every label carries).
 * No consensus, no label counts, quota, expiry, task-status checks or consensus job: those are what the
 * gateway and the consensus worker add on top, and the benchmark reports the gateway's rate as a ratio
 * of this one.
 *
 * Env (read here: this is a process entry point): DATABASE_URL, PORT (0 = ephemeral), CUSTOMER_ID (only
 * this customer's tasks are claimed, so the floor and the gateway never share a task).
 */
import { createHash, randomBytes } from "node:crypto";
import { claimBody, labelBody } from "@labelgate/api";
import { pgConfigFromUrl } from "@labelgate/store";
import express from "express";
import { Pool } from "pg";

const databaseUrl = process.env.DATABASE_URL;
const customerId = process.env.CUSTOMER_ID;
if (!databaseUrl || !customerId) throw new Error("DATABASE_URL and CUSTOMER_ID are required");

const pool = new Pool({ ...pgConfigFromUrl(databaseUrl), max: 10, options: "-c jit=off" });
const labelerByHash = new Map<string, string>();
const app = express();
app.disable("x-powered-by");
app.set("etag", false);

/** The labeler of the bearer key, or undefined (the answer is then 401). */
function labelerOf(authorization: string | undefined): string | undefined {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
  return token ? labelerByHash.get(createHash("sha256").update(token).digest("hex")) : undefined;
}

app.post("/v1/labeling/claims", express.json({ limit: "1mb" }), async (req, res) => {
  const labelerId = labelerOf(req.headers.authorization);
  if (!labelerId) {
    res.status(401).json({ error: "invalid API key" });
    return;
  }
  if (!claimBody.safeParse(req.body ?? {}).success) {
    res.status(400).json({ error: "validation failed" });
    return;
  }
  const id = `clm_${randomBytes(16).toString("base64url")}`;
  const rows = await pool.query<{ task_id: string; data_url: string; question: string; options: string[]; expires_at: Date }>(
    `WITH target AS (
       UPDATE tasks t SET claim_cap = CASE WHEN t.claim_cap = 1 THEN 1 ELSE t.claim_cap - 1 END,
         status = CASE WHEN t.claim_cap = 1 THEN 'labeling' ELSE 'pending' END::"TaskStatus"
       WHERE t.id = (SELECT c.id FROM tasks c
                     WHERE c.customer_id = $2 AND c.status = 'pending' AND c.claim_cap > 0
                       AND NOT EXISTS (SELECT 1 FROM claims m WHERE m.task_id = c.id AND m.labeler_id = $3 OFFSET 0)
                     ORDER BY c.customer_id, c.status, c.created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING t.id, t.data_url, t.question, t.options)
     INSERT INTO claims (id, task_id, labeler_id, status, expires_at)
     SELECT $1, target.id, $3, 'active', now() + interval '10 minutes' FROM target
     RETURNING task_id, (SELECT data_url FROM target), (SELECT question FROM target), (SELECT options FROM target), expires_at`,
    [id, customerId, labelerId],
  );
  const row = rows.rows[0];
  if (!row) {
    res.status(204).end();
    return;
  }
  res.status(201).json({
    claim_id: id,
    task_id: row.task_id,
    data_url: row.data_url,
    label_spec: { question: row.question, options: row.options },
    expires_at: row.expires_at.toISOString(),
  });
});

app.post("/v1/labeling/claims/:claimId/label", express.json({ limit: "1mb" }), async (req, res) => {
  const labelerId = labelerOf(req.headers.authorization);
  if (!labelerId) {
    res.status(401).json({ error: "invalid API key" });
    return;
  }
  const parsed = labelBody.safeParse(req.body);
  if (!parsed.success) {
    res.status(400).json({ error: "validation failed" });
    return;
  }
  const id = `lab_${randomBytes(16).toString("base64url")}`;
  const rows = await pool.query<{ task_id: string; created_at: Date }>(
    `WITH claim AS (
       UPDATE claims SET status = 'labeled' WHERE id = $2 AND labeler_id = $3 AND status = 'active' RETURNING task_id)
     INSERT INTO labels (id, task_id, customer_id, label_space_id, labeler_id, claim_id, value)
     SELECT $1, claim.task_id, $4, t.label_space_id, $3, $2, $5 FROM claim JOIN tasks t ON t.id = claim.task_id
     RETURNING task_id, created_at`,
    [id, req.params.claimId, labelerId, customerId, "label" in parsed.data ? parsed.data.label : JSON.stringify(parsed.data)],
  );
  const row = rows.rows[0];
  if (!row) {
    res.status(409).json({ error: "claim not open" });
    return;
  }
  res.status(201).json({ label_id: id, claim_id: req.params.claimId, task_id: row.task_id, created_at: row.created_at.toISOString() });
});

async function start(): Promise<void> {
  const labelers = await pool.query<{ id: string; key_hash: string }>("SELECT id, key_hash FROM labelers");
  for (const l of labelers.rows) labelerByHash.set(l.key_hash, l.id);
  const server = app.listen(Number(process.env.PORT ?? 0), "127.0.0.1");
  process.on("SIGTERM", () => {
    server.close();
    void pool.end().then(() => process.exit(0));
  });
}

start().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
