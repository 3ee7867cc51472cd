/**
 * Billing (contract §routes, §accounts, docs/decisions.md "Billing and dashboard"): monthly usage and lazily
 * materialized invoices, priced per label at the tier the customer had when the label was recorded.
 * Sums are checked against the labels table, including labels recorded by a replay of real crowd data.
 */
import path from "node:path";
import { issueKey, KEY_PREFIX, newId } from "@labelgate/core";
import { runReplay } from "@labelgate/replay";
import { monthEnd, monthOf, monthStart } from "@labelgate/store";
import { ADMIN_TOKEN, createTask, eventually, label, registerCustomer, type System, settledResult, useSystem } from "../../../test/system";

const CROWD = path.resolve(__dirname, "../../../data/crowd"); // data/crowd/dog ships in the repository
const PRICES = { currency: "eur", pricePerLabelCents: { sandbox: 3, production: 11 } };

interface LineItem {
  tier: string;
  labels: number;
  unit_price_cents: number;
  amount_cents: number;
}
interface Usage {
  month: string;
  currency: string;
  tier: string;
  price_per_label_cents: number;
  labels_collected: number;
  tasks_settled: number;
  amount_cents: number;
  line_items: LineItem[];
}
interface Invoice {
  invoice_id: string;
  month: string;
  status: string;
  currency: string;
  labels_collected: number;
  tasks_settled: number;
  amount_cents: number;
  line_items: LineItem[];
  created_at: string;
  finalized_at: string | null;
}

/**
 * The usage of `month` the API must answer, in this file's PRICES (eur; sandbox 3, production 11 cents a
 * label), for a customer now at `tier`: its totals (labels recorded, tasks settled, amount in cents) and line items.
 */
function usageOf(month: string, tier: string, totals: { labels: number; settled: number; amount: number }, lineItems: LineItem[]): Usage {
  return {
    month,
    currency: PRICES.currency,
    tier,
    price_per_label_cents: tier === "production" ? PRICES.pricePerLabelCents.production : PRICES.pricePerLabelCents.sandbox,
    labels_collected: totals.labels,
    tasks_settled: totals.settled,
    amount_cents: totals.amount,
    line_items: lineItems,
  };
}

/** `YYYY-MM` of now minus `back` months (UTC). */
function monthsAgo(back: number): string {
  const now = new Date();
  return monthOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1)));
}

async function labelsOf(sys: System, customerId: string, month?: string): Promise<number> {
  if (!month) return sys.db.prisma.label.count({ where: { customerId } });
  return sys.db.prisma.label.count({ where: { customerId, createdAt: { gte: monthStart(month), lt: monthEnd(month) } } });
}

describe("month helpers", () => {
  it("computes UTC month bounds across the year end", () => {
    expect(monthStart("2025-12").toISOString()).toBe("2025-12-01T00:00:00.000Z");
    expect(monthEnd("2025-12").toISOString()).toBe("2026-01-01T00:00:00.000Z");
    expect(monthEnd("9999-12").toISOString()).toBe("+010000-01-01T00:00:00.000Z");
    expect(monthOf(new Date("2026-02-28T23:59:59.999Z"))).toBe("2026-02");
  });
});

