/**
 * Operator routes (`Authorization: Bearer <ADMIN_TOKEN>`): labelers, customer quota, tier upgrade, the
 * customer list, and the follow-ups the relay parked. Wrapped by the operator CLI (`pnpm admin ...`,
 * scripts/admin.ts).
 */
import {
  ApiError,
  customerPatchBody,
  customersQuery,
  followUpsQuery,
  followUpsRetryBody,
  labelerBody,
  pathId,
  upgradeBody,
} from "@labelgate/api";
import type * as wire from "@labelgate/api/types";
import { issueKey, KEY_PREFIX } from "@labelgate/core";
import type { FollowUpNudge } from "@labelgate/queue";
import type { Store } from "@labelgate/store";
import type { Request } from "express";
import { parse } from "../errors";
import type { Handlers } from "../operations";
import { customerView } from "../views";

export interface AdminRouteDeps {
  store: Store;
  /** the process's follow-up relay, nudged after parked rows are made due again */
  relay?: FollowUpNudge;
  /** label quota a customer is raised to on upgrade (if below) */
  productionLabelQuota: number;
}

function customerId(req: Request): string {
  const id = req.params.id;
  if (typeof id !== "string" || !pathId("cust_").safeParse(id).success) throw new ApiError("customerNotFound");
  return id;
}

export function adminHandlers(
  deps: AdminRouteDeps,
): Pick<Handlers, "createLabeler" | "listCustomers" | "setCustomerQuota" | "upgradeCustomer" | "listParkedFollowUps" | "retryFollowUps"> {
  const { store } = deps;

  return {
    createLabeler: async (req, res) => {
      const body = parse(labelerBody, req.body);
      const key = issueKey(KEY_PREFIX.labeler);
      const created = await store.accounts.createLabeler(body.name, key);
      const view: wire.LabelerCreated = {
        labeler_id: created.id,
        name: created.name,
        api_key: key.key,
        created_at: created.createdAt.toISOString(),
      };
      res.status(201).json(view);
    },

    listCustomers: async (req, res) => {
      const q = parse(customersQuery, req.query);
      const { total, items } = await store.accounts.list({ page: q.page, perPage: q.per_page, tier: q.tier || undefined });
      res.json({ page: q.page, per_page: q.per_page, total, items: items.map((c) => customerView(c.customer, c.hint)) });
    },

    listParkedFollowUps: async (req, res) => {
      const q = parse(followUpsQuery, req.query);
      const [items, backlog] = await Promise.all([store.followUps.parked(q.limit), store.followUps.backlog()]);
      const view: wire.ParkedFollowUps = {
        parked: backlog.parked,
        items: items.map((f) => ({
          id: f.id,
          queue: f.queue,
          payload: f.payload,
          error: f.error,
          relay_attempts: f.relayAttempts,
          created_at: f.createdAt.toISOString(),
          parked_at: f.parkedAt.toISOString(),
        })),
      };
      res.json(view);
    },

    retryFollowUps: async (req, res) => {
      const body = parse(followUpsRetryBody, req.body);
      const retried = await store.followUps.retryParked(body.ids);
      if (retried > 0) deps.relay?.nudge();
      const view: wire.FollowUpsRetried = { retried };
      res.json(view);
    },

    setCustomerQuota: async (req, res) => {
      const id = customerId(req);
      const body = parse(customerPatchBody, req.body);
      const { customer, hint } = await store.accounts.setQuota(id, body.label_quota);
      res.json(customerView(customer, hint));
    },

    /**
     * Upgrade to production (contract §authentication): issues an `sk_live_` key (returned once), raises the quota to the
     * production default if below it, and revokes the sandbox key(s) unless `keep_sandbox_key` is true.
     * 409 when the customer is already on production (live-key rotation is a support matter, contract §authentication).
     */
    upgradeCustomer: async (req, res) => {
      const id = customerId(req);
      const body = parse(upgradeBody, req.body);
      const key = issueKey(KEY_PREFIX.production);
      const { customer, revoked } = await store.accounts.upgrade(id, {
        key,
        productionLabelQuota: deps.productionLabelQuota,
        keepSandboxKey: body.keep_sandbox_key,
      });
      const view: wire.UpgradedCustomer = {
        ...customerView(customer, key.hint),
        api_key: key.key,
        sandbox_keys_revoked: revoked,
        message: "Store this live API key now: it is shown only once and cannot be retrieved again.",
      };
      res.json(view);
    },
  };
}
