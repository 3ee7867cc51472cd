/** @labelgate/core: ids, keys, canonical JSON, logging and statement batching shared by every service. */

/** canonical JSON lives in @labelgate/chain (browser-safe: the settlement verifier hashes it in browsers too) */
export { canonicalJson } from "@labelgate/chain";
export * from "./batch";
export * from "./ids";
export * from "./keys";
export * from "./logger";
export * from "./outbound-url";
export * from "./secrets";
export * from "./shutdown";