describe("billing routes", () => {
  // a database of its own: the shared run database's customer list (newest first) is checked by other files
  const { sys, labelers } = useSystem({ billing: PRICES }, { labelers: ["billing-a", "billing-b"] });
  const [l1, l2] = labelers;

  it("401 without a customer key on both routes", async () => {
    const labeler = l1.key;
    for (const route of ["/v1/billing/usage?month=2026-01", "/v1/billing/invoices"]) {
      expect(await sys.api("GET", route)).toMatchObject({ status: 401, body: { error: "invalid API key" } });
      expect((await sys.api("GET", route, { token: labeler })).status).toBe(401);
      expect((await sys.api("GET", route, { token: "sk_sandbox_nope" })).status).toBe(401);
    }
  });

  it("400 validation failed on a missing or malformed month, and on unknown parameters", async () => {
    const c = await registerCustomer(sys);
    for (const query of [
      "",
      "?month=",
      "?month=2026-13",
      "?month=2026-00",
      "?month=2026-1",
      "?month=26-01",
      "?month=2026-01-01",
      "?month=abc",
    ]) {
      const res = await sys.api<{ error: string; details: { path: string }[] }>("GET", `/v1/billing/usage${query}`, { token: c.key });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("validation failed");
      expect(res.body.details.map((d) => d.path)).toEqual(["month"]);
    }
    expect((await sys.api("GET", "/v1/billing/usage?month=2026-01&month=2026-02", { token: c.key })).status).toBe(400);
    expect((await sys.api("GET", "/v1/billing/usage?month=2026-01&tier=x", { token: c.key })).status).toBe(400);
    expect((await sys.api("GET", "/v1/billing/invoices?page=2", { token: c.key })).status).toBe(400);
  });

  it("a new customer: zero usage, and one open invoice for the current month", async () => {
    const c = await registerCustomer(sys);
    const month = monthsAgo(0);
    const usage = await sys.api<Usage>("GET", `/v1/billing/usage?month=${month}`, { token: c.key });
    expect(usage.status).toBe(200);
    expect(usage.body).toEqual(usageOf(month, "sandbox", { labels: 0, settled: 0, amount: 0 }, []));
    const invoices = await sys.api<{ items: Invoice[] }>("GET", "/v1/billing/invoices", { token: c.key });
    expect(invoices.status).toBe(200);
    expect(invoices.body.items).toHaveLength(1);
    expect(invoices.body.items[0]).toMatchObject({
      month,
      status: "open",
      currency: "eur",
      labels_collected: 0,
      tasks_settled: 0,
      amount_cents: 0,
      line_items: [],
      finalized_at: null,
    });
    expect(invoices.body.items[0]?.invoice_id).toMatch(/^inv_[A-Za-z0-9]{22}$/);
    // a month in the future or before registration is simply empty
    const future = await sys.api<Usage>("GET", "/v1/billing/usage?month=2999-01", { token: c.key });
    expect(future.body).toMatchObject({ month: "2999-01", labels_collected: 0, amount_cents: 0 });
  });

  it("prices each label at the tier of its time: an upgrade mid-month gives two line items", async () => {
    const a = await registerCustomer(sys, 100);
    const other = await registerCustomer(sys, 100);
    const spec = { consensus_threshold: 2, max_labels: 3 };
    const t1 = await createTask(sys, a.key, spec);
    const t2 = await createTask(sys, a.key, spec);
    const t3 = await createTask(sys, a.key, spec);
    const o1 = await createTask(sys, other.key, spec);
    // before the upgrade: 2 sandbox labels (and one label of another customer)
    for (const t of [t1, t2]) expect((await label(sys, l1.key, t, "cat")).status).toBe(201);
    expect((await label(sys, l1.key, o1, "dog")).status).toBe(201);

    const up = await sys.api("POST", `/v1/admin/customers/${a.id}/upgrade`, { token: ADMIN_TOKEN, body: {} });
    expect(up.status).toBe(200);
    const live = String(up.body.api_key);
    // after: 3 production labels; t1 and t2 reach consensus and settle
    for (const t of [t1, t2]) expect((await label(sys, l2.key, t, "cat")).status).toBe(201);
    expect((await label(sys, l2.key, t3, "dog")).status).toBe(201);
    await settledResult(sys, live, t1);
    await settledResult(sys, live, t2);

    const month = monthsAgo(0);
    const usage = await sys.api<Usage>("GET", `/v1/billing/usage?month=${month}`, { token: live });
    expect(usage.status).toBe(200);
    expect(usage.body).toEqual(
      usageOf(month, "production", { labels: 5, settled: 2, amount: 2 * 3 + 3 * 11 }, [
        { tier: "sandbox", labels: 2, unit_price_cents: 3, amount_cents: 6 },
        { tier: "production", labels: 3, unit_price_cents: 11, amount_cents: 33 },
      ]),
    );
    expect(usage.body.labels_collected).toBe(await labelsOf(sys, a.id, month));

    const invoices = await sys.api<{ items: Invoice[] }>("GET", "/v1/billing/invoices", { token: live });
    expect(invoices.body.items).toHaveLength(1);
    const { month: _m, currency: _c, tier: _t, price_per_label_cents: _p, ...totals } = usage.body;
    expect(invoices.body.items[0]).toMatchObject({ month, status: "open", currency: "eur", ...totals });

    // isolation: the other customer sees only its own label, priced at sandbox
    const theirs = await sys.api<Usage>("GET", `/v1/billing/usage?month=${month}`, { token: other.key });
    expect(theirs.body).toMatchObject({ tier: "sandbox", labels_collected: 1, tasks_settled: 0, amount_cents: 3 });
    const theirInvoices = await sys.api<{ items: Invoice[] }>("GET", "/v1/billing/invoices", { token: other.key });
    expect(theirInvoices.body.items.map((i) => i.labels_collected)).toEqual([1]);
    expect(theirInvoices.body.items[0]?.invoice_id).not.toBe(invoices.body.items[0]?.invoice_id);
  });

  it("invoices: past months are finalized once and never change; the current month stays open and is recomputed", async () => {
    const c = await registerCustomer(sys, 100);
    const tasks: string[] = [];
    for (let i = 0; i < 5; i++) tasks.push(await createTask(sys, c.key, { consensus_threshold: 2, max_labels: 3 }));
    for (const t of tasks) expect((await label(sys, l1.key, t, "cat")).status).toBe(201);
    const [back2, back1, current] = [monthsAgo(2), monthsAgo(1), monthsAgo(0)];
    // two labels recorded two months ago (registration moved back with them)
    const moved = tasks.slice(0, 2);
    await sys.db.prisma.$executeRaw`
      UPDATE labels SET created_at = ${monthStart(back2).toISOString()}::timestamptz + interval '3 days'
      WHERE customer_id = ${c.id} AND task_id = ANY(${moved}::text[])`;

    const first = await sys.api<{ items: Invoice[] }>("GET", "/v1/billing/invoices", { token: c.key });
    expect(first.status).toBe(200);
    expect(first.body.items.map((i) => [i.month, i.status, i.labels_collected, i.amount_cents])).toEqual([
      [current, "open", 3, 9],
      [back2, "finalized", 2, 6],
    ]);
    const finalized = first.body.items[1] as Invoice;
    expect(finalized.finalized_at).not.toBeNull();
    expect(finalized.line_items).toEqual([{ tier: "sandbox", labels: 2, unit_price_cents: 3, amount_cents: 6 }]);
    expect(finalized.labels_collected).toBe(await labelsOf(sys, c.id, back2));

    // a label that reaches a finalized month later is not billed again; the open month follows the labels
    await sys.db.prisma.$executeRaw`
      UPDATE labels SET created_at = ${monthStart(back2).toISOString()}::timestamptz + interval '4 days'
      WHERE customer_id = ${c.id} AND task_id = ${tasks[2]}`;
    await sys.db.prisma.$executeRaw`
      UPDATE labels SET created_at = ${monthStart(back1).toISOString()}::timestamptz + interval '1 day'
      WHERE customer_id = ${c.id} AND task_id = ${tasks[3]}`;
    const second = await sys.api<{ items: Invoice[] }>("GET", "/v1/billing/invoices", { token: c.key });
    expect(second.body.items.map((i) => [i.month, i.status, i.labels_collected])).toEqual([
      [current, "open", 1],
      [back1, "finalized", 1],
      [back2, "finalized", 2],
    ]);
    expect(second.body.items[2]).toEqual(finalized);
    expect(second.body.items[0]?.invoice_id).toBe(first.body.items[0]?.invoice_id);
    expect(await labelsOf(sys, c.id, current)).toBe(1);

    // concurrent calls agree and never create a second invoice for a month
    const results = await Promise.all(
      [1, 2, 3, 4].map(() => sys.api<{ items: Invoice[] }>("GET", "/v1/billing/invoices", { token: c.key })),
    );
    for (const r of results) expect(r.body.items.map((i) => i.invoice_id)).toEqual(second.body.items.map((i) => i.invoice_id));
    expect(await sys.db.prisma.invoice.count({ where: { customerId: c.id } })).toBe(3);

    // usage of a past month is live: it counts every label recorded in it
    const usage = await sys.api<Usage>("GET", `/v1/billing/usage?month=${back2}`, { token: c.key });
    expect(usage.body).toMatchObject({ month: back2, labels_collected: 3, amount_cents: 9 });
  });
});

