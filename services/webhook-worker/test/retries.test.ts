/**
 * Webhook retries (contract §events): the schedule (delay before attempt k+1 is 4^(k−1) s), exactly
 * WEBHOOK_RETRY_MAX attempts then `failed` for every kind of failure (5xx, timeout, connection reset, 3xx
 * not followed), nothing after that, and other customers' deliveries flowing while one receiver hangs.
 */
import { catalog } from "@labelgate/queue";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { REDIS_URL, scaled } from "../../../test/env";
import { createLabeler, eventually, registerCustomer, type System, startSystem } from "../../../test/system";
import {
  type Answer,
  type DeliveryView,
  deliveryReaching,
  json,
  newSecret,
  type Received,
  type Receiver,
  receivers,
  registerWebhook,
  settleTask,
  signedWith,
  stays,
  taskView,
  type WebhookScenario,
  webhookScenario,
  webhookStatusReaching,
} from "../../../test/webhooks";

let redis: Redis;
const queues: Queue[] = [];

/** BullMQ state of a delivery's scheduled job (by the catalog's queue name and job id). */
async function scheduledJobState(s: System, deliveryId: string): Promise<string | undefined> {
  const q = new Queue(catalog.webhookDelivery.name, { connection: redis, prefix: s.prefix });
  queues.push(q);
  const job = await q.getJob(catalog.webhookDelivery.jobId({ deliveryId }));
  return job?.getState();
}

const { rx, closeAll } = receivers();

const systems: System[] = [];
let defaults: Promise<{ sys: System; labelerKey: string }> | undefined;
/** The system with the defaults (WEBHOOK_RETRY_MAX=3, 10 s timeout), shared by the tests that need them. */
const defaultSystem = () => {
  defaults ??= system({ webhookRetryMax: 3 });
  return defaults;
};
async function system(options: Parameters<typeof startSystem>[0]): Promise<{ sys: System; labelerKey: string }> {
  const sys = await startSystem({ ...options });
  systems.push(sys);
  return { sys, labelerKey: (await createLabeler(sys)).key };
}

beforeAll(() => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  // receivers first: hanging requests end, so the workers can close without waiting for timeouts
  await closeAll();
  await Promise.all(systems.map((s) => s.close()));
  await Promise.all(queues.map((q) => q.close()));
  redis?.disconnect();
});

/** A customer, a webhook at a new receiver answering `reply`, and a task that settles at once. */
async function scenario(sys: System, labelerKey: string, reply: Answer): Promise<WebhookScenario> {
  return webhookScenario(sys, labelerKey, await rx(reply));
}

/** Every request of the scenario: one event, attempts numbered 1..n, each validly signed. */
function expectAttemptsOfOneEvent(s: WebhookScenario, n: number, eventId: string): void {
  expect(s.r.received).toHaveLength(n);
  expect(s.r.received.map((q) => q.headers["x-svc-delivery-attempt"])).toEqual(Array.from({ length: n }, (_, i) => String(i + 1)));
  for (const q of s.r.received) {
    expect(q.headers["x-svc-event-id"]).toBe(eventId);
    expect(signedWith(q.raw, q.headers["x-svc-signature"], s.secret)).toBe(true);
    expect(json(q).task_id).toBe(s.taskId);
  }
}

function gaps(received: Received[]): number[] {
  return received.slice(1).map((q, i) => q.at - (received[i] as Received).at);
}

