/**
 * `pnpm bench:webhooks [--n 20000] [--warmup 1000] [--concurrency 256] [--db-pool P] [--rates 100,500]
 *   [--latency-seconds 5]`
 *
 * Webhook delivery benchmark: ONE real webhook-worker process (`tsx services/webhook-worker/src/main.ts`)
 * delivering `task.settled` events to a local node:http receiver (200 at once, signatures checked).
 * A database of its own (migrated, dropped at the end) and a Redis prefix of its own (deleted at the end)
 * on the machine's Postgres and Redis (BENCH_PG_URL, BENCH_REDIS_URL override).
 *
 * Phases, each on fresh settled tasks and `task.settled` event rows as settle.ts writes them:
 *  1. warm-up: `--warmup` events, not measured (also waits for the worker to start);
 *  2. burst: `--n` events enqueued at once (`addBulk` of the `routeEvent` jobs with the catalog's job
 *     ids): deliveries/s of the worker, first to last receipt, over the middle 80% of receipts, and up to
 *     the last delivery recorded in Postgres (`deliveries.status` and `tasks.webhook_status` delivered);
 *  3. latency: for each rate of `--rates`, events settled at that rate for `--latency-seconds` (open
 *     loop: the i-th event's `settled_at` is t0 + i/rate, and its job is enqueued with
 *     `QueueClient.enqueue` at that time, as the relay does after a settlement commits; the event rows are seeded
 *     without their follow_up rows): receipt − settled_at.
 * CPU seconds of the worker's process tree, this database's Postgres backends, Redis and this process are
 * read from /proc for each phase, with the whole machine's (the machine is shared). From them: the
 * deliveries/s the worker would make with a core of its own, and all of them on all the machine's cores.
 *
 * Progress goes to stderr; the summary is one JSON object on stdout. With BENCH_WORKER_NODE_ARGS (e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`) the worker runs as `node <args> --import tsx main.ts` instead.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { newId, SecretBox } from "@labelgate/core";
import { catalog, deleteKeysWithPrefix, QueueClient } from "@labelgate/queue";
import { dropDatabase, migrateDatabase } from "@labelgate/store";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { Pool } from "pg";
import { benchTarget } from "./bench-lib";
import {
  CpuTracker,
  latencySummary,
  log,
  machineCpu,
  nowMs,
  pidsByName,
  positiveInt,
  postgresBackends,
  processTree,
  round,
  sleep,
} from "./measure";
import { type Receiver, seedSettled, startReceiver } from "./webhooks-lib";

const ROOT = path.resolve(__dirname, "..");
const USAGE =
  "usage: pnpm bench:webhooks [--n 20000] [--warmup 1000] [--concurrency 256] [--db-pool P] [--rates 100,500] [--latency-seconds 5]";

/** An optional positive integer option (undefined when absent). */
function optionalPositiveInt(value: string | undefined, name: string): number | undefined {
  return value === undefined ? undefined : positiveInt(value, name);
}

interface CpuSnapshot {
  at: number;
  worker: number;
  postgres: number;
  redis: number;
  bench: number;
  machineBusy: number;
  machineTotal: number;
  xactCommit: number;
}

