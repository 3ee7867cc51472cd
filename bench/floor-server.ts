/**
 * The floor of `POST /v1/tasks` (docs/benchmarks.md, bench/api.ts): the least a task submission can
 * cost on this stack. express + JSON body + SHA-256 of the bearer key (no lookup) + the gateway's own zod
 * schema of a task + ONE raw `pg` INSERT of the task row into the same `tasks` table (same indexes).
 * No authentication lookup, quota, rate limit, idempotency or webhook check: those are what the gateway
 * adds on top, and the benchmark reports the gateway's rate as a ratio of this one.
 *
 * Env (read here: this is a process entry point): DATABASE_URL, PORT (0 = ephemeral), CUSTOMER_ID (the
 * customer the rows belong to).
 */
import { createHash, randomBytes } from "node:crypto";
import { choicesOf, taskBody } from "@labelgate/api";
import { resolvePolicy } from "@labelgate/quality";
import { labelSpaceId, pgConfigFromUrl, policyColumns } from "@labelgate/store";
import express from "express";
import { Pool } from "pg";

const databaseUrl = process.env.DATABASE_URL;
const customerId = process.env.CUSTOMER_ID;
if (!databaseUrl || !customerId) throw new Error("DATABASE_URL and CUSTOMER_ID are required");

const pool = new Pool({ ...pgConfigFromUrl(databaseUrl), max: 10, options: "-c jit=off" });
const app = express();
app.disable("x-powered-by");
app.set("etag", false);

app.post("/v1/tasks", express.json({ limit: "1mb" }), async (req, res) => {
  const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
  if (!token) {
    res.status(401).json({ error: "invalid API key" });
    return;
  }
  createHash("sha256").update(token).digest("hex");
  const parsed = taskBody.safeParse(req.body);
  if (!parsed.success) {
    res.status(400).json({ error: "validation failed" });
    return;
  }
  const t = parsed.data;
  const resolved = resolvePolicy([t]);
  if ("issues" in resolved) {
    res.status(400).json({ error: "validation failed", details: resolved.issues });
    return;
  }
  const policy = policyColumns(resolved.policy);
  const id = `tsk_${randomBytes(16).toString("base64url")}`;
  const rows = await pool.query<{ created_at: Date }>(
    `WITH space AS (INSERT INTO label_spaces (id, customer_id, question, options) VALUES ($12, $2, $5, $6) ON CONFLICT (id) DO NOTHING)
     INSERT INTO tasks (id, customer_id, task_type, data_url, question, options, consensus_threshold, max_labels,
                        metadata, claim_cap, quota_reserved, status, label_space_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'pending', $12) RETURNING created_at`,
    [
      id,
      customerId,
      t.type,
      t.data_url,
      t.label_spec.question,
      choicesOf(t.type, t.label_spec),
      policy.consensus_threshold,
      policy.max_labels,
      t.metadata ?? null,
      Math.min(policy.max_labels, policy.consensus_threshold),
      policy.consensus_threshold,
      labelSpaceId(customerId, t.label_spec.question, choicesOf(t.type, t.label_spec)),
    ],
  );
  res.status(202).json({ task_id: id, status: "pending", created_at: rows.rows[0]?.created_at.toISOString() });
});

const server = app.listen(Number(process.env.PORT ?? 0), "127.0.0.1");
process.on("SIGTERM", () => {
  server.close();
  void pool.end().then(() => process.exit(0));
});