describe("WEBHOOK_RETRY_MAX=3 (default)", () => {
  let flaky: WebhookScenario;
  let dead: WebhookScenario;
  beforeAll(async () => {
    const { sys, labelerKey } = await defaultSystem();
    // both run side by side: the receiver failing twice, and the one that always fails
    [flaky, dead] = await Promise.all([scenario(sys, labelerKey, (q) => (q.n <= 2 ? 500 : 200)), scenario(sys, labelerKey, () => 500)]);
  });

  it("retries a receiver that fails twice after ≈1 s and ≈4 s, then it is delivered with 3 attempts logged", async () => {
    const d = await deliveryReaching(flaky.sys, flaky.key, flaky.webhookId, flaky.taskId, "delivered");
    expectAttemptsOfOneEvent(flaky, 3, d.event_id);
    const [g1, g2] = gaps(flaky.r.received) as [number, number];
    // never early; late by at most the slack a loaded machine adds (TEST_TIME_SCALE: 3 on CI)
    expect(g1).toBeGreaterThanOrEqual(1000 - 600);
    expect(g1).toBeLessThanOrEqual(1000 + scaled(600));
    expect(g2).toBeGreaterThanOrEqual(4000 - 600);
    expect(g2).toBeLessThanOrEqual(4000 + scaled(1500));

    expect(d.attempts).toBe(3);
    // newest first
    expect(d.attempt_log.map((a) => [a.attempt, a.success, a.status_code, a.manual])).toEqual([
      [3, true, 200, false],
      [2, false, 500, false],
      [1, false, 500, false],
    ]);
    for (const a of d.attempt_log) {
      expect(a.latency_ms).toBeGreaterThanOrEqual(0);
      expect(Date.parse(a.finished_at)).toBeGreaterThanOrEqual(Date.parse(a.started_at));
    }
    expect(d.attempt_log[1]?.error).toMatch(/500/);
    expect(d.attempt_log[0]?.error).toBeNull();
    await webhookStatusReaching(flaky.sys, flaky.key, flaky.taskId, "delivered");
  });

  it("makes exactly 3 attempts at a receiver that always answers 500, then marks the delivery and the task failed", async () => {
    const d = await deliveryReaching(dead.sys, dead.key, dead.webhookId, dead.taskId, "failed");
    expectAttemptsOfOneEvent(dead, 3, d.event_id);
    const [g1, g2] = gaps(dead.r.received) as [number, number];
    expect(g1).toBeGreaterThanOrEqual(400);
    expect(g1).toBeLessThanOrEqual(1000 + scaled(600));
    expect(g2).toBeGreaterThanOrEqual(3400);
    expect(g2).toBeLessThanOrEqual(4000 + scaled(1500));
    expect(d.attempts).toBe(3);
    expect(d.attempt_log.map((a) => [a.attempt, a.success, a.status_code])).toEqual([
      [3, false, 500],
      [2, false, 500],
      [1, false, 500],
    ]);
    await webhookStatusReaching(dead.sys, dead.key, dead.taskId, "failed");
    // nothing more is scheduled: the delivery's job is finished, and no 4th request arrives
    expect(["completed", "failed"]).toContain(await scheduledJobState(dead.sys, d.delivery_id));
    await stays(() => dead.r.received.length === 3, 2000, "no 4th attempt");
    const after = await deliveryReaching(dead.sys, dead.key, dead.webhookId, dead.taskId, "failed");
    expect(after.attempts).toBe(3);
  });
});

describe("WEBHOOK_RETRY_MAX=2: exactly 2 attempts, then failed, for every kind of failure", () => {
  const cases: Record<"500" | "timeout" | "reset" | "302", WebhookScenario> = {} as never;
  let redirectTarget: Receiver;
  beforeAll(async () => {
    const { sys, labelerKey } = await system({ webhookRetryMax: 2, webhookTimeoutMs: 300 });
    redirectTarget = await rx(() => 200);
    const [c500, cTimeout, cReset, c302] = await Promise.all([
      scenario(sys, labelerKey, () => 500),
      scenario(sys, labelerKey, () => "hang"),
      scenario(sys, labelerKey, () => "reset"),
      scenario(sys, labelerKey, () => ({ status: 302, headers: { location: redirectTarget.url } })),
    ]);
    Object.assign(cases, { "500": c500, timeout: cTimeout, reset: cReset, "302": c302 });
  });

  async function exhausted(s: WebhookScenario): Promise<DeliveryView> {
    const d = await deliveryReaching(s.sys, s.key, s.webhookId, s.taskId, "failed");
    expectAttemptsOfOneEvent(s, 2, d.event_id);
    const [g1] = gaps(s.r.received) as [number];
    expect(g1).toBeGreaterThanOrEqual(400);
    expect(g1).toBeLessThanOrEqual(2000);
    expect(d.attempts).toBe(2);
    expect(d.attempt_log.map((a) => [a.attempt, a.success, a.manual])).toEqual([
      [2, false, false],
      [1, false, false],
    ]);
    for (const a of d.attempt_log) expect(a.error).toEqual(expect.any(String));
    await webhookStatusReaching(s.sys, s.key, s.taskId, "failed");
    expect(["completed", "failed"]).toContain(await scheduledJobState(s.sys, d.delivery_id));
    return d;
  }

  it("500", async () => {
    const d = await exhausted(cases["500"]);
    expect(d.attempt_log.map((a) => a.status_code)).toEqual([500, 500]);
  });

  it("timeout: the receiver never answers (WEBHOOK_TIMEOUT_MS=300)", async () => {
    const d = await exhausted(cases.timeout);
    for (const a of d.attempt_log) {
      expect(a.status_code).toBeNull();
      expect(a.error).toMatch(/time/i);
      expect(a.latency_ms).toBeGreaterThanOrEqual(250);
      expect(a.latency_ms).toBeLessThan(3000);
    }
    // the worker gave up on the request: both connections were closed by it
    await eventually(async () => (cases.timeout.r.received.every((q) => !q.open) ? true : undefined), 5000, "timed-out requests closed");
  });

  it("connection reset: the receiver destroys the socket", async () => {
    const d = await exhausted(cases.reset);
    for (const a of d.attempt_log) expect(a.status_code).toBeNull();
  });

  it("302 with Location: not followed, the Location target receives nothing", async () => {
    const d = await exhausted(cases["302"]);
    expect(d.attempt_log.map((a) => a.status_code)).toEqual([302, 302]);
    expect(redirectTarget.received).toHaveLength(0);
  });

  it("no attempt after the last one: nothing arrives past the would-be next delay (4 s)", async () => {
    await stays(
      () => Object.values(cases).every((s) => s.r.received.length === 2) && redirectTarget.received.length === 0,
      4500,
      "no 3rd attempt anywhere",
    );
    for (const s of Object.values(cases)) {
      const d = await deliveryReaching(s.sys, s.key, s.webhookId, s.taskId, "failed");
      expect(d.attempts).toBe(2);
    }
  });
});

