/**
 * Webhook routes (contract §routes Webhooks; contract §wire, §events, §outbound-calls): register, list, soft delete, the delivery log with
 * its filter and pagination, and the errors (400 with `details`, 401, 404 for ids of others, 409).
 */
import { createLabeler, createTask, eventually, label, registerCustomer, type System, startSystem } from "../../../test/system";
import {
  type DeliveryView,
  deliveryReaching,
  ISO,
  json,
  newSecret,
  type Reply,
  receivers,
  webhookStatusReaching,
} from "../../../test/webhooks";

const VALIDATION = "validation failed";

let sys: System;
/** ALLOW_PRIVATE_URLS=false: loopback, private and link-local callback URLs are refused */
let strict: System;
const { rx, closeAll } = receivers();

beforeAll(async () => {
  // one attempt per delivery: a receiver answering 500 gives a failed delivery at once
  sys = await startSystem({ webhookRetryMax: 1 });
  strict = await startSystem({ workers: false, allowPrivateUrls: false });
});
afterAll(async () => {
  await closeAll();
  await Promise.all([sys?.close(), strict?.close()]);
});

function post(s: System, key: string | undefined, body: unknown) {
  return s.api("POST", "/v1/webhooks", { token: key, body });
}

function expectValidation(res: { status: number; body: Record<string, unknown> }, path: string): void {
  expect(res.status).toBe(400);
  expect(res.body.error).toBe(VALIDATION);
  const details = res.body.details as { path: string; message: string }[];
  expect(details.map((d) => d.path)).toContain(path);
  for (const d of details) expect(typeof d.message).toBe("string");
}

describe("POST /v1/webhooks", () => {
  it("201 {webhook_id, callback_url, events, active, created_at}; events default to [task.settled]; the secret is not returned", async () => {
    const c = await registerCustomer(sys);
    const secret = newSecret();
    const before = Date.now();
    const res = await post(sys, c.key, { callback_url: "https://hooks.example.com/labelgate", secret });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      webhook_id: expect.stringMatching(/^whk_[A-Za-z0-9]+$/),
      callback_url: "https://hooks.example.com/labelgate",
      events: ["task.settled"],
      active: true,
      created_at: expect.stringMatching(ISO),
    });
    expect(Date.parse(String(res.body.created_at))).toBeGreaterThanOrEqual(before - 1000);
    expect(JSON.stringify(res.body)).not.toContain(secret);

    const explicit = await post(sys, c.key, { callback_url: "https://hooks.example.com/other", secret, events: ["task.settled"] });
    expect(explicit.status).toBe(201);
    expect(explicit.body.events).toEqual(["task.settled"]);
    // exactly 16 characters is enough
    expect((await post(sys, c.key, { callback_url: "https://hooks.example.com/16", secret: "0123456789abcdef" })).status).toBe(201);
  });

  it.each([
    ["secret missing", "secret", { callback_url: "https://hooks.example.com/a" }],
    ["secret of 15 characters", "secret", { callback_url: "https://hooks.example.com/a", secret: "0123456789abcde" }],
    ["secret not a string", "secret", { callback_url: "https://hooks.example.com/a", secret: 1234567890123456 }],
    ["unknown event", "events.0", { callback_url: "https://hooks.example.com/a", secret: "0123456789abcdef", events: ["task.created"] }],
    ["callback_url missing", "callback_url", { secret: "0123456789abcdef" }],
    ["not a URL", "callback_url", { callback_url: "not a url", secret: "0123456789abcdef" }],
    ["ftp URL", "callback_url", { callback_url: "ftp://hooks.example.com/a", secret: "0123456789abcdef" }],
    ["credentials in the URL", "callback_url", { callback_url: "https://user:pass@hooks.example.com/a", secret: "0123456789abcdef" }],
    ["user only in the URL", "callback_url", { callback_url: "https://user@hooks.example.com/a", secret: "0123456789abcdef" }],
  ])("400 validation failed for %s (details path %s)", async (_name, path, body) => {
    const c = await registerCustomer(sys);
    expectValidation(await post(sys, c.key, body), path);
    const list = await sys.api<unknown[]>("GET", "/v1/webhooks", { token: c.key });
    expect(list.body).toEqual([]);
  });

  it.each([
    "http://127.0.0.1:8080/hook",
    "https://localhost/hook",
    "http://169.254.169.254/latest/meta-data/",
    "https://10.0.0.1/hook",
    "https://[::1]/hook",
    "https://192.168.1.10/hook",
    "https://172.16.0.1/hook",
    "https://100.64.0.1/hook",
    "https://0.0.0.0/hook",
    "https://[::ffff:127.0.0.1]/hook",
    "https://[fd00::1]/hook",
    "https://api.localhost/hook",
  ])("ALLOW_PRIVATE_URLS=false: 400 for the private, loopback or link-local %s", async (url) => {
    const c = await registerCustomer(strict);
    expectValidation(await post(strict, c.key, { callback_url: url, secret: newSecret() }), "callback_url");
  });

  it("ALLOW_PRIVATE_URLS=false: a public address is accepted", async () => {
    const c = await registerCustomer(strict);
    const res = await post(strict, c.key, { callback_url: "https://93.184.216.34/hook", secret: newSecret() });
    expect(res.status).toBe(201);
  });

  it("409 for a second active webhook with the same callback_url; allowed again after delete, and for another customer", async () => {
    const c = await registerCustomer(sys);
    const url = "https://hooks.example.com/dup";
    const first = await post(sys, c.key, { callback_url: url, secret: newSecret() });
    expect(first.status).toBe(201);
    const second = await post(sys, c.key, { callback_url: url, secret: newSecret() });
    expect(second.status).toBe(409);
    expect(typeof second.body.error).toBe("string");

    const other = await registerCustomer(sys);
    expect((await post(sys, other.key, { callback_url: url, secret: newSecret() })).status).toBe(201);

    expect((await sys.api("DELETE", `/v1/webhooks/${first.body.webhook_id}`, { token: c.key })).status).toBe(200);
    expect((await post(sys, c.key, { callback_url: url, secret: newSecret() })).status).toBe(201);
  });

  it("400 invalid JSON for a body that is not JSON", async () => {
    const c = await registerCustomer(sys);
    const res = await sys.api("POST", "/v1/webhooks", { token: c.key, raw: '{"callback_url": "https://x.example/h",' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "invalid JSON" });
  });
});

