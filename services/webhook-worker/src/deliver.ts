/**
 * One delivery attempt (SPEC §6, DESIGN §7): POST the `task.settled` payload with a fresh `timestamp`,
 * signed `X-SVC-Signature: sha256=<hex HMAC-SHA256 of the raw body>`, with `X-SVC-Event-Id` and
 * `X-SVC-Delivery-Attempt`. Success is any 2xx within the timeout (10 s); redirects are not followed
 * (a 3xx is a failure). The URL is checked again before sending (DESIGN §9: DNS can change).
 * Every attempt is stored. The first attempt is made by the routing job (`deliverInline`); a failure with
 * attempts left becomes a `webhookDelivery` job that BullMQ retries with `webhookBackoffMs`; after the
 * last attempt the delivery is `failed` and the task's `webhook_status` becomes `failed` (webhook_fail).
 */
import { createHmac } from "node:crypto";
import { Batcher, checkOutboundUrl, type Logger, newId, perOwner, type SecretBox } from "@labelgate/core";
import { type Pool, Prisma, type PrismaClient, transactionRows } from "@labelgate/store";
import { DeferJob, type JobContext, type QueueClient } from "@labelgate/queue";
import { type Dispatcher, request } from "undici";
import type { PendingDelivery } from "./route";

export interface DeliverDeps {
  /** for the rare paths (a deleted webhook's delivery) */
  prisma: PrismaClient;
  /** the pg pool under `prisma`: the read and write of every attempt run on it (`transactionRows`) */
  pool: Pool;
  secretBox: SecretBox;
  logger: Logger;
  allowPrivateUrls: boolean;
  /** total time allowed for one attempt (connect, headers and body), ms */
  timeoutMs: number;
  /** HTTP dispatcher (connection pool); default: undici's global agent */
  dispatcher?: Dispatcher;
  /** DNS resolver of the URL check (tests inject one) */
  resolve?: (host: string) => Promise<string[]>;
  /** requests in flight per webhook in this process (shared by its deliveries; see `InFlightLimit`) */
  inFlight?: InFlightLimit;
  /**
   * WEBHOOK_RETRY_MAX: a scheduled attempt whose number (attempts stored + 1) reaches it is the last, even
   * when the job has attempts left (a job run again after its process died or its lock expired made an
   * attempt its BullMQ count does not know about)
   */
  webhookRetryMax?: number;
}

interface WebhookSlots {
  /** start times (performance.now) of the requests in flight, oldest first */
  starts: number[];
  /** moving average of how long a request held its slot, ms */
  averageMs: number;
  waiters: { resolve: (release: (() => void) | undefined) => void; timer: NodeJS.Timeout }[];
}

/**
 * Caps the requests in flight per webhook in one process, so that a slow or dead receiver holds at most
 * `max` of the worker's slots with requests: other customers' deliveries keep flowing. Over the cap, a
 * delivery waits for a slot (at most `maxWaitMs`) only while the receiver answers in time (its oldest
 * request in flight is younger than `maxWaitMs`) and the expected wait (deliveries ahead / `max` × how
 * long a request holds a slot, the longer of the recent average and that age) is at most `maxWaitMs`;
 * otherwise it is deferred (back to the delayed set for `deferMs` plus jitter) without spending an
 * attempt. So a fast receiver gets every slot it can use (deferring its deliveries costs more than
 * sending them: bench/webhooks), a slow one holds fewer than `2 × max` slots, and a hanging one has its
 * further deliveries deferred as soon as its oldest request is `maxWaitMs` old.
 */
export class InFlightLimit {
  private readonly webhooks = new Map<string, WebhookSlots>();

  constructor(
    readonly max: number,
    readonly deferMs = 500,
    readonly maxWaitMs = 1000,
  ) {}

