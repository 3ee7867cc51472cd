/**
 * Manual redelivery (POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver): a new signed request for the
 * same event, logged as a manual attempt, moving the delivery and the task to `delivered` on success.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createLabeler, createTask, eventually, label, registerCustomer, type System, startSystem } from "../../../test/system";

// --- a real local receiver ------------------------------------------------------------------------

type Reply = number | { status: number; headers?: Record<string, string> } | "hang" | "reset";

interface Received {
  /** 1-based index of the request at this receiver */
  n: number;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: string;
  at: number;
  /** still waiting for an answer on an open connection */
  open: boolean;
}

/** A node:http server on 127.0.0.1:0 answering each request with `reply(request)`. */
async function receiver(reply: (r: Received) => Reply | Promise<Reply> = () => 200) {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const r: Received = { n: received.length + 1, headers: req.headers, raw, body: raw.toString("utf8"), at: Date.now(), open: true };
      received.push(r);
      res.on("close", () => {
        r.open = false;
      });
      void Promise.resolve(reply(r)).then((action) => {
        if (action === "hang") return;
        if (action === "reset") {
          req.socket.resetAndDestroy();
          return;
        }
        const { status, headers } = typeof action === "number" ? { status: action, headers: {} } : action;
        res.writeHead(status, { "content-type": "text/plain", ...headers });
        res.end("ok");
      });
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    /** requests whose JSON body names `taskId` */
    forTask: (taskId: string) => received.filter((r) => json(r).task_id === taskId),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
type Receiver = Awaited<ReturnType<typeof receiver>>;

function json(r: Received): Record<string, unknown> {
  return JSON.parse(r.body) as Record<string, unknown>;
}

/** Our own verification: `sha256=<64 lowercase hex>` equal (constant time) to HMAC-SHA256(secret, raw bytes). */
function signedWith(raw: Buffer, header: string | string[] | undefined, secret: string): boolean {
  if (typeof header !== "string") return false;
  const hex = /^sha256=([0-9a-f]{64})$/.exec(header)?.[1];
  if (!hex) return false;
  return timingSafeEqual(Buffer.from(hex, "hex"), createHmac("sha256", Buffer.from(secret, "utf8")).update(raw).digest());
}

// --- API helpers ----------------------------------------------------------------------------------

interface AttemptView {
  attempt_id: string;
  attempt: number;
  manual: boolean;
  success: boolean;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
  started_at: string;
  finished_at: string;
}

interface DeliveryView {
  delivery_id: string;
  event_id: string;
  task_id: string;
  status: string;
  attempts: number;
  last_error: string | null;
  attempt_log: AttemptView[];
}

const newSecret = () => `whsec-${randomBytes(12).toString("hex")}`;

async function registerWebhook(s: System, key: string, url: string, secret: string): Promise<string> {
  const res = await s.api<{ webhook_id: string }>("POST", "/v1/webhooks", { token: key, body: { callback_url: url, secret } });
  expect(res.status).toBe(201);
  return res.body.webhook_id;
}

async function deliveriesOf(s: System, key: string, webhookId: string): Promise<{ total: number; items: DeliveryView[] }> {
  const res = await s.api<{ total: number; items: DeliveryView[] }>("GET", `/v1/webhooks/${webhookId}/deliveries?per_page=100`, {
    token: key,
  });
  expect(res.status).toBe(200);
  return res.body;
}

/** Waits until the delivery of `taskId` to `webhookId` has `status`, and returns it. */
async function deliveryReaching(s: System, key: string, webhookId: string, taskId: string, status: string): Promise<DeliveryView> {
  return eventually(
    async () => (await deliveriesOf(s, key, webhookId)).items.find((d) => d.task_id === taskId && d.status === status),
    20000,
    `delivery of ${taskId} to ${webhookId} to be ${status}`,
  );
}

async function taskView(s: System, key: string, taskId: string): Promise<Record<string, unknown>> {
  const res = await s.api("GET", `/v1/tasks/${taskId}`, { token: key });
  expect(res.status).toBe(200);
  return res.body;
}

async function webhookStatusReaching(s: System, key: string, taskId: string, status: string): Promise<void> {
  await eventually(
    async () => ((await taskView(s, key, taskId)).webhook_status === status ? true : undefined),
    20000,
    `webhook_status of ${taskId} to be ${status}`,
  );
}

/** Submits a threshold-1 task and labels it, so it settles at once. */
async function settleTask(s: System, customerKey: string, labelerKey: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const taskId = await createTask(s, customerKey, { consensus_threshold: 1, ...overrides });
  expect((await label(s, labelerKey, taskId, "cat")).status).toBe(201);
  return taskId;
}

/** Keeps checking `check` for `forMs` and fails as soon as it is false (a stable condition, not a sleep). */
async function stays(check: () => boolean | Promise<boolean>, forMs: number, what: string): Promise<void> {
  const until = Date.now() + forMs;
  await eventually(
    async () => {
      if (!(await check())) throw new Error(`${what}: no longer true`);
      return Date.now() >= until ? true : undefined;
    },
    forMs + 5000,
    what,
  );
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

let sys: System;
let labelerKey: string;
const receivers: Receiver[] = [];
async function rx(reply?: (r: Received) => Reply | Promise<Reply>): Promise<Receiver> {
  const r = await receiver(reply);
  receivers.push(r);
  return r;
}

beforeAll(async () => {
  // one attempt per scheduled delivery: a failing receiver gives a failed delivery at once
  sys = await startSystem({ isolatedDatabase: true, webhookRetryMax: 1 });
  labelerKey = (await createLabeler(sys)).key;
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await sys?.close();
});

/** A customer whose webhook at a new receiver (answering `reply`) has a failed delivery. */
async function failedDelivery(reply: (r: Received) => Reply | Promise<Reply>) {
  const r = await rx(reply);
  const c = await registerCustomer(sys);
  const secret = newSecret();
  const webhookId = await registerWebhook(sys, c.key, r.url, secret);
  const taskId = await settleTask(sys, c.key, labelerKey, { callback_url: r.url });
  const delivery = await deliveryReaching(sys, c.key, webhookId, taskId, "failed");
  await webhookStatusReaching(sys, c.key, taskId, "failed");
  expect(r.received).toHaveLength(1);
  return { r, c, secret, webhookId, taskId, delivery };
}

function redeliver(key: string, webhookId: string, deliveryId: string) {
  return sys.api("POST", `/v1/webhooks/${webhookId}/deliveries/${deliveryId}/redeliver`, { token: key });
}

it("redelivers a failed delivery: 202 queued, same event id, fresh timestamp and signature, manual attempt, delivered", async () => {
  const { r, c, secret, webhookId, taskId, delivery } = await failedDelivery((q) => (q.n === 1 ? 500 : 200));
  expect(delivery.attempts).toBe(1);

  const asked = Date.now();
  const res = await redeliver(c.key, webhookId, delivery.delivery_id);
  expect(res.status).toBe(202);
  expect(res.body).toEqual({ delivery_id: delivery.delivery_id, attempt_id: expect.stringMatching(/^att_/), status: "queued" });
  const attemptId = res.body.attempt_id as string;

  const again = await eventually(async () => r.received[1], 15000, "the redelivered request");
  const first = r.received[0] as Received;
  expect(again.headers["x-svc-event-id"]).toBe(delivery.event_id);
  expect(again.headers["x-svc-event-id"]).toBe(first.headers["x-svc-event-id"]);
  expect(again.headers["x-svc-delivery-attempt"]).toBe("2");
  expect(signedWith(again.raw, again.headers["x-svc-signature"], secret)).toBe(true);
  expect(again.headers["x-svc-signature"]).not.toBe(first.headers["x-svc-signature"]);
  const [b1, b2] = [json(first), json(again)];
  expect(b2.timestamp).toMatch(ISO);
  expect(Date.parse(String(b2.timestamp))).toBeGreaterThanOrEqual(asked - 50);
  expect(Date.parse(String(b2.timestamp))).toBeGreaterThan(Date.parse(String(b1.timestamp)));
  const { timestamp: _t1, ...rest1 } = b1;
  const { timestamp: _t2, ...rest2 } = b2;
  expect(rest2).toEqual(rest1);
  expect(rest2).toMatchObject({ event: "task.settled", task_id: taskId });

  const done = await deliveryReaching(sys, c.key, webhookId, taskId, "delivered");
  expect(done.attempts).toBe(2);
  expect(done.attempt_log).toHaveLength(2);
  expect(done.attempt_log[0]).toMatchObject({
    attempt_id: attemptId,
    attempt: 2,
    manual: true,
    success: true,
    status_code: 200,
    error: null,
  });
  expect(done.attempt_log[1]).toMatchObject({ attempt: 1, manual: false, success: false, status_code: 500 });
  await webhookStatusReaching(sys, c.key, taskId, "delivered");
  expect(r.received).toHaveLength(2);
});

it("a failed redelivery is logged as manual, leaves the delivery failed and is not retried automatically", async () => {
  const { r, c, webhookId, taskId, delivery } = await failedDelivery(() => 500);
  const res = await redeliver(c.key, webhookId, delivery.delivery_id);
  expect(res.status).toBe(202);
  const attemptId = res.body.attempt_id as string;
  const logged = await eventually(
    async () =>
      (await deliveriesOf(sys, c.key, webhookId)).items.find(
        (d) => d.attempts === 2 && d.attempt_log.some((a) => a.attempt_id === attemptId),
      ),
    15000,
    "the manual attempt",
  );
  expect(logged.status).toBe("failed");
  expect(logged.attempts).toBe(2);
  expect(logged.attempt_log[0]).toMatchObject({ attempt_id: attemptId, attempt: 2, manual: true, success: false, status_code: 500 });
  expect(r.received.map((q) => q.headers["x-svc-delivery-attempt"])).toEqual(["1", "2"]);
  // past the 1 s a scheduled retry would take: nothing more arrives
  await stays(() => r.received.length === 2, 2000, "no automatic retry of a manual redelivery");
  expect((await taskView(sys, c.key, taskId)).webhook_status).toBe("failed");
});

it("404 for an unknown delivery and for another customer's webhook or delivery; 409 after the webhook is deleted", async () => {
  const { r, c, webhookId, delivery } = await failedDelivery((q) => (q.n === 1 ? 500 : 200));
  const other = await registerCustomer(sys);
  const othersHook = await registerWebhook(sys, other.key, (await rx()).url, newSecret());

  for (const [key, hook, dlv] of [
    [c.key, webhookId, "dlv_doesnotexist000000000"],
    [c.key, webhookId, "not-a-delivery-id"],
    [c.key, "whk_doesnotexist000000000", delivery.delivery_id],
    // another customer: neither through the owner's webhook id nor through a webhook of its own
    [other.key, webhookId, delivery.delivery_id],
    [other.key, othersHook, delivery.delivery_id],
  ] as const) {
    const res = await redeliver(key, hook, dlv);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatch(/not found/);
  }
  expect((await redeliver(other.key, webhookId, delivery.delivery_id)).body).toEqual({ error: "webhook not found" });

  expect((await sys.api("DELETE", `/v1/webhooks/${webhookId}`, { token: c.key })).status).toBe(200);
  const gone = await redeliver(c.key, webhookId, delivery.delivery_id);
  expect(gone.status).toBe(409);
  expect(gone.body).toEqual({ error: "webhook is not active" });
  const unauth = await sys.api("POST", `/v1/webhooks/${webhookId}/deliveries/${delivery.delivery_id}/redeliver`);
  expect(unauth.status).toBe(401);
  // none of these sent anything
  await stays(() => r.received.length === 1, 1500, "no request from a refused redelivery");
  expect((await deliveriesOf(sys, c.key, webhookId)).items[0]).toMatchObject({ status: "failed", attempts: 1 });
});