describe("GET and DELETE /v1/webhooks", () => {
  it("lists the customer's webhooks newest first, deleted ones included with active false; never a secret", async () => {
    const c = await registerCustomer(sys);
    const other = await registerCustomer(sys);
    await post(sys, other.key, { callback_url: "https://hooks.example.com/others", secret: newSecret() });
    const secrets = [newSecret(), newSecret(), newSecret()];
    const ids: string[] = [];
    for (const [i, secret] of secrets.entries()) {
      const res = await post(sys, c.key, { callback_url: `https://hooks.example.com/list/${i}`, secret });
      ids.push(res.body.webhook_id as string);
    }
    const del = await sys.api("DELETE", `/v1/webhooks/${ids[1]}`, { token: c.key });
    expect(del.status).toBe(200);

    const list = await sys.api<Record<string, unknown>[]>("GET", "/v1/webhooks", { token: c.key });
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body.map((w) => w.webhook_id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(list.body.map((w) => w.active)).toEqual([true, false, true]);
    expect(list.body[1]).toMatchObject({
      webhook_id: ids[1],
      callback_url: "https://hooks.example.com/list/1",
      events: ["task.settled"],
      active: false,
      created_at: expect.stringMatching(ISO),
      deleted_at: expect.stringMatching(ISO),
    });
    expect(list.body[0]?.deleted_at ?? null).toBeNull();
    const text = JSON.stringify(list.body);
    for (const s of secrets) expect(text).not.toContain(s);
    expect(text).not.toMatch(/secret/i);
  });

  it("DELETE → 200 with active false and deleted_at; again → 200 unchanged; unknown → 404 webhook not found", async () => {
    const c = await registerCustomer(sys);
    const created = await post(sys, c.key, { callback_url: "https://hooks.example.com/del", secret: newSecret() });
    const id = created.body.webhook_id as string;
    const before = Date.now();
    const del = await sys.api("DELETE", `/v1/webhooks/${id}`, { token: c.key });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({
      webhook_id: id,
      callback_url: "https://hooks.example.com/del",
      events: ["task.settled"],
      active: false,
      deleted_at: expect.stringMatching(ISO),
    });
    expect(Date.parse(String(del.body.deleted_at))).toBeGreaterThanOrEqual(before - 1000);
    const again = await sys.api("DELETE", `/v1/webhooks/${id}`, { token: c.key });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ active: false, deleted_at: del.body.deleted_at });

    for (const unknown of ["whk_doesnotexist000000000", "nope", "tsk_abc"]) {
      const res = await sys.api("DELETE", `/v1/webhooks/${unknown}`, { token: c.key });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "webhook not found" });
    }
  });

  it("another customer's webhook is 404 on DELETE, deliveries and redeliver, and stays active", async () => {
    const owner = await registerCustomer(sys);
    const stranger = await registerCustomer(sys);
    const created = await post(sys, owner.key, { callback_url: "https://hooks.example.com/mine", secret: newSecret() });
    const id = created.body.webhook_id as string;
    for (const [method, path] of [
      ["DELETE", `/v1/webhooks/${id}`],
      ["GET", `/v1/webhooks/${id}/deliveries`],
      ["POST", `/v1/webhooks/${id}/deliveries/dlv_doesnotexist000000000/redeliver`],
    ] as const) {
      const res = await sys.api(method, path, { token: stranger.key });
      expect([method, path, res.status, res.body]).toEqual([method, path, 404, { error: "webhook not found" }]);
    }
    const list = await sys.api<Record<string, unknown>[]>("GET", "/v1/webhooks", { token: owner.key });
    expect(list.body).toEqual([expect.objectContaining({ webhook_id: id, active: true })]);
    expect((await sys.api<unknown[]>("GET", "/v1/webhooks", { token: stranger.key })).body).toEqual([]);
  });

  it("401 invalid API key without a key, with a wrong scheme or an unknown key, on every webhook route", async () => {
    const c = await registerCustomer(sys);
    const created = await post(sys, c.key, { callback_url: "https://hooks.example.com/auth", secret: newSecret() });
    const id = created.body.webhook_id as string;
    const routes = [
      ["POST", "/v1/webhooks"],
      ["GET", "/v1/webhooks"],
      ["DELETE", `/v1/webhooks/${id}`],
      ["GET", `/v1/webhooks/${id}/deliveries`],
      ["POST", `/v1/webhooks/${id}/deliveries/dlv_doesnotexist000000000/redeliver`],
    ] as const;
    for (const [method, path] of routes) {
      const variants: Record<string, string>[] = [
        {},
        { authorization: `Basic ${c.key}` },
        { authorization: "Bearer sk_sandbox_unknownunknownunknown" },
      ];
      for (const headers of variants) {
        const body =
          method === "POST" && path === "/v1/webhooks" ? { callback_url: "https://hooks.example.com/x", secret: newSecret() } : undefined;
        const res = await sys.api(method, path, { headers, body });
        expect([method, path, res.status, res.body]).toEqual([method, path, 401, { error: "invalid API key" }]);
      }
    }
    // nothing changed
    const list = await sys.api<Record<string, unknown>[]>("GET", "/v1/webhooks", { token: c.key });
    expect(list.body).toEqual([expect.objectContaining({ webhook_id: id, active: true })]);
  });
});

