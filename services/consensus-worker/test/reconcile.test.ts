/**
 * Reconciliation passes that meet failing requeues (issue 28, docs/reliability.md "Hardening"): a requeue that
 * races a job moved by someone else (another pass retried it first: BullMQ answers "... is not in the completed
 * state") is skipped, and any other failed requeue stays a `follow_up` row the relay warns of and tries again,
 * while the rest of the pass's work is requeued (the pass writes rows; the relay enqueues, docs/decisions/0300).
 * Real Postgres (a database of its own, so the scan finds only this file's work), a real BullMQ queue on
 * Redis, real workers.
 */
import { createLogger, type Logger } from "@labelgate/core";
import { catalog, FollowUpRelay, type RunningWorkers, startWorkers } from "@labelgate/queue";
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
  sys = await startSystem({ workers: false });
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
  relay: sys.relay,
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

it("two passes at once (two consensus workers) requeue each lost job, and log no error", async () => {
  const ids = [await manifestJob(), await manifestJob(), await manifestJob()];
  // everything this file left before is done with: only these three are completed
  await ingestQueue.clean(0, 1000, "completed");
  await completeIngestions(3);
  await stopWorkers();
  const { logger, lines } = capturedLogger();
  const reports = await Promise.all([reconcile(deps(logger)), reconcile(deps(logger))]);
  // a row waiting for the same work is not written twice; rows relayed already may be written again (a no-op requeue)
  expect(reports.reduce((n, r) => n + r.requeued, 0)).toBeGreaterThanOrEqual(3);
  expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
  for (const id of ids) expect(await (await ingestQueue.getJob(ingestJobId(id)))?.getState()).toBe("waiting");
  await eventually(async () => ((await sys.store.followUps.list()).length === 0 ? true : undefined), 10_000, "every row relayed");
});

it("a requeue that fails otherwise stays a row the relay warns of, and the pass still requeues the rest", async () => {
  const [broken, ...others] = [await manifestJob(), await manifestJob(), await manifestJob()];
  // their ingestion rows relayed first (the jobs are in Redis): what follows is Redis losing them
  await eventually(async () => ((await sys.store.followUps.list()).length === 0 ? true : undefined), 10_000, "the jobs' rows relayed");
  // Redis lost the other two jobs; the first one's key holds something that is not a job (WRONGTYPE)
  for (const id of others) await (await ingestQueue.getJob(ingestJobId(id)))?.remove();
  const brokenKey = `${sys.prefix}:${catalog.manifestIngest.name}:${ingestJobId(broken as string)}`;
  await (await ingestQueue.getJob(ingestJobId(broken as string)))?.remove();
  await redis.set(brokenKey, "not a job");
  // this test's relay alone (its warnings captured): the system's own is paused
  await sys.relay.stop();
  const { logger, lines } = capturedLogger();
  const relay = new FollowUpRelay(sys.store.followUps, sys.queue, logger);
  try {
    const report = await reconcile({ ...deps(logger), relay });
    expect(report.requeued).toBeGreaterThanOrEqual(3);
    for (const id of others) expect(await (await ingestQueue.getJob(ingestJobId(id)))?.getState()).toBe("waiting");
    const warned = lines.filter((l) => String(l.msg).startsWith("follow-up relay could not enqueue"));
    expect(warned).toHaveLength(1);
    expect(String((warned[0]?.err as { message?: string })?.message)).toMatch(/WRONGTYPE/);
    // the broken work waits as a row, and only it
    const waiting = await sys.store.followUps.list();
    expect(waiting.map((r) => r.payload)).toEqual([{ manifestJobId: broken }]);
    // a second pass while it waits writes no second row for it
    await reconcile({ ...deps(logger), relay: { drain: async () => 0 } });
    const brokenRows = (await sys.store.followUps.list()).filter((r) => (r.payload as { manifestJobId?: string }).manifestJobId === broken);
    expect(brokenRows).toHaveLength(1);
    await sys.db.pool.query("DELETE FROM follow_up WHERE payload <> $1::jsonb", [JSON.stringify({ manifestJobId: broken })]);
    // Redis mended: the row is relayed on the next try
    await redis.del(brokenKey);
    await sys.db.pool.query("UPDATE follow_up SET available_at = now()");
    expect(await relay.drain()).toBe(1);
    expect(await (await ingestQueue.getJob(ingestJobId(broken as string)))?.getState()).toBe("waiting");
    expect(lines.some((l) => l.msg === "follow-up relay enqueues again")).toBe(true);
  } finally {
    await redis.del(brokenKey);
    sys.relay.start();
  }
});
