/**
 * What both entries (`@labelgate/sdk` and `@labelgate/sdk/browser`) export besides their client: the typed
 * errors, the transport's options, hooks and helpers, and the wire types.
 */
export * from "./errors";
export {
  type AttemptEvent,
  type ClientHooks,
  newIdempotencyKey,
  parseRetryAfter,
  type RequestOptions,
  type ResponseEvent,
  type TransportOptions,
} from "./transport";
export * from "./types";
