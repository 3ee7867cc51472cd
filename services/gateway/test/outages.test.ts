/**
 * Outages: Redis or Postgres unreachable. Simulated with clients pointed at a closed local port (the
 * machine's servers are shared with other runs and are never stopped by tests).
 */
import { FollowUpRelay, QueueClient } from "@labelgate/queue";
import { freePort } from "../../../test/chaos/harness";
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

describe("Redis unavailable", () => {
  let healthy: System;
  let noRedis: System;
  beforeAll(async () => {
    // One isolated database for both: reconciliation below scans every task of its database.
    healthy = await startSystem({ workers: false });
    noRedis = await startSystem({ workers: false, databaseUrl: healthy.databaseUrl, redisUrl: `redis://127.0.0.1:${await freePort()}` });
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

  it("a label committed while Redis is down is not lost: its follow-up row is relayed once Redis is back, no reconciliation", async () => {
    // no relay of the healthy system runs yet: Redis is "down" for every relay but a dead one
    await healthy.relay.stop();
    const c = await registerCustomer(noRedis);
    const taskId = await createTask(noRedis, c.key, { consensus_threshold: 2 });
    const labelers = [await createLabeler(noRedis), await createLabeler(noRedis)];
    for (const l of labelers) {
      const started = Date.now();
      const res = await label(noRedis, l.key, taskId, "dog");
      expect(res.status).toBe(201);
      expect(Date.now() - started).toBeLessThan(3000);
    }
    // Decided with the deciding label; its settlement is a follow_up row of the label's transaction, which
    // the relay of the process without Redis claimed and released (its enqueue failed): it waits.
    const stuck = await noRedis.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(stuck).toMatchObject({ status: "settling", claimCap: 0, consensusLabel: "dog" });
    const row = await eventually(
      async () => {
        const rows = await healthy.store.followUps.list();
        const mine = rows.find((r) => r.queue === "consensus" && (r.payload as { taskId: string }).taskId === taskId);
        const tried = await healthy.db.prisma.followUp.findFirst({ where: { id: mine ? BigInt(mine.id) : -1n, relayAttempts: { gt: 0 } } });
        return tried ? mine : undefined;
      },
      10_000,
      "the follow-up row tried by the relay without Redis",
    );
    expect(row?.payload).toEqual({ taskId, labelId: stuck.lastLabelId });

    // Redis is back (the healthy system's relay and queue): the row is relayed, the task settles
    healthy.relay.start();
    const workers = await startConsensusWorkers(healthy, 4, { RECONCILE_GRACE_MS: "3600000" });
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
    const queue = new QueueClient({ kind: "redis", url: `redis://127.0.0.1:${await freePort()}`, prefix: "lgtest:dead" }, 500);
    const started = Date.now();
    await expect(queue.enqueue("consensus", { taskId: "tsk_x", labelId: "lab_x" })).rejects.toThrow(/enqueue consensus/);
    expect(Date.now() - started).toBeLessThan(2000);
    await queue.close();
  });

  describe("the follow-up relay", () => {
    // the systems' own relays stay out of the way: these tests drive relays of their own over the table
    beforeAll(async () => {
      await healthy.relay.stop();
      await noRedis.relay.stop();
    });
    afterAll(() => healthy.relay.start());

    it("keeps the rows it cannot enqueue (one warning), and sends and deletes them once the queue answers", async () => {
      const warnings: string[] = [];
      const infos: string[] = [];
      const sink = {
        warn: (_: Record<string, unknown>, message: string) => void warnings.push(message),
        info: (_: Record<string, unknown>, message: string) => void infos.push(message),
        error: (_: Record<string, unknown>, message: string) => void warnings.push(message),
      };
      const suffix = `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
      const ids = [`job_a${suffix}`, `job_b${suffix}`];
      await healthy.store.followUps.add({ manifestExport: ids.map((manifestJobId) => ({ manifestJobId })) });
      const mine = async () =>
        (await healthy.store.followUps.list()).filter((r) => ids.includes((r.payload as { manifestJobId: string }).manifestJobId));

      const dead = new QueueClient({ kind: "redis", url: `redis://127.0.0.1:${await freePort()}`, prefix: "lgtest:dead" }, 500);
      try {
        const down = new FollowUpRelay(healthy.store.followUps, dead, sink, { retryDelayMs: 0 });
        await down.drain();
        await down.drain();
      } finally {
        await dead.close();
      }
      expect(await mine()).toHaveLength(2);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/could not enqueue/);
      expect((await healthy.store.followUps.backlog()).due).toBeGreaterThanOrEqual(2);

      const up = new FollowUpRelay(healthy.store.followUps, healthy.queue, sink);
      await up.drain();
      expect(await mine()).toEqual([]);
      for (const manifestJobId of ids) expect(await healthy.queue.requeue("manifestExport", { manifestJobId })).toBe("pending");
    });

    it("two relays on one table enqueue each of 1,200 rows once; rows relayed again add no job", async () => {
      const suffix = `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
      const itemFetch = Array.from({ length: 1200 }, (_, i) => ({ taskId: `tsk_bulk${suffix}_${i}` }));
      const waiting = async () => (await healthy.queue.counts("itemFetch")).waiting ?? 0;
      const before = await waiting();
      await healthy.store.followUps.add({ itemFetch });
      const sink = { warn: () => undefined, info: () => undefined, error: () => undefined };
      // two relays, each with its own queue client, as two replicas
      const other = new QueueClient(healthy.backend, 2000);
      try {
        const a = new FollowUpRelay(healthy.store.followUps, healthy.queue, sink, { batch: 100 });
        const b = new FollowUpRelay(healthy.store.followUps, other, sink, { batch: 100 });
        const [sentA, sentB] = await Promise.all([a.drain(), b.drain()]);
        expect(sentA + sentB).toBe(1200);
        expect(sentA).toBeGreaterThan(0);
        expect(sentB).toBeGreaterThan(0);
      } finally {
        await other.close();
      }
      expect((await waiting()) - before).toBe(1200);
      expect((await healthy.store.followUps.list()).filter((r) => r.queue === "itemFetch")).toEqual([]);
      // the same payloads again (a row relayed twice): BullMQ keeps one job per id
      await healthy.store.followUps.add({ itemFetch });
      expect(await new FollowUpRelay(healthy.store.followUps, healthy.queue, sink).drain()).toBe(1200);
      expect((await waiting()) - before).toBe(1200);
      // a bad payload is refused before anything is sent
      await expect(healthy.queue.enqueueMany("itemFetch", [{ taskId: `tsk_ok${suffix}` }, { taskId: "nope" }])).rejects.toThrow();
      expect((await waiting()) - before).toBe(1200);
    });
  });
});

describe("Postgres unavailable", () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem({ workers: false, databaseUrl: `postgresql://postgres@127.0.0.1:${await freePort()}/nothing` });
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
