/**
 * What both entries (`@labelgate/sdk` and `@labelgate/sdk/browser`) export besides their client: the typed
 * errors, the transport's options, hooks and helpers, the wire types, the task types (task-types.ts: request and
 * consensus types per type, guards) and the route catalog (each operation's method, path, auth and schemas, by
 * operation id).
 */
export { OPERATIONS, type OperationId, type RequestBody, type SuccessBody } from "@labelgate/api/operations";
export * from "./errors";
export * from "./task-types";
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
