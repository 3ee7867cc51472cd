/**
 * @labelgate/queue: typed producers and workers over the catalog, on either backend:
 * Redis (distributed mode) or BullMQ's Postgres backend (standalone mode).
 */
export * from "./catalog";
export * from "./engine";
export * from "./follow-ups";
export * from "./relay";
