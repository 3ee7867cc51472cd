import { gatewayEnv, parseEnv } from "@labelgate/config";
import { ADMIN_TOKEN, registerCustomer, type System, startSystem, taskBody, useSystem } from "../../../test/system";

describe("tier upgrade and operator routes", () => {
  const { sys } = useSystem({ workers: false }, { labelers: [] });

  it("upgrades to production: sk_live_ key once, quota raised, sandbox key revoked", async () => {
    const c = await registerCustomer(sys);
    const res = await sys.api("POST", `/v1/admin/customers/${c.id}/upgrade`, { token: ADMIN_TOKEN, body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ customer_id: c.id, tier: "production", label_quota: 100_000, sandbox_keys_revoked: 1 });
    const live = String(res.body.api_key);
    expect(live).toMatch(/^sk_live_[A-Za-z0-9]{43}$/);
    expect(res.body.api_key_hint).toBe(`${live.slice(0, "sk_live_".length + 4)}…`);
    expect((await sys.api("GET", "/v1/customers/me", { token: c.key })).status).toBe(401);
    const me = await sys.api("GET", "/v1/customers/me", { token: live });
    expect(me.body).toMatchObject({ tier: "production", label_quota: 100_000 });
    expect(JSON.stringify(me.body)).not.toContain(live);
    const again = await sys.api("POST", `/v1/admin/customers/${c.id}/upgrade`, { token: ADMIN_TOKEN, body: {} });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: "customer is already on the production tier" });
  });

  it("keeps the sandbox key when asked, and never lowers a larger quota", async () => {
    const c = await registerCustomer(sys, 250_000);
    const res = await sys.api("POST", `/v1/admin/customers/${c.id}/upgrade`, { token: ADMIN_TOKEN, body: { keep_sandbox_key: true } });
    expect(res.body).toMatchObject({ label_quota: 250_000, sandbox_keys_revoked: 0 });
    expect((await sys.api("GET", "/v1/customers/me", { token: c.key })).status).toBe(200);
  });

  it("upgrade errors: 401 without the admin token, 404 unknown customer, 400 unknown field", async () => {
    const c = await registerCustomer(sys);
    expect((await sys.api("POST", `/v1/admin/customers/${c.id}/upgrade`, { token: c.key, body: {} })).status).toBe(401);
    expect((await sys.api("POST", "/v1/admin/customers/cust_nope/upgrade", { token: ADMIN_TOKEN, body: {} })).status).toBe(404);
    expect((await sys.api("POST", `/v1/admin/customers/${c.id}/upgrade`, { token: ADMIN_TOKEN, body: { tier: "gold" } })).status).toBe(400);
  });

  it("GET /v1/admin/customers lists customers with paging and a tier filter", async () => {
    const a = await registerCustomer(sys);
    const res = await sys.api<{ page: number; per_page: number; total: number; items: { customer_id: string; tier: string }[] }>(
      "GET",
      "/v1/admin/customers?per_page=5",
      { token: ADMIN_TOKEN },
    );
    expect(res.status).toBe(200);
    expect(res.body.per_page).toBe(5);
    expect(res.body.items.length).toBeLessThanOrEqual(5);
    expect(res.body.total).toBeGreaterThanOrEqual(1);
    expect(res.body.items[0]?.customer_id).toBe(a.id);
    const prod = await sys.api<{ items: { tier: string }[] }>("GET", "/v1/admin/customers?tier=production&per_page=100", {
      token: ADMIN_TOKEN,
    });
    expect(prod.body.items.every((c) => c.tier === "production")).toBe(true);
    expect((await sys.api("GET", "/v1/admin/customers?per_page=101", { token: ADMIN_TOKEN })).status).toBe(400);
    expect((await sys.api("GET", "/v1/admin/customers", { token: a.key })).status).toBe(401);
  });
});

