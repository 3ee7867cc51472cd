/**
 * @labelgate/api: the wire contract of labelgate, defined once. Request schemas (requests.ts), response
 * schemas with their descriptions and examples (responses.ts), the enumerations (enums.ts) and the error
 * table (errors.ts). The gateway validates and renders with them, the OpenAPI document is generated from
 * them, and the SDK's types are inferred from them (types.ts). zod only: safe in a browser.
 */
export * from "./enums";
export * from "./errors";
export * from "./events";
export * from "./instructions";
export * from "./policy";
export * from "./prelabels";
export * from "./requests";
export * as schemas from "./responses";
export { EXAMPLE, RESPONSE_SCHEMAS } from "./responses";
export * from "./task-types";
export type * from "./types";
