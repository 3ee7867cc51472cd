/**
 * Generic claims behind held claims (`pnpm bench:claims`). Labelers who claimed a task and have not answered
 * yet hold its slots; a generic claim walks the open tasks oldest first, so under a workforce that holds its
 * claims for a while (people read the item first) the oldest open tasks are full ones, and every claim
 * walks past them. This bench measures one claim (through the store's `labeling.claim`, the gateway's
 * function, no HTTP) when the oldest `held` tasks have every slot held by live claims, with the
 * `slots_full_until` hint on those tasks (what the claims that filled them set) and with it cleared
 * (the walk before the hint: every full task checked by its claims). Each measured claim is released at once,
 * so every claim meets the same backlog.
 *
 * Output: one JSON line, per (held, hint) the claim+release cycles' latency (ms, p50 / p99) and the CPU of the
 * bench database's Postgres backends per cycle (ms). Options: `--held 0,100,1000` (full tasks), `--claims N`
 * (measured cycles per case, default 400), `--rounds N` (the cases alternate, default 2). A database of its
 * own, dropped at the end.
 */

import { parseArgs } from "node:util";
import { createStore, migrateDatabase } from "@labelgate/store";
import { benchTarget, tearDown } from "./bench-lib";
import { CpuTracker, countCpuPer, latencySummary, log, nowMs, positiveInt, postgresBackends } from "./measure";

interface Case {
  held: number;
  hint: boolean;
  round: number;
  claims: number;
  p50_ms: number;
  p99_ms: number;
  postgres_cpu_ms_per_claim: number;
}

const HOLDERS = 3;
const OPEN_TASKS = 20_000;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      held: { type: "string", default: "0,100,1000" },
      claims: { type: "string", default: "400" },
      rounds: { type: "string", default: "2" },
    },
  });
  const heldCounts = (values.held ?? "").split(",").map((v) => (v === "0" ? 0 : positiveInt(v, "held")));
  const claims = positiveInt(values.claims, "claims");
  const rounds = positiveInt(values.rounds, "rounds");
  const target = benchTarget("claims");
  await migrateDatabase(target.databaseUrl);
  const store = createStore({ url: target.databaseUrl, poolMax: 4 });
  const q = (sql: string) => store.db.pool.query(sql);
  const cases: Case[] = [];
  try {
    await q(`INSERT INTO customers (id, name, email, label_quota) VALUES ('cus_bench', 'bench', 'bench@example.com', 100000000)`);
    await q(`INSERT INTO label_spaces (id, customer_id, question, options) VALUES ('lsp_bench', 'cus_bench', 'q?', ARRAY['cat', 'dog'])`);
    await q(`INSERT INTO labelers (id, name, key_hash, hint)
             SELECT 'lbl_' || lpad(i::text, 4, '0'), 'l' || i, 'hash-' || i, 'h' FROM generate_series(0, ${HOLDERS + claims - 1}) i`);
    // threshold 3: three slots a task; one task a second, oldest first
    await q(`INSERT INTO tasks (id, customer_id, label_space_id, task_type, data_url, question, options, consensus_threshold,
               max_labels, claim_cap, quota_reserved, created_at)
             SELECT 'tsk_' || lpad(i::text, 6, '0'), 'cus_bench', 'lsp_bench', 'image_classification', 'https://img.example/' || i, 'q?',
               ARRAY['cat', 'dog'], 3, 7, 3, 3, now() - interval '1 day' + i * interval '1 second'
             FROM generate_series(0, ${OPEN_TASKS - 1}) i`);
    await q("VACUUM (ANALYZE)");
    const postgres = new CpuTracker(postgresBackends(target.database, new Set()));
    try {
      for (let r = 1; r <= rounds; r++) {
        for (const held of heldCounts) {
          // the oldest `held` tasks: every slot held by a live claim of the three holders
          await q("DELETE FROM claims");
          await q(`INSERT INTO claims (id, task_id, labeler_id, status, expires_at)
                   SELECT 'clm_held_' || i || '_' || k, 'tsk_' || lpad(i::text, 6, '0'), 'lbl_' || lpad(k::text, 4, '0'), 'active', now() + interval '1 hour'
                   FROM generate_series(0, ${held - 1}) i, generate_series(0, ${HOLDERS - 1}) k`);
          for (const hint of [true, false]) {
            await q(`UPDATE tasks SET slots_full_until = ${hint ? "now() + interval '1 hour'" : "NULL"}
                     WHERE id IN (SELECT DISTINCT task_id FROM claims WHERE id LIKE 'clm_held_%')`);
            await q("VACUUM (ANALYZE) tasks, claims");
            const latencies: number[] = [];
            const countCpu = countCpuPer({ postgres: () => postgres.seconds() }, 3);
            for (let i = 0; i < claims; i++) {
              const labelerId = `lbl_${String(HOLDERS + i).padStart(4, "0")}`;
              const started = nowMs();
              const claim = await store.labeling.claim(labelerId, undefined, 600);
              if (!claim) throw new Error(`no claim for ${labelerId} behind ${held} full tasks`);
              await store.labeling.release(labelerId, claim.claim_id);
              latencies.push(nowMs() - started);
            }
            const cpu = countCpu(claims);
            const summary = latencySummary(latencies);
            const result: Case = {
              held,
              hint,
              round: r,
              claims,
              p50_ms: summary.p50_ms,
              p99_ms: summary.p99_ms,
              postgres_cpu_ms_per_claim: cpu.postgres,
            };
            cases.push(result);
            log(`case ${JSON.stringify(result)}`);
          }
        }
      }
    } finally {
      postgres.stop();
    }
    console.log(JSON.stringify({ bench: "claims", date: new Date().toISOString(), open_tasks: OPEN_TASKS, cases }));
  } finally {
    await store.close();
    await tearDown(target, []);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
