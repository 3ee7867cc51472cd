/**
 * @labelgate/core: ids, keys, logging, the outbound URL policy and statement batching shared by every service.
 * (Canonical JSON is @labelgate/canonical-json, which the browser-safe verifier of @labelgate/chain uses too.)
 */
export * from "./batch";
export * from "./ids";
export * from "./keys";
export * from "./logger";
export * from "./outbound-url";
export * from "./samples";
export * from "./secrets";
export * from "./shutdown";
