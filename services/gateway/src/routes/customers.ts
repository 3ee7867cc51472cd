/**
 * Customer routes (contract §routes Customers): self-registration (no auth), the caller's profile and
 * its settings (contract §quality: task defaults and quality settings).
 */
import { registrationBody, settingsPatchBody } from "@labelgate/api";
import type * as wire from "@labelgate/api/types";
import { issueKey, KEY_PREFIX } from "@labelgate/core";
import type { Store } from "@labelgate/store";
import { customerOf } from "../auth";
import { parse } from "../errors";
import type { Handlers } from "../operations";
import { customerView, settingsView } from "../views";

export interface CustomerRouteDeps {
  store: Store;
  /** label quota of a new sandbox customer (contract §limits: 500) */
  sandboxLabelQuota: number;
}

/** Handlers of the operations under /v1/customers (authentication and body parsing are done before them, operations.ts). */
export function customerHandlers(
  deps: CustomerRouteDeps,
): Pick<Handlers, "registerCustomer" | "getCurrentCustomer" | "getSettings" | "updateSettings"> {
  const { store } = deps;

  return {
    registerCustomer: async (req, res) => {
      const body = parse(registrationBody, req.body);
      const key = issueKey(KEY_PREFIX.sandbox);
      const created = await store.accounts.register({ name: body.name, email: body.email, labelQuota: deps.sandboxLabelQuota, key });
      const view: wire.RegisteredCustomer = {
        customer_id: created.id,
        name: created.name,
        email: created.email,
        api_key: key.key,
        tier: "sandbox",
        label_quota: created.labelQuota,
        created_at: Math.floor(created.createdAt.getTime() / 1000),
        message: "Store this API key now: it is shown only once and cannot be retrieved again.",
      };
      res.status(201).json(view);
    },

    getCurrentCustomer: async (_req, res) => {
      const { customerId } = customerOf(res);
      const { customer, hint } = await store.accounts.profile(customerId);
      res.json(customerView(customer, hint));
    },

    getSettings: async (_req, res) => {
      const { customerId } = customerOf(res);
      const body: wire.Settings = settingsView(await store.settings.get(customerId));
      res.json(body);
    },

    updateSettings: async (req, res) => {
      const { customerId } = customerOf(res);
      const body: wire.Settings = settingsView(await store.settings.patch(customerId, parse(settingsPatchBody, req.body)));
      res.json(body);
    },
  };
}
