/**
 * @labelgate/webhook-worker: routes `task.settled` events to customer webhooks and delivers them, signed,
 * retried with BullMQ's custom backoff (4^(k−1) s), every attempt logged.
 */
import type { HandlersFor } from "@labelgate/queue";
import { type DeliverDeps, deliver, InFlightLimit } from "./deliver";
import { type RouteDeps, routeEvent } from "./route";

export * from "./deliver";
export * from "./route";

export type WebhookDeps = DeliverDeps &
  RouteDeps & {
    /** WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK: requests in flight per webhook in this process (default 16) */
    maxInFlightPerWebhook?: number;
  };

export function webhookHandlers(deps: WebhookDeps): HandlersFor<"webhook-worker"> {
  // One limit per process, shared by all its deliveries.
  const inFlight = deps.inFlight ?? new InFlightLimit(deps.maxInFlightPerWebhook ?? 16);
  deps = { ...deps, inFlight };
  return {
    taskSettled: async ({ eventId }) => void (await routeEvent(deps, eventId)),
    webhookDelivery: async (payload, ctx) => void (await deliver(deps, payload, ctx)),
  };
}
