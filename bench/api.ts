/**
 * `pnpm bench:api [--seconds 10] [--runs 3] [--connections 64] [--batch-seconds 10] [--batch-connections 4]
 *   [--log-level info] [--existing-tasks 0]`
 *
 * Task submission under load (docs/benchmarks.md), with autocannon:
 *  1. `POST /v1/tasks` at `--connections` connections for `--seconds`, against the real gateway process
 *     (`node --import tsx services/gateway/src/main.ts`) and against the floor (bench/floor-server.ts:
 *     express + JSON + key hash + the same zod schema + one raw pg INSERT into the same table), the two
 *     interleaved `--runs` times after a warm-up each. Reported: requests/s, p50/p99 latency (ms), non-2xx
 *     and errors, and the ratio gateway/floor of each pair and of the medians (target ≥ 0.8, p99 ≤ 50 ms).
 *  2. `POST /v1/tasks/batch` with 1,000 tasks per call at `--batch-connections` connections for
 *     `--batch-seconds`, `--runs` times after one warm-up: tasks accepted per second, each run's and their
 *     median (target ≥ 20,000; the cost-growth comparison uses the median: one run swung by 20% here), and
 *     the CPU ms per call of the gateway, of its Postgres backends and of the whole machine (busy, all cores).
 * `--existing-tasks N` seeds N existing tasks of the bench customer before measuring (bench/bench-lib.ts
 * `seedExistingTasks`: mostly settled with their claims, labels, ledger records and events; the cost growth
 * runs compare rates at 0, 10,000 and 1,000,000).
 * A database of its own (migrated, dropped at the end) and a Redis prefix of its own (deleted at the end);
 * BENCH_PG_URL and BENCH_REDIS_URL override the machine's servers. The customer is production with a rate
 * limit and quota far above what a run can use. Progress goes to stderr, one JSON summary to stdout.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import os from "node:os";
import { parseArgs } from "node:util";
import { deleteKeysWithPrefix } from "@labelgate/queue";
import { dropDatabase, migrateDatabase, pgConfigFromUrl } from "@labelgate/store";
import autocannon from "autocannon";
import { Pool } from "pg";
import { api, benchTarget, median, type SeededTasks, seedExistingTasks, startProcess, stop } from "./bench-lib";
import { CpuTracker, countCpuPer, cpuSeconds, log, machineCpu, positiveInt, postgresBackends, round } from "./measure";

const ADMIN_TOKEN = `bench-admin-${randomBytes(12).toString("hex")}`;
const ENCRYPTION_KEY = randomBytes(32).toString("hex");

interface LoadResult {
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
  requests: number;
}

/** One autocannon run; `body` is sent as is on every request. */
async function load(url: string, token: string, body: string, connections: number, seconds: number): Promise<LoadResult> {
  const result = await autocannon({
    url,
    method: "POST",
    connections,
    duration: seconds,
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body,
  });
  return {
    requests_per_s: round(result.requests.average, 1),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    non_2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    requests: result.requests.total,
  };
}

