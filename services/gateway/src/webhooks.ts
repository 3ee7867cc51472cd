/**
 * Webhook routes (SPEC §4 Webhooks, DESIGN §7): register (secret sealed with AES-256-GCM, never returned),
 * list, soft delete, the delivery log of every attempt, and manual redelivery. No outbound HTTP happens
 * here: the URL is checked (DESIGN §9, including DNS) and deliveries are enqueued for the webhook worker.
 */

import { ApiError, deliveriesQuery, pathId, webhookBody } from "@labelgate/api";
import { checkOutboundUrl, newId, OutboundUrlError, type SecretBox } from "@labelgate/core";
import type { Prisma, PrismaClient, Webhook } from "@labelgate/store";
import type { QueueClient } from "@labelgate/queue";
import { type Request, type RequestHandler, Router } from "express";
import { customerOf } from "./auth";
import { parse } from "./errors";

export interface WebhookRouteDeps {
  prisma: PrismaClient;
  queue: QueueClient;
  secretBox: SecretBox;
  allowPrivateUrls: boolean;
  webhookRetryMax: number;
  /** DNS resolver of the URL check (tests inject one) */
  resolve?: (host: string) => Promise<string[]>;
}

export function webhookView(w: Webhook) {
  return {
    webhook_id: w.id,
    callback_url: w.callbackUrl,
    events: w.events,
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

/** Routes under /v1/webhooks; `auth` is the customer authentication, `json` the body parser. */
export function webhookRoutes(deps: WebhookRouteDeps, auth: RequestHandler, json: RequestHandler): Router {
  const { prisma, queue, secretBox } = deps;
  const router = Router();

  const ownWebhook = async (req: Request, customerId: string) => {
    const id = idParam(req, "id", "whk_", "webhookNotFound");
    const found = await prisma.webhook.findFirst({ where: { id, customerId } });
    if (!found) throw new ApiError("webhookNotFound");
    return found;
  };

  router.post("/", auth, json, async (req, res) => {
    const { customerId } = customerOf(res);
    const body = parse(webhookBody, req.body);
    try {
      await checkOutboundUrl(body.callback_url, { allowPrivate: deps.allowPrivateUrls, resolve: deps.resolve });
    } catch (err) {
      if (err instanceof OutboundUrlError) throw new ApiError("validation", [{ path: "callback_url", message: err.message }]);
      throw err;
    }
    const id = newId("webhook");
    const created = await prisma.$transaction(async (tx) => {
      // One active webhook per callback_url and customer: routing by callback_url must pick one secret.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`${customerId} ${body.callback_url}`}))`;
      const clash = await tx.webhook.findFirst({
        where: { customerId, callbackUrl: body.callback_url, active: true },
        select: { id: true },
      });
      if (clash) throw new ApiError("webhookExists", undefined, { webhook_id: clash.id });
      return tx.webhook.create({
        data: { id, customerId, callbackUrl: body.callback_url, events: body.events, secretCiphertext: secretBox.seal(body.secret, id) },
      });
    });
    const { deleted_at: _unset, ...view } = webhookView(created);
    res.status(201).json(view);
  });

  router.get("/", auth, async (_req, res) => {
    const { customerId } = customerOf(res);
    const hooks = await prisma.webhook.findMany({ where: { customerId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
    res.json(hooks.map(webhookView));
  });

  router.delete("/:id", auth, async (req, res) => {
    const { customerId } = customerOf(res);
    const hook = await ownWebhook(req, customerId);
    const updated = hook.active
      ? await prisma.webhook.update({ where: { id: hook.id }, data: { active: false, deletedAt: new Date() } })
      : hook;
    res.json(webhookView(updated));
  });

  router.get("/:id/deliveries", auth, async (req, res) => {
    const { customerId } = customerOf(res);
    const hook = await ownWebhook(req, customerId);
    const q = parse(deliveriesQuery, req.query);
    const where: Prisma.DeliveryWhereInput = { webhookId: hook.id, ...(q.status ? { status: q.status } : {}) };
    const [total, items] = await Promise.all([
      prisma.delivery.count({ where }),
      prisma.delivery.findMany({
        where,
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        skip: (q.page - 1) * q.per_page,
        take: q.per_page,
        include: { attemptsLog: { orderBy: [{ startedAt: "desc" }, { attempt: "desc" }] } },
      }),
    ]);
    res.json({
      page: q.page,
      per_page: q.per_page,
      total,
      items: items.map((d) => ({
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
      })),
    });
  });

  router.post("/:id/deliveries/:deliveryId/redeliver", auth, async (req, res) => {
    const { customerId } = customerOf(res);
    const hook = await ownWebhook(req, customerId);
    const deliveryId = idParam(req, "deliveryId", "dlv_", "deliveryNotFound");
    const delivery = await prisma.delivery.findFirst({ where: { id: deliveryId, webhookId: hook.id } });
    if (!delivery) throw new ApiError("deliveryNotFound");
    if (!hook.active) throw new ApiError("webhookInactive");
    // The attempt id is reserved now so the job id is unique per redelivery request.
    const attemptId = newId("attempt");
    await queue.enqueue("webhookDelivery", { deliveryId, redelivery: attemptId }, { attempts: 1 });
    res.status(202).json({ delivery_id: deliveryId, attempt_id: attemptId, status: "queued" });
  });

  return router;
}

/**
 * DESIGN §7: a task with a callback_url needs an active webhook of the customer with the same URL.
 * @throws ApiError validation (400) naming every offending path.
 */
export async function requireWebhooksFor(prisma: PrismaClient, customerId: string, urls: { path: string; url: string }[]): Promise<void> {
  if (urls.length === 0) return;
  const distinct = [...new Set(urls.map((u) => u.url))];
  const found = await prisma.webhook.findMany({
    where: { customerId, active: true, callbackUrl: { in: distinct } },
    select: { callbackUrl: true },
  });
  const known = new Set(found.map((w) => w.callbackUrl));
  const missing = urls.filter((u) => !known.has(u.url));
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
