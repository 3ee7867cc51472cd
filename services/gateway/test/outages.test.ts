/**
 * Outages: Redis or Postgres unreachable. Simulated with clients pointed at a closed local port (the
 * machine's servers are shared with other runs and are never stopped by tests).
 */
import net from "node:net";
import { reconcile } from "@labelgate/consensus-worker";
import { dispatch, mergeFollowUps, QueueClient } from "@labelgate/queue";
import {
  createLabeler,
  createTask,
  eventually,
  label,
  registerCustomer,
  type System,
  startConsensusWorkers,
  startSystem,
  taskBody,
} from "../../../test/system";

/** A local port with nothing listening (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("Redis unavailable", () => {
  let healthy: System;
  let noRedis: System;
  beforeAll(async () => {
    // One isolated database for both: reconciliation below scans every task of its database.
    healthy = await startSystem({ workers: false, isolatedDatabase: true });
    noRedis = await startSystem({ workers: false, databaseUrl: healthy.databaseUrl, redisUrl: `redis://127.0.0.1:${await closedPort()}` });
  });
  afterAll(async () => {
    await noRedis.close();
    await healthy.close();
  });

  it("health answers 503 service unavailable fast", async () => {
    const started = Date.now();
    const res = await noRedis.api("GET", "/v1/health");
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: "service unavailable", ok: false, checks: { database: "ok", queue: "unavailable" } });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("a label committed while Redis is down is not lost: reconciliation settles the task", async () => {
    const c = await registerCustomer(noRedis);
    const taskId = await createTask(noRedis, c.key, { consensus_threshold: 2 });
    const labelers = [await createLabeler(noRedis), await createLabeler(noRedis)];
    for (const l of labelers) {
      const started = Date.now();
      const res = await label(noRedis, l.key, taskId, "dog");
      expect(res.status).toBe(201);
      expect(Date.now() - started).toBeLessThan(3000);
    }
    // Decided with the deciding label, but its settlement never reached a queue: the task stays settling.
    const stuck = await noRedis.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(stuck).toMatchObject({ status: "settling", claimCap: 0, consensusLabel: "dog" });

    // Redis is back (the healthy system's queue): the periodic reconciliation requeues the consensus work.
    const report = await reconcile({
      store: healthy.store,
      queue: healthy.queue,
      logger: healthy.logger,
      graceMs: 0,
      deliveryGraceMs: 0,
      webhookRetryMax: 3,
    });
    expect(report.requeued).toBeGreaterThanOrEqual(1);
    const workers = await startConsensusWorkers(healthy, 4, { RECONCILE_GRACE_MS: "0" });
    try {
      const settled = await eventually(async () => {
        const t = await healthy.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
        return t.status === "settled" ? t : undefined;
      });
      expect(settled.consensusLabel).toBe("dog");
    } finally {
      await workers.close();
    }
  });

  it("enqueue fails fast with QueueUnavailableError", async () => {
    const queue = new QueueClient({ kind: "redis", url: `redis://127.0.0.1:${await closedPort()}`, prefix: "lgtest:dead" }, 500);
    const started = Date.now();
    await expect(queue.enqueue("consensus", { taskId: "tsk_x", labelId: "lab_x" })).rejects.toThrow(/enqueue consensus/);
    expect(Date.now() - started).toBeLessThan(2000);
    await queue.close();
  });

  it("dispatch sends follow-ups, and logs those it cannot enqueue as deferred to the reconciliation", async () => {
    const warnings: { fields: Record<string, unknown>; message: string }[] = [];
    const sink = { warn: (fields: Record<string, unknown>, message: string) => void warnings.push({ fields, message }) };
    const suffix = `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
    const work = mergeFollowUps(
      { manifestExport: [{ manifestJobId: `job_a${suffix}` }] },
      { manifestExport: [{ manifestJobId: `job_b${suffix}` }], taskSettled: [] },
    );
    expect(work).toEqual({ manifestExport: [{ manifestJobId: `job_a${suffix}` }, { manifestJobId: `job_b${suffix}` }] });

    // the healthy queue takes both (no worker runs here: they wait)
    expect(await dispatch(healthy.queue, work, sink)).toEqual({ sent: 2, deferred: 0 });
    expect(await healthy.queue.requeue("manifestExport", { manifestJobId: `job_a${suffix}` })).toBe("pending");
    expect(warnings).toEqual([]);

    // Redis down: neither is enqueued, each is logged, nothing is thrown
    const dead = new QueueClient({ kind: "redis", url: `redis://127.0.0.1:${await closedPort()}`, prefix: "lgtest:dead" }, 500);
    try {
      expect(await dispatch(dead, work, sink)).toEqual({ sent: 0, deferred: 2 });
    } finally {
      await dead.close();
    }
    // one queue's payloads go in one call: one warning for both, naming the first not enqueued
    expect(warnings.map((w) => w.message)).toEqual(["manifest-export enqueue deferred to reconciliation"]);
    expect(warnings[0]?.fields).toMatchObject({ queue: "manifest-export", jobs: 2, payload: { manifestJobId: `job_a${suffix}` } });
  });

  it("a queue's follow-ups go in bulk (chunks of 500): 1,200 item fetches, each job once, a second dispatch adds none", async () => {
    const suffix = `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
    const itemFetch = Array.from({ length: 1200 }, (_, i) => ({ taskId: `tsk_bulk${suffix}_${i}` }));
    const sink = { warn: () => undefined };
    const waiting = async () => (await healthy.queue.counts("itemFetch")).waiting ?? 0;
    const before = await waiting();
    expect(await dispatch(healthy.queue, { itemFetch }, sink)).toEqual({ sent: 1200, deferred: 0 });
    expect((await waiting()) - before).toBe(1200);
    // the same payloads again: BullMQ keeps one job per id
    expect(await dispatch(healthy.queue, { itemFetch }, sink)).toEqual({ sent: 1200, deferred: 0 });
    expect((await waiting()) - before).toBe(1200);
    expect(await healthy.queue.requeue("itemFetch", itemFetch[1199] as { taskId: string })).toBe("pending");
    // a bad payload is refused before anything is sent
    await expect(healthy.queue.enqueueMany("itemFetch", [{ taskId: `tsk_ok${suffix}` }, { taskId: "nope" }])).rejects.toThrow();
    expect((await waiting()) - before).toBe(1200);
  });
});

describe("Postgres unavailable", () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem({ workers: false, databaseUrl: `postgresql://postgres@127.0.0.1:${await closedPort()}/nothing` });
  });
  afterAll(() => sys.close());

  it.each([
    ["POST", "/v1/customers", { name: "A", email: "down@example.com" }, undefined],
    ["POST", "/v1/tasks", taskBody(), "sk_sandbox_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],
    ["GET", "/v1/customers/me", undefined, "sk_sandbox_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],
    ["POST", "/v1/labeling/claims", {}, "lk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],
  ])("%s %s answers 503 service unavailable fast", async (method, path, body, token) => {
    const started = Date.now();
    const res = await sys.api(method, path, { body, token });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: "service unavailable" });
    expect(res.headers.get("retry-after")).toBe("5");
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("health answers 503 naming the database", async () => {
    const res = await sys.api("GET", "/v1/health");
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ ok: false, checks: { database: "unavailable", queue: "ok" } });
  });
});
