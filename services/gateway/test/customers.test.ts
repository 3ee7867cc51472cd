import { hashKey } from "@labelgate/core";
import { ADMIN_TOKEN, createLabeler, registerCustomer, type System, startSystem } from "../../../test/system";

let sys: System;
beforeAll(async () => {
  sys = await startSystem({ workers: false });
});
afterAll(() => sys.close());

describe("POST /v1/customers", () => {
  it("registers a sandbox customer, returns the key once and stores only its SHA-256", async () => {
    const email = `Reg-${Date.now()}@Example.com`;
    const res = await sys.api("POST", "/v1/customers", { body: { name: "Acme", email } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ tier: "sandbox", label_quota: 500, name: "Acme", email: email.toLowerCase() });
    expect(res.body.customer_id).toMatch(/^cust_[A-Za-z0-9]+$/);
    expect(res.body.api_key).toMatch(/^sk_sandbox_[A-Za-z0-9]{43}$/);
    expect(typeof res.body.message).toBe("string");
    expect(typeof res.body.created_at).toBe("number");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    const key = await sys.db.prisma.apiKey.findFirstOrThrow({ where: { customerId: String(res.body.customer_id) } });
    expect(key.keyHash).toBe(hashKey(String(res.body.api_key)));
    const rows = await sys.db.prisma.$queryRaw<{ n: bigint }[]>`
      SELECT count(*) AS n FROM api_keys WHERE key_hash = ${String(res.body.api_key)} OR hint = ${String(res.body.api_key)}`;
    expect(Number(rows[0]?.n)).toBe(0);
  });

  it("answers 409 for an e-mail already registered, in any letter case", async () => {
    const email = `dup-${Date.now()}@example.com`;
    expect((await sys.api("POST", "/v1/customers", { body: { name: "A", email } })).status).toBe(201);
    const again = await sys.api("POST", "/v1/customers", { body: { name: "B", email: email.toUpperCase() } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: "email already registered" });
  });

  it.each([
    [{ name: "A" }, "email"],
    [{ email: "a@example.com" }, "name"],
    [{ name: "A", email: "not-an-email" }, "email"],
    [{ name: "", email: "a@example.com" }, "name"],
    [{ name: "A", email: "a@example.com", tier: "production" }, ""],
  ])("rejects %j with 400 validation failed", async (body, path) => {
    const res = await sys.api("POST", "/v1/customers", { body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("validation failed");
    const details = res.body.details as { path: string; message: string }[];
    expect(details.length).toBeGreaterThan(0);
    expect(details.some((d) => d.path === path)).toBe(true);
  });

  it("answers 400 invalid JSON for a malformed body", async () => {
    const res = await sys.api("POST", "/v1/customers", { raw: '{"name": "A",' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "invalid JSON" });
  });

  it("answers 413 for a body over 1 MB", async () => {
    const res = await sys.api("POST", "/v1/customers", { body: { name: "x".repeat(1_100_000), email: "big@example.com" } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: "payload too large" });
  });
});

describe("GET /v1/customers/me", () => {
  it("returns the profile with a key hint and never the key", async () => {
    const c = await registerCustomer(sys);
    const res = await sys.api("GET", "/v1/customers/me", { token: c.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ customer_id: c.id, email: c.email, tier: "sandbox", label_quota: 500, label_quota_remaining: 500 });
    expect(res.body.api_key).toBeUndefined();
    expect(res.body.api_key_hint).toBe(`${c.key.slice(0, "sk_sandbox_".length + 4)}…`);
    expect(JSON.stringify(res.body)).not.toContain(c.key);
  });

  it.each([
    ["no header", undefined],
    ["wrong scheme", "Basic abc"],
    ["unknown key", "Bearer sk_sandbox_doesnotexist0000000000000000000000000000000"],
    ["empty bearer", "Bearer "],
  ])("answers 401 invalid API key for %s", async (_name, authorization) => {
    const res = await sys.api("GET", "/v1/customers/me", { headers: authorization ? { authorization } : {} });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "invalid API key" });
  });

  it("rejects a labeler key on a customer route and a customer key on a labeler route", async () => {
    const labeler = await createLabeler(sys);
    const c = await registerCustomer(sys);
    expect((await sys.api("GET", "/v1/customers/me", { token: labeler.key })).status).toBe(401);
    expect((await sys.api("POST", "/v1/labeling/claims", { token: c.key, body: {} })).status).toBe(401);
    expect((await sys.api("POST", "/v1/admin/labelers", { token: c.key, body: { name: "x" } })).status).toBe(401);
  });
});

describe("admin routes", () => {
  it("answer 401 without the admin token or with a wrong one", async () => {
    for (const token of [undefined, "wrong-token-0123456789"]) {
      const res = await sys.api("POST", "/v1/admin/labelers", { token, body: { name: "x" } });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: "invalid API key" });
    }
  });

  it("PATCH /v1/admin/customers/{id} sets the label quota; unknown id 404; bad body 400", async () => {
    const c = await registerCustomer(sys);
    const ok = await sys.api("PATCH", `/v1/admin/customers/${c.id}`, { token: ADMIN_TOKEN, body: { label_quota: 12345 } });
    expect(ok.status).toBe(200);
    expect(ok.body.label_quota).toBe(12345);
    const me = await sys.api("GET", "/v1/customers/me", { token: c.key });
    expect(me.body.label_quota).toBe(12345);
    expect((await sys.api("PATCH", "/v1/admin/customers/cust_nope", { token: ADMIN_TOKEN, body: { label_quota: 1 } })).status).toBe(404);
    const bad = await sys.api("PATCH", `/v1/admin/customers/${c.id}`, { token: ADMIN_TOKEN, body: { label_quota: -1 } });
    expect(bad.status).toBe(400);
  });

  it("POST /v1/admin/labelers issues an lk_ key once", async () => {
    const res = await sys.api("POST", "/v1/admin/labelers", { token: ADMIN_TOKEN, body: { name: "Ann" } });
    expect(res.status).toBe(201);
    expect(res.body.labeler_id).toMatch(/^lbl_/);
    expect(res.body.api_key).toMatch(/^lk_[A-Za-z0-9]{43}$/);
    const row = await sys.db.prisma.labeler.findUniqueOrThrow({ where: { id: String(res.body.labeler_id) } });
    expect(row.keyHash).toBe(hashKey(String(res.body.api_key)));
  });
});

describe("system", () => {
  it("GET /v1/health answers ok with the service name, without auth", async () => {
    const res = await sys.api("GET", "/v1/health");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, service: "labelgate-gateway" });
  });

  it("unknown routes answer 404 with the error body", async () => {
    const res = await sys.api("GET", "/v1/nope");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "not found" });
  });

  it("echoes a valid X-Request-Id", async () => {
    const res = await sys.api("GET", "/v1/health", { headers: { "x-request-id": "req-abc-123" } });
    expect(res.headers.get("x-request-id")).toBe("req-abc-123");
  });
});
