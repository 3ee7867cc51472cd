/**
 * @labelgate/webhook-worker: consumes `task.settled` events. In this release it records each event as
 * received (`events.recorded_at`), idempotently; signed delivery to customer webhooks builds on it.
 */
import type { Logger } from "@labelgate/core";
import type { PrismaClient } from "@labelgate/db";
import type { HandlersFor } from "@labelgate/queue";

export interface WebhookDeps {
  prisma: PrismaClient;
  logger: Logger;
}

/** Marks an event recorded. Returns false when it was already recorded (a duplicate job). @throws on a missing event */
export async function recordEvent(deps: WebhookDeps, eventId: string): Promise<boolean> {
  const updated = await deps.prisma.event.updateMany({ where: { id: eventId, recordedAt: null }, data: { recordedAt: new Date() } });
  if (updated.count === 0) {
    const exists = await deps.prisma.event.findUnique({ where: { id: eventId }, select: { id: true } });
    if (!exists) throw new Error(`event ${eventId} not found`);
    return false;
  }
  deps.logger.info({ event_id: eventId }, "task.settled recorded");
  return true;
}

export function webhookHandlers(deps: WebhookDeps): HandlersFor<"webhook-worker"> {
  return { taskSettled: async ({ eventId }) => void (await recordEvent(deps, eventId)) };
}
