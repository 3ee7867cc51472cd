/**
 * Webhook secrets (DESIGN §7): write-only. Never in a response, never in a log line (the system logs at
 * `trace` into memory here), never in plaintext in Postgres or Redis; sealed as `v1.` AES-256-GCM bound to
 * the webhook id. The requests sent to the receiver carry only the signature.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Writable } from "node:stream";
import { createLogger } from "@labelgate/core";
import { Redis } from "ioredis";
import { REDIS_URL } from "../../../test/env";
import {
  type ApiResponse,
  createLabeler,
  createTask,
  eventually,
  label,
  registerCustomer,
  type System,
  startSystem,
  TEST_SECRET_BOX,
} from "../../../test/system";

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

const logLines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer | string, _encoding, callback) {
    logLines.push(chunk.toString());
    callback();
  },
});

let sys: System;
let r: Receiver;
beforeAll(async () => {
  sys = await startSystem({ isolatedDatabase: true, logger: createLogger("test", "trace", sink) });
  r = await receiver((q) => (q.n === 1 ? 500 : 200));
});
afterAll(async () => {
  await r?.close();
  await sys?.close();
});

/** Everything a client saw: status, headers and body of every response. */
const seen: string[] = [];
async function call(method: string, url: string, options: Parameters<System["api"]>[2] = {}): Promise<ApiResponse> {
  const res = await sys.api(method, url, options);
  seen.push(`${res.status} ${JSON.stringify([...res.headers.entries()])} ${JSON.stringify(res.body)}`);
  return res;
}

/** Every string value stored in Redis under this system's prefix (BullMQ jobs, events, ...). */
async function redisText(prefix: string): Promise<string> {
  const redis = new Redis(REDIS_URL);
  const parts: string[] = [];
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        if (type === "hash") parts.push(JSON.stringify(await redis.hgetall(key)));
        else if (type === "string") parts.push(String(await redis.get(key)));
        else if (type === "list") parts.push(JSON.stringify(await redis.lrange(key, "0", "-1")));
        else if (type === "zset") parts.push(JSON.stringify(await redis.zrange(key, "0", "-1")));
        else if (type === "set") parts.push(JSON.stringify(await redis.smembers(key)));
        else if (type === "stream") parts.push(JSON.stringify(await redis.xrange(key, "-", "+")));
      }
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
  return parts.join("\n");
}

it("no secret appears in any response, log line, request sent, database row or queue entry", async () => {
  const c = await registerCustomer(sys);
  const secret = newSecret();
  const rejected = [newSecret(), newSecret(), newSecret(), newSecret(), newSecret()];
  const all = [secret, ...rejected];

  const created = await call("POST", "/v1/webhooks", { token: c.key, body: { callback_url: r.url, secret } });
  expect(created.status).toBe(201);
  const webhookId = created.body.webhook_id as string;
  // refused registrations, each with a secret of its own
  expect(
    (await call("POST", "/v1/webhooks", { token: c.key, body: { callback_url: "ftp://example.com/x", secret: rejected[0] } })).status,
  ).toBe(400);
  expect((await call("POST", "/v1/webhooks", { token: c.key, body: { callback_url: r.url, secret: rejected[1] } })).status).toBe(409);
  expect(
    (await call("POST", "/v1/webhooks", { token: c.key, body: { callback_url: `${r.url}/x`, secret: rejected[2], surprise: true } }))
      .status,
  ).toBe(400);
  expect(
    (await call("POST", "/v1/webhooks", { token: c.key, raw: `{"callback_url": "${r.url}/y", "secret": "${rejected[3]}",` })).status,
  ).toBe(400);
  expect((await call("POST", "/v1/webhooks", { body: { callback_url: `${r.url}/z`, secret: rejected[4] } })).status).toBe(401);

  // a delivery that fails once (a warning is logged), then succeeds; the log, a redelivery, a delete
  const labelerKey = (await createLabeler(sys)).key;
  const taskId = await settleTask(sys, c.key, labelerKey, { callback_url: r.url });
  const d = await deliveryReaching(sys, c.key, webhookId, taskId, "delivered");
  await webhookStatusReaching(sys, c.key, taskId, "delivered");
  const redelivered = await call("POST", `/v1/webhooks/${webhookId}/deliveries/${d.delivery_id}/redeliver`, { token: c.key });
  expect(redelivered.status).toBe(202);
  await eventually(async () => (r.received.length === 3 ? true : undefined), 15000, "the redelivery");
  await eventually(
    async () => ((await deliveriesOf(sys, c.key, webhookId)).items[0]?.attempts === 3 ? true : undefined),
    15000,
    "the manual attempt logged",
  );
  await call("GET", "/v1/webhooks", { token: c.key });
  await call("GET", `/v1/webhooks/${webhookId}/deliveries`, { token: c.key });
  await call("GET", `/v1/tasks/${taskId}`, { token: c.key });
  expect((await call("DELETE", `/v1/webhooks/${webhookId}`, { token: c.key })).status).toBe(200);
  await call("GET", "/v1/webhooks", { token: c.key });

  // the receiver verifies with the secret but never receives it
  for (const q of r.received) {
    expect(signedWith(q.raw, q.headers["x-svc-signature"], secret)).toBe(true);
    const sent = `${JSON.stringify(q.headers)} ${q.body}`;
    for (const s of all) expect(sent).not.toContain(s);
  }

  // responses
  expect(seen.length).toBeGreaterThanOrEqual(12);
  for (const text of seen) for (const s of all) expect(text).not.toContain(s);

  // logs: the capture worked (requests and the failed attempt were logged), and no line holds a secret
  const logs = logLines.join("");
  expect(logs).toContain("request completed");
  expect(logs).toContain("webhook delivery attempt failed");
  expect(logs).toContain(webhookId);
  for (const s of all) expect(logs).not.toContain(s);

  // Postgres: sealed (v1. AES-256-GCM, bound to the webhook id), no plaintext in any row of any table
  const row = await sys.db.prisma.webhook.findUniqueOrThrow({ where: { id: webhookId } });
  expect(row.secretCiphertext.startsWith("v1.")).toBe(true);
  expect(row.secretCiphertext).not.toContain(secret);
  expect(row.secretCiphertext).not.toContain(Buffer.from(secret).toString("base64url"));
  expect(TEST_SECRET_BOX.open(row.secretCiphertext, webhookId)).toBe(secret);
  expect(() => TEST_SECRET_BOX.open(row.secretCiphertext, "whk_other")).toThrow();
  const tables = await sys.db.prisma.$queryRaw<
    { tablename: string }[]
  >`SELECT tablename::text AS tablename FROM pg_tables WHERE schemaname = current_schema()`;
  expect(tables.map((t) => t.tablename)).toContain("webhooks");
  for (const { tablename } of tables) {
    for (const s of all) {
      const hits = await sys.db.prisma.$queryRawUnsafe<{ n: bigint }[]>(
        `SELECT count(*) AS n FROM "${tablename.replaceAll('"', '""')}" t WHERE t::text LIKE $1`,
        `%${s}%`,
      );
      expect([tablename, Number(hits[0]?.n)]).toEqual([tablename, 0]);
    }
  }

  // Redis: the queue holds ids, never the secret
  const queued = await redisText(sys.prefix);
  expect(queued).toContain(d.delivery_id);
  for (const s of all) expect(queued).not.toContain(s);
});