const TASK = {
  type: "image_classification",
  data_url: "https://img.example.com/cats/0001.jpg",
  label_spec: { question: "Which animal is in the picture?", options: ["cat", "dog", "bird"] },
  consensus_threshold: 3,
  metadata: { source: "bench" },
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: "string", default: "10" },
      runs: { type: "string", default: "3" },
      connections: { type: "string", default: "64" },
      "batch-seconds": { type: "string", default: "10" },
      "batch-connections": { type: "string", default: "4" },
      // the gateway's LOG_LEVEL: info (as deployed) logs every request
      "log-level": { type: "string", default: "info" },
      "existing-tasks": { type: "string", default: "0" },
    },
    strict: true,
  });
  const seconds = positiveInt(values.seconds, "seconds");
  const runs = positiveInt(values.runs, "runs");
  const connections = positiveInt(values.connections, "connections");
  const batchSeconds = positiveInt(values["batch-seconds"], "batch-seconds");
  const batchConnections = positiveInt(values["batch-connections"], "batch-connections");
  const logLevel = values["log-level"] ?? "info";
  const existingTasks = values["existing-tasks"] === "0" ? 0 : positiveInt(values["existing-tasks"], "existing-tasks");

  const { runId, database, databaseUrl, redisUrl, prefix } = benchTarget("api");
  const children: ChildProcess[] = [];
  try {
    await migrateDatabase(databaseUrl);
    log(`database ${database} migrated`);
    const gateway = await startProcess(
      "services/gateway/src/main.ts",
      {
        DATABASE_URL: databaseUrl,
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: prefix,
        ADMIN_TOKEN,
        ENCRYPTION_KEY,
        HOST: "127.0.0.1",
        METRICS_PORT: "0",
        LOG_LEVEL: logLevel,
        RATE_LIMIT_PRODUCTION: "1000000000",
        PRODUCTION_LABEL_QUOTA: "1000000000",
      },
      "/v1/health",
    );
    children.push(gateway.child);
    const gatewayBase = `http://127.0.0.1:${gateway.port}`;
    const customer = await api<{ customer_id: string; api_key: string }>(gatewayBase, "POST", "/v1/customers", undefined, {
      name: "bench",
      email: `bench-${runId}@example.com`,
    });
    const upgraded = await api<{ api_key?: string }>(
      gatewayBase,
      "POST",
      `/v1/admin/customers/${customer.customer_id}/upgrade`,
      ADMIN_TOKEN,
      {},
    );
    const key = upgraded.api_key ?? customer.api_key;
    let existing: SeededTasks | undefined;
    if (existingTasks > 0) {
      const pool = new Pool({ ...pgConfigFromUrl(databaseUrl), max: 1 });
      try {
        existing = await seedExistingTasks(pool, customer.customer_id, existingTasks);
      } finally {
        await pool.end();
      }
      log(`seeded ${existingTasks} existing tasks in ${existing.seconds} s`);
    }
    const floor = await startProcess("bench/floor-server.ts", { DATABASE_URL: databaseUrl, CUSTOMER_ID: customer.customer_id }, "/");
    children.push(floor.child);
    log(`gateway on ${gateway.port}, floor on ${floor.port}`);

    const body = JSON.stringify(TASK);
    const pairs: {
      floor: LoadResult & { cpu_ms_per_request: number };
      gateway: LoadResult & { cpu_ms_per_request: number };
      ratio: number;
    }[] = [];
    for (let run = 1; run <= runs; run++) {
      // a short warm-up of each before each measured run
      await load(`http://127.0.0.1:${floor.port}/v1/tasks`, key, body, connections, 2);
      const floorCpu = cpuSeconds([floor.child.pid ?? 0]);
      const f = await load(`http://127.0.0.1:${floor.port}/v1/tasks`, key, body, connections, seconds);
      const floorMs = ((cpuSeconds([floor.child.pid ?? 0]) - floorCpu) * 1000) / f.requests;
      await load(`${gatewayBase}/v1/tasks`, key, body, connections, 2);
      const gatewayCpu = cpuSeconds([gateway.child.pid ?? 0]);
      const g = await load(`${gatewayBase}/v1/tasks`, key, body, connections, seconds);
      const gatewayMs = ((cpuSeconds([gateway.child.pid ?? 0]) - gatewayCpu) * 1000) / g.requests;
      // CPU ms per request of each server process: steadier than rates on a shared machine
      const pair = {
        floor: { ...f, cpu_ms_per_request: round(floorMs, 3) },
        gateway: { ...g, cpu_ms_per_request: round(gatewayMs, 3) },
        ratio: round(g.requests_per_s / f.requests_per_s, 3),
      };
      log(`run ${run}: ${JSON.stringify(pair)}`);
      pairs.push(pair);
    }

    const batchBody = JSON.stringify({
      tasks: Array.from({ length: 1000 }, (_, i) => ({ ...TASK, data_url: `https://img.example.com/${i}.jpg` })),
    });
    await load(`${gatewayBase}/v1/tasks/batch`, key, batchBody, batchConnections, 2);
    const batchRuns: (LoadResult & { tasks_per_s: number; cpu_ms_per_batch: BatchCpu })[] = [];
    // Postgres backends of the bench database (they come and go with the pools): sampled, not read once
    const backends = new CpuTracker(postgresBackends(database, new Set()));
    for (let run = 1; run <= runs; run++) {
      const countCpu = countCpuPer(
        { gateway: () => cpuSeconds([gateway.child.pid ?? 0]), postgres: () => backends.seconds(), machine: () => machineCpu().busy },
        2,
      );
      const batch = await load(`${gatewayBase}/v1/tasks/batch`, key, batchBody, batchConnections, batchSeconds);
      const cpu: BatchCpu = countCpu(batch.requests);
      batchRuns.push({ ...batch, tasks_per_s: round(batch.requests_per_s * 1000, 0), cpu_ms_per_batch: cpu });
      log(`batch run ${run}: ${JSON.stringify(batchRuns.at(-1))}`);
    }
    backends.stop();

    const summary = {
      bench: "api",
      date: new Date().toISOString(),
      machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version, load_average_at_start: os.loadavg() },
      gateway_log_level: logLevel,
      existing_tasks: existing ?? { tasks: 0 },
      single: {
        connections,
        seconds,
        runs: pairs,
        median: {
          floor_requests_per_s: median(pairs.map((p) => p.floor.requests_per_s)),
          gateway_requests_per_s: median(pairs.map((p) => p.gateway.requests_per_s)),
          ratio: median(pairs.map((p) => p.ratio)),
          gateway_p99_ms: median(pairs.map((p) => p.gateway.p99_ms)),
          gateway_non_2xx: pairs.reduce((n, p) => n + p.gateway.non_2xx + p.gateway.errors, 0),
        },
        targets: { ratio: 0.8, p99_ms: 50 },
      },
      batch: {
        connections: batchConnections,
        seconds: batchSeconds,
        tasks_per_call: 1000,
        runs: batchRuns,
        /** median of the runs */
        tasks_per_s: median(batchRuns.map((r) => r.tasks_per_s)),
        p99_ms: median(batchRuns.map((r) => r.p99_ms)),
        /** medians of the runs' CPU ms per 1,000-task call: gateway process, its Postgres backends, the whole machine */
        cpu_ms_per_batch: {
          gateway: median(batchRuns.map((r) => r.cpu_ms_per_batch.gateway)),
          postgres: median(batchRuns.map((r) => r.cpu_ms_per_batch.postgres)),
          machine: median(batchRuns.map((r) => r.cpu_ms_per_batch.machine)),
        },
        non_2xx: batchRuns.reduce((n, r) => n + r.non_2xx + r.errors, 0),
        target_tasks_per_s: 20_000,
      },
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    for (const child of children) await stop(child);
    await dropDatabase(databaseUrl).catch((err: unknown) => log(`could not drop ${database}: ${(err as Error).message}`));
    const deleted = await deleteKeysWithPrefix(redisUrl, prefix);
    log(`dropped database ${database} and ${deleted} Redis keys under ${prefix}`);
  }
}

/** CPU ms per batch call of a run: the gateway process, the Postgres backends of the bench database, the machine. */
interface BatchCpu {
  gateway: number;
  postgres: number;
  machine: number;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