  /** A slot for a request to `key`, with its release; undefined when the delivery should be deferred. */
  async acquire(key: string): Promise<(() => void) | undefined> {
    let w = this.webhooks.get(key);
    if (!w) {
      w = { starts: [], averageMs: 0, waiters: [] };
      this.webhooks.set(key, w);
    }
    const now = performance.now();
    if (w.starts.length < this.max) return this.take(key, w, now);
    // the receiver is not answering in time (a hang, or requests slower than a wait is worth)
    const oldestMs = now - (w.starts[0] as number);
    if (oldestMs > this.maxWaitMs) return undefined;
    if (((w.waiters.length + 1) / this.max) * Math.max(w.averageMs, oldestMs) > this.maxWaitMs) return undefined;
    const slots = w;
    return new Promise((resolve) => {
      const waiter = {
        resolve,
        timer: setTimeout(() => {
          slots.waiters.splice(slots.waiters.indexOf(waiter), 1);
          resolve(undefined);
        }, this.maxWaitMs),
      };
      slots.waiters.push(waiter);
    });
  }

  private take(key: string, w: WebhookSlots, now: number): () => void {
    w.starts.push(now);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const end = performance.now();
      w.starts.splice(w.starts.indexOf(now), 1);
      w.averageMs = w.averageMs === 0 ? end - now : 0.8 * w.averageMs + 0.2 * (end - now);
      const next = w.waiters.shift();
      if (next) {
        clearTimeout(next.timer);
        next.resolve(this.take(key, w, end));
      } else if (w.starts.length === 0) {
        this.webhooks.delete(key);
      }
    };
  }
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

/** `sha256=<lowercase hex>` of the raw body keyed with the webhook secret. */
export function signatureHeader(rawBody: string, secret: string): string {
  return `sha256=${createHmac("sha256", secret).update(rawBody, "utf8").digest("hex")}`;
}

/** Raised to make BullMQ retry a failed attempt (its message is stored as the job's failure reason). */
export class DeliveryAttemptFailed extends Error {
  override name = "DeliveryAttemptFailed";
}

interface AttemptOutcome {
  success: boolean;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  startedAt: Date;
  finishedAt: Date;
}

async function post(deps: DeliverDeps, url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
  const startedAt = new Date();
  const t0 = performance.now();
  let statusCode: number | null = null;
  let error: string | null = null;
  try {
    await checkOutboundUrl(url, { allowPrivate: deps.allowPrivateUrls, resolve: deps.resolve });
    const res = await request(url, {
      method: "POST",
      body,
      headers,
      dispatcher: deps.dispatcher,
      signal: AbortSignal.timeout(deps.timeoutMs),
      headersTimeout: deps.timeoutMs,
      bodyTimeout: deps.timeoutMs,
    });
    statusCode = res.statusCode;
    await res.body.dump({ limit: 64 * 1024 });
    if (statusCode < 200 || statusCode > 299) error = `receiver answered ${statusCode}`;
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string };
    error =
      e.name === "TimeoutError" || e.name === "AbortError" || e.code === "UND_ERR_HEADERS_TIMEOUT" || e.code === "UND_ERR_BODY_TIMEOUT"
        ? `timed out after ${deps.timeoutMs} ms`
        : `${e.code ? `${e.code}: ` : ""}${e.message ?? String(err)}`;
  }
  const finishedAt = new Date();
  return { success: error === null, statusCode, error, latencyMs: Math.round(performance.now() - t0), startedAt, finishedAt };
}

interface DeliveryRow extends PendingDelivery {
  i: number;
  status: string;
  /** manual redelivery whose attempt id is already stored */
  redelivered: boolean;
}

interface ReadRequest {
  deliveryId: string;
  redelivery?: string;
}

