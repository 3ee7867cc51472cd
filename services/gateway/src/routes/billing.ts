/**
 * Billing routes (../shared/spec/SPEC.md §4 Billing, ../shared/DESIGN.md §6): monthly usage and invoices, computed by the
 * store (packages/store/src/billing.ts). Money is integer cents.
 */
import { invoicesQuery, usageQuery } from "@labelgate/api";
import type * as wire from "@labelgate/api/types";
import type { BillingConfig, InvoiceRow, Store } from "@labelgate/store";
import { type RequestHandler, Router } from "express";
import { customerOf } from "../auth";
import { parse } from "../errors";

export interface BillingRouteDeps {
  store: Store;
  billing: BillingConfig;
}

/** `GET /v1/billing/invoices` item. */
export function invoiceView(r: InvoiceRow): wire.Invoice {
  return {
    invoice_id: r.id,
    month: r.month,
    status: r.status,
    currency: r.currency,
    labels_collected: r.labels_collected,
    tasks_settled: r.tasks_settled,
    amount_cents: Number(r.amount_cents),
    line_items: r.line_items,
    created_at: r.created_at.toISOString(),
    finalized_at: r.finalized_at ? r.finalized_at.toISOString() : null,
  };
}

/** Routes under /v1/billing; `auth` is the customer authentication. */
export function billingRoutes(deps: BillingRouteDeps, auth: RequestHandler): Router {
  const { store, billing } = deps;
  const router = Router();

  router.get("/usage", auth, async (req, res) => {
    const { customerId } = customerOf(res);
    const { month } = parse(usageQuery, req.query);
    const { tier, ...priced } = await store.billing.usage(customerId, month, billing);
    const body: wire.Usage = {
      month,
      currency: billing.currency,
      tier,
      price_per_label_cents: billing.pricePerLabelCents[tier],
      ...priced,
    };
    res.json(body);
  });

  router.get("/invoices", auth, async (req, res) => {
    const { customerId } = customerOf(res);
    parse(invoicesQuery, req.query);
    const invoices = await store.billing.invoices(customerId, billing);
    res.json({ items: invoices.map(invoiceView) });
  });

  return router;
}
