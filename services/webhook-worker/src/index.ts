/**
 * @labelgate/webhook-worker: routes `task.settled` events to customer webhooks and delivers them, signed,
 * the first attempt made by the routing job, retries with BullMQ's custom backoff (4^(k−1) s), every
 * attempt logged.
 */
import type { Metrics } from "@labelgate/metrics";
import { DeferJob, type HandlersFor } from "@labelgate/queue";
import { type DeliverDeps, DeliveryAttemptFailed, deliver, deliverInline, InFlightLimit } from "./deliver";
import { type RouteDeps, routeEvent } from "./route";

export * from "./deliver";
export * from "./route";

export type WebhookDeps = DeliverDeps &
  RouteDeps & {
    /** WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK: requests in flight per webhook in this process (default 16) */
    maxInFlightPerWebhook?: number;
    /** deliveries by outcome (`labelgate_webhook_deliveries_total`); optional in tests */
    metrics?: Pick<Metrics, "deliveries">;
  };

export function webhookHandlers(deps: WebhookDeps): HandlersFor<"webhook-worker"> {
  // One limit per process, shared by all its deliveries.
  const inFlight = deps.inFlight ?? new InFlightLimit(deps.maxInFlightPerWebhook ?? 16);
  deps = { ...deps, inFlight };
  const full = deps;
  return {
    // routing makes each delivery's first attempt itself; only retries and deferrals become jobs
    taskSettled: async ({ eventId }) =>
      void (await routeEvent(deps, eventId, async (delivery) => {
        const outcome = await deliverInline(full, delivery);
        deps.metrics?.deliveries.inc({ outcome: outcome === "retrying" ? "retried" : outcome });
      })),
    webhookDelivery: async (payload, ctx) => {
      try {
        const outcome = await deliver(deps, payload, ctx);
        deps.metrics?.deliveries.inc({ outcome });
      } catch (err) {
        if (deps.metrics) {
          // the same rule as deliver(): a manual redelivery or the last scheduled attempt ends the delivery
          const last = payload.redelivery !== undefined || ctx.attemptsMade + 1 >= ctx.maxAttempts;
          const outcome =
            err instanceof DeferJob ? "deferred" : err instanceof DeliveryAttemptFailed ? (last ? "failed" : "retried") : "error";
          deps.metrics.deliveries.inc({ outcome });
        }
        throw err;
      }
    },
  };
}