/** One statement for a batch: each delivery with its webhook and event (undefined when it does not exist). */
async function readBatch(pool: Pool, requests: ReadRequest[]): Promise<(DeliveryRow | undefined)[]> {
  const deliveryIds = requests.map((r) => r.deliveryId);
  const attemptIds = requests.map((r) => r.redelivery ?? null);
  const [rows] = await transactionRows<[DeliveryRow]>(pool, [
    Prisma.sql`
    SELECT r.i::int AS i, d.id, d.status::text AS status, d.attempts, d.event_id, d.task_id, d.webhook_id,
           w.callback_url, w.secret_ciphertext, w.active, e.payload,
           (r.attempt_id IS NOT NULL AND EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.id = r.attempt_id)) AS redelivered
    FROM unnest(${deliveryIds}::text[], ${attemptIds}::text[]) WITH ORDINALITY AS r(delivery_id, attempt_id, i)
    JOIN deliveries d ON d.id = r.delivery_id
    JOIN webhooks w ON w.id = d.webhook_id
    JOIN events e ON e.id = d.event_id`,
  ]);
  const byIndex = new Map(rows.map((row) => [row.i, row]));
  return requests.map((_, i) => byIndex.get(i + 1));
}

/** One attempt to store, and the delivery's resulting status. */
interface AttemptRecord {
  attemptId: string;
  deliveryId: string;
  /** the delivery's task (whose row lock the locked write takes) */
  taskId: string;
  attempt: number;
  manual: boolean;
  success: boolean;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  startedAt: Date;
  finishedAt: Date;
  status: "delivered" | "failed" | "pending";
}

/**
 * `written`: attempt stored, delivery and task updated; `duplicate`: another run of this delivery stored
 * this attempt number first (a manual redelivery run twice, a job run again while its first run still
 * waited on the receiver), nothing written; `deferred` (without `locked` only): the task has other
 * deliveries, nothing written.
 */
type WriteOutcome = "written" | "duplicate" | "deferred";

/** The rows `writeSql` returns: the attempts not written, and why. */
interface NotWrittenRow {
  delivery_id: string;
  outcome: WriteOutcome;
}

/**
 * One statement for a batch of attempts (distinct deliveries): stores each attempt, updates its delivery
 * and recomputes the task's `webhook_status` from all the task's deliveries (failed if any failed,
 * delivered if all delivered, else pending), this batch's new statuses included.
 * A statement reads the other deliveries as of its start: without the task's row lock, a concurrent
 * delivery of the same task could be missed. So unless `locked` (the transaction holds the lock of every
 * task of the batch), the statement writes only attempts of tasks with no other delivery and defers the rest.
 * It returns the attempts not written (`NotWrittenRow`; read them with `writeOutcomes`).
 */
function writeSql(records: AttemptRecord[], locked: boolean): Prisma.Sql {
  const col = <T>(f: (r: AttemptRecord) => T) => records.map(f);
  return Prisma.sql`
    WITH input AS (
      SELECT x.*, d.task_id, d.webhook_id, d.event_id
      FROM unnest(${col((r) => r.attemptId)}::text[], ${col((r) => r.deliveryId)}::text[], ${col((r) => r.attempt)}::int[],
                  ${col((r) => r.manual)}::boolean[], ${col((r) => r.success)}::boolean[], ${col((r) => r.statusCode)}::int[],
                  ${col((r) => r.error)}::text[], ${col((r) => r.latencyMs)}::int[], ${col((r) => r.startedAt.getTime())}::float8[],
                  ${col((r) => r.finishedAt.getTime())}::float8[], ${col((r) => r.status)}::text[])
           AS x(attempt_id, delivery_id, attempt, manual, success, status_code, error, latency_ms, started_ms, finished_ms, status)
      JOIN deliveries d ON d.id = x.delivery_id
    ), eligible AS (
      SELECT * FROM input i
      WHERE ${locked}::boolean OR NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.task_id = i.task_id AND o.id <> i.delivery_id)
    ), upd AS (
      -- only the run whose attempt follows the stored count writes it: of two runs of one delivery (a job
      -- run again while its first run still waited on the receiver, after its lock expired) that made
      -- the same attempt, the second finds the count moved on (the row is re-checked after the first
      -- commits) and writes nothing, so the log never has an attempt twice nor more than the schedule
      UPDATE deliveries d
      SET attempts = d.attempts + 1, status = i.status::"WebhookStatus", last_status_code = i.status_code, last_error = i.error,
          delivered_at = CASE WHEN i.success THEN to_timestamp(i.finished_ms / 1000) ELSE d.delivered_at END, updated_at = now()
      FROM eligible i
      WHERE d.id = i.delivery_id AND d.attempts = i.attempt - 1
      RETURNING d.id, d.task_id, d.status
    ), att AS (
      INSERT INTO delivery_attempts (id, delivery_id, webhook_id, event_id, attempt, manual, success, status_code, error, latency_ms,
                                     started_at, finished_at)
      SELECT attempt_id, delivery_id, webhook_id, event_id, attempt, manual, success, status_code, error, latency_ms,
             to_timestamp(started_ms / 1000), to_timestamp(finished_ms / 1000)
      FROM eligible
      WHERE delivery_id IN (SELECT id FROM upd)
      RETURNING delivery_id
    ), agg AS (
      SELECT s.task_id,
             CASE WHEN bool_or(s.status = 'failed') THEN 'failed'
                  WHEN bool_and(s.status = 'delivered') THEN 'delivered'
                  ELSE 'pending' END::"WebhookStatus" AS status
      FROM (
        SELECT task_id, status FROM upd
        UNION ALL
        SELECT o.task_id, o.status FROM deliveries o
        WHERE o.task_id IN (SELECT task_id FROM upd) AND o.id NOT IN (SELECT id FROM upd)
      ) s
      GROUP BY s.task_id
    ), task AS (
      UPDATE tasks t SET webhook_status = agg.status FROM agg WHERE t.id = agg.task_id
      RETURNING t.id
    )
    SELECT i.delivery_id, CASE WHEN i.delivery_id IN (SELECT delivery_id FROM eligible) THEN 'duplicate' ELSE 'deferred' END AS outcome
    FROM input i
    WHERE i.delivery_id NOT IN (SELECT id FROM upd)`;
}

