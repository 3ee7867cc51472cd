/**
 * The attempts of a delivery (contract §events): each POSTs the `task.settled` payload with a
 * fresh `timestamp`, signed (signing.ts), with `X-SVC-Event-Id` and `X-SVC-Delivery-Attempt` (attempt.ts);
 * every attempt is stored (the store's `deliveries`). The first attempt is made by the routing job
 * (`deliverInline`); a failure with attempts left becomes a `webhookDelivery` job that BullMQ retries with
 * `webhookJobBackoffMs`; after the last attempt the delivery is `failed` and the task's `webhook_status`
 * becomes `failed` (webhook_fail). A manual redelivery is an attempt of its own: it neither uses up nor
 * restarts that schedule (WEBHOOK_RETRY_MAX counts the automatic attempts only); its success delivers the
 * delivery, its failure leaves it as the schedule has it.
 */
import { type Logger, newId, type SecretBox } from "@labelgate/core";
import { DeferJob, type FollowUpNudge, type JobContext } from "@labelgate/queue";
import type { AttemptRecord, DeliveryRow, PendingDelivery, Store } from "@labelgate/store";
import { type AttemptOutcome, type HttpTarget, postEvent } from "./attempt";
import type { InFlightLimit } from "./in-flight";
import { openSecret, signatureHeader } from "./signing";

export interface DeliverDeps {
  store: Store;
  secretBox: SecretBox;
  logger: Logger;
  /** where attempts go: the guarded connection pool, ALLOW_PRIVATE_URLS, the attempt timeout */
  http: HttpTarget;
  /** requests in flight per webhook in this process (shared by its deliveries; see `InFlightLimit`) */
  inFlight?: InFlightLimit;
  /**
   * WEBHOOK_RETRY_MAX: a scheduled attempt whose number (automatic attempts stored + 1) reaches it is the
   * last, even when the job has attempts left (a job run again after its process died or its lock expired
   * made an attempt its BullMQ count does not know about)
   */
  webhookRetryMax?: number;
}

/** The delay before attempt k+1 is 4^(k−1) s (1 s, 4 s, 16 s, ...). `attemptsMade` = k. */
export function webhookBackoffMs(attemptsMade: number): number {
  return 1000 * 4 ** Math.max(0, attemptsMade - 1);
}

/**
 * BullMQ custom backoff of `webhookDelivery` jobs: the job's own attempts plus the attempts made before
 * it existed (`after` in its data: the inline first attempt), through `webhookBackoffMs`.
 */
export function webhookJobBackoffMs(attemptsMade: number, _type: string | undefined, _err: Error | undefined, data: unknown): number {
  const after = typeof data === "object" && data !== null && "after" in data && typeof data.after === "number" ? data.after : 0;
  return webhookBackoffMs(after + attemptsMade);
}

/** Raised to make BullMQ retry a failed attempt (its message is stored as the job's failure reason). */
export class DeliveryAttemptFailed extends Error {
  override name = "DeliveryAttemptFailed";
}

/**
 * What one attempt did; when one was made, `attempt` is its number among all the delivery's attempts and
 * `auto` the automatic attempts made with it (the schedule's count; a manual attempt does not add one).
 */
export type AttemptResult =
  | { result: "delivered" | "failed" | "retrying"; attempt: number; auto: number; error: string | null }
  | { result: "skipped" }
  /** this webhook's requests in flight are at the cap and not finishing soon: try again in `delayMs` */
  | { result: "deferred"; delayMs: number; attemptsMade: number };

/**
 * Runs one attempt of a delivery (the shared part of `deliver` and `deliverInline`). Safe to run twice:
 * a delivered delivery is not sent again by the schedule, and a manual redelivery (`redelivery` = its
 * reserved attempt id) is sent at most once. Its statements are shared with the concurrent attempts of
 * this process (the store's batchers): one read before the POST, one write after it (the store's
 * `deliveries.writeAttempt`: a transaction holding the task's row lock when the task has several deliveries).
 * @param isLast whether automatic attempt number `n` is the schedule's last (a failure then ends the delivery `failed`)
 * @param routed the delivery as routing read it, for a first attempt made by the routing job
 */
