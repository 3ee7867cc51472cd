/**
 * Reconciliation passes that meet failing requeues (issue 28, docs/reliability.md "Hardening"): a requeue that
 * races a job moved by someone else (another pass retried it first: BullMQ answers "... is not in the completed
 * state") is skipped and logged at debug level, and any other failed requeue is logged while the pass goes on
 * with the rest of its work. Real Postgres (a database of its own, so the scan finds only this file's work),
 * a real BullMQ queue on Redis, real workers.
 */
import { createLogger, type Logger } from "@labelgate/core";
import { catalog, type RunningWorkers, startWorkers } from "@labelgate/queue";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { REDIS_URL } from "../../../test/env";
import { eventually, registerCustomer, type System, startSystem } from "../../../test/system";
import { reconcile } from "../src";

/** A JSON-lines logger whose lines are kept (level debug). */
function capturedLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger("reconcile-test", "debug", { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

let sys: System;
let redis: Redis;
let ingestQueue: Queue;
let workers: RunningWorkers | undefined;
let customerKey: string;

beforeAll(async () => {
  sys = await startSystem({ isolatedDatabase: true, workers: false });
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  ingestQueue = new Queue(catalog.manifestIngest.name, { connection: redis, prefix: sys.prefix });
  customerKey = (await registerCustomer(sys)).key;
});
afterAll(async () => {
  await workers?.closeWithin(2000);
  await ingestQueue.close();
  redis.disconnect();
  await sys.close();
});

/** A manifest job created through the gateway (its ingestion job waits in the queue; no manifest worker runs). */
async function manifestJob(): Promise<string> {
  const res = await sys.api<{ job_id: string }>("POST", "/v1/jobs", {
    token: customerKey,
    body: { manifest_url: "https://manifests.example/m.jsonl", label_spec: { question: "q?", options: ["a", "b"] } },
  });
  expect(res.status).toBe(202);
  return res.body.job_id;
}

const ingestJobId = (manifestJobId: string) => catalog.manifestIngest.jobId({ manifestJobId });

/** Completes every waiting ingestion job with a worker that does nothing (the rows stay `queued`: lost work). */
async function completeIngestions(n: number): Promise<void> {
  workers ??= startWorkers<"manifest-worker">(sys.backend, {
    manifestIngest: async () => undefined,
    manifestExport: async () => undefined,
    itemFetch: async () => undefined,
  });
  await eventually(async () => ((await sys.queue.counts("manifestIngest")).completed === n ? true : undefined), 15_000, `${n} completed`);
}

const deps = (logger: Logger) => ({
  store: sys.store,
  queue: sys.queue,
  logger,
  graceMs: 0,
  deliveryGraceMs: 3_600_000,
  webhookRetryMax: 3,
});

/** Ends the no-op workers (the jobs they completed stay completed). */
async function stopWorkers(): Promise<void> {
  await workers?.closeWithin(2000);
  workers = undefined;
}

it("a requeue that races another one on a completed job answers raced instead of throwing", async () => {
  const id = await manifestJob();
  await completeIngestions(1);
  await stopWorkers();
  // several reconcilers at once: each reads `completed`, the first retry moves the job, the others race it
  const results = await Promise.all(Array.from({ length: 4 }, () => sys.queue.requeue("manifestIngest", { manifestJobId: id })));
  expect(results.filter((r) => r === "retried")).toHaveLength(1);
  expect(results.filter((r) => r === "raced").length).toBeGreaterThan(0);
  expect(results.every((r) => r === "retried" || r === "raced" || r === "pending")).toBe(true);
  expect(await (await ingestQueue.getJob(ingestJobId(id)))?.getState()).toBe("waiting");
  await (await ingestQueue.getJob(ingestJobId(id)))?.remove();
});

it("a pass whose requeues race another reconciler skips them at debug level and goes on", async () => {
  const ids = [await manifestJob(), await manifestJob(), await manifestJob()];
  // everything this file left before is done with: only these three are completed
  await ingestQueue.clean(0, 1000, "completed");
  await completeIngestions(3);
  await stopWorkers();
  const { logger, lines } = capturedLogger();
  // another reconciler requeues the same work at the same moment (issued first, so it wins each race)
  const rival = sys.queue;
  const racing = Object.create(rival) as typeof rival;
  racing.requeue = (async (key, payload, overrides) => {
    const theirs = rival.requeue(key, payload, overrides);
    const ours = rival.requeue(key, payload, overrides);
    await theirs;
    return ours;
  }) as typeof rival.requeue;
  const report = await reconcile({ ...deps(logger), queue: racing });
  expect(report).toMatchObject({ failed: 0 });
  expect(report.raced).toBeGreaterThanOrEqual(1);
  const skipped = lines.filter((l) => l.msg === "requeue skipped: the job moved on meanwhile");
  expect(skipped.length).toBe(report.raced);
  expect(skipped.every((l) => l.level === 20 && l.queue === "manifestIngest")).toBe(true);
  expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
  // every job was requeued, by one reconciler or the other
  for (const id of ids) expect(await (await ingestQueue.getJob(ingestJobId(id)))?.getState()).toBe("waiting");
});

it("a requeue that fails otherwise is logged, and the pass still requeues the rest", async () => {
  const [broken, ...others] = [await manifestJob(), await manifestJob(), await manifestJob()];
  // Redis lost the other two jobs; the first one's key holds something that is not a job (WRONGTYPE)
  for (const id of others) await (await ingestQueue.getJob(ingestJobId(id)))?.remove();
  const brokenKey = `${sys.prefix}:${catalog.manifestIngest.name}:${ingestJobId(broken as string)}`;
  await (await ingestQueue.getJob(ingestJobId(broken as string)))?.remove();
  await redis.set(brokenKey, "not a job");
  try {
    const { logger, lines } = capturedLogger();
    const report = await reconcile(deps(logger));
    expect(report.failed).toBe(1);
    expect(report.requeued).toBeGreaterThanOrEqual(2);
    for (const id of others) expect(await (await ingestQueue.getJob(ingestJobId(id)))?.getState()).toBe("waiting");
    const errors = lines.filter((l) => l.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      msg: "reconciliation could not requeue some lost work; the next pass tries again",
      failed: 1,
      failures: [{ queue: "manifestIngest", work: broken, error: expect.stringMatching(/WRONGTYPE/) }],
    });
  } finally {
    await redis.del(brokenKey);
  }
});
