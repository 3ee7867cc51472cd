/**
 * The webhook worker's role on the runtime: its handlers on the `task-settled` and `webhook-delivery`
 * queues, the 4^(k−1) s backoff of retries, and the one connection pool of its outbound calls, whose
 * lookup refuses private addresses at connect time (core's `outboundDispatcher`).
 */
import { outboundDispatcher } from "@labelgate/core";
import { defineWorkerRole } from "@labelgate/runtime";
import { webhookJobBackoffMs } from "./deliver";
import { webhookHandlers } from "./handlers";

export const webhookRole = defineWorkerRole("webhook-worker", (ctx, env) => {
  const dispatcher = outboundDispatcher({
    allowPrivate: env.ALLOW_PRIVATE_URLS,
    resolve: ctx.options.resolve,
    connectTimeoutMs: env.WEBHOOK_TIMEOUT_MS,
  });
  return {
    handlers: webhookHandlers({
      store: ctx.store,
      relay: ctx.relay,
      logger: ctx.logger,
      secretBox: ctx.secretBox(),
      http: { dispatcher, allowPrivateUrls: env.ALLOW_PRIVATE_URLS, timeoutMs: env.WEBHOOK_TIMEOUT_MS },
      webhookRetryMax: env.WEBHOOK_RETRY_MAX,
      maxInFlightPerWebhook: env.WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK,
      metrics: ctx.metrics,
    }),
    workers: {
      concurrency: { routeEvent: env.WEBHOOK_CONCURRENCY, webhookDelivery: env.WEBHOOK_CONCURRENCY },
      backoffStrategy: { webhookDelivery: webhookJobBackoffMs },
    },
    // returned deliveries may still wait on their receivers: abort their requests rather than wait
    close: (returned) => (returned > 0 ? dispatcher.destroy() : dispatcher.close()),
  };
});
