/**
 * `pnpm bench:labels [--seconds 10] [--runs 3] [--labelers 200] [--rate 1000] [--lag-seconds 15]
 *   [--existing-tasks 0] [--log-level info]`
 *
 * Recorded labels per second through claims and labels (DESIGN §4: `POST /v1/labeling/claims`, then
 * `POST /v1/labeling/claims/{id}/label`), with `--labelers` concurrent labelers (one key each, created with
 * the admin route), against the real gateway, consensus-worker and webhook-worker processes:
 *  (a) closed loop: every labeler claims, labels (85% "cat", else "dog"), and claims again, for `--seconds`;
 *      labels/s recorded (201s). The floor (bench/labels-floor.ts: one raw statement per request, no
 *      consensus) is driven the same way in the same run; the two interleave `--runs` times, each after a
 *      2 s warm-up, and the ratio gateway/floor is reported per pair and of the medians.
 *  (b) consensus lag at a fixed open-loop rate: `--rate` claim+label pairs per second (a pair starts on
 *      schedule with an idle labeler whatever the answers so far; none idle = dropped) for `--lag-seconds`,
 *      `--runs` times. Lag = the task's `settled_at` minus its deciding label's `created_at` (the task's
 *      last label), both read from the database: the label's time is Postgres' clock_timestamp(), settled_at
 *      the consensus worker's clock, on this machine; the client's clock is not involved. Tasks whose
 *      deciding label falls in the run's window after its first 2 s. Target p99 < 250 ms. When the median
 *      closed-loop gateway rate is below 1.25 × `--rate`, the lag runs at 80% of that rate instead and say so.
 * Tasks are submitted before each phase through `POST /v1/tasks/batch` (1,000 per call), more than the
 * phase can use; the floor's tasks belong to a customer of their own, whose leftovers are canceled after
 * each floor run. `--existing-tasks N` seeds N existing tasks first (bench/bench-lib.ts). A database and a
 * Redis prefix of its own, dropped at the end. Progress on stderr, one JSON summary line on stdout.
 */
import type { ChildProcess } from "node:child_process";
import os from "node:os";
import { parseArgs } from "node:util";
import { migrateDatabase, pgConfigFromUrl } from "@labelgate/db";
import { Pool } from "pg";
import {
  benchTarget,
  claimAndLabel,
  createLabelers,
  JsonClient,
  type Labeler,
  median,
  newStats,
  productionCustomer,
  type SeededTasks,
  seedExistingTasks,
  startProcess,
  startServices,
  submitOpenTasks,
  tearDown,
} from "./bench-lib";
import {
  CpuTracker,
  cpuSeconds,
  type LatencySummary,
  latencySummary,
  log,
  nowMs,
  positiveInt,
  postgresBackends,
  round,
  sleep,
} from "./webhooks-lib";

interface ClosedResult {
  labels_per_s: number;
  /** CPU of the server process (gateway or floor) per recorded label, ms */
  server_cpu_ms_per_label?: number;
  /** CPU of the bench database's Postgres backends per recorded label, ms (the consensus worker's included) */
  postgres_cpu_ms_per_label?: number;
  labels: number;
  /** claims answered 204: the phase ran out of open tasks (should be 0) */
  empty: number;
  errors: number;
  statuses: Record<string, number>;
  claim: LatencySummary;
  label: LatencySummary;
}

/** Processes whose CPU a closed loop accounts per label: the server's, and the bench database's Postgres backends. */
interface CostOf {
  server: number[];
  database: string;
}

