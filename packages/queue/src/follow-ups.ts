/**
 * Follow-ups as values: a store method that commits work which must go on in a queue (a deciding label's
 * settlement, a settled task's `task.settled` event, a completed job's export, ...) writes it as `follow_up`
 * rows in the same transaction (docs/decisions/0300) and also returns it as {@link FollowUps}, payloads keyed
 * by queue, so that its caller knows whether to nudge its process's relay (./relay.ts). Nothing else enqueues.
 */
import type { Payload, QueueKey } from "./catalog";

/** What must follow a commit: payloads by queue key (an absent or empty key: nothing for that queue). */
export type FollowUps = { [K in QueueKey]?: Payload<K>[] };
