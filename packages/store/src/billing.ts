/**
 * Billing (contract §routes Billing; contract §accounts): monthly usage and invoices. Usage counts the labels collected in a
 * UTC month; each label is priced at the tier the customer had when it was recorded (the upgrade time is the
 * `created_at` of its first `production` API key), so a month has up to two line items. Money is integer cents.
 * Invoices are materialized lazily, one per customer-month: past months are `finalized` once and never
 * change; the current month is `open` and recomputed on every read. Every statement is an index range scan
 * (labels (customer_id, created_at), tasks (customer_id, settled_at, id)); the SQL builders are exported so
 * tests can EXPLAIN exactly what the routes run.
 */

import type { InvoiceStatus, Tier } from "@labelgate/api";
import { newId } from "@labelgate/core";
import type { Db } from "./database";
import { StoreError } from "./errors";
import { Prisma, type PrismaClient } from "./generated/client";

export interface BillingConfig {
  /** ISO 4217, lower case (BILLING_CURRENCY) */
  currency: string;
  /** PRICE_PER_LABEL_CENTS_SANDBOX / _PRODUCTION */
  pricePerLabelCents: Record<Tier, number>;
}

/**
 * A past month is finalized only once it ended this long ago: a label's `created_at` is the start of the
 * transaction that wrote it, so a transaction open across midnight commits a label dated in the month
 * before. Transactions are bounded by the 15 s statement and transaction timeouts; 5 minutes is ample.
 */
export const FINALIZE_GRACE_MS = 5 * 60_000;

// --- months (UTC) ---------------------------------------------------------------------------------

/** `YYYY-MM` → index of the month since year 0 (so months can be counted and compared). */
export function monthIndex(month: string): number {
  return Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)) - 1;
}

export function monthOfIndex(index: number): string {
  return `${String(Math.floor(index / 12)).padStart(4, "0")}-${String((index % 12) + 1).padStart(2, "0")}`;
}

/** The UTC month of an instant, `YYYY-MM`. */
export function monthOf(d: Date): string {
  return d.toISOString().slice(0, 7);
}

/** First instant (UTC) of the month with this index. */
export function startOfMonthIndex(index: number): Date {
  return new Date(Date.UTC(Math.floor(index / 12), index % 12, 1));
}

/** First instant of a month (UTC). */
export function monthStart(month: string): Date {
  return startOfMonthIndex(monthIndex(month));
}

/** First instant of the month after. */
export function monthEnd(month: string): Date {
  return startOfMonthIndex(monthIndex(month) + 1);
}

// --- usage ----------------------------------------------------------------------------------------

export interface MonthUsage {
  month: string;
  sandboxLabels: number;
  productionLabels: number;
  tasksSettled: number;
}

export interface LineItem {
  tier: Tier;
  labels: number;
  unit_price_cents: number;
  amount_cents: number;
}

/**
 * Usage per UTC month in [from, to): labels split at the customer's upgrade time, and tasks settled. Months
 * without labels or settlements are absent. Index range scans only: labels (customer_id, created_at) and
 * tasks (customer_id, settled_at, id), both index-only; api_keys (customer_id).
 */
export function usageByMonthSql(customerId: string, from: Date, to: Date): Prisma.Sql {
  const start = from.toISOString();
  const end = to.toISOString();
  return Prisma.sql`
    WITH upgrade AS (
      SELECT min(created_at) AS at FROM api_keys WHERE customer_id = ${customerId} AND tier = 'production'
    ),
    labeled AS (
      SELECT to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month,
        count(*) FILTER (WHERE u.at IS NULL OR l.created_at < u.at) AS sandbox_labels,
        count(*) FILTER (WHERE l.created_at >= u.at) AS production_labels
      FROM labels l CROSS JOIN upgrade u
      WHERE l.customer_id = ${customerId} AND l.created_at >= ${start}::timestamptz AND l.created_at < ${end}::timestamptz
        -- a pre-label is its model labeler's label, never charged (contract §prelabels)
        AND l.labeler_id <> ALL(ARRAY(SELECT m.id FROM labelers m WHERE m.customer_id = ${customerId}))
      GROUP BY 1
    ),
    settled AS (
      SELECT to_char(t.settled_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month, count(*) AS tasks_settled
      FROM tasks t
      WHERE t.customer_id = ${customerId} AND t.settled_at >= ${start}::timestamptz AND t.settled_at < ${end}::timestamptz
      GROUP BY 1
    )
    SELECT month, COALESCE(l.sandbox_labels, 0)::int AS sandbox_labels, COALESCE(l.production_labels, 0)::int AS production_labels,
      COALESCE(s.tasks_settled, 0)::int AS tasks_settled
    FROM labeled l FULL JOIN settled s USING (month)
    ORDER BY month`;
}

