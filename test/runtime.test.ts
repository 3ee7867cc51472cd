/**
 * `pnpm start` runs exactly what the distributed services run (docs/architecture.md):
 * both are built by `createRuntime`. A standalone process (scripts/standalone.ts, every role) and a
 * distributed consensus-worker process, started with the same settings, register the reconcile schedule and
 * run their workers with the configured lock duration (read back from Redis and from each process's
 * `labelgate_worker_setting` gauge), and the standalone process runs a worker on every queue of the catalog.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { catalog, queueNames } from "@labelgate/queue";
import { dropDatabase } from "@labelgate/store";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { REDIS_URL, runPrefix } from "./env";
import { ops, type ServiceProcess, startService, startStandalone } from "./processes";
import { eventually, isolatedDatabaseUrl } from "./system";

const LOCK_MS = 7000;
const RECONCILE_MS = 4321;

let databaseUrl = "";
let dataDir = "";
const procs: ServiceProcess[] = [];

afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill()));
  // standalone's chain runs in a process group of its own: a SIGKILLed standalone leaves it (issue 28 item 9)
  for (const p of procs) {
    const pid = Number(p.logs.find((l) => l.msg === "local chain started")?.pid);
    if (pid > 0) stopOrphan(pid);
  }
  if (databaseUrl) await dropDatabase(databaseUrl);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** SIGKILLs `pid` when it still runs. */
function stopOrphan(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** The `labelgate_worker_setting` samples of a process's /metrics, by `queue setting`. */
async function workerSettings(p: ServiceProcess): Promise<Map<string, number>> {
  const text = (await ops(p, "/metrics")).text;
  const settings = new Map<string, number>();
  for (const m of text.matchAll(/^labelgate_worker_setting\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...(m[1] as string).matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    settings.set(`${labels.queue} ${labels.setting}`, Number(m[2]));
  }
  return settings;
}

/** The reconcile scheduler registered under `prefix`, or undefined. */
async function reconcileScheduler(prefix: string): Promise<{ every?: number | null } | undefined> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(catalog.reconcile.name, { connection: redis, prefix });
  try {
    const found = await queue.getJobScheduler(`${catalog.reconcile.name}-scheduler`);
    return found ? { every: found.every } : undefined;
  } finally {
    await queue.close();
    redis.disconnect();
  }
}

it("a standalone process and a distributed worker, same settings: same schedule, same lock duration", async () => {
  databaseUrl = await isolatedDatabaseUrl();
  dataDir = mkdtempSync(path.join(os.tmpdir(), "lg-standalone-"));
  const env = { QUEUE_LOCK_DURATION_MS: String(LOCK_MS), RECONCILE_INTERVAL_MS: String(RECONCILE_MS), DATA_DIR: dataDir };
  const standalonePrefix = `${runPrefix()}:${randomBytes(4).toString("hex")}`;
  const workerPrefix = `${runPrefix()}:${randomBytes(4).toString("hex")}`;
  const standalone = await startStandalone({ databaseUrl, prefix: standalonePrefix, env });
  procs.push(standalone);
  const worker = await startService("consensus-worker", { databaseUrl, prefix: workerPrefix, env });
  procs.push(worker);

  // the reconcile schedule, registered by both at start (Redis: REDIS_URL is set for both)
  for (const prefix of [standalonePrefix, workerPrefix]) {
    const scheduler = await eventually(() => reconcileScheduler(prefix), 10_000, `the reconcile scheduler under ${prefix}`);
    expect(scheduler.every).toBe(RECONCILE_MS);
  }

  // the lock duration (and stalled-job interval) the workers of each process run with
  const standaloneSettings = await workerSettings(standalone);
  const workerSettingsOf = await workerSettings(worker);
  for (const key of Object.keys(catalog) as (keyof typeof catalog)[]) {
    // standalone runs every queue's worker
    expect({ queue: key, lock: standaloneSettings.get(`${queueNames[key]} lock_duration_seconds`) }).toEqual({
      queue: key,
      lock: LOCK_MS / 1000,
    });
  }
  for (const key of ["consensus", "reconcile"] as const) {
    const name = queueNames[key];
    expect(workerSettingsOf.get(`${name} lock_duration_seconds`)).toBe(LOCK_MS / 1000);
    // the same role, the same settings, whichever process runs it
    expect(standaloneSettings.get(`${name} concurrency`)).toBe(workerSettingsOf.get(`${name} concurrency`));
  }
  // the standalone gateway answers
  const health = await fetch(`http://127.0.0.1:${standalone.port}/v1/health`);
  expect(health.status).toBe(200);
});
