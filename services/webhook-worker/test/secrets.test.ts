/**
 * Webhook secrets (contract §events): write-only. Never in a response, never in a log line (the system logs at
 * `trace` into memory here), never in plaintext in Postgres or Redis; sealed as `v1.` AES-256-GCM bound to
 * the webhook id. The requests sent to the receiver carry only the signature.
 */
import { Writable } from "node:stream";
import { createLogger } from "@labelgate/core";
import { Redis } from "ioredis";
import { REDIS_URL } from "../../../test/env";
import {
  type ApiResponse,
  createLabeler,
  eventually,
  registerCustomer,
  type System,
  startSystem,
  TEST_SECRET_BOX,
} from "../../../test/system";
import {
  deliveriesOf,
  deliveryReaching,
  newSecret,
  type Receiver,
  receiver,
  settleTask,
  signedWith,
  webhookStatusReaching,
} from "../../../test/webhooks";

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
  sys = await startSystem({ logger: createLogger("test", "trace", sink) });
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
