/**
 * The SDK client of the apps: the browser entry of @labelgate/sdk against the page's own origin (the
 * gateway serves the apps and the API), one retry of 429/503/connection failures. DELETE requests are
 * sent with `keepalive`, so releasing claims still reaches the gateway while the page unloads.
 */
import { LabelgateClient, LabelgateError } from "@labelgate/sdk/browser";

const keepaliveFetch: typeof fetch = (input, init) => fetch(input, init?.method === "DELETE" ? { ...init, keepalive: true } : init);

/** A client of this origin with a customer key or a labeler key. */
export function createClient(credentials: { apiKey?: string; labelerKey?: string }): LabelgateClient {
  return new LabelgateClient({ baseUrl: window.location.origin, maxAttempts: 2, timeoutMs: 30_000, fetch: keepaliveFetch, ...credentials });
}

/** A one-line, human-readable message of an error thrown by the SDK (or anything else). */
export function errorMessage(err: unknown): string {
  if (err instanceof LabelgateError) {
    if (err.status === 0) return "The gateway did not answer. Check your connection and try again.";
    const details = err.details.length > 0 ? `: ${err.details.map((d) => `${d.path} ${d.message}`).join("; ")}` : "";
    return `${err.error}${details} (HTTP ${err.status})`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** True for the SDK's 401 (the key is not, or no longer, valid). */
export function isAuthError(err: unknown): boolean {
  return err instanceof LabelgateError && err.status === 401;
}
