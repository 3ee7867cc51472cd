/**
 * Webhook routes (../shared/spec/SPEC.md §4 Webhooks, ../shared/DESIGN.md §7): register (secret sealed with AES-256-GCM, never returned),
 * list, soft delete, the delivery log of every attempt, and manual redelivery. No outbound HTTP happens
 * here: the URL is checked (../shared/DESIGN.md §9, including DNS) and deliveries are enqueued for the webhook worker.
 */

import { ApiError, deliveriesQuery, pathId, WEBHOOK_EVENTS, webhookBody } from "@labelgate/api";
import type * as wire from "@labelgate/api/types";
import { checkOutboundUrl, newId, OutboundUrlError, type SecretBox } from "@labelgate/core";
import type { QueueClient } from "@labelgate/queue";
import type { DeliveryWithAttempts, Store, Webhook } from "@labelgate/store";
import type { Request } from "express";
import { customerOf } from "../auth";
import { parse } from "../errors";
import type { Handlers } from "../operations";

export interface WebhookRouteDeps {
  store: Store;
  queue: QueueClient;
  secretBox: SecretBox;
  allowPrivateUrls: boolean;
  webhookRetryMax: number;
  /** DNS resolver of the URL check (tests inject one) */
  resolve?: (host: string) => Promise<string[]>;
}

/** A stored webhook's events (validated at registration). @throws on a value no schema allows (a broken invariant). */
function storedEvents(events: string[]): wire.WebhookEventType[] {
  for (const e of events) if (!(WEBHOOK_EVENTS as readonly string[]).includes(e)) throw new Error(`stored webhook event ${e} is unknown`);
  return events as wire.WebhookEventType[];
}

export function webhookView(w: Webhook): wire.Webhook {
  return {
    webhook_id: w.id,
    callback_url: w.callbackUrl,
    events: storedEvents(w.events),
    active: w.active,
    created_at: w.createdAt.toISOString(),
    deleted_at: w.deletedAt ? w.deletedAt.toISOString() : null,
  };
}

function idParam(req: Request, name: string, prefix: string, notFound: "webhookNotFound" | "deliveryNotFound"): string {
  const value = req.params[name];
  if (typeof value !== "string" || !pathId(prefix).safeParse(value).success) throw new ApiError(notFound);
  return value;
}

/** Handlers of the operations under /v1/webhooks (authentication and body parsing are done before them, operations.ts). */
export function webhookHandlers(
  deps: WebhookRouteDeps,
): Pick<Handlers, "createWebhook" | "listWebhooks" | "deleteWebhook" | "listWebhookDeliveries" | "redeliverWebhookDelivery"> {
  const { store, queue, secretBox } = deps;

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
      await queue.enqueue("webhookDelivery", { deliveryId, redelivery: attemptId }, { attempts: 1 });
      res.status(202).json({ delivery_id: deliveryId, attempt_id: attemptId, status: "queued" });
    },
  };
}

/** A delivery with its attempt log (newest first), as `GET /v1/webhooks/{id}/deliveries` lists it. */
export function deliveryView(d: DeliveryWithAttempts): wire.Delivery {
  return {
    delivery_id: d.id,
    event_id: d.eventId,
    event: "task.settled",
    task_id: d.taskId,
    status: d.status,
    attempts: d.attempts,
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    delivered_at: d.deliveredAt ? d.deliveredAt.toISOString() : null,
    attempt_log: d.attemptsLog.map((a) => ({
      attempt_id: a.id,
      attempt: a.attempt,
      manual: a.manual,
      success: a.success,
      status_code: a.statusCode,
      error: a.error,
      latency_ms: a.latencyMs,
      started_at: a.startedAt.toISOString(),
      finished_at: a.finishedAt.toISOString(),
    })),
  };
}

/**
 * ../shared/DESIGN.md §7: a task with a callback_url needs an active webhook of the customer with the same
 * URL. @throws ApiError validation (400) naming every offending path.
 */
export async function requireWebhooksFor(store: Store, customerId: string, urls: { path: string; url: string }[]): Promise<void> {
  if (urls.length === 0) return;
  const unknown = await store.webhooks.unregisteredCallbacks(
    customerId,
    urls.map((u) => u.url),
  );
  const missing = urls.filter((u) => unknown.has(u.url));
  if (missing.length > 0) {
    throw new ApiError(
      "validation",
      missing.slice(0, 20).map((m) => ({
        path: m.path,
        message: "no active webhook is registered for this callback_url: register it with POST /v1/webhooks first",
      })),
    );
  }
}
