/**
 * Follow-ups as values: a store method that commits work which must go on in a queue (a deciding label's
 * settlement, a settled task's `task.settled` event, a completed job's export, ...) returns it as
 * {@link FollowUps}, payloads keyed by queue; the caller hands them to {@link dispatch} once the commit is
 * done. Nothing is lost when the queue is down: every follow-up is also found by the reconciliation
 * (the `reconcile` queue, services/consensus-worker/src/reconcile.ts) from the committed rows, so a failed
 * enqueue is logged and left to it — the one fallback, written here once.
 */
import { catalog, type Payload, type QueueKey } from "./catalog";
import { type QueueClient, QueueUnavailableError } from "./engine";

/** What must follow a commit: payloads by queue key (an absent or empty key: nothing for that queue). */
export type FollowUps = { [K in QueueKey]?: Payload<K>[] };

/** How {@link dispatch} sends one queue's follow-ups: `requeue` re-runs a job that already ran; `attempts` overrides the catalog's. */
export type DispatchModes = { [K in QueueKey]?: { requeue?: boolean; attempts?: number } };

/** The logger dispatch warns on (a pino logger fits). */
export interface DispatchLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

/** The follow-ups of several commits as one (payloads of a queue concatenated, in order). */
export function mergeFollowUps(...parts: FollowUps[]): FollowUps {
  const out: Record<string, unknown[]> = {};
  for (const part of parts) {
    for (const [key, payloads] of Object.entries(part)) {
      if (payloads && payloads.length > 0) out[key] = [...(out[key] ?? []), ...payloads];
    }
  }
  return out as FollowUps;
}

/**
 * Enqueues every follow-up, queue by queue in catalog order: a queue's payloads in one `enqueueMany` (round
 * trips of up to 500 jobs), or one `requeue` after the other in requeue mode. A failed enqueue (the queue
 * backend down or slow) is logged as deferred to the reconciliation and does not stop the other queues: the
 * commit stands, and the reconciliation enqueues what could not be.
 * @returns how many were sent and how many deferred. Never throws for a queue failure; a payload that
 *   does not match its queue's schema is a bug and is logged as deferred too (its reconciliation will fail loudly).
 */
export async function dispatch(
  queue: Pick<QueueClient, "enqueueMany" | "requeue">,
  followUps: FollowUps,
  logger: DispatchLogger,
  modes: DispatchModes = {},
): Promise<{ sent: number; deferred: number }> {
  let sent = 0;
  let deferred = 0;
  for (const key of Object.keys(catalog) as QueueKey[]) {
    const payloads = (followUps[key] ?? []) as Payload<typeof key>[];
    if (payloads.length === 0) continue;
    const mode = modes[key] ?? {};
    const overrides = mode.attempts === undefined ? {} : { attempts: mode.attempts };
    const defer = (err: unknown, count: number, payload: unknown) => {
      deferred += count;
      logger.warn({ err, queue: catalog[key].name, jobs: count, payload }, `${catalog[key].name} enqueue deferred to reconciliation`);
    };
    if (!mode.requeue) {
      try {
        sent += await queue.enqueueMany(key, payloads, overrides);
      } catch (err) {
        const added = err instanceof QueueUnavailableError ? err.added : 0;
        sent += added;
        defer(err, payloads.length - added, payloads[added]);
      }
      continue;
    }
    for (const payload of payloads) {
      try {
        await queue.requeue(key, payload, overrides);
        sent++;
      } catch (err) {
        defer(err, 1, payload);
      }
    }
  }
  return { sent, deferred };
}
