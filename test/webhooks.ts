/**
 * Webhook test helpers shared by the gateway's and the webhook worker's tests: a real local HTTP receiver,
 * a signature check of our own (HMAC-SHA256 over the raw bytes received; deliberately independent of the
 * signing code under test, so it imports none of it), and API helpers for webhooks, deliveries and tasks.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createTask, eventually, label, registerCustomer, type System } from "./system";

// --- a real local receiver ------------------------------------------------------------------------

/** How a receiver answers a request: a status (with headers), never ("hang"), or by resetting the connection. */
export type Reply = number | { status: number; headers?: Record<string, string> } | "hang" | "reset";

/** One request as a receiver got it. */
export interface Received {
  /** 1-based index of the request at this receiver */
  n: number;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: string;
  at: number;
  /** still waiting for an answer on an open connection */
  open: boolean;
}

/** How a receiver answers: a reply to each request it got (at once, or when the promise settles). */
export type Answer = (r: Received) => Reply | Promise<Reply>;

/** A node:http server on 127.0.0.1:0 answering each request with `reply(request)`. */
export async function receiver(reply: Answer = () => 200) {
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
    /** Destroys open connections (hanging requests end) and stops the server. */
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A running receiver (see `receiver`). */
export type Receiver = Awaited<ReturnType<typeof receiver>>;

/**
 * Tracks the receivers a test file starts: `rx(reply)` starts one (see `receiver`) and remembers it,
 * `closeAll()` closes every one started so far (call it from the file's afterAll/afterEach).
 */
export function receivers(): { rx: (reply?: Answer) => Promise<Receiver>; closeAll: () => Promise<void> } {
  const started: Receiver[] = [];
  return {
    rx: async (reply) => {
      const r = await receiver(reply);
      started.push(r);
      return r;
    },
    closeAll: async () => {
      await Promise.all(started.splice(0).map((r) => r.close()));
    },
  };
}

/** The JSON body of a received request. */
export function json(r: Received): Record<string, unknown> {
  return JSON.parse(r.body) as Record<string, unknown>;
}

/** Our own verification: `sha256=<64 lowercase hex>` equal (constant time) to HMAC-SHA256(secret, raw bytes). */
export function signedWith(raw: Buffer, header: string | string[] | undefined, secret: string): boolean {
  if (typeof header !== "string") return false;
  const hex = /^sha256=([0-9a-f]{64})$/.exec(header)?.[1];
  if (!hex) return false;
  return timingSafeEqual(Buffer.from(hex, "hex"), createHmac("sha256", Buffer.from(secret, "utf8")).update(raw).digest());
}

// --- API helpers ----------------------------------------------------------------------------------

/** An ISO 8601 UTC timestamp as the API writes them. */
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** One attempt in a delivery's `attempt_log` (GET /v1/webhooks/{id}/deliveries). */
export interface AttemptView {
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

/** One item of GET /v1/webhooks/{id}/deliveries. */
export interface DeliveryView {
  delivery_id: string;
  event_id: string;
  task_id: string;
  status: string;
  attempts: number;
  last_error: string | null;
  attempt_log: AttemptView[];
}

/** A fresh webhook secret (long enough for the API's minimum). */
export const newSecret = () => `whsec-${randomBytes(12).toString("hex")}`;

/** Registers a webhook at `url` (expects 201) with `secret` (default: a fresh one) and returns its id. */
export async function registerWebhook(s: System, key: string, url: string, secret = newSecret()): Promise<string> {
  const res = await s.api<{ webhook_id: string }>("POST", "/v1/webhooks", { token: key, body: { callback_url: url, secret } });
  expect(res.status).toBe(201);
  return res.body.webhook_id;
}

/** The first 100 deliveries of a webhook (expects 200). */
export async function deliveriesOf(s: System, key: string, webhookId: string): Promise<{ total: number; items: DeliveryView[] }> {
  const res = await s.api<{ total: number; items: DeliveryView[] }>("GET", `/v1/webhooks/${webhookId}/deliveries?per_page=100`, {
    token: key,
  });
  expect(res.status).toBe(200);
  return res.body;
}

/** Waits until the delivery of `taskId` to `webhookId` has `status`, and returns it. */
export async function deliveryReaching(s: System, key: string, webhookId: string, taskId: string, status: string): Promise<DeliveryView> {
  return eventually(
    async () => (await deliveriesOf(s, key, webhookId)).items.find((d) => d.task_id === taskId && d.status === status),
    20000,
    `delivery of ${taskId} to ${webhookId} to be ${status}`,
  );
}

/** GET /v1/tasks/{id} (expects 200). */
export async function taskView(s: System, key: string, taskId: string): Promise<Record<string, unknown>> {
  const res = await s.api("GET", `/v1/tasks/${taskId}`, { token: key });
  expect(res.status).toBe(200);
  return res.body;
}

/** Waits until the task's `webhook_status` is `status`. */
export async function webhookStatusReaching(s: System, key: string, taskId: string, status: string): Promise<void> {
  await eventually(
    async () => ((await taskView(s, key, taskId)).webhook_status === status ? true : undefined),
    20000,
    `webhook_status of ${taskId} to be ${status}`,
  );
}

/** Submits a threshold-1 task and labels it, so it settles at once. */
export async function settleTask(
  s: System,
  customerKey: string,
  labelerKey: string,
  overrides: Record<string, unknown> = {},
): Promise<string> {
  const taskId = await createTask(s, customerKey, { consensus_threshold: 1, ...overrides });
  expect((await label(s, labelerKey, taskId, "cat")).status).toBe(201);
  return taskId;
}

/** A customer with a webhook at a receiver, and a task of that customer settled toward it. */
export interface WebhookScenario {
  sys: System;
  /** the customer's API key */
  key: string;
  /** the webhook's secret */
  secret: string;
  webhookId: string;
  taskId: string;
  /** the webhook's receiver */
  r: Receiver;
}

/**
 * A new customer registers a webhook at `r` with a fresh secret, then submits a threshold-1 task with
 * `callback_url` = `r.url` that `labelerKey`'s labeler labels at once (`settleTask`): its delivery follows.
 */
export async function webhookScenario(sys: System, labelerKey: string, r: Receiver): Promise<WebhookScenario> {
  const c = await registerCustomer(sys);
  const secret = newSecret();
  const webhookId = await registerWebhook(sys, c.key, r.url, secret);
  const taskId = await settleTask(sys, c.key, labelerKey, { callback_url: r.url });
  return { sys, key: c.key, secret, webhookId, taskId, r };
}

/** The `task.settled` event of a task was routed (its deliveries, if any, exist). */
export async function routed(s: System, taskId: string): Promise<void> {
  await eventually(
    async () => {
      const e = await s.db.prisma.event.findFirst({ where: { taskId, type: "task.settled" }, select: { recordedAt: true } });
      return e?.recordedAt ? true : undefined;
    },
    20000,
    `event of ${taskId} to be routed`,
  );
}

/** Keeps checking `check` for `forMs` and fails as soon as it is false (a stable condition, not a sleep). */
export async function stays(check: () => boolean | Promise<boolean>, forMs: number, what: string): Promise<void> {
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
