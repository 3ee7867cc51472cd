/**
 * Parked follow-ups (docs/decisions/0331, packages/queue/src/relay.ts): a follow_up row whose work cannot be
 * enqueued for a reason other than an outage (a payload its queue's schema refuses, a queue no relay knows)
 * is parked with its reason, logged as an error, counted, and left alone by the relay while the rows beside it
 * go on; an outage still only delays rows. An operator lists the parked rows and retries them through the admin
 * routes and `pnpm admin`. Real Postgres and Redis; the relays are the product's.
 */
import { createLogger } from "@labelgate/core";
import { FollowUpRelay, QueueClient } from "@labelgate/queue";
import type { Store } from "@labelgate/store";
import { adminRequest, sendAdmin } from "../scripts/admin-lib";
import { freePort } from "./chaos/harness";
import { ADMIN_TOKEN, eventually, type System, startSystem, useOwnStore } from "./system";

/** Log lines written at error level, as objects. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger("test", "warn", { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, errors: () => lines.filter((l) => l.level === 50) };
}

/** Writes a follow_up row as a trigger or a store transaction would, payload and all (tests only). */
async function writeRow(store: Store, queue: string, payload: unknown): Promise<string> {
  const [row] = await store.db.prisma.$queryRaw<{ id: bigint }[]>`
    INSERT INTO follow_up (queue, payload) VALUES (${queue}, ${JSON.stringify(payload)}::jsonb) RETURNING id`;
  return String(row?.id);
}

describe("the relay parks what it cannot enqueue, and only that", () => {
  const { store, queue } = useOwnStore("parked");

  it("a payload its queue refuses is parked with the reason; the good rows of its group are enqueued", async () => {
    const log = capturingLogger();
    const relay = new FollowUpRelay(store.followUps, queue, log.logger);
    const good = ["evt_parkedA", "evt_parkedB"];
    for (const eventId of good) await writeRow(store, "routeEvent", { eventId });
    const bad = await writeRow(store, "routeEvent", { eventId: 12 });

    // a row is due from its `available_at`, stored in ms: the first pass may come a fraction of a ms too early
    let sent = 0;
    await eventually(
      async () => {
        sent += await relay.drain();
        return sent >= 2 && (await store.followUps.parked(10)).length === 1 ? true : undefined;
      },
      5000,
      "two rows relayed and one parked",
    );
    expect(sent).toBe(2);
    const bull = await queue.bullmqQueue("routeEvent");
    for (const eventId of good) expect(await (await bull.getJob(`event-${eventId}`))?.getState()).toBe("waiting");
    const parked = await store.followUps.parked(10);
    expect(parked).toEqual([
      expect.objectContaining({ id: bad, queue: "routeEvent", payload: { eventId: 12 }, relayAttempts: 1, parkedAt: expect.any(Date) }),
    ]);
    expect(parked[0]?.error).toMatch(/^payload does not fit queue routeEvent: eventId: /);
    expect(await store.followUps.backlog()).toEqual({ due: 0, oldestSeconds: 0, parked: 1 });
    expect(log.errors()).toEqual([
      expect.objectContaining({ followUpId: bad, queue: "routeEvent", msg: expect.stringContaining("follow-up parked") }),
    ]);

    // parked: the next passes leave it alone (no second error line)
    expect(await relay.drain()).toBe(0);
    expect(log.errors()).toHaveLength(1);

    // fixed and retried: relayed
    await store.db.prisma.$executeRaw`UPDATE follow_up SET payload = '{"eventId": "evt_parkedC"}'::jsonb WHERE id = ${BigInt(bad)}`;
    expect(await store.followUps.retryParked([bad])).toBe(1);
    expect(await store.followUps.retryParked([bad])).toBe(0);
    // due at once: `available_at` (ms) may round up past the next claim's now(), hence a deadline, not one pass
    await eventually(async () => ((await relay.drain()) === 1 ? true : undefined), 5000, "the retried row relayed");
    expect(await (await bull.getJob("event-evt_parkedC"))?.getState()).toBe("waiting");
    expect(await store.followUps.backlog()).toEqual({ due: 0, oldestSeconds: 0, parked: 0 });
    expect(await store.followUps.list()).toEqual([]);
  });

  it("a row of a queue this version does not know waits for a relay that knows it, then is parked", async () => {
    const log = capturingLogger();
    const relay = new FollowUpRelay(store.followUps, queue, log.logger, { unknownQueueAttempts: 3, unknownQueueDelayMs: 0 });
    const id = await writeRow(store, "fromTheFuture", { x: 1 });
    /** Relays until the row has been claimed `n` times (released with no delay, it is due again within a ms). */
    const claimedTimes = (n: number) =>
      eventually(
        async () => {
          await relay.drain();
          const [row] = await store.followUps.list();
          return row === undefined || row.relayAttempts >= n ? true : undefined;
        },
        5000,
        `the row claimed ${n} times`,
      );
    // claims 1 and 2: released for a newer relay
    await claimedTimes(2);
    expect(await store.followUps.parked(10)).toEqual([]);
    expect(log.errors()).toEqual([]);
    // claim 3: parked
    await claimedTimes(3);
    const [parked] = await store.followUps.parked(10);
    expect(parked).toMatchObject({ id, queue: "fromTheFuture", relayAttempts: 3 });
    expect(parked?.error).toBe("unknown queue fromTheFuture: no relay knew it in 3 claims");
    expect(log.errors()).toHaveLength(1);
    expect(await store.followUps.retryParked()).toBe(1);
    await store.db.prisma.$executeRaw`DELETE FROM follow_up WHERE id = ${BigInt(id)}`;
  });

  it("an outage only delays rows: released, never parked", async () => {
    const log = capturingLogger();
    const down = new QueueClient({ kind: "redis", url: `redis://127.0.0.1:${await freePort()}`, prefix: "parked-down" }, 300);
    try {
      const relay = new FollowUpRelay(store.followUps, down, log.logger, { retryDelayMs: 0 });
      await writeRow(store, "routeEvent", { eventId: "evt_outage" });
      for (let i = 0; i < 3; i++) expect(await relay.drain()).toBe(0);
      expect(await store.followUps.parked(10)).toEqual([]);
      expect(log.errors()).toEqual([]);
      // one warning for the outage
      const [row] = await store.followUps.list();
      expect(row).toMatchObject({ queue: "routeEvent", payload: { eventId: "evt_outage" } });
      // the queue is back: relayed (the last release's `available_at` may round up past the next claim's now())
      const back = new FollowUpRelay(store.followUps, queue, log.logger);
      await eventually(async () => ((await back.drain()) === 1 ? true : undefined), 5000, "the row relayed once the queue is back");
    } finally {
      await down.close();
    }
  });
});