describe("GET /v1/webhooks/{id}/deliveries", () => {
  let key: string;
  let webhookId: string;
  /** tasks in creation order: t[0] delivered, t[1] failed (500), t[2] delivered, t[3] pending (request held), t[4] delivered */
  const t: string[] = [];
  let release: () => void = () => undefined;

  beforeAll(async () => {
    const held = new Promise<Reply>((resolve) => {
      release = () => resolve(200);
    });
    const replies = new Map<string, Reply | Promise<Reply>>();
    const r = await rx((q) => replies.get(String(json(q).task_id)) ?? 200);
    const c = await registerCustomer(sys);
    key = c.key;
    const created = await post(sys, key, { callback_url: r.url, secret: newSecret() });
    webhookId = created.body.webhook_id as string;
    const labelerKey = (await createLabeler(sys)).key;
    const plan: [Reply | Promise<Reply>, string][] = [
      [200, "delivered"],
      [500, "failed"],
      [200, "delivered"],
      [held, "pending"],
      [200, "delivered"],
    ];
    // one at a time, so that creation order (and so the listing order) is known
    for (const [reply, status] of plan) {
      const taskId = await createTask(sys, key, { consensus_threshold: 1 });
      replies.set(taskId, reply);
      expect((await label(sys, labelerKey, taskId, "cat")).status).toBe(201);
      if (status === "pending") await eventually(async () => r.forTask(taskId)[0], 20000, "the held request");
      else await deliveryReaching(sys, key, webhookId, taskId, status);
      t.push(taskId);
    }
  });
  afterAll(() => release());

  const list = (query = "") =>
    sys.api<{ page: number; per_page: number; total: number; items: DeliveryView[] }>(
      "GET",
      `/v1/webhooks/${webhookId}/deliveries${query}`,
      {
        token: key,
      },
    );

  it("answers {page, per_page, total, items} newest first, each item with its attempt log", async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ page: 1, per_page: 20, total: 5 });
    expect(res.body.items.map((d) => d.task_id)).toEqual([...t].reverse());
    const [d4, d3, , d1] = res.body.items as DeliveryView[];
    expect(d1).toEqual(
      expect.objectContaining({
        delivery_id: expect.stringMatching(/^dlv_/),
        event_id: expect.stringMatching(/^evt_/),
        task_id: t[1],
        status: "failed",
        attempts: 1,
      }),
    );
    expect(d1?.attempt_log).toEqual([
      expect.objectContaining({
        attempt: 1,
        manual: false,
        success: false,
        status_code: 500,
        error: expect.any(String),
        latency_ms: expect.any(Number),
        started_at: expect.stringMatching(ISO),
        finished_at: expect.stringMatching(ISO),
      }),
    ]);
    expect(d4).toMatchObject({ task_id: t[4], status: "delivered", attempts: 1 });
    expect(d4?.attempt_log).toEqual([expect.objectContaining({ attempt: 1, manual: false, success: true, status_code: 200, error: null })]);
    // in flight: no attempt finished yet
    expect(d3).toMatchObject({ task_id: t[3], status: "pending", attempts: 0, attempt_log: [] });
    // each delivery id and event id once
    expect(new Set(res.body.items.map((d) => d.delivery_id)).size).toBe(5);
    expect(new Set(res.body.items.map((d) => d.event_id)).size).toBe(5);
  });

  it.each([
    ["pending", [3]],
    ["delivered", [4, 2, 0]],
    ["failed", [1]],
    ["", [4, 3, 2, 1, 0]],
  ])("status=%s filters (empty means no filter)", async (status, indexes) => {
    const res = await list(`?status=${status}`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(indexes.length);
    expect(res.body.items.map((d) => d.task_id)).toEqual(indexes.map((i) => t[i]));
  });

  it("paginates with page and per_page", async () => {
    const pages = await Promise.all([1, 2, 3, 4].map((page) => list(`?per_page=2&page=${page}`)));
    for (const [i, p] of pages.entries()) {
      expect(p.status).toBe(200);
      expect(p.body).toMatchObject({ page: i + 1, per_page: 2, total: 5 });
    }
    expect(pages.map((p) => p.body.items.map((d) => d.task_id))).toEqual([[t[4], t[3]], [t[2], t[1]], [t[0]], []]);
    const max = await list("?per_page=100");
    expect(max.status).toBe(200);
    expect(max.body).toMatchObject({ page: 1, per_page: 100, total: 5 });
    const filtered = await list("?status=delivered&per_page=2&page=2");
    expect(filtered.body).toMatchObject({ page: 2, per_page: 2, total: 3 });
    expect(filtered.body.items.map((d) => d.task_id)).toEqual([t[0]]);
  });

  it.each([
    ["per_page", "?per_page=101"],
    ["per_page", "?per_page=0"],
    ["per_page", "?per_page=1.5"],
    ["per_page", "?per_page=many"],
    ["page", "?page=0"],
    ["page", "?page=-1"],
    ["page", "?page=abc"],
    ["status", "?status=settled"],
    ["status", "?status=DELIVERED"],
  ])("400 validation failed for a bad %s (%s)", async (path, query) => {
    expectValidation(await list(query), path);
  });

  it("404 webhook not found for an unknown webhook id", async () => {
    const res = await sys.api("GET", "/v1/webhooks/whk_doesnotexist000000000/deliveries", { token: key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "webhook not found" });
  });

  it("a deleted webhook's delivery log stays readable", async () => {
    release();
    await deliveryReaching(sys, key, webhookId, t[3] as string, "delivered");
    await webhookStatusReaching(sys, key, t[3] as string, "delivered");
    expect((await sys.api("DELETE", `/v1/webhooks/${webhookId}`, { token: key })).status).toBe(200);
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(5);
    expect(res.body.items.map((d) => d.status)).toEqual(["delivered", "delivered", "delivered", "failed", "delivered"]);
  });
});
