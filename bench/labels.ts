/**
 * `pnpm bench:labels [--seconds 10] [--runs 3] [--labelers 200] [--rate 1000] [--lag-seconds 15]
 *   [--existing-tasks 0] [--log-level info] [--pipeline-only] [--hold-ms 0]`
 *
 * Recorded labels per second through claims and labels (contract §labelers: `POST /v1/labeling/claims`, then
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
 *  (c) consensus lag with labels offered at `--rate` per second whatever the HTTP layer can carry: the same
 *      open loop, but each pair runs in this process through the gateway's own labeling functions
 *      (`claimTask`, `recordLabel`: the same statements and group commit) and the same follow-up relay (nudged after a deciding label) as
 *      the label route, on a pool of the gateway's size. Only HTTP, auth and validation are left out; the
 *      consensus worker, settlement, ledger and webhook delivery are the real processes. On a 2-core machine
 *      1,000 claim+label requests/s over HTTP cannot be offered (even the floor makes ~800), so this is
 *      where the target of the consensus pipeline (p99 < 250 ms at 1,000 labels/s) is judged. Same lag query.
 *      `--pipeline-only` runs this phase alone (no closed loop, no HTTP lag runs). `--hold-ms N` makes each
 *      labeler hold its claim N ms before it labels (a person reads the item), so the oldest open tasks are
 *      full ones, as under a real workforce; the default 0 is the fifth pass's measure.
 *  Every open-loop run of (b) and (c) also reports its CPU ms per recorded label by process (front end,
 *  Postgres backends, consensus worker, webhook worker, Redis server), counted from its first pair until its
 *  last decided task is settled: the fifth pass's measure of a label's cost (docs/benchmarks-archive.md).
 * Tasks are submitted before each phase through `POST /v1/tasks/batch` (1,000 per call), more than the
 * phase can use; the floor's tasks belong to a customer of their own, whose leftovers are canceled after
 * each floor run. `--existing-tasks N` seeds N existing tasks first (bench/bench-lib.ts). A database and a
 * Redis prefix of its own, dropped at the end. Progress on stderr, one JSON summary line on stdout.
 */
import type { ChildProcess } from "node:child_process";
import os from "node:os";
import { parseArgs } from "node:util";
import { gatewayEnv } from "@labelgate/config";
import { createLogger } from "@labelgate/core";
import { type FollowUpNudge, FollowUpRelay, QueueClient } from "@labelgate/queue";
import { createStore, migrateDatabase, pgConfigFromUrl, type Store } from "@labelgate/store";
import { Pool } from "pg";
import {
  benchTarget,
  type CycleStats,
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
  countCpuPer,
  cpuSeconds,
  type LatencySummary,
  latencySummary,
  log,
  nowMs,
  pidsByName,
  positiveInt,
  postgresBackends,
  round,
  sleep,
} from "./measure";

interface ClosedResult {
  labels_per_s: number;
  /** CPU of the server process (gateway or floor) per recorded label, ms */
  server_cpu_ms_per_label?: number;
  /** CPU of the bench database's Postgres backends per recorded label, ms (the consensus worker's included) */
  postgres_cpu_ms_per_label?: number;
  /** CPU of each worker process per recorded label, ms, by service (the gateway's run only) */
  workers_cpu_ms_per_label?: Record<string, number>;
  /** server + Postgres + workers per recorded label, ms */
  total_cpu_ms_per_label?: number;
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
  /** worker processes by service name (consensus-worker, webhook-worker), counted separately */
  workers?: Record<string, number>;
}

/** Every labeler claims and labels in a loop for `seconds`; `cost` says whose CPU to count. */
async function closedLoop(port: number, labelers: Labeler[], seconds: number, cost?: CostOf): Promise<ClosedResult> {
  const client = new JsonClient(port, labelers.length);
  const stats = newStats();
  const postgres = cost ? new CpuTracker(postgresBackends(cost.database, new Set())) : undefined;
  const cpuCount =
    cost && postgres
      ? {
          server: countCpuPer({ server: () => cpuSeconds(cost.server), postgres: () => postgres.seconds() }, 2),
          workers: countCpuPer<string>(
            Object.fromEntries(Object.entries(cost.workers ?? {}).map(([name, pid]) => [name, () => cpuSeconds([pid])])),
            2,
          ),
        }
      : undefined;
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
  let cpu: Partial<ClosedResult> = {};
  if (cpuCount) {
    const { server, postgres: pg } = cpuCount.server(stats.labels);
    const workers = cpuCount.workers(stats.labels);
    const total = round(server + pg + Object.values(workers).reduce((a, b) => a + b, 0), 2);
    cpu = {
      server_cpu_ms_per_label: server,
      postgres_cpu_ms_per_label: pg,
      ...(Object.keys(workers).length > 0 ? { workers_cpu_ms_per_label: workers, total_cpu_ms_per_label: total } : {}),
    };
  }
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
  /** non-2xx answers and thrown errors, by kind */
  statuses: Record<string, number>;
}

