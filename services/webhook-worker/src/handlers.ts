/**
 * The webhook worker's queue handlers: `routeEvent` routes an event to its webhooks (the store's routing
 * statement) and makes each pending delivery's first attempt itself; `webhookDelivery` runs one scheduled
 * attempt (a retry, a deferral, a manual redelivery).
 */
import type { Metrics } from "@labelgate/metrics";
import { DeferJob, type FollowUpNudge, type HandlersFor } from "@labelgate/queue";
import { type DeliverDeps, DeliveryAttemptFailed, deliver, deliverInline } from "./deliver";
import { InFlightLimit } from "./in-flight";

export type WebhookDeps = DeliverDeps & {
  /** the process's follow-up relay, nudged after a retry's row is written (docs/decisions/0300) */
  relay?: FollowUpNudge;
  /** WEBHOOK_RETRY_MAX: automatic attempts of each delivery (a manual redelivery is one more, outside them) */
  webhookRetryMax: number;
  /** WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK: requests in flight per webhook in this process (default 16) */
  maxInFlightPerWebhook?: number;
  /** deliveries by outcome (`labelgate_webhook_deliveries_total`); optional in tests */
  metrics?: Pick<Metrics, "deliveries">;
};

/**
 * Records the event, creates its deliveries and makes each pending one's first attempt (`deliverInline`).
 * Idempotent: routing twice creates nothing new, and a delivered delivery is not sent again.
 * @throws when the event (or its task) does not exist, or when a retry's follow-up row cannot be written
 */
export async function routeEvent(deps: WebhookDeps, eventId: string): Promise<{ recorded: boolean; deliveries: string[] }> {
  const { recorded, pending } = await deps.store.deliveries.route(eventId);
  await Promise.all(
    pending.map(async (delivery) => {
      const outcome = await deliverInline(deps, delivery);
      deps.metrics?.deliveries.inc({ outcome: outcome === "retrying" ? "retried" : outcome });
    }),
  );
  return { recorded, deliveries: pending.map((d) => d.id) };
}

export function webhookHandlers(deps: WebhookDeps): HandlersFor<"webhook-worker"> {
  // One limit per process, shared by all its deliveries.
  const full: WebhookDeps = { ...deps, inFlight: deps.inFlight ?? new InFlightLimit(deps.maxInFlightPerWebhook ?? 16) };
  return {
    // routing makes each delivery's first attempt itself; only retries and deferrals become jobs
    routeEvent: async ({ eventId }) => void (await routeEvent(full, eventId)),
    webhookDelivery: async (payload, ctx) => {
      try {
        const outcome = await deliver(full, payload, ctx);
        full.metrics?.deliveries.inc({ outcome });
      } catch (err) {
        if (full.metrics) {
          // the same rule as deliver(): a manual redelivery's one attempt, or the schedule's last, ends its job
          const last = payload.redelivery !== undefined || ctx.attemptsMade + 1 >= ctx.maxAttempts;
          const outcome =
            err instanceof DeferJob ? "deferred" : err instanceof DeliveryAttemptFailed ? (last ? "failed" : "retried") : "error";
          full.metrics.deliveries.inc({ outcome });
        }
        throw err;
      }
    },
  };
}