describe("an operator lists and retries parked follow-ups (admin routes, pnpm admin)", () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem({ workers: false });
  });
  afterAll(() => sys.close());

  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  it("GET /v1/admin/follow-ups shows the parked rows and why; retry makes them due again", async () => {
    const id = await writeRow(sys.store, "routeEvent", { eventId: "not-an-event" });
    const listed = await eventually(
      async () => {
        const res = await sys.api<{ parked: number; items: Record<string, unknown>[] }>("GET", "/v1/admin/follow-ups", { headers: admin });
        return res.body.parked === 1 ? res : undefined;
      },
      10_000,
      "the system's relay to park the row",
    );
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([
      {
        id,
        queue: "routeEvent",
        payload: { eventId: "not-an-event" },
        error: expect.stringMatching(/^payload does not fit queue routeEvent: eventId: /),
        relay_attempts: 1,
        created_at: expect.stringMatching(/Z$/),
        parked_at: expect.stringMatching(/Z$/),
      },
    ]);
    // the CLI prints the same
    const viaCli = (await sendAdmin(sys.baseUrl, ADMIN_TOKEN, adminRequest(["follow-ups"], { limit: "5" }))) as { parked: number };
    expect(viaCli.parked).toBe(1);

    // bad input: 400 with the error body, nothing changed
    for (const body of [{ ids: ["abc"] }, { ids: [] }, { ids: ["1"], extra: true }]) {
      const res = await sys.api<{ error: string }>("POST", "/v1/admin/follow-ups/retry", { headers: admin, body });
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual(expect.any(String));
    }
    expect((await sys.api("GET", "/v1/admin/follow-ups?limit=0", { headers: admin })).status).toBe(400);
    expect((await sys.api("POST", "/v1/admin/follow-ups/retry", { body: {} })).status).toBe(401);
    expect((await sys.store.followUps.parked(10)).map((r) => r.id)).toEqual([id]);

    // the cause fixed, the operator retries it: the relay enqueues it
    await sys.db.prisma.$executeRaw`UPDATE follow_up SET payload = '{"eventId": "evt_fixed"}'::jsonb WHERE id = ${BigInt(id)}`;
    expect(await sendAdmin(sys.baseUrl, ADMIN_TOKEN, adminRequest(["retry-follow-ups", id], {}))).toEqual({ retried: 1 });
    await eventually(async () => ((await sys.store.followUps.list()).length === 0 ? true : undefined), 10_000, "the retried row relayed");
    const bull = await sys.queue.bullmqQueue("routeEvent");
    expect(await (await bull.getJob("event-evt_fixed"))?.getState()).toBe("waiting");
    const after = await sys.api<{ parked: number; items: unknown[] }>("GET", "/v1/admin/follow-ups", { headers: admin });
    expect(after.body).toEqual({ parked: 0, items: [] });
    expect(() => adminRequest(["retry-follow-ups", "x1"], {})).toThrow(/whole number/);
  });
});