describe("isolation", () => {
  it("other customers' deliveries keep flowing while one receiver hangs (10 s timeout)", async () => {
    const { sys, labelerKey } = await defaultSystem();
    const hanging = await rx(() => "hang");
    const a = await registerCustomer(sys);
    await registerWebhook(sys, a.key, hanging.url);
    const aTasks: string[] = [];
    for (let i = 0; i < 5; i++) aTasks.push(await settleTask(sys, a.key, labelerKey, { callback_url: hanging.url }));
    await eventually(async () => (hanging.received.length === aTasks.length ? true : undefined), 10000, "A's requests to hang");
    const hangingSince = (hanging.received[0] as Received).at;

    const fast = await rx(() => 200);
    const b = await registerCustomer(sys);
    const bSecret = newSecret();
    await registerWebhook(sys, b.key, fast.url, bSecret);
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const taskId = await settleTask(sys, b.key, labelerKey, { callback_url: fast.url });
      const got = await eventually(async () => fast.forTask(taskId)[0], 10000, `B's task ${i}`);
      expect(got.at - started).toBeLessThan(3000);
      expect(signedWith(got.raw, got.headers["x-svc-signature"], bSecret)).toBe(true);
      await webhookStatusReaching(sys, b.key, taskId, "delivered");
    }
    // A's requests are all still hanging (none answered, none timed out yet)
    expect(Date.now() - hangingSince).toBeLessThan(10_000);
    expect(hanging.received.every((q) => q.open)).toBe(true);
    for (const t of aTasks) expect((await taskView(sys, a.key, t)).webhook_status).toBe("pending");
  });

  // One customer with more hanging deliveries than the worker has slots: the per-webhook in-flight cap
  // (WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK) keeps slots free, so another customer's deliveries still arrive at once.
  it("other customers' deliveries keep flowing while one receiver hangs on more deliveries than the worker has slots", async () => {
    const { sys, labelerKey } = await defaultSystem();
    const hanging = await rx(() => "hang");
    const a = await registerCustomer(sys, 1000);
    const aHook = await registerWebhook(sys, a.key, hanging.url);
    const aTasks = 70;
    for (let i = 0; i < aTasks; i++) await settleTask(sys, a.key, labelerKey, { callback_url: hanging.url });
    await eventually(
      async () => ((await sys.db.prisma.delivery.count({ where: { webhookId: aHook } })) === aTasks ? true : undefined),
      20000,
      "A's deliveries",
    );
    await eventually(async () => (hanging.received.length > 0 ? true : undefined), 10000, "A's first request");

    const fast = await rx(() => 200);
    const b = await registerCustomer(sys);
    await registerWebhook(sys, b.key, fast.url);
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const taskId = await settleTask(sys, b.key, labelerKey, { callback_url: fast.url });
      const got = await eventually(async () => fast.forTask(taskId)[0], 15000, `B's task ${i}`);
      expect(got.at - started).toBeLessThan(3000);
      // ...while A's receiver was still holding requests open (A's earliest ones may have hit their
      // 10 s timeout by now on a busy machine, and been retried; some are always hanging)
      expect(hanging.received.some((q) => q.open)).toBe(true);
    }
  });
});
