/**
 * @labelgate/sdk: the typed TypeScript client of the labelgate API (this entry is for Node; browsers
 * import `@labelgate/sdk/browser`).
 * - {@link LabelgateClient}: every route of the gateway, wire types in snake_case (types.ts), and the
 *   export of a job as a Node stream, lines or a file (node.ts).
 * - Typed errors: {@link LabelgateError} and one subclass per status (errors.ts).
 * - Retries on 429 and 503 honoring `Retry-After` (transport.ts).
 * - The webhook verifier of `@labelgate/webhook-verify`, re-exported.
 */
export * from "@labelgate/webhook-verify";
export * from "./client";
export * from "./errors";
export { type ExportFileResult, LabelgateClient, NodeJobsApi } from "./node";
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