interface Phase {
  name: string;
  started: number;
  cpu: CpuSnapshot;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      n: { type: "string", default: "20000" },
      warmup: { type: "string", default: "1000" },
      // the worker's WEBHOOK_CONCURRENCY (its own default is 64)
      concurrency: { type: "string", default: "256" },
      "db-pool": { type: "string" },
      rates: { type: "string", default: "100,500" },
      "latency-seconds": { type: "string", default: "5" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const n = positiveInt(values.n, "n");
  const warmup = positiveInt(values.warmup, "warmup");
  const concurrency = optionalPositiveInt(values.concurrency, "concurrency");
  const dbPool = optionalPositiveInt(values["db-pool"], "db-pool");
  const rates = (values.rates ?? "").split(",").map((r) => positiveInt(r, "rates"));
  const latencySeconds = positiveInt(values["latency-seconds"], "latency-seconds");

  const { runId, database: databaseName, databaseUrl, redisUrl, prefix, encryptionKey } = benchTarget("webhooks");
  const secret = randomBytes(24).toString("base64url");
  const startedAt = new Date();
  const loadAtStart = os.loadavg().map((l) => round(l, 2));

  let worker: ChildProcess | undefined;
  let receiver: Receiver | undefined;
  let pool: Pool | undefined;
  let queue: QueueClient | undefined;
  let bulkQueue: Queue | undefined;
  let bulkRedis: Redis | undefined;
  let migrated = false;
  const trackers: CpuTracker[] = [];

  const cleanup = async () => {
    for (const t of trackers) t.stop();
    if (worker?.pid && worker.exitCode === null) {
      const exited = new Promise<void>((resolve) => worker?.once("exit", () => resolve()));
      // The worker runs in its own process group (tsx and its node child): stop exactly that group.
      const pgid = worker.pid;
      const signal = (s: NodeJS.Signals) => {
        try {
          process.kill(-pgid, s);
        } catch {
          // already gone
        }
      };
      signal("SIGTERM");
      const done = await Promise.race([exited.then(() => true), sleep(8000).then(() => false)]);
      if (!done) signal("SIGKILL");
    }
    await receiver?.close();
    await bulkQueue?.close().catch(() => undefined);
    bulkRedis?.disconnect();
    await queue?.close().catch(() => undefined);
    await pool?.end().catch(() => undefined);
    if (migrated) await dropDatabase(databaseUrl).catch((err: unknown) => log(`could not drop ${databaseName}: ${String(err)}`));
    const deleted = await deleteKeysWithPrefix(redisUrl, prefix);
    log(`dropped database ${databaseName} and ${deleted} Redis keys under ${prefix}`);
  };
  process.once("SIGINT", () => {
    void cleanup().finally(() => process.exit(130));
  });

  try {
    log(`database ${databaseName}, Redis prefix ${prefix}`);
    await migrateDatabase(databaseUrl);
    migrated = true;
    pool = new Pool({ connectionString: databaseUrl, max: 4, application_name: "bench" });
    receiver = await startReceiver(secret);
    const rx = receiver;
    const db = pool;

    const customerId = newId("customer");
    const webhookId = newId("webhook");
    const box = new SecretBox(Buffer.from(encryptionKey, "hex"));
    await db.query(`INSERT INTO customers (id, name, email, tier, label_quota) VALUES ($1, 'bench', $2, 'production', 1000000000)`, [
      customerId,
      `bench-${runId}@example.com`,
    ]);
    await db.query(`INSERT INTO webhooks (id, customer_id, callback_url, secret_ciphertext, events) VALUES ($1, $2, $3, $4, $5)`, [
      webhookId,
      customerId,
      rx.url,
      box.seal(secret, webhookId),
      ["task.settled"],
    ]);

    const now = () => new Date();
    const warmupEvents = await seedSettled(db, customerId, rx.url, warmup, now);
    const burstEvents = await seedSettled(db, customerId, rx.url, n, now);
    log(`seeded ${warmup + n} settled tasks and events`);

    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: prefix,
      ENCRYPTION_KEY: encryptionKey,
      ALLOW_PRIVATE_URLS: "true",
      LOG_LEVEL: "warn",
      // an ephemeral ops port (/metrics, /healthz): the default one may be taken
      METRICS_PORT: "0",
    };
    if (concurrency !== undefined) env.WEBHOOK_CONCURRENCY = String(concurrency);
    if (dbPool !== undefined) env.DB_POOL_MAX = String(dbPool);
    // BENCH_WORKER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the worker (node --import tsx)
    const nodeArgs = process.env.BENCH_WORKER_NODE_ARGS?.split(" ").filter(Boolean);
    const [command, args] = nodeArgs
      ? [process.execPath, [...nodeArgs, "--import", "tsx", "services/webhook-worker/src/main.ts"]]
      : [path.join(ROOT, "node_modules/.bin/tsx"), ["services/webhook-worker/src/main.ts"]];
    worker = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ["ignore", "inherit", "inherit"] });
    const workerPid = worker.pid as number;
    worker.once("exit", (code, signal) => {
      if (code !== 0 && signal !== "SIGTERM") log(`the worker exited (${code ?? signal})`);
    });

    queue = new QueueClient({ kind: "redis", url: redisUrl, prefix }, 5000);
    bulkRedis = new Redis(redisUrl, { maxRetriesPerRequest: null });
    bulkQueue = new Queue(catalog.routeEvent.name, { connection: bulkRedis, prefix });
    const addBulk = async (eventIds: string[]) => {
      for (let i = 0; i < eventIds.length; i += 1000) {
        await (bulkQueue as Queue).addBulk(
          eventIds.slice(i, i + 1000).map((eventId) => ({
            name: catalog.routeEvent.name,
            data: { eventId },
            opts: { ...catalog.routeEvent.jobOptions, jobId: catalog.routeEvent.jobId({ eventId }) },
          })),
        );
      }
    };

    const waitForReceipts = async (eventIds: string[], timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const missing = eventIds.filter((id) => !rx.receipts.has(id)).length;
        if (missing === 0) return;
        if (Date.now() > deadline) throw new Error(`${missing} of ${eventIds.length} events not received after ${timeoutMs} ms`);
        if (worker?.exitCode !== null) throw new Error("the worker exited");
        await sleep(20);
      }
    };
    const deliveredCount = async () => {
      const r = await db.query<{ deliveries: string; tasks: string }>(
        `SELECT (SELECT count(*) FROM deliveries WHERE status = 'delivered') AS deliveries,
                (SELECT count(*) FROM tasks WHERE webhook_status = 'delivered') AS tasks`,
      );
      const row = r.rows[0] as { deliveries: string; tasks: string };
      return Math.min(Number(row.deliveries), Number(row.tasks));
    };
    const waitForRecorded = async (total: number, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while ((await deliveredCount()) < total) {
        if (Date.now() > deadline) throw new Error(`deliveries not all recorded after ${timeoutMs} ms`);
        await sleep(25);
      }
      return nowMs();
    };

    // the bench's own connections (pool `bench`) are not counted as the worker's Postgres load
    const benchBackends = new Set<number>();
    const workerCpu = new CpuTracker(() => processTree(workerPid));
    const postgresCpu = new CpuTracker(postgresBackends(databaseName, benchBackends));
    const redisCpu = new CpuTracker(() => pidsByName("redis-server"));
    trackers.push(workerCpu, postgresCpu, redisCpu);
    const snapshot = async (): Promise<CpuSnapshot> => {
      const own = await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = 'bench'`);
      for (const row of own.rows) benchBackends.add(row.pid);
      const stats = await db.query<{ xact_commit: string }>(`SELECT xact_commit FROM pg_stat_database WHERE datname = $1`, [databaseName]);
      const m = machineCpu();
      const self = process.cpuUsage();
      return {
        at: nowMs(),
        worker: workerCpu.seconds(),
        postgres: postgresCpu.seconds(),
        redis: redisCpu.seconds(),
        bench: (self.user + self.system) / 1e6,
        machineBusy: m.busy,
        machineTotal: m.total,
        xactCommit: Number(stats.rows[0]?.xact_commit ?? 0),
      };
    };
    const begin = async (name: string): Promise<Phase> => {
      // Postgres publishes transaction counts with a delay of up to a second
      await sleep(1100);
      const cpu = await snapshot();
      return { name, started: cpu.at, cpu };
    };
    const usage = async (phase: Phase, deliveries: number, end: number) => {
      await sleep(1100);
      const after = await snapshot();
      const wall = (end - phase.started) / 1000;
      const perCore = (x: number) => round(x / wall, 2);
      const perDelivery = (x: number) => round((x * 1000) / deliveries, 3);
      const machineShare = (after.machineBusy - phase.cpu.machineBusy) / (after.machineTotal - phase.cpu.machineTotal);
      return {
        wall_s: round(wall, 2),
        cores_used: {
          worker: perCore(after.worker - phase.cpu.worker),
          postgres_backends: perCore(after.postgres - phase.cpu.postgres),
          redis: perCore(after.redis - phase.cpu.redis),
          bench_and_receiver: perCore(after.bench - phase.cpu.bench),
          machine_busy_fraction: round(machineShare, 2),
        },
        cpu_ms_per_delivery: {
          worker: perDelivery(after.worker - phase.cpu.worker),
          postgres_backends: perDelivery(after.postgres - phase.cpu.postgres),
          redis: perDelivery(after.redis - phase.cpu.redis),
        },
        pg_transactions_per_delivery: round((after.xactCommit - phase.cpu.xactCommit) / deliveries, 2),
        implied_deliveries_per_s: {
          worker_on_one_core: round(deliveries / (after.worker - phase.cpu.worker)),
          all_of_them_on_all_cores: round(
            (deliveries * os.cpus().length) /
              (after.worker -
                phase.cpu.worker +
                after.postgres -
                phase.cpu.postgres +
                after.redis -
                phase.cpu.redis +
                after.bench -
                phase.cpu.bench),
          ),
        },
      };
    };

    // 1. warm-up (also covers the worker's start)
    log(`starting the worker (pid ${workerPid}) and warming up with ${warmup} events`);
    const w0 = nowMs();
    await addBulk(warmupEvents);
    await waitForReceipts(warmupEvents, 120_000);
    await waitForRecorded(warmup, 60_000);
    log(`warm-up done in ${round((nowMs() - w0) / 1000, 1)} s`);

    // 2. burst
    const burst = await begin("burst");
    await addBulk(burstEvents);
    const enqueued = nowMs();
    await waitForReceipts(burstEvents, 300_000);
    const recordedAt = await waitForRecorded(warmup + n, 300_000);
    const times = burstEvents.map((id) => (rx.receipts.get(id) as { at: number }).at).sort((a, b) => a - b);
    const first = times[0] as number;
    const last = times[times.length - 1] as number;
    const lo = times[Math.floor(n * 0.1)] as number;
    const hi = times[Math.floor(n * 0.9)] as number;
    // deliveries put off by the per-webhook in-flight cap: the first attempt is made by the routing job, a
    // deferred one becomes a webhookDelivery job (then DeferJob again counts each start in its `ats`)
    const started = bulkRedis.pipeline();
    const burstDeliveries = await db.query<{ id: string }>(`SELECT d.id FROM deliveries d WHERE d.event_id = ANY ($1::text[])`, [
      burstEvents,
    ]);
    for (const r of burstDeliveries.rows) {
      started.hget(`${prefix}:${catalog.webhookDelivery.name}:${catalog.webhookDelivery.jobId({ deliveryId: r.id })}`, "ats");
    }
    const deferred = ((await started.exec()) ?? []).reduce((sum, [, v]) => sum + (v === null ? 0 : Math.max(1, Number(v))), 0);
    const burstResult = {
      events: n,
      deliveries_deferred: deferred,
      enqueue_ms: round(enqueued - burst.started),
      deliveries_per_s_first_to_last_receipt: round((n - 1) / ((last - first) / 1000)),
      deliveries_per_s_middle_80pct: round((Math.floor(n * 0.9) - Math.floor(n * 0.1)) / ((hi - lo) / 1000)),
      deliveries_per_s_until_recorded: round(n / ((recordedAt - burst.started) / 1000)),
      first_receipt_after_ms: round(first - burst.started),
      receipt_after_enqueue: latencySummary(times.map((t) => t - burst.started)),
      usage: await usage(burst, n, recordedAt),
    };
    log(`burst: ${JSON.stringify(burstResult)}`);

    // 3. latency at fixed settlement rates
    const latency: Record<string, unknown>[] = [];
    let total = warmup + n;
    for (const rate of rates) {
      const count = rate * latencySeconds;
      const interval = 1000 / rate;
      const t0 = nowMs() + 2000 + count / 5; // after seeding (more than 5 rows/ms) and the phase's start
      const events = await seedSettled(db, customerId, rx.url, count, (i) => new Date(t0 + i * interval));
      const phase = await begin(`rate ${rate}`);
      if (phase.started > t0) throw new Error("seeding took longer than planned: lower --rates or --latency-seconds");
      await sleep(t0 - nowMs());
      const pending: Promise<void>[] = [];
      let lag = 0;
      for (let i = 0; i < count; ) {
        const t = nowMs();
        while (i < count && t0 + i * interval <= t) {
          lag = Math.max(lag, t - (t0 + i * interval));
          pending.push((queue as QueueClient).enqueue("routeEvent", { eventId: events[i] as string }));
          i++;
        }
        if (i < count) await sleep(Math.max(0, t0 + i * interval - nowMs()));
      }
      await Promise.all(pending);
      await waitForReceipts(events, 120_000);
      total += count;
      const end = await waitForRecorded(total, 120_000);
      const delays = events.map((id) => {
        const r = rx.receipts.get(id) as { at: number; settledAt: number };
        return r.at - r.settledAt;
      });
      // Where the delay goes (p50 of each step), from the stored timestamps (ms): the BullMQ jobs' `timestamp`
      // (added) and `processedOn` (taken by the worker), the event's `recorded_at` (set by the routing
      // write), the attempt's `started_at` (just before the POST).
      const stamps = await db.query<{ id: string; delivery_id: string; recorded: number; started: number }>(
        `SELECT e.id, d.id AS delivery_id, extract(epoch FROM e.recorded_at) * 1000 AS recorded,
                extract(epoch FROM a.started_at) * 1000 AS started
         FROM events e JOIN deliveries d ON d.event_id = e.id JOIN delivery_attempts a ON a.delivery_id = d.id
         WHERE e.id = ANY ($1::text[])`,
        [events],
      );
      const jobStamps = bulkRedis.pipeline();
      for (const r of stamps.rows) {
        jobStamps.hmget(`${prefix}:${catalog.routeEvent.name}:${catalog.routeEvent.jobId({ eventId: r.id })}`, "timestamp", "processedOn");
      }
      const jobs = ((await jobStamps.exec()) ?? []).map(([, v]) => (v as (string | null)[]).map(Number));
      const p50 = (f: (r: (typeof stamps.rows)[number], i: number) => number) => latencySummary(stamps.rows.map(f)).p50_ms;
      const received = (id: string) => rx.receipts.get(id) as { at: number; settledAt: number };
      const routeJob = (i: number) => jobs[i] as number[];
      const result = {
        rate_per_s: rate,
        events: count,
        max_enqueue_lag_ms: round(lag),
        settled_to_receipt: latencySummary(delays),
        p50_breakdown_ms: {
          settled_to_route_job_added: p50((r, i) => (routeJob(i)[0] as number) - received(r.id).settledAt),
          route_job_waiting: p50((_, i) => (routeJob(i)[1] as number) - (routeJob(i)[0] as number)),
          route_job_taken_to_routing_write: p50((r, i) => Number(r.recorded) - (routeJob(i)[1] as number)),
          routing_write_to_post: p50((r) => Number(r.started) - Number(r.recorded)),
          post_to_receipt: p50((r) => received(r.id).at - Number(r.started)),
        },
        usage: await usage(phase, count, end),
      };
      log(`latency at ${rate}/s: ${JSON.stringify(result)}`);
      latency.push(result);
    }

    // correctness of what was measured
    const check = await db.query(
      `SELECT (SELECT count(*) FROM deliveries)::int AS deliveries,
              (SELECT count(*) FROM deliveries WHERE status = 'delivered' AND attempts = 1)::int AS delivered_first_attempt,
              (SELECT count(*) FROM delivery_attempts)::int AS attempts,
              (SELECT count(*) FROM delivery_attempts WHERE success)::int AS successful_attempts,
              (SELECT count(*) FROM tasks WHERE webhook_status = 'delivered')::int AS tasks_delivered,
              (SELECT count(*) FROM events WHERE recorded_at IS NOT NULL)::int AS events_recorded`,
    );
    const verification = {
      events: total,
      ...check.rows[0],
      receipts: rx.receipts.size,
      duplicates: rx.duplicates,
      bad_signatures: rx.badSignatures,
    };
    const ok =
      Object.entries(verification).every(([k, v]) => k === "duplicates" || k === "bad_signatures" || v === total) &&
      rx.duplicates === 0 &&
      rx.badSignatures === 0;

    const cpus = os.cpus();
    const summary = {
      bench: "webhooks",
      date: startedAt.toISOString(),
      machine: {
        cpu: cpus[0]?.model ?? "unknown",
        cores: cpus.length,
        memory_gib: round(os.totalmem() / 2 ** 30, 1),
        node: process.version,
        load_average_at_start: loadAtStart,
      },
      worker: {
        webhook_concurrency: concurrency ?? "default",
        db_pool_max: dbPool ?? "default",
      },
      warmup_events: warmup,
      burst: burstResult,
      latency,
      verification,
      ok,
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    if (!ok) process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
