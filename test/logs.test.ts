/**
 * Structured logs (docs/operations.md, "Operations"): every request's log lines carry its request id (X-Request-Id, or a generated
 * one), and no line ever holds an API key, a webhook secret, the admin token or storage credentials, whether
 * they travel in headers (bearer, Basic), in bodies, or in objects a handler logs.
 */
import { randomBytes } from "node:crypto";
import { createLogger } from "@labelgate/core";
import { ADMIN_TOKEN, type System, startSystem } from "./system";

const lines: string[] = [];
let sys: System;
beforeAll(async () => {
  // the gateway's own logger (pino-http access lines, request-scoped and error lines), captured
  sys = await startSystem({ workers: false, logger: createLogger("test", "trace", { write: (line: string) => void lines.push(line) }) });
});
afterAll(async () => {
  await sys?.close();
});

const parsed = () => lines.map((l) => JSON.parse(l) as { req?: { id?: string; headers?: Record<string, string> }; [k: string]: unknown });

it("requests with an API key, a webhook secret and S3 credentials leave none of them in any line; lines carry the request id", async () => {
  const rid = (name: string) => `${name}-${randomBytes(4).toString("hex")}`;
  const ids = { register: rid("register"), webhook: rid("webhook"), job: rid("job"), me: rid("me"), board: rid("board") };

  const reg = await sys.api<{ api_key: string }>("POST", "/v1/customers", {
    body: { name: "Log Co", email: `log-${randomBytes(4).toString("hex")}@example.com` },
    headers: { "x-request-id": ids.register },
  });
  expect(reg.status).toBe(201);
  const apiKey = reg.body.api_key;
  const webhookSecret = `whsec-${randomBytes(16).toString("hex")}`;
  const s3 = {
    access_key_id: `AKIA${randomBytes(8).toString("hex").toUpperCase()}`,
    secret_access_key: randomBytes(20).toString("base64"),
    region: "eu-west-1",
  };

  const webhook = await sys.api("POST", "/v1/webhooks", {
    token: apiKey,
    body: { callback_url: "http://127.0.0.1:9/hook", secret: webhookSecret },
    headers: { "x-request-id": ids.webhook },
  });
  expect(webhook.status).toBe(201);
  const job = await sys.api("POST", "/v1/jobs", {
    token: apiKey,
    body: {
      manifest_url: "s3://bucket/manifest.jsonl",
      label_spec: { question: "?", options: ["a", "b"] },
      consensus_threshold: 1,
      s3_credentials: s3,
    },
    headers: { "x-request-id": ids.job },
  });
  expect(job.status).toBe(202);
  expect(
    (await sys.api("GET", "/v1/customers/me", { token: apiKey, headers: { "x-request-id": ids.me, cookie: `session=${apiKey}` } })).status,
  ).toBe(200);
  const basic = `Basic ${Buffer.from(`oncall:${ADMIN_TOKEN}`).toString("base64")}`;
  expect((await sys.api("GET", "/admin/queues/api/queues", { headers: { authorization: basic, "x-request-id": ids.board } })).status).toBe(
    200,
  );
  // a request without X-Request-Id gets a generated one, echoed in the response and logged
  const anonymous = await sys.api("GET", "/v1/customers/me", { token: apiKey });
  const generated = anonymous.headers.get("x-request-id") as string;
  expect(generated).toMatch(/^[0-9a-f-]{36}$/);

  // what a handler or worker might log about a job or a webhook: redacted by key
  sys.logger.info({ api_key: apiKey, secret: webhookSecret, token: ADMIN_TOKEN, s3_credentials: s3 }, "top-level secrets");
  sys.logger.info(
    { job: { credentials: s3, secret_access_key: s3.secret_access_key }, webhook: { secret: webhookSecret } },
    "nested secrets",
  );

  // pino writes synchronously to the destination: every line is there
  const all = lines.join("");
  for (const secret of [apiKey, webhookSecret, s3.access_key_id, s3.secret_access_key, ADMIN_TOKEN, basic.slice(6)]) {
    expect(all).not.toContain(secret);
  }
  expect(all).toContain("[redacted]");

  const access = parsed().filter((l) => l.req !== undefined);
  for (const [name, id] of Object.entries({ ...ids, generated })) {
    const mine = access.filter((l) => l.req?.id === id);
    expect([name, mine.length]).toEqual([name, 1]);
    expect(mine[0]?.res).toBeDefined();
  }
  // and every access line has an id
  for (const l of access) expect(typeof l.req?.id).toBe("string");
  // access lines name the request, not its headers: no credential header can reach them
  const me = access.find((l) => l.req?.id === ids.me) as { req: Record<string, unknown>; res: Record<string, unknown> };
  expect(me.req).toEqual({
    id: ids.me,
    method: "GET",
    url: "/v1/customers/me",
    remoteAddress: expect.any(String),
    userAgent: expect.anything(),
  });
  expect(me.res).toEqual({ statusCode: 200 });
});