export async function usageByMonth(prisma: PrismaClient, customerId: string, from: Date, to: Date): Promise<Map<string, MonthUsage>> {
  const rows = await prisma.$queryRaw<{ month: string; sandbox_labels: number; production_labels: number; tasks_settled: number }[]>(
    usageByMonthSql(customerId, from, to),
  );
  return new Map(
    rows.map((r) => [
      r.month,
      { month: r.month, sandboxLabels: r.sandbox_labels, productionLabels: r.production_labels, tasksSettled: r.tasks_settled },
    ]),
  );
}

/** Priced usage: one line item per tier with labels (sandbox first), totals in integer cents. */
export function price(usage: MonthUsage, billing: BillingConfig) {
  const lineItems: LineItem[] = [];
  for (const [tier, labels] of [
    ["sandbox", usage.sandboxLabels],
    ["production", usage.productionLabels],
  ] as const) {
    if (labels === 0) continue;
    const unit = billing.pricePerLabelCents[tier];
    lineItems.push({ tier, labels, unit_price_cents: unit, amount_cents: labels * unit });
  }
  return {
    labels_collected: usage.sandboxLabels + usage.productionLabels,
    tasks_settled: usage.tasksSettled,
    amount_cents: lineItems.reduce((sum, item) => sum + item.amount_cents, 0),
    line_items: lineItems,
  };
}

export function emptyUsage(month: string): MonthUsage {
  return { month, sandboxLabels: 0, productionLabels: 0, tasksSettled: 0 };
}

// --- invoices -------------------------------------------------------------------------------------

export interface InvoiceRow {
  id: string;
  month: string;
  status: InvoiceStatus;
  currency: string;
  labels_collected: number;
  tasks_settled: number;
  amount_cents: bigint | number;
  line_items: LineItem[];
  created_at: Date;
  finalized_at: Date | null;
}

/**
 * What the materialization needs to know, in one statement: the database clock, the customer's
 * registration and first label (where invoicing starts), and the months already invoiced. Index lookups
 * only: customers (id), labels (customer_id, created_at) (first entry), invoices (customer_id, month).
 */
export function invoiceStateSql(customerId: string): Prisma.Sql {
  return Prisma.sql`
    SELECT now() AS now, c.created_at AS registered_at,
      (SELECT min(created_at) FROM labels WHERE customer_id = ${customerId}) AS first_label_at,
      (SELECT max(month) FROM invoices WHERE customer_id = ${customerId} AND status = 'finalized') AS last_finalized,
      COALESCE((SELECT array_agg(month ORDER BY month) FROM invoices WHERE customer_id = ${customerId} AND status = 'open'), '{}') AS open_months
    FROM customers c WHERE c.id = ${customerId}`;
}

/**
 * Brings the customer's invoices up to date and returns them, newest month first. Months from where
 * invoicing stopped (the earliest open invoice, or the month after the last finalized one, or else the
 * first label or registration month) to the current month are computed from the labels in one statement;
 * each month with usage, each month already shown as open, and always the current month are upserted in
 * one statement. A month that ended (plus FINALIZE_GRACE_MS) is written `finalized` once; `ON CONFLICT ...
 * WHERE status = 'open'` never touches a finalized row, so concurrent calls are safe.
 */