describe("billing of a replay of real crowd labels", () => {
  const { sys } = useSystem({ billing: PRICES }, { labelers: [] });

  it("usage and the open invoice equal the labels the replay recorded, times the price", async () => {
    const summary = await runReplay({
      dataset: path.join(CROWD, "dog"),
      baseUrl: sys.baseUrl,
      adminToken: ADMIN_TOKEN,
      limit: 15,
      concurrency: 8,
    });
    expect(summary).toMatchObject({ tasks: 15, settled: 15 });
    // the replay's customer is the newest one of this database; give it a second key to read its bill
    const customer = await sys.db.prisma.customer.findFirstOrThrow({ orderBy: { createdAt: "desc" } });
    const key = issueKey(customer.tier === "production" ? KEY_PREFIX.production : KEY_PREFIX.sandbox);
    await sys.db.prisma.apiKey.create({
      data: { id: newId("apiKey"), customerId: customer.id, keyHash: key.hash, hint: key.hint, tier: customer.tier },
    });

    const recorded = await sys.db.prisma.label.count({ where: { customerId: customer.id } });
    const settled = await sys.db.prisma.task.count({ where: { customerId: customer.id, status: "settled" } });
    expect(recorded).toBeGreaterThanOrEqual(15);
    expect(settled).toBe(15);
    const month = monthsAgo(0);
    expect(await labelsOf(sys, customer.id, month)).toBe(recorded);
    // the tier of each label: production from the customer's first live key on (the replay upgrades first)
    const upgrade = await sys.db.prisma.apiKey.findFirst({
      where: { customerId: customer.id, tier: "production" },
      orderBy: { createdAt: "asc" },
    });
    const production = upgrade
      ? await sys.db.prisma.label.count({ where: { customerId: customer.id, createdAt: { gte: upgrade.createdAt } } })
      : 0;
    const sandbox = recorded - production;
    const lineItems = [
      ...(sandbox > 0 ? [{ tier: "sandbox", labels: sandbox, unit_price_cents: 3, amount_cents: sandbox * 3 }] : []),
      ...(production > 0 ? [{ tier: "production", labels: production, unit_price_cents: 11, amount_cents: production * 11 }] : []),
    ];
    const amount = sandbox * 3 + production * 11;
    expect(amount).toBeGreaterThan(0);

    const usage = await sys.api<Usage>("GET", `/v1/billing/usage?month=${month}`, { token: key.key });
    expect(usage.status).toBe(200);
    expect(usage.body).toEqual(usageOf(month, customer.tier, { labels: recorded, settled, amount }, lineItems));
    // the summary's mean labels per task (2 decimals) agrees with the table too
    expect(Math.abs(summary.labels_per_task - recorded / 15)).toBeLessThanOrEqual(0.005);

    const invoices = await eventually(async () => {
      const res = await sys.api<{ items: Invoice[] }>("GET", "/v1/billing/invoices", { token: key.key });
      return res.status === 200 ? res.body.items : undefined;
    });
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({
      month,
      status: "open",
      labels_collected: recorded,
      tasks_settled: settled,
      amount_cents: amount,
      line_items: lineItems,
    });
  });
});
