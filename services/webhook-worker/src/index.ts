/**
 * @labelgate/webhook-worker: routes `task.settled` events to customer webhooks and delivers them, signed,
 * the first attempt made by the routing job, retries with BullMQ's custom backoff (4^(k−1) s), every attempt
 * logged. `webhookRole` is its module for the runtime (@labelgate/runtime).
 */
export * from "./attempt";
export * from "./deliver";
export * from "./handlers";
export * from "./in-flight";
export { webhookRole } from "./role";
export * from "./signing";