describe("rate limits", () => {
  const { sys } = useSystem(
    { workers: false, rateLimits: { perKey: { sandbox: 5, production: 8 }, windowSeconds: 60, registrationsPerHour: 200 } },
    { labelers: [] },
  );

  it("limits each API key by its tier, with RateLimit-* headers and a 429 with Retry-After", async () => {
    const c = await registerCustomer(sys);
    const seen: { status: number; remaining: string | null }[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await sys.api("GET", "/v1/customers/me", { token: c.key });
      seen.push({ status: res.status, remaining: res.headers.get("ratelimit-remaining") });
      expect(res.headers.get("ratelimit-limit")).toBe("5");
      expect(Number(res.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
      if (res.status === 429) {
        expect(res.body).toEqual({ error: "rate limit exceeded" });
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(Number(res.headers.get("retry-after"))).toBeLessThanOrEqual(60);
      }
    }
    expect(seen.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(seen.map((s) => s.remaining)).toEqual(["4", "3", "2", "1", "0", "0", "0"]);
    // another key has its own budget
    const other = await registerCustomer(sys);
    expect((await sys.api("GET", "/v1/customers/me", { token: other.key })).status).toBe(200);
  });

  it("a production key gets the production budget; a rate-limited submission creates nothing", async () => {
    const c = await registerCustomer(sys);
    const up = await sys.api("POST", `/v1/admin/customers/${c.id}/upgrade`, { token: ADMIN_TOKEN, body: {} });
    const live = String(up.body.api_key);
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await sys.api("POST", "/v1/tasks", { token: live, body: taskBody() })).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 202, 202, 202, 429]);
    expect(await sys.db.prisma.task.count({ where: { customerId: c.id } })).toBe(8);
  });

  it("the budget is shared by gateway replicas (counters in Redis)", async () => {
    // A second gateway on the same database and Redis prefix: one key's requests spread over both.
    const replica = await startSystem({
      workers: false,
      databaseUrl: sys.databaseUrl,
      prefix: sys.prefix,
      rateLimits: { perKey: { sandbox: 5, production: 8 }, windowSeconds: 60, registrationsPerHour: 200 },
    });
    try {
      const c = await registerCustomer(sys);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++)
        statuses.push((await (i % 2 === 0 ? sys : replica).api("GET", "/v1/customers/me", { token: c.key })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    } finally {
      await replica.close();
    }
  });

  it("limits registrations per client address", async () => {
    const small = await startSystem({ workers: false, rateLimits: { registrationsPerHour: 2 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push(
          (await small.api("POST", "/v1/customers", { body: { name: "R", email: `rl-${Date.now()}-${i}@example.com` } })).status,
        );
      }
      expect(statuses).toEqual([201, 201, 429]);
    } finally {
      await small.close();
    }
  });

  /** Registers with `X-Forwarded-For: forwardedFor` and answers the status. */
  const registerAs = (sys: System, forwardedFor: string, i: number) =>
    sys
      .api("POST", "/v1/customers", {
        body: { name: "P", email: `proxy-${Date.now()}-${i}-${Math.random().toString(36).slice(2)}@example.com` },
        headers: { "x-forwarded-for": forwardedFor },
      })
      .then((r) => r.status);

  it("without TRUST_PROXY, X-Forwarded-For is ignored: every client behind one address shares its budget", async () => {
    const direct = await startSystem({ workers: false, rateLimits: { registrationsPerHour: 2 } });
    try {
      const statuses = [];
      for (const [i, client] of ["203.0.113.1", "203.0.113.2", "203.0.113.3"].entries()) statuses.push(await registerAs(direct, client, i));
      // the socket's address (127.0.0.1) is the client: a forged header buys no extra registrations
      expect(statuses).toEqual([201, 201, 429]);
    } finally {
      await direct.close();
    }
  });

  it("behind a proxy (TRUST_PROXY=1, or its address as a CIDR) each forwarded client has its own budget", async () => {
    for (const trust of ["1", "127.0.0.0/8"]) {
      const proxied = await startSystem({ workers: false, rateLimits: { registrationsPerHour: 2 }, env: { TRUST_PROXY: trust } });
      try {
        const a = [await registerAs(proxied, "198.51.100.7", 1), await registerAs(proxied, "198.51.100.7", 2)];
        const b = [await registerAs(proxied, "198.51.100.8", 3), await registerAs(proxied, "198.51.100.8", 4)];
        const aAgain = await registerAs(proxied, "198.51.100.7", 5);
        expect({ trust, a, b, aAgain }).toEqual({ trust, a: [201, 201], b: [201, 201], aAgain: 429 });
      } finally {
        await proxied.close();
      }
    }
  });
});

describe("TRUST_PROXY parsing", () => {
  it.each([
    [undefined, false],
    ["false", false],
    ["0", false],
    ["1", 1],
    ["2", 2],
    ["10.0.0.0/8", ["10.0.0.0/8"]],
    ["10.0.0.0/8, fd00::/8,192.0.2.4", ["10.0.0.0/8", "fd00::/8", "192.0.2.4"]],
    ["loopback,uniquelocal", ["loopback", "uniquelocal"]],
  ])("%s → %j", (value, expected) => {
    expect(parseEnv(gatewayEnv, value === undefined ? {} : { TRUST_PROXY: value }).TRUST_PROXY).toEqual(expected);
  });

  it.each([["proxy.example"], ["10.0.0.0/33"], ["fd00::/129"], ["10.0.0.1/8/2"], ["33"], ["true"]])(
    "refuses %s naming the variable",
    (value) => {
      expect(() => parseEnv(gatewayEnv, { TRUST_PROXY: value })).toThrow(/TRUST_PROXY/);
    },
  );
});