export async function materializeInvoices(prisma: PrismaClient, customerId: string, billing: BillingConfig): Promise<InvoiceRow[]> {
  const states = await prisma.$queryRaw<
    { now: Date; registered_at: Date; first_label_at: Date | null; last_finalized: string | null; open_months: string[] }[]
  >(invoiceStateSql(customerId));
  const state = states[0];
  if (!state) throw new StoreError("customerGone"); // the key's customer vanished: customers are never deleted
  const current = monthIndex(monthOf(state.now));
  const invoiced = [...state.open_months.map(monthIndex), ...(state.last_finalized ? [monthIndex(state.last_finalized) + 1] : [])];
  const from = Math.min(
    current,
    ...(invoiced.length > 0
      ? invoiced
      : [monthIndex(monthOf(state.registered_at)), ...(state.first_label_at ? [monthIndex(monthOf(state.first_label_at))] : [])]),
  );
  const usage = await usageByMonth(prisma, customerId, startOfMonthIndex(from), startOfMonthIndex(current + 1));
  const open = new Set(state.open_months);
  const rows = [];
  for (let index = from; index <= current; index++) {
    const month = monthOfIndex(index);
    const used = usage.get(month);
    if (!used && !open.has(month) && index !== current) continue;
    const closable = monthEnd(month).getTime() + FINALIZE_GRACE_MS <= state.now.getTime();
    rows.push({ id: newId("invoice"), month, status: closable ? "finalized" : "open", ...price(used ?? emptyUsage(month), billing) });
  }
  if (rows.length > 0) {
    await prisma.$executeRaw`
      INSERT INTO invoices (id, customer_id, month, status, currency, labels_collected, tasks_settled, amount_cents, line_items, created_at, finalized_at)
      SELECT r.id, ${customerId}, r.month, r.status::"InvoiceStatus", ${billing.currency}, r.labels_collected, r.tasks_settled,
        r.amount_cents, r.line_items, now(), CASE WHEN r.status = 'finalized' THEN now() END
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS r(id text, month text, status text, labels_collected int, tasks_settled int, amount_cents bigint, line_items jsonb)
      ON CONFLICT (customer_id, month) DO UPDATE SET
        status = EXCLUDED.status, currency = EXCLUDED.currency, labels_collected = EXCLUDED.labels_collected,
        tasks_settled = EXCLUDED.tasks_settled, amount_cents = EXCLUDED.amount_cents, line_items = EXCLUDED.line_items,
        finalized_at = EXCLUDED.finalized_at
      WHERE invoices.status = 'open'`;
  }
  return prisma.$queryRaw<InvoiceRow[]>`
    SELECT id, month, status::text AS status, currency, labels_collected, tasks_settled, amount_cents, line_items, created_at, finalized_at
    FROM invoices WHERE customer_id = ${customerId} ORDER BY month DESC`;
}

// --- routes ---------------------------------------------------------------------------------------

/** Billing reads of the store. */
export function billingStore(db: Db) {
  return {
    /**
     * A month's usage priced (labels by the tier they were recorded under), with the customer's current
     * tier. @throws StoreError customerGone when the customer vanished (customers are never deleted)
     */
    async usage(customerId: string, month: string, billing: BillingConfig) {
      const [usage, customer] = await Promise.all([
        usageByMonth(db.prisma, customerId, monthStart(month), monthEnd(month)),
        db.prisma.customer.findUnique({ where: { id: customerId }, select: { tier: true } }),
      ]);
      if (!customer) throw new StoreError("customerGone");
      return { tier: customer.tier as Tier, ...price(usage.get(month) ?? emptyUsage(month), billing) };
    },
    /** Brings the customer's invoices up to date and returns them, newest month first (see `materializeInvoices`). */
    invoices: (customerId: string, billing: BillingConfig) => materializeInvoices(db.prisma, customerId, billing),
  };
}

export type BillingStore = ReturnType<typeof billingStore>;