/** Every labeler claims and labels in a loop for `seconds`; `cost` says whose CPU to count. */
async function closedLoop(port: number, labelers: Labeler[], seconds: number, cost?: CostOf): Promise<ClosedResult> {
  const client = new JsonClient(port, labelers.length);
  const stats = newStats();
  const postgres = cost ? new CpuTracker(postgresBackends(cost.database, new Set())) : undefined;
  const serverCpu0 = cost ? cpuSeconds(cost.server) : 0;
  const postgresCpu0 = postgres?.seconds() ?? 0;
  const started = nowMs();
  const until = started + seconds * 1000;
  try {
    await Promise.all(
      labelers.map(async (l) => {
        while (nowMs() < until) {
          if (!(await claimAndLabel(client, l, stats))) await sleep(20);
        }
      }),
    );
  } finally {
    client.close();
  }
  const elapsed = (nowMs() - started) / 1000;
  const perLabel = (cpuS: number) => round((cpuS * 1000) / Math.max(1, stats.labels), 2);
  const cpu = cost
    ? {
        server_cpu_ms_per_label: perLabel(cpuSeconds(cost.server) - serverCpu0),
        postgres_cpu_ms_per_label: perLabel((postgres?.seconds() ?? 0) - postgresCpu0),
      }
    : {};
  postgres?.stop();
  return {
    labels_per_s: round(stats.labels / elapsed, 1),
    ...cpu,
    labels: stats.labels,
    empty: stats.empty,
    errors: stats.errors,
    statuses: stats.statuses,
    claim: latencySummary(stats.claimMs),
    label: latencySummary(stats.labelMs),
  };
}

interface OpenResult {
  started_at: Date;
  ended_at: Date;
  scheduled: number;
  /** pairs that found no idle labeler at their time */
  dropped: number;
  labels: number;
  empty: number;
  errors: number;
}

/** `rate` claim+label pairs per second for `seconds`, each started on schedule by an idle labeler. */
async function openLoop(port: number, labelers: Labeler[], rate: number, seconds: number): Promise<OpenResult> {
  const client = new JsonClient(port, labelers.length);
  const stats = newStats();
  const idle = [...labelers];
  const inFlight = new Set<Promise<void>>();
  let scheduled = 0;
  let dropped = 0;
  const started = nowMs();
  const startedAt = new Date();
  const total = rate * seconds;
  try {
    while (scheduled < total) {
      const due = Math.min(total, Math.floor(((nowMs() - started) / 1000) * rate));
      for (; scheduled < due; scheduled++) {
        const l = idle.pop();
        if (!l) {
          dropped++;
          continue;
        }
        const p: Promise<void> = claimAndLabel(client, l, stats)
          .then(
            () => undefined,
            () => {
              stats.errors++;
            },
          )
          .finally(() => {
            idle.push(l);
            inFlight.delete(p);
          });
        inFlight.add(p);
      }
      await sleep(5);
    }
    const endedAt = new Date();
    await Promise.all(inFlight);
    return { started_at: startedAt, ended_at: endedAt, scheduled, dropped, labels: stats.labels, empty: stats.empty, errors: stats.errors };
  } finally {
    client.close();
  }
}

