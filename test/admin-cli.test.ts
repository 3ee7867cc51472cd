import { AdminCliError, adminRequest, sendAdmin } from "../scripts/admin-lib";
import { ADMIN_TOKEN, registerCustomer, type System, startSystem } from "./system";

describe("operator CLI", () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem({ workers: false });
  });
  afterAll(() => sys.close());

  const run = (words: string[], flags = {}) => sendAdmin(sys.baseUrl, ADMIN_TOKEN, adminRequest(words, flags));

  it("set-quota, upgrade, create-labeler and list-customers drive the admin routes", async () => {
    const c = await registerCustomer(sys);
    expect(await run(["set-quota", c.id, "777"])).toMatchObject({ customer_id: c.id, label_quota: 777 });
    const up = (await run(["upgrade", c.id], { keepSandboxKey: true })) as Record<string, unknown>;
    expect(up).toMatchObject({ tier: "production", sandbox_keys_revoked: 0 });
    expect(String(up.api_key)).toMatch(/^sk_live_/);
    expect(await run(["create-labeler", "Ann"])).toMatchObject({ name: "Ann" });
    const list = (await run(["list-customers"], { tier: "production", perPage: "100" })) as { items: { customer_id: string }[] };
    expect(list.items.map((i) => i.customer_id)).toContain(c.id);
  });

  it("reports usage errors (exit 2) and server errors (exit 1)", async () => {
    expect(() => adminRequest(["frobnicate"], {})).toThrow(AdminCliError);
    expect(() => adminRequest(["set-quota", "cust_x", "-3"], {})).toThrow(/whole number/);
    expect(() => adminRequest(["upgrade"], {})).toThrow(/takes 1 argument/);
    await expect(run(["upgrade", "cust_doesnotexist"])).rejects.toMatchObject({ exitCode: 1, message: expect.stringContaining("404") });
    await expect(sendAdmin(sys.baseUrl, "wrong-token-0123456789", adminRequest(["list-customers"], {}))).rejects.toThrow(/401/);
  });
});