/** One claim+label pair of a labeler: true when a label was recorded (see bench-lib's `claimAndLabel`). */
type Cycle = (labeler: Labeler, stats: CycleStats) => Promise<boolean>;

/** `rate` claim+label pairs per second for `seconds`, each started on schedule by an idle labeler. */
async function openLoop(cycle: Cycle, labelers: Labeler[], rate: number, seconds: number): Promise<OpenResult> {
  const stats = newStats();
  const idle = [...labelers];
  const inFlight = new Set<Promise<void>>();
  let scheduled = 0;
  let dropped = 0;
  const started = nowMs();
  const startedAt = new Date();
  const total = rate * seconds;
  while (scheduled < total) {
    const due = Math.min(total, Math.floor(((nowMs() - started) / 1000) * rate));
    for (; scheduled < due; scheduled++) {
      const l = idle.pop();
      if (!l) {
        dropped++;
        continue;
      }
      const p: Promise<void> = cycle(l, stats)
        .then(
          () => undefined,
          (err: unknown) => {
            stats.errors++;
            const kind = `error ${(err as Error).name}: ${(err as Error).message}`.slice(0, 120);
            stats.statuses[kind] = (stats.statuses[kind] ?? 0) + 1;
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
  return {
    started_at: startedAt,
    ended_at: endedAt,
    scheduled,
    dropped,
    labels: stats.labels,
    empty: stats.empty,
    errors: stats.errors,
    statuses: stats.statuses,
  };
}

/**
 * A claim+label pair without HTTP: the label route's own steps (the store's `labeling.claim` and
 * `labeling.label`, whose transaction writes a deciding label's follow_up row, then a nudge of this process's
 * relay, which enqueues it) in this process. A refusal counts as an error, as a non-2xx does.
 */
function inProcessCycle(store: Store, relay: FollowUpNudge, claimTtlSeconds: number, holdMs: number): Cycle {
  return async (labeler, stats) => {
    const t0 = nowMs();
    const claim = await store.labeling.claim(labeler.id, undefined, claimTtlSeconds);
    stats.claimMs.push(nowMs() - t0);
    if (!claim) {
      stats.empty++;
      return false;
    }
    // the labeler reads the item: its claim holds a slot meanwhile (a modelled delay, not a wait for state)
    if (holdMs > 0) await sleep(holdMs);
    const t1 = nowMs();
    const { followUps } = await store.labeling.label(labeler.id, claim.claim_id, { label: Math.random() < 0.85 ? "cat" : "dog" });
    if (followUps.consensus?.length) relay.nudge();
    stats.labelMs.push(nowMs() - t1);
    stats.labels++;
    return true;
  };
}

/**
 * VACUUM (ANALYZE) of the bench database between measured runs, in place of autovacuum, which is off on this
 * machine's Postgres (docs/benchmarks-archive.md). Without it every run inherits the dead rows of the runs before it
 * (tasks, claims and customers are updated at every label) and the index walks of claims and the reads of hot
 * rows grow run after run: Postgres CPU per label rose 1.03 → 1.44 → 2.09 ms over three pipeline runs. With
 * autovacuum on, as in production, a table this busy is vacuumed and analyzed about once a minute. Not before
 * the first run: the tables are then empty or fresh, and statistics of an empty `claims` would plan its lookups
 * as sequential scans for the whole run (a cached generic plan), which no deployment whose autovacuum follows
 * the table's growth would see. The vacuum runs outside the measured window; its duration (ms) is returned.
 */
async function vacuumBetweenRuns(pool: Pool): Promise<number> {
  const t0 = nowMs();
  await pool.query("VACUUM (ANALYZE)");
  return Math.round(nowMs() - t0);
}

/** Polls until no task of `customerId` waits for its settlement (decided: `settling`). */
async function waitSettled(pool: Pool, customerId: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ n: string }>("SELECT count(*) AS n FROM tasks WHERE customer_id = $1 AND status = 'settling'", [
      customerId,
    ]);
    if (Number(rows[0]?.n) === 0) return;
    if (Date.now() > deadline) throw new Error(`${rows[0]?.n} tasks still wait for consensus after ${timeoutMs} ms`);
    await sleep(250);
  }
}

/**
 * CPU ms per recorded label of every process an open-loop run keeps busy, from the run's first pair until
 * its last decided task is settled: the front end (the gateway process over HTTP; this bench process in the
 * pipeline phase, where it runs the gateway's labeling functions), the bench database's Postgres backends,
 * the two workers and the Redis server. The fifth pass (docs/benchmarks-archive.md) measured the pipeline this way:
 * 3.4 ms per label at 670 labels/s.
 */
interface OpenLoopCpu {
  front_end: number;
  postgres: number;
  consensus_worker: number;
  webhook_worker: number;
  redis: number;
  total: number;
}

/** The processes an open-loop run's CPU is counted over (see OpenLoopCpu). */
interface OpenLoopProcesses {
  /** the front end's pid; undefined = this process */
  frontEnd?: number;
  database: string;
  consensusWorker: number;
  webhookWorker: number;
}

/** Starts counting the CPU of `p`; the returned function stops and divides by `labels`. */
function countOpenLoopCpu(p: OpenLoopProcesses): (labels: number) => OpenLoopCpu {
  const postgres = new CpuTracker(postgresBackends(p.database, new Set()));
  const redisPids = pidsByName("redis-server");
  const count = countCpuPer(
    {
      front_end: () => cpuSeconds([p.frontEnd ?? process.pid]),
      postgres: () => postgres.seconds(),
      consensus_worker: () => cpuSeconds([p.consensusWorker]),
      webhook_worker: () => cpuSeconds([p.webhookWorker]),
      redis: () => cpuSeconds(redisPids),
    },
    3,
  );
  return (labels) => {
    const cpu = count(labels);
    postgres.stop();
    return {
      ...cpu,
      total: round(
        Object.values(cpu).reduce((a, b) => a + b, 0),
        3,
      ),
    };
  };
}

interface LagRun {
  rate: number;
  scheduled: number;
  dropped: number;
  errors: number;
  statuses: Record<string, number>;
  /** labels recorded per second in the measured window, from the labels' created_at */
  achieved_labels_per_s: number;
  settled_tasks: number;
  lag: LatencySummary;
  /** CPU ms per label recorded in the run (all of it, its first 2 s included), by process */
  cpu_ms_per_label: OpenLoopCpu;
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
      "pipeline-only": { type: "boolean", default: false },
      "log-level": { type: "string", default: "info" },
      "hold-ms": { type: "string", default: "0" },
    },
    strict: true,
  });
  const seconds = positiveInt(values.seconds, "seconds");
  const runs = positiveInt(values.runs, "runs");
  const labelerCount = positiveInt(values.labelers, "labelers");
  const targetRate = positiveInt(values.rate, "rate");
  const lagSeconds = positiveInt(values["lag-seconds"], "lag-seconds");
  const holdMs = values["hold-ms"] === "0" ? 0 : positiveInt(values["hold-ms"], "hold-ms");
  const existingTasks = values["existing-tasks"] === "0" ? 0 : positiveInt(values["existing-tasks"], "existing-tasks");
  const logLevel = values["log-level"] ?? "info";
  const httpPhases = !values["pipeline-only"];

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
    const statePool = pool;
    let measuredRuns = 0;
    /** vacuumBetweenRuns before every measured run but the first */
    const vacuumIfNotFirst = async (what: string) => {
      if (measuredRuns++ > 0) log(`vacuum before ${what}: ${await vacuumBetweenRuns(statePool)} ms`);
    };
    for (let run = 1; run <= (httpPhases ? runs : 0); run++) {
      await vacuumIfNotFirst(`closed loop run ${run}`);
      await submitOpenTasks(base, floorCustomer.key, tasksPerPhase);
      await closedLoop(floor.port, labelers, 2);
      const f = await closedLoop(floor.port, labelers, seconds, { server: [floor.child.pid ?? 0], database: target.database });
      await pool.query(
        "UPDATE tasks SET status = 'canceled', canceled_at = now() WHERE customer_id = $1 AND status IN ('pending', 'labeling')",
        [floorCustomer.id],
      );
      await submitOpenTasks(base, customer.key, tasksPerPhase);
      await closedLoop(gatewayPort, labelers, 2);
      const g = await closedLoop(gatewayPort, labelers, seconds, {
        server: [gatewayPid],
        database: target.database,
        workers: {
          "consensus-worker": services.get("consensus-worker")?.child.pid ?? 0,
          "webhook-worker": services.get("webhook-worker")?.child.pid ?? 0,
        },
      });
      await waitSettled(pool, customer.id);
      const pair = { floor: f, gateway: g, ratio: round(g.labels_per_s / f.labels_per_s, 3) };
      log(`closed loop run ${run}: ${JSON.stringify(pair)}`);
      pairs.push(pair);
    }
    const gatewayMax = median(pairs.map((p) => p.gateway.labels_per_s));
    const reduced = gatewayMax < targetRate * 1.25;
    const rate = reduced ? Math.max(10, Math.floor((gatewayMax * 0.8) / 10) * 10) : targetRate;
    log(`consensus lag at ${rate} labels/s${reduced ? ` (80% of the closed-loop ${gatewayMax}/s, below 1.25 x ${targetRate})` : ""}`);

    /** One open-loop run at `atRate` with `cycle`, then the lag of the tasks it decided (after its first 2 s). */
    const workerPids = {
      database: target.database,
      consensusWorker: services.get("consensus-worker")?.child.pid ?? 0,
      webhookWorker: services.get("webhook-worker")?.child.pid ?? 0,
    };
    const lagRun = async (cycle: Cycle, atRate: number, frontEnd: number | undefined): Promise<LagRun> => {
      await submitOpenTasks(base, customer.key, Math.ceil((atRate * (lagSeconds + 2)) / 2));
      await vacuumIfNotFirst("the open loop");
      log(`open loop: ${atRate} claim+label pairs/s for ${lagSeconds} s`);
      const cpu = countOpenLoopCpu({ ...workerPids, frontEnd });
      const open = await openLoop(cycle, labelers, atRate, lagSeconds);
      await waitSettled(statePool, customer.id);
      const cpuPerLabel = cpu(open.labels);
      const from = new Date(open.started_at.getTime() + 2000);
      const { lags, labels } = await lagOf(statePool, customer.id, from, open.ended_at);
      const windowS = (open.ended_at.getTime() - from.getTime()) / 1000;
      return {
        rate: atRate,
        scheduled: open.scheduled,
        dropped: open.dropped,
        errors: open.errors + open.empty,
        statuses: open.statuses,
        achieved_labels_per_s: round(labels / windowS, 1),
        settled_tasks: lags.length,
        lag: latencySummary(lags),
        cpu_ms_per_label: cpuPerLabel,
      };
    };
    const lagMedian = (list: LagRun[]) => ({
      achieved_labels_per_s: median(list.map((r) => r.achieved_labels_per_s)),
      p50_ms: median(list.map((r) => r.lag.p50_ms)),
      p99_ms: median(list.map((r) => r.lag.p99_ms)),
      cpu_ms_per_label: Object.fromEntries(
        (["front_end", "postgres", "consensus_worker", "webhook_worker", "redis", "total"] as const).map((k) => [
          k,
          median(list.map((r) => r.cpu_ms_per_label[k])),
        ]),
      ),
      dropped: list.reduce((n, r) => n + r.dropped, 0),
      errors: list.reduce((n, r) => n + r.errors, 0),
    });

    const lagRuns: LagRun[] = [];
    const httpClient = new JsonClient(gatewayPort, labelers.length);
    try {
      for (let run = 1; run <= (httpPhases ? runs : 0); run++) {
        lagRuns.push(await lagRun((l, stats) => claimAndLabel(httpClient, l, stats), rate, gatewayPid));
        log(`lag run ${run}: ${JSON.stringify(lagRuns.at(-1))}`);
      }
    } finally {
      httpClient.close();
    }

    // (c) the consensus pipeline at the target rate, labels recorded in this process (no HTTP)
    const gatewayDefaults = gatewayEnv.parse({});
    const frontEnd = createStore({ url: target.databaseUrl, poolMax: gatewayDefaults.DB_POOL_MAX });
    const queue = new QueueClient({ kind: "redis", url: target.redisUrl, prefix: target.prefix });
    // the gateway's relay, as its runtime runs it: polled, and nudged after each deciding label
    const relay = new FollowUpRelay(frontEnd.followUps, queue, createLogger("bench-relay", "warn"));
    relay.start();
    const pipelineRuns: LagRun[] = [];
    try {
      for (let run = 1; run <= runs; run++) {
        pipelineRuns.push(await lagRun(inProcessCycle(frontEnd, relay, gatewayDefaults.CLAIM_TTL_SECONDS, holdMs), targetRate, undefined));
        log(`pipeline lag run ${run}: ${JSON.stringify(pipelineRuns.at(-1))}`);
      }
    } finally {
      await relay.stop();
      await queue.close();
      await frontEnd.close();
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
          consensus_worker_cpu_ms_per_label: median(
            pairs.map((p) => p.gateway.workers_cpu_ms_per_label?.["consensus-worker"] ?? Number.NaN),
          ),
          webhook_worker_cpu_ms_per_label: median(pairs.map((p) => p.gateway.workers_cpu_ms_per_label?.["webhook-worker"] ?? Number.NaN)),
          total_cpu_ms_per_label: median(pairs.map((p) => p.gateway.total_cpu_ms_per_label ?? Number.NaN)),
        },
      },
      lag: {
        target_rate: targetRate,
        rate,
        rate_reduced: reduced,
        seconds: lagSeconds,
        runs: lagRuns,
        median: lagMedian(lagRuns),
        target_p99_ms: 250,
      },
      pipeline_lag: {
        rate: targetRate,
        seconds: lagSeconds,
        front_end: "store.labeling claim + label + the follow-up relay in the bench process (no HTTP)",
        hold_ms: holdMs,
        runs: pipelineRuns,
        median: lagMedian(pipelineRuns),
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