/** Polls until no task of `customerId` waits for consensus (labels_needed 0 but open, or settling). */
async function waitSettled(pool: Pool, customerId: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM tasks WHERE customer_id = $1
         AND (status = 'settling' OR (status IN ('pending', 'labeling') AND labels_needed = 0))`,
      [customerId],
    );
    if (Number(rows[0]?.n) === 0) return;
    if (Date.now() > deadline) throw new Error(`${rows[0]?.n} tasks still wait for consensus after ${timeoutMs} ms`);
    await sleep(250);
  }
}

interface LagRun {
  rate: number;
  scheduled: number;
  dropped: number;
  errors: number;
  /** labels recorded per second in the measured window, from the labels' created_at */
  achieved_labels_per_s: number;
  settled_tasks: number;
  lag: LatencySummary;
}

/** Consensus lag of the tasks decided in [from, to): settled_at − deciding label's created_at (ms). */
async function lagOf(pool: Pool, customerId: string, from: Date, to: Date): Promise<{ lags: number[]; labels: number }> {
  const lag = await pool.query<{ ms: number }>(
    `SELECT extract(epoch FROM (t.settled_at - l.created_at)) * 1000 AS ms
     FROM tasks t JOIN labels l ON l.id = t.last_label_id
     WHERE t.customer_id = $1 AND t.status = 'settled' AND l.created_at >= $2 AND l.created_at < $3`,
    [customerId, from, to],
  );
  const labels = await pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM labels WHERE customer_id = $1 AND created_at >= $2 AND created_at < $3",
    [customerId, from, to],
  );
  return { lags: lag.rows.map((r) => Number(r.ms)), labels: Number(labels.rows[0]?.n) };
}

async function main(): Promise<void> {
  const loadAtStart = os.loadavg().map((l) => round(l, 2));
  const { values } = parseArgs({
    options: {
      seconds: { type: "string", default: "10" },
      runs: { type: "string", default: "3" },
      labelers: { type: "string", default: "200" },
      rate: { type: "string", default: "1000" },
      "lag-seconds": { type: "string", default: "15" },
      "existing-tasks": { type: "string", default: "0" },
      "log-level": { type: "string", default: "info" },
    },
    strict: true,
  });
  const seconds = positiveInt(values.seconds, "seconds");
  const runs = positiveInt(values.runs, "runs");
  const labelerCount = positiveInt(values.labelers, "labelers");
  const targetRate = positiveInt(values.rate, "rate");
  const lagSeconds = positiveInt(values["lag-seconds"], "lag-seconds");
  const existingTasks = values["existing-tasks"] === "0" ? 0 : positiveInt(values["existing-tasks"], "existing-tasks");
  const logLevel = values["log-level"] ?? "info";

  const target = benchTarget("labels");
  const children: ChildProcess[] = [];
  let pool: Pool | undefined;
  try {
    await migrateDatabase(target.databaseUrl);
    log(`database ${target.database} migrated`);
    pool = new Pool({ ...pgConfigFromUrl(target.databaseUrl), max: 2 });
    const services = await startServices(target, ["gateway", "consensus-worker", "webhook-worker"], { LOG_LEVEL: logLevel });
    for (const s of services.values()) children.push(s.child);
    const gatewayPort = services.get("gateway")?.port as number;
    const gatewayPid = services.get("gateway")?.child.pid ?? 0;
    const base = `http://127.0.0.1:${gatewayPort}`;
    const customer = await productionCustomer(base, target.adminToken, "bench");
    const floorCustomer = await productionCustomer(base, target.adminToken, "bench-floor");
    let existing: SeededTasks | undefined;
    if (existingTasks > 0) {
      existing = await seedExistingTasks(pool, customer.id, existingTasks);
      log(`seeded ${existingTasks} existing tasks in ${existing.seconds} s`);
    }
    const labelers = await createLabelers(base, target.adminToken, labelerCount);
    const floor = await startProcess("bench/labels-floor.ts", { DATABASE_URL: target.databaseUrl, CUSTOMER_ID: floorCustomer.id }, "/");
    children.push(floor.child);
    log(`gateway on ${gatewayPort}, floor on ${floor.port}, ${labelers.length} labelers`);

    // enough tasks for 3,000 labels/s (floor: 3 labels per task; gateway: 3 or more) over a phase and its warm-up
    const tasksPerPhase = 1000 * (seconds + 2);
    const pairs: { floor: ClosedResult; gateway: ClosedResult; ratio: number }[] = [];
    for (let run = 1; run <= runs; run++) {
      await submitOpenTasks(base, floorCustomer.key, tasksPerPhase);
      await closedLoop(floor.port, labelers, 2);
      const f = await closedLoop(floor.port, labelers, seconds, { server: [floor.child.pid ?? 0], database: target.database });
      await pool.query(
        "UPDATE tasks SET status = 'canceled', canceled_at = now() WHERE customer_id = $1 AND status IN ('pending', 'labeling')",
        [floorCustomer.id],
      );
      await submitOpenTasks(base, customer.key, tasksPerPhase);
      await closedLoop(gatewayPort, labelers, 2);
      const g = await closedLoop(gatewayPort, labelers, seconds, { server: [gatewayPid], database: target.database });
      await waitSettled(pool, customer.id);
      const pair = { floor: f, gateway: g, ratio: round(g.labels_per_s / f.labels_per_s, 3) };
      log(`closed loop run ${run}: ${JSON.stringify(pair)}`);
      pairs.push(pair);
    }
    const gatewayMax = median(pairs.map((p) => p.gateway.labels_per_s));
    const reduced = gatewayMax < targetRate * 1.25;
    const rate = reduced ? Math.max(10, Math.floor((gatewayMax * 0.8) / 10) * 10) : targetRate;
    log(`consensus lag at ${rate} labels/s${reduced ? ` (80% of the closed-loop ${gatewayMax}/s, below 1.25 x ${targetRate})` : ""}`);

    const lagRuns: LagRun[] = [];
    for (let run = 1; run <= runs; run++) {
      await submitOpenTasks(base, customer.key, Math.ceil((rate * (lagSeconds + 2)) / 2));
      const open = await openLoop(gatewayPort, labelers, rate, lagSeconds);
      await waitSettled(pool, customer.id);
      const from = new Date(open.started_at.getTime() + 2000);
      const { lags, labels } = await lagOf(pool, customer.id, from, open.ended_at);
      const windowS = (open.ended_at.getTime() - from.getTime()) / 1000;
      const r: LagRun = {
        rate,
        scheduled: open.scheduled,
        dropped: open.dropped,
        errors: open.errors + open.empty,
        achieved_labels_per_s: round(labels / windowS, 1),
        settled_tasks: lags.length,
        lag: latencySummary(lags),
      };
      log(`lag run ${run}: ${JSON.stringify(r)}`);
      lagRuns.push(r);
    }

    const summary = {
      bench: "labels",
      date: new Date().toISOString(),
      machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version, load_average_at_start: loadAtStart },
      gateway_log_level: logLevel,
      labelers: labelerCount,
      existing_tasks: existing ?? { tasks: 0 },
      closed_loop: {
        seconds,
        runs: pairs,
        median: {
          floor_labels_per_s: median(pairs.map((p) => p.floor.labels_per_s)),
          gateway_labels_per_s: gatewayMax,
          ratio: median(pairs.map((p) => p.ratio)),
          gateway_claim_p99_ms: median(pairs.map((p) => p.gateway.claim.p99_ms)),
          gateway_label_p99_ms: median(pairs.map((p) => p.gateway.label.p99_ms)),
          gateway_cpu_ms_per_label: median(pairs.map((p) => p.gateway.server_cpu_ms_per_label ?? Number.NaN)),
          floor_cpu_ms_per_label: median(pairs.map((p) => p.floor.server_cpu_ms_per_label ?? Number.NaN)),
          postgres_cpu_ms_per_label_gateway: median(pairs.map((p) => p.gateway.postgres_cpu_ms_per_label ?? Number.NaN)),
          postgres_cpu_ms_per_label_floor: median(pairs.map((p) => p.floor.postgres_cpu_ms_per_label ?? Number.NaN)),
        },
      },
      lag: {
        target_rate: targetRate,
        rate,
        rate_reduced: reduced,
        seconds: lagSeconds,
        runs: lagRuns,
        median: {
          achieved_labels_per_s: median(lagRuns.map((r) => r.achieved_labels_per_s)),
          p50_ms: median(lagRuns.map((r) => r.lag.p50_ms)),
          p99_ms: median(lagRuns.map((r) => r.lag.p99_ms)),
          dropped: lagRuns.reduce((n, r) => n + r.dropped, 0),
        },
        target_p99_ms: 250,
      },
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    await pool?.end();
    await tearDown(target, children);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