async function attemptDelivery(
  deps: DeliverDeps,
  job: { deliveryId: string; redelivery?: string },
  isLast: (n: number) => boolean,
  /** the delivery as the routing statement just read it (pending): no read of its own */
  routed?: PendingDelivery,
): Promise<AttemptResult> {
  const d: DeliveryRow | undefined = routed
    ? { ...routed, i: 0, status: "pending", redelivered: false }
    : await deps.store.deliveries.read(job);
  if (!d) throw new Error(`delivery ${job.deliveryId} not found`);
  const manual = job.redelivery !== undefined;
  if (manual) {
    if (d.redelivered) return { result: "skipped" };
  } else if (d.status !== "pending") {
    return { result: "skipped" };
  }
  if (!d.active) {
    // Deleted webhooks receive nothing: the delivery ends without an attempt.
    await deps.store.deliveries.endForDeletedWebhook(d.id, d.task_id);
    return { result: "skipped" };
  }

  const release = deps.inFlight ? await deps.inFlight.acquire(d.webhook_id) : () => undefined;
  if (!release) {
    // This webhook's requests in flight are at the cap and not finishing soon (a slow receiver): later.
    const deferMs = (deps.inFlight as InFlightLimit).deferMs;
    return { result: "deferred", delayMs: deferMs + Math.floor(Math.random() * deferMs), attemptsMade: d.auto_attempts };
  }
  const attempt = d.attempts + 1;
  const autoAttempt = d.auto_attempts + 1;
  const body = JSON.stringify({ ...d.payload, timestamp: new Date().toISOString() });
  const secret = openSecret(deps.secretBox, d.secret_ciphertext, d.webhook_id);
  let outcome: AttemptOutcome;
  try {
    outcome = await postEvent(deps.http, d.callback_url, body, {
      "content-type": "application/json",
      "user-agent": "labelgate-webhooks/1",
      "x-svc-signature": signatureHeader(body, secret),
      "x-svc-event-id": d.event_id,
      "x-svc-delivery-attempt": String(attempt),
    });
  } finally {
    release();
  }
  // A manual redelivery that fails leaves the delivery as the schedule has it; a scheduled one fails on its last attempt.
  const status = outcome.success ? "delivered" : manual ? "unchanged" : isLast(autoAttempt) ? "failed" : "pending";
  const auto = manual ? d.auto_attempts : autoAttempt;

  const record: AttemptRecord = {
    attemptId: job.redelivery ?? newId("attempt"),
    deliveryId: d.id,
    taskId: d.task_id,
    attempt,
    autoAttempt,
    manual,
    success: outcome.success,
    statusCode: outcome.statusCode,
    error: outcome.error,
    latencyMs: outcome.latencyMs,
    startedAt: outcome.startedAt,
    finishedAt: outcome.finishedAt,
    status,
  };
  // the same redelivery ran concurrently and stored its attempt first
  if ((await deps.store.deliveries.writeAttempt(record)) === "duplicate") return { result: "skipped" };

  if (outcome.success) return { result: "delivered", attempt, auto, error: null };
  deps.logger.warn({ delivery_id: d.id, event_id: d.event_id, attempt, manual, error: outcome.error }, "webhook delivery attempt failed");
  // a failed manual attempt ends its own job; the schedule (if any) goes on by itself
  return { result: manual || status === "failed" ? "failed" : "retrying", attempt, auto, error: outcome.error };
}

/**
 * The `webhookDelivery` job handler: one attempt of a delivery, on BullMQ's schedule. The job's
 * `after` is the number of attempts made before the job existed (the first one is made inline by the
 * routing job: `deliverInline`); its own `attempts` are the rest of WEBHOOK_RETRY_MAX.
 * @throws DeliveryAttemptFailed when the attempt failed (also on the last attempt, so that an exhausted
 * delivery ends in BullMQ's failed set, visible to on-call and retriable by hand; the delivery row
 * already says `failed`, so nothing retries it by itself); DeferJob when the webhook is at its in-flight cap.
 */
export async function deliver(
  deps: DeliverDeps,
  job: { deliveryId: string; redelivery?: string },
  ctx: JobContext,
): Promise<"delivered" | "skipped"> {
  const retryMax = deps.webhookRetryMax;
  const r = await attemptDelivery(deps, job, (n) => ctx.attemptsMade + 1 >= ctx.maxAttempts || (retryMax !== undefined && n >= retryMax));
  if (r.result === "deferred") throw new DeferJob(r.delayMs);
  if (r.result === "delivered" || r.result === "skipped") return r.result;
  const why = job.redelivery !== undefined ? " (manual redelivery)" : r.result === "failed" ? " (no attempts left)" : "";
  throw new DeliveryAttemptFailed(`attempt ${r.attempt} failed${why}: ${r.error}`);
}

/**
 * A delivery's first attempt, made by the routing job itself with the row routing read (no job and no
 * read of its own: half the queue work and one statement fewer for a delivery that succeeds at once). When it fails with attempts left, or the webhook is at its
 * in-flight cap, the rest of the schedule becomes a `webhookDelivery` job, delayed by the backoff
 * (4^(k−1) s after attempt k) or the deferral, with `after` = attempts made so far.
 * The job is a `follow_up` row the relay enqueues (docs/decisions/0300): a queue outage delays it, never loses it.
 * @param retryMax WEBHOOK_RETRY_MAX: attempts in total. @throws the database's error when the row cannot be
 * written (the routing job is retried: routing is idempotent and re-reads the delivery).
 */
export async function deliverInline(
  deps: DeliverDeps & { relay?: FollowUpNudge; webhookRetryMax: number },
  delivery: PendingDelivery,
): Promise<AttemptResult["result"]> {
  const retryMax = deps.webhookRetryMax;
  const deliveryId = delivery.id;
  const r = await attemptDelivery(deps, { deliveryId }, (n) => n >= retryMax, delivery);
  if (r.result === "deferred") {
    await deps.store.followUps.add(
      { webhookDelivery: [{ deliveryId, after: r.attemptsMade }] },
      { webhookDelivery: { attempts: Math.max(1, retryMax - r.attemptsMade), delayMs: r.delayMs } },
    );
    deps.relay?.nudge();
  } else if (r.result === "retrying") {
    await deps.store.followUps.add(
      { webhookDelivery: [{ deliveryId, after: r.auto }] },
      { webhookDelivery: { attempts: Math.max(1, retryMax - r.auto), delayMs: webhookBackoffMs(r.auto) } },
    );
    deps.relay?.nudge();
  }
  return r.result;
}
