/**
 * Billing routes (contract §routes Billing; contract §accounts): monthly usage and invoices, computed by the
 * store (packages/store/src/billing.ts). Money is integer cents.
 */
import { invoicesQuery, usageQuery } from "@labelgate/api";
import type * as wire from "@labelgate/api/types";
import type { BillingConfig, Store } from "@labelgate/store";
import { customerOf } from "../auth";
import { parse } from "../errors";
import type { Handlers } from "../operations";
import { invoiceView } from "../views";

export interface BillingRouteDeps {
  store: Store;
  billing: BillingConfig;
}

/** Handlers of the operations under /v1/billing (authentication and body parsing are done before them, operations.ts). */
export function billingHandlers(deps: BillingRouteDeps): Pick<Handlers, "getUsage" | "listInvoices"> {
  const { store, billing } = deps;

  return {
    getUsage: async (req, res) => {
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
    },

    listInvoices: async (req, res) => {
      const { customerId } = customerOf(res);
      parse(invoicesQuery, req.query);
      const invoices = await store.billing.invoices(customerId, billing);
      res.json({ items: invoices.map(invoiceView) });
    },
  };
}
