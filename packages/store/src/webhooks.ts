/**
 * Webhooks (contract §routes, §events): registration (the secret arrives sealed and is stored so),
 * the list, soft delete, the delivery log of every attempt, and the lookups of routing and redelivery.
 */
import type { DeliveryStatus, WebhookEventType } from "@labelgate/api";
import type { Db } from "./database";
import { StoreError } from "./errors";
import { newestFirstPage } from "./fragments";
import type { Delivery, DeliveryAttempt, Webhook } from "./generated/client";
import { Prisma } from "./generated/client";
import { withTransaction } from "./sql";

/** A delivery with its attempt log, the type of its event (a name of the event catalog) and its job (a job event's). */
export type DeliveryWithAttempts = Delivery & { attemptsLog: DeliveryAttempt[]; eventType: string; jobId: string | null };

export function webhooksStore(db: Db) {
  const { prisma } = db;
  return {
    /**
     * Registers a webhook. One active webhook per callback_url and customer (routing by callback_url must
     * pick one secret): concurrent registrations of one URL are serialized by an advisory lock.
     * @param sealSecret seals the secret with the new webhook's id as context
     * @throws StoreError webhookExists (409)
     */
    async create(
      customerId: string,
      input: { id: string; callbackUrl: string; events: WebhookEventType[]; secretCiphertext: string },
    ): Promise<Webhook> {
      await withTransaction(db.pool, async (run) => {
        const [, clash] = await run<[object, { id: string }]>([
          Prisma.sql`SELECT pg_advisory_xact_lock(hashtext(${`${customerId} ${input.callbackUrl}`}))`,
          Prisma.sql`SELECT id FROM webhooks WHERE customer_id = ${customerId} AND callback_url = ${input.callbackUrl} AND active LIMIT 1`,
        ]);
        if (clash[0]) throw new StoreError("webhookExists", undefined, { webhook_id: clash[0].id });
        await run(
          [
            Prisma.sql`INSERT INTO webhooks (id, customer_id, callback_url, secret_ciphertext, events)
                       VALUES (${input.id}, ${customerId}, ${input.callbackUrl}, ${input.secretCiphertext}, ${input.events}::text[])`,
          ],
          { commit: true },
        );
      });
      return prisma.webhook.findUniqueOrThrow({ where: { id: input.id } });
    },

    /** The customer's webhooks, newest first, deleted ones included. */
    list: (customerId: string): Promise<Webhook[]> =>
      prisma.webhook.findMany({ where: { customerId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] }),

    /** A customer's webhook, or undefined. */
    get: async (customerId: string, webhookId: string): Promise<Webhook | undefined> =>
      (await prisma.webhook.findFirst({ where: { id: webhookId, customerId } })) ?? undefined,

    /**
     * Replaces an active webhook's `events` (the subscription: events routed from now on follow it).
     * @throws StoreError webhookInactive (409) for a deleted webhook
     */
    async updateEvents(webhook: Webhook, events: WebhookEventType[]): Promise<Webhook> {
      const updated = await prisma.webhook.updateMany({ where: { id: webhook.id, active: true }, data: { events } });
      if (updated.count === 0) throw new StoreError("webhookInactive");
      return prisma.webhook.findUniqueOrThrow({ where: { id: webhook.id } });
    },

    /** Soft delete: inactive with `deleted_at`; deleting again answers the deleted webhook. */
    async deactivate(webhook: Webhook): Promise<Webhook> {
      if (!webhook.active) return webhook;
      return prisma.webhook.update({ where: { id: webhook.id }, data: { active: false, deletedAt: new Date() } });
    },

    /** A page of a webhook's deliveries, newest first, each with its attempt log (newest first). */
    async deliveries(
      webhookId: string,
      query: { status?: DeliveryStatus; page: number; perPage: number },
    ): Promise<{ total: number; items: DeliveryWithAttempts[] }> {
      const where: Prisma.DeliveryWhereInput = { webhookId, ...(query.status ? { status: query.status } : {}) };
      const [total, items] = await Promise.all([
        prisma.delivery.count({ where }),
        prisma.delivery.findMany({
          where,
          ...newestFirstPage(query.page, query.perPage),
          include: { attemptsLog: { orderBy: [{ startedAt: "desc" }, { attempt: "desc" }] } },
        }),
      ]);
      const events = await prisma.event.findMany({
        where: { id: { in: items.map((d) => d.eventId) } },
        select: { id: true, type: true, jobId: true },
      });
      const eventOf = new Map(events.map((e) => [e.id, e]));
      return {
        total,
        items: items.map((d) => ({
          ...d,
          eventType: eventOf.get(d.eventId)?.type ?? "task.settled",
          jobId: eventOf.get(d.eventId)?.jobId ?? null,
        })),
      };
    },

    /** A delivery of this webhook, or undefined. */
    delivery: async (webhookId: string, deliveryId: string): Promise<Delivery | undefined> =>
      (await prisma.delivery.findFirst({ where: { id: deliveryId, webhookId } })) ?? undefined,

    /** The callback URLs among `urls` that have no active webhook of the customer. */
    async unregisteredCallbacks(customerId: string, urls: string[]): Promise<Set<string>> {
      const distinct = [...new Set(urls)];
      if (distinct.length === 0) return new Set();
      const found = await prisma.webhook.findMany({
        where: { customerId, active: true, callbackUrl: { in: distinct } },
        select: { callbackUrl: true },
      });
      const known = new Set(found.map((w) => w.callbackUrl));
      return new Set(distinct.filter((u) => !known.has(u)));
    },
  };
}

export type WebhooksStore = ReturnType<typeof webhooksStore>;
