/**
 * The rule shared by the routes that take a `callback_url` (tasks, batches, manifest jobs): the URL must be
 * one of the customer's active webhooks (contract §events).
 */
import { ApiError } from "@labelgate/api";
import type { Store } from "@labelgate/store";

/**
 * A task with a callback_url needs an active webhook of the customer with the same
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