/** Each record's outcome: only the attempts not written come back from `writeSql`. */
function writeOutcomes(records: AttemptRecord[], rows: NotWrittenRow[]): WriteOutcome[] {
  const outcome = new Map(rows.map((r) => [r.delivery_id, r.outcome]));
  return records.map((r) => outcome.get(r.deliveryId) ?? "written");
}

/** Attempts of tasks with no other delivery: one statement, no lock (the others come back `deferred`). */
async function writeUnlocked(pool: Pool, records: AttemptRecord[]): Promise<WriteOutcome[]> {
  const [rows] = await transactionRows<[NotWrittenRow]>(pool, [writeSql(records, false)]);
  return writeOutcomes(records, rows);
}

/**
 * Attempts of tasks with several deliveries: the row locks of their tasks (in id order: no deadlock), then
 * the write, as one transaction in one round trip (`transactionRows`).
 */
async function writeLocked(pool: Pool, records: AttemptRecord[]): Promise<WriteOutcome[]> {
  const taskIds = [...new Set(records.map((r) => r.taskId))].sort();
  const [, rows] = await transactionRows<[{ id: string }, NotWrittenRow]>(pool, [
    Prisma.sql`SELECT id FROM tasks WHERE id = ANY (${taskIds}::text[]) ORDER BY id FOR UPDATE`,
    writeSql(records, true),
  ]);
  return writeOutcomes(records, rows);
}

interface Batchers {
  read: Batcher<ReadRequest, DeliveryRow | undefined>;
  /** one statement per batch, without locks: attempts of tasks with other deliveries come back deferred */
  write: Batcher<AttemptRecord, WriteOutcome>;
  /** one transaction per batch, holding the row locks of the batch's tasks */
  writeLocked: Batcher<AttemptRecord, WriteOutcome>;
}

/** The statements of concurrent attempts of this process are batched (batch.ts), per pg pool. */
const batchersOf = perOwner((pool: Pool): Batchers => {
  // A delivery appears at most once per write batch (two runs of one delivery write one after the other).
  const byDelivery = { key: (r: AttemptRecord) => r.deliveryId };
  return {
    read: new Batcher((requests) => readBatch(pool, requests)),
    write: new Batcher((records) => writeUnlocked(pool, records), byDelivery),
    writeLocked: new Batcher((records) => writeLocked(pool, records), byDelivery),
  };
});

