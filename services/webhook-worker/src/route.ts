/**
 * Routing of `task.settled` events (DESIGN §7): a task with a callback_url goes to the customer's active
 * webhook of that URL; a task without one goes to every active webhook of the customer subscribed to
 * `task.settled`. One `deliveries` row per (event, webhook), unique, so routing twice creates nothing new;
 * every pending delivery is (re-)enqueued under its deterministic job id.
 */
import { newId } from "@labelgate/core";
import type { PrismaClient } from "@labelgate/db";
import type { QueueClient } from "@labelgate/queue";

export interface RouteDeps {
  prisma: PrismaClient;
  queue: QueueClient;
  /** WEBHOOK_RETRY_MAX: total attempts of each delivery */
  webhookRetryMax: number;
}

/**
 * Records the event (`events.recorded_at`), creates its deliveries and enqueues them.
 * @returns `recorded`: true for the one run that recorded the event first; `deliveries`: the pending
 * deliveries (re-)enqueued. @throws when the event does not exist.
 */
export async function routeEvent(deps: RouteDeps, eventId: string): Promise<{ recorded: boolean; deliveries: string[] }> {
  const { prisma } = deps;
  const { recorded, pending } = await prisma.$transaction(async (tx) => {
    const event = await tx.event.findUnique({ where: { id: eventId } });
    if (!event) throw new Error(`event ${eventId} not found`);
    const task = await tx.task.findUniqueOrThrow({ where: { id: event.taskId }, select: { callbackUrl: true, webhookStatus: true } });
    const targets = await tx.webhook.findMany({
      where: {
        customerId: event.customerId,
        active: true,
        events: { has: event.type },
        ...(task.callbackUrl ? { callbackUrl: task.callbackUrl } : {}),
      },
      select: { id: true },
      orderBy: { createdAt: "asc" },
    });
    if (targets.length > 0) {
      await tx.delivery.createMany({
        data: targets.map((w) => ({ id: newId("delivery"), eventId, webhookId: w.id, customerId: event.customerId, taskId: event.taskId })),
        skipDuplicates: true,
      });
      if (task.webhookStatus === null) await tx.task.update({ where: { id: event.taskId }, data: { webhookStatus: "pending" } });
    }
    // Conditional update: of two concurrent runs, exactly one records the event.
    const first = await tx.event.updateMany({ where: { id: eventId, recordedAt: null }, data: { recordedAt: new Date() } });
    const deliveries = await tx.delivery.findMany({ where: { eventId, status: "pending" }, select: { id: true } });
    return { recorded: first.count === 1, pending: deliveries.map((d) => d.id) };
  });
  for (const deliveryId of pending) {
    await deps.queue.enqueue("webhookDelivery", { deliveryId }, { attempts: deps.webhookRetryMax });
  }
  return { recorded, deliveries: pending };
}
