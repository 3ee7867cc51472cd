/**
 * Wire types of the labelgate API (contract §routes, README "API"): request and response bodies exactly as they
 * travel, field names in snake_case. They are inferred from the zod schemas the gateway validates and
 * renders with (@labelgate/api), so the SDK, the OpenAPI document and the server cannot drift apart.
 * Timestamps are ISO 8601 UTC strings, except the customer's `created_at` (Unix seconds). Money is integer cents.
 */
export type * from "@labelgate/api/types";