const openedSecrets = new WeakMap<SecretBox, Map<string, string>>();

/**
 * The webhook's secret, opened once per sealed value (at most 1,000 kept per box): an AES-GCM open per
 * attempt costs more than the HMAC. A rotated secret is a new sealed value, so it is never served stale.
 */
function openSecret(box: SecretBox, sealed: string, webhookId: string): string {
  let cache = openedSecrets.get(box);
  if (!cache) {
    cache = new Map();
    openedSecrets.set(box, cache);
  }
  const key = `${webhookId} ${sealed}`;
  let secret = cache.get(key);
  if (secret === undefined) {
    secret = box.open(sealed, webhookId);
    if (cache.size >= 1000) cache.clear();
    cache.set(key, secret);
  }
  return secret;
}

/** Ends a pending delivery of a deleted webhook without an attempt, and recomputes the task's status. */
async function endDeliveryOfDeletedWebhook(prisma: PrismaClient, d: DeliveryRow): Promise<void> {
  await prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM tasks WHERE id = ${d.task_id} FOR UPDATE`;
    await tx.$executeRaw`
      UPDATE deliveries SET status = 'failed', last_error = 'webhook deleted', updated_at = now()
      WHERE id = ${d.id} AND status = 'pending'`;
    await tx.$executeRaw`
      UPDATE tasks SET webhook_status = agg.status
      FROM (
        SELECT CASE WHEN bool_or(status = 'failed') THEN 'failed'
                    WHEN bool_and(status = 'delivered') THEN 'delivered'
                    ELSE 'pending' END::"WebhookStatus" AS status
        FROM deliveries WHERE task_id = ${d.task_id}
      ) agg
      WHERE tasks.id = ${d.task_id} AND agg.status IS NOT NULL`;
  });
}

/** What one attempt did; `attempt` is its number (1-based) when one was made. */
export type AttemptResult =
  | { result: "delivered" | "failed" | "retrying"; attempt: number; error: string | null }
  | { result: "skipped" }
  /** this webhook's requests in flight are at the cap and not finishing soon: try again in `delayMs` */
  | { result: "deferred"; delayMs: number; attemptsMade: number };

/**
 * Runs one attempt of a delivery (the shared part of `deliver` and `deliverInline`). Safe to run twice:
 * a delivered delivery is not sent again by the schedule, and a manual redelivery (`redelivery` = its
 * reserved attempt id) is sent at most once. Its statements are shared with the concurrent attempts of
 * this process (batch.ts): one read before the POST, one write after it (see `writeStatement`; a
 * transaction holding the task's row lock when the task has several deliveries).
 * @param isLast whether attempt number `attempt` is the schedule's last (a failure then ends the delivery `failed`)
 * @param routed the delivery as routing read it, for a first attempt made by the routing job
 */
async function attemptDelivery(
  deps: DeliverDeps,
  job: { deliveryId: string; redelivery?: string },
  isLast: (attempt: number) => boolean,
  /** the delivery as the routing statement just read it (pending): no read of its own */
  routed?: PendingDelivery,
): Promise<AttemptResult> {
  const batchers = batchersOf(deps.pool);
  const d: DeliveryRow | undefined = routed ? { ...routed, i: 0, status: "pending", redelivered: false } : await batchers.read.call(job);
  if (!d) throw new Error(`delivery ${job.deliveryId} not found`);
  const manual = job.redelivery !== undefined;
  if (manual) {
    if (d.redelivered) return { result: "skipped" };
  } else if (d.status !== "pending") {
    return { result: "skipped" };
  }
  if (!d.active) {
    // Deleted webhooks receive nothing: the delivery ends without an attempt.
    await endDeliveryOfDeletedWebhook(deps.prisma, d);
    return { result: "skipped" };
  }

  const release = deps.inFlight ? await deps.inFlight.acquire(d.webhook_id) : () => undefined;
  if (!release) {
    // This webhook's requests in flight are at the cap and not finishing soon (a slow receiver): later.
    const deferMs = (deps.inFlight as InFlightLimit).deferMs;
    return { result: "deferred", delayMs: deferMs + Math.floor(Math.random() * deferMs), attemptsMade: d.attempts };
  }
  const attempt = d.attempts + 1;
  const body = JSON.stringify({ ...d.payload, timestamp: new Date().toISOString() });
  const secret = openSecret(deps.secretBox, d.secret_ciphertext, d.webhook_id);
  let outcome: AttemptOutcome;
  try {
    outcome = await post(deps, d.callback_url, body, {
      "content-type": "application/json",
      "user-agent": "labelgate-webhooks/1",
      "x-svc-signature": signatureHeader(body, secret),
      "x-svc-event-id": d.event_id,
      "x-svc-delivery-attempt": String(attempt),
    });
  } finally {
    release();
  }
  // A manual redelivery that fails leaves the delivery failed; a scheduled one fails on its last attempt.
  const status = outcome.success ? "delivered" : manual || isLast(attempt) ? "failed" : "pending";

  const record: AttemptRecord = {
    attemptId: job.redelivery ?? newId("attempt"),
    deliveryId: d.id,
    taskId: d.task_id,
    attempt,
    manual,
    success: outcome.success,
    statusCode: outcome.statusCode,
    error: outcome.error,
    latencyMs: outcome.latencyMs,
    startedAt: outcome.startedAt,
    finishedAt: outcome.finishedAt,
    status,
  };
  let written = await batchers.write.call(record);
  // the task has other deliveries: recompute its status under its row lock
  if (written === "deferred") written = await batchers.writeLocked.call(record);
  // the same redelivery ran concurrently and stored its attempt first
  if (written === "duplicate") return { result: "skipped" };

  if (outcome.success) return { result: "delivered", attempt, error: null };
  deps.logger.warn({ delivery_id: d.id, event_id: d.event_id, attempt, error: outcome.error }, "webhook delivery attempt failed");
  return { result: status === "failed" ? "failed" : "retrying", attempt, error: outcome.error };
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
  const r = await attemptDelivery(
    deps,
    job,
    (attempt) => ctx.attemptsMade + 1 >= ctx.maxAttempts || (retryMax !== undefined && attempt >= retryMax),
  );
  if (r.result === "deferred") throw new DeferJob(r.delayMs);
  if (r.result === "delivered" || r.result === "skipped") return r.result;
  throw new DeliveryAttemptFailed(`attempt ${r.attempt} failed${r.result === "failed" ? " (no attempts left)" : ""}: ${r.error}`);
}

/**
 * A delivery's first attempt, made by the routing job itself with the row routing read (no job and no
 * read of its own: half the queue work and one statement fewer for a delivery that succeeds at once). When it fails with attempts left, or the webhook is at its
 * in-flight cap, the rest of the schedule becomes a `webhookDelivery` job, delayed by the backoff
 * (4^(k−1) s after attempt k) or the deferral, with `after` = attempts made so far.
 * @param retryMax WEBHOOK_RETRY_MAX: attempts in total. @throws QueueUnavailableError when the follow-up
 * job cannot be enqueued (the routing job is retried: routing is idempotent and re-reads the delivery).
 */
export async function deliverInline(
  deps: DeliverDeps & { queue: QueueClient; webhookRetryMax: number },
  delivery: PendingDelivery,
): Promise<AttemptResult["result"]> {
  const retryMax = deps.webhookRetryMax;
  const deliveryId = delivery.id;
  const r = await attemptDelivery(deps, { deliveryId }, (attempt) => attempt >= retryMax, delivery);
  if (r.result === "deferred") {
    await deps.queue.enqueue(
      "webhookDelivery",
      { deliveryId, after: r.attemptsMade },
      { attempts: Math.max(1, retryMax - r.attemptsMade), delay: r.delayMs },
    );
  } else if (r.result === "retrying") {
    await deps.queue.enqueue(
      "webhookDelivery",
      { deliveryId, after: r.attempt },
      { attempts: Math.max(1, retryMax - r.attempt), delay: webhookBackoffMs(r.attempt) },
    );
  }
  return r.result;
}
