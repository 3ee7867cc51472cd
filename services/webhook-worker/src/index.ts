/**
 * @labelgate/webhook-worker: routes `task.settled` events to customer webhooks and delivers them, signed,
 * retried with BullMQ's custom backoff (4^(k−1) s), every attempt logged.
 */
import type { HandlersFor } from "@labelgate/queue";
import { type DeliverDeps, deliver } from "./deliver";
import { type RouteDeps, routeEvent } from "./route";

export * from "./deliver";
export * from "./route";

export type WebhookDeps = DeliverDeps & RouteDeps;

export function webhookHandlers(deps: WebhookDeps): HandlersFor<"webhook-worker"> {
  return {
    taskSettled: async ({ eventId }) => void (await routeEvent(deps, eventId)),
    webhookDelivery: async (payload, ctx) => void (await deliver(deps, payload, ctx)),
  };
}
