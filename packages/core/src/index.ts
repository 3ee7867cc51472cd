/** @labelgate/core: ids, keys, canonical JSON, logging and statement batching shared by every service. */

export * from "./batch";
export * from "./canonical-json";
export * from "./ids";
export * from "./keys";
export * from "./logger";
export * from "./outbound-url";
export * from "./secrets";
export * from "./shutdown";
