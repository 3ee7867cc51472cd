/**
 * What both entries (`@labelgate/sdk` and `@labelgate/sdk/browser`) export besides their client: the typed
 * errors, the transport's options, hooks and helpers, the wire types, the task types (task-types.ts: request and
 * consensus types per type, guards), the route catalog (each operation's method, path, auth and schemas, by
 * operation id), the event catalog (the events a webhook subscribes to, each with its description) and the
 * export formats.
 */
export { DEFAULT_WEBHOOK_EVENTS, EVENT_CATALOG, WEBHOOK_EVENTS } from "@labelgate/api";
export { EXPORT_FORMATS, type ExportFormat } from "@labelgate/api/exports";
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
