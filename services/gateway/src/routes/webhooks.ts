/**
 * Webhook routes (contract §routes Webhooks; contract §events): register (secret sealed with AES-256-GCM, never returned),
 * list, change the events subscribed to, soft delete, the delivery log of every attempt, and manual redelivery. No outbound HTTP happens
 * here: the URL is checked (contract §outbound-calls, including DNS) and deliveries are enqueued for the webhook worker.
 */

import { ApiError, deliveriesQuery, pathId, webhookBody, webhookPatchBody } from "@labelgate/api";
import { checkOutboundUrl, newId, OutboundUrlError, type SecretBox } from "@labelgate/core";
import type { FollowUpNudge } from "@labelgate/queue";
import type { Store } from "@labelgate/store";
import type { Request } from "express";
import { customerOf } from "../auth";
import { parse } from "../errors";
import type { Handlers } from "../operations";
import { deliveryView, webhookView } from "../views";

export interface WebhookRouteDeps {
  store: Store;
  /** the process's follow-up relay, nudged after a redelivery is asked for (docs/decisions/0300) */
  relay?: FollowUpNudge;
  secretBox: SecretBox;
  allowPrivateUrls: boolean;
  webhookRetryMax: number;
  /** DNS resolver of the URL check (tests inject one) */
  resolve?: (host: string) => Promise<string[]>;
}

function idParam(req: Request, name: string, prefix: string, notFound: "webhookNotFound" | "deliveryNotFound"): string {
  const value = req.params[name];
  if (typeof value !== "string" || !pathId(prefix).safeParse(value).success) throw new ApiError(notFound);
  return value;
}

/** Handlers of the operations under /v1/webhooks (authentication and body parsing are done before them, operations.ts). */
export function webhookHandlers(
  deps: WebhookRouteDeps,
): Pick<
  Handlers,
  "createWebhook" | "listWebhooks" | "updateWebhook" | "deleteWebhook" | "listWebhookDeliveries" | "redeliverWebhookDelivery"
> {
  const { store, relay, secretBox } = deps;

  const ownWebhook = async (req: Request, customerId: string) => {
    const id = idParam(req, "id", "whk_", "webhookNotFound");
    const found = await store.webhooks.get(customerId, id);
    if (!found) throw new ApiError("webhookNotFound");
    return found;
  };

  return {
    createWebhook: async (req, res) => {
      const { customerId } = customerOf(res);
      const body = parse(webhookBody, req.body);
      try {
        await checkOutboundUrl(body.callback_url, { allowPrivate: deps.allowPrivateUrls, resolve: deps.resolve });
      } catch (err) {
        if (err instanceof OutboundUrlError) throw new ApiError("validation", [{ path: "callback_url", message: err.message }]);
        throw err;
      }
      const id = newId("webhook");
      const created = await store.webhooks.create(customerId, {
        id,
        callbackUrl: body.callback_url,
        events: body.events,
        secretCiphertext: secretBox.seal(body.secret, id),
      });
      const { deleted_at: _unset, ...view } = webhookView(created);
      res.status(201).json(view);
    },

    listWebhooks: async (_req, res) => {
      const { customerId } = customerOf(res);
      res.json((await store.webhooks.list(customerId)).map(webhookView));
    },

    updateWebhook: async (req, res) => {
      const { customerId } = customerOf(res);
      const hook = await ownWebhook(req, customerId);
      const body = parse(webhookPatchBody, req.body);
      res.json(webhookView(await store.webhooks.updateEvents(hook, body.events)));
    },

    deleteWebhook: async (req, res) => {
      const { customerId } = customerOf(res);
      const hook = await ownWebhook(req, customerId);
      res.json(webhookView(await store.webhooks.deactivate(hook)));
    },

    listWebhookDeliveries: async (req, res) => {
      const { customerId } = customerOf(res);
      const hook = await ownWebhook(req, customerId);
      const q = parse(deliveriesQuery, req.query);
      const { total, items } = await store.webhooks.deliveries(hook.id, {
        status: q.status || undefined,
        page: q.page,
        perPage: q.per_page,
      });
      res.json({
        page: q.page,
        per_page: q.per_page,
        total,
        items: items.map(deliveryView),
      });
    },

    redeliverWebhookDelivery: async (req, res) => {
      const { customerId } = customerOf(res);
      const hook = await ownWebhook(req, customerId);
      const deliveryId = idParam(req, "deliveryId", "dlv_", "deliveryNotFound");
      const delivery = await store.webhooks.delivery(hook.id, deliveryId);
      if (!delivery) throw new ApiError("deliveryNotFound");
      if (!hook.active) throw new ApiError("webhookInactive");
      // The attempt id is reserved now so the job id is unique per redelivery request.
      const attemptId = newId("attempt");
      // a follow_up row the relay enqueues (its job id is the attempt's): one attempt
      await store.followUps.add({ webhookDelivery: [{ deliveryId, redelivery: attemptId }] }, { webhookDelivery: { attempts: 1 } });
      relay?.nudge();
      res.status(202).json({ delivery_id: deliveryId, attempt_id: attemptId, status: "queued" });
    },
  };
}
