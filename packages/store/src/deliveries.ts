/**
 * Deliveries of the events of the event catalog (contract §events): routing an event to its webhooks (one
 * `deliveries` row per event × webhook), the read before an attempt and the write after it (the attempt
 * log, the delivery's state, and the task's `webhook_status`), and ending the delivery of a deleted webhook.
 * The statements of concurrent attempts of a process are batched (core's `Batcher`, members of the store).
 *
 * Routing (the same for every event type): an event of a task with a callback_url goes to the customer's active
 * webhook of that URL (when it subscribed to the event's type); any other event (a task without a callback_url,
 * a manifest job's) goes to every active webhook of the customer subscribed to its type. One statement, shared by the
 * events this process routes at once, finds the targets, inserts the deliveries (`ON CONFLICT DO NOTHING`,
 * so routing twice creates nothing new), marks the tasks' `webhook_status` pending (when it was null),
 * records the events and returns the pending deliveries with what their first attempt needs.
 */
import { Batcher, newId } from "@labelgate/core";
import type { Pool } from "pg";
import type { Db } from "./database";
import { Prisma } from "./generated/client";
import { transactionRows, withTransaction } from "./sql";

/**
 * The one rule of a task's `webhook_status` (contract §lifecycle `webhook_fail` = `failed`): failed if any of its
 * deliveries failed, delivered if all were delivered, else pending. A CTE body over `deliveries` (a
 * relation with `task_id` and `status`), one row per task: `(task_id, status)`.
 */
function webhookStatusSql(deliveries: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    SELECT s.task_id,
           CASE WHEN bool_or(s.status = 'failed') THEN 'failed'
                WHEN bool_and(s.status = 'delivered') THEN 'delivered'
                ELSE 'pending' END::"WebhookStatus" AS status
    FROM ${deliveries} s
    GROUP BY s.task_id`;
}

/**
 * The body of an event's deliveries without `timestamp` (set at each attempt): the outbox payload and the envelope
 * of contract §events, `event_id` and `created_at` (ISO 8601 UTC, milliseconds, `Z`: `Date#toISOString`'s format).
 * An expression over `events e`.
 */
const ENVELOPED_PAYLOAD = Prisma.raw(
  `(e.payload || jsonb_build_object('event_id', e.id, 'created_at', to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))`,
);

/** Delivery ids offered per event: enough for an event's targets, or it is routed again with more. */
const IDS_PER_EVENT = 2;

interface RouteRequest {
  eventId: string;
  /** new delivery ids, one per target webhook (at most this many targets are routed in this run) */
  ids: string[];
}

/**
 * A pending delivery as the routing statement read it: everything its first attempt needs (the webhook's
 * URL and sealed secret, the event's payload), so that attempt reads nothing more.
 */
export interface PendingDelivery {
  id: string;
  /** attempts already made, manual redeliveries included (0 for a delivery just created) */
  attempts: number;
  /** automatic attempts already made (the schedule's count: WEBHOOK_RETRY_MAX bounds it) */
  auto_attempts: number;
  event_id: string;
  /** null for a job event */
  task_id: string | null;
  webhook_id: string;
  callback_url: string;
  secret_ciphertext: string;
  /** false once the webhook was deleted */
  active: boolean;
  payload: Record<string, unknown>;
}

type RouteResult =
  | { kind: "notFound"; reason: string }
  /** the event has more targets than ids offered: nothing was written */
  | { kind: "moreIds"; targets: number }
  | { kind: "routed"; recorded: boolean; pending: PendingDelivery[] };

interface RoutedRow {
  event_id: string;
  task_found: boolean;
  routed: boolean;
  targets: number | null;
  recorded: boolean;
  pending: PendingDelivery[];
}

/**
 * One statement for a batch of events: finds each event's target webhooks, inserts one delivery per
 * target (a delivery is created once: unique (event_id, webhook_id)), marks the targeted tasks pending,
 * records the events (of two concurrent runs for one event, exactly one records it: the conditional
 * update) and returns each event's pending deliveries. An event with more targets than ids offered is
 * left untouched (`moreIds`).
 */
async function routeBatch(pool: Pool, requests: RouteRequest[]): Promise<RouteResult[]> {
  const eventIds = requests.map((r) => r.eventId);
  const counts = requests.map((r) => r.ids.length);
  const starts: number[] = [];
  let next = 1;
  for (const r of requests) {
    starts.push(next);
    next += r.ids.length;
  }
  const ids = requests.flatMap((r) => r.ids);
  const [rows] = await transactionRows<[RoutedRow]>(pool, [
    Prisma.sql`
    WITH ev AS (
      SELECT x.event_id, x.start, x.cnt, e.task_id, e.customer_id, e.type, ${ENVELOPED_PAYLOAD} AS payload, t.callback_url,
             -- routed even when its task row is gone (a failed manifest job removes its tasks, canceled ones
             -- included, whose task.canceled was written): to the subscribers, without a callback_url
             TRUE AS task_found
      FROM unnest(${eventIds}::text[], ${starts}::int[], ${counts}::int[]) AS x(event_id, start, cnt)
      JOIN events e ON e.id = x.event_id
      LEFT JOIN tasks t ON t.id = e.task_id
    ), tg AS (
      SELECT ev.event_id, ev.start, ev.task_id, ev.customer_id, w.id AS webhook_id,
             row_number() OVER (PARTITION BY ev.event_id ORDER BY w.created_at, w.id) AS rn,
             count(*) OVER (PARTITION BY ev.event_id) AS n
      FROM ev JOIN webhooks w ON w.customer_id = ev.customer_id AND w.active AND ev.type = ANY (w.events)
                               AND (ev.callback_url IS NULL OR w.callback_url = ev.callback_url)
      WHERE ev.task_found
    ), ok AS (
      SELECT ev.event_id, ev.task_id, EXISTS (SELECT 1 FROM tg WHERE tg.event_id = ev.event_id) AS targeted
      FROM ev
      WHERE ev.task_found AND NOT EXISTS (SELECT 1 FROM tg WHERE tg.event_id = ev.event_id AND tg.n > ev.cnt)
    ), ins AS (
      INSERT INTO deliveries (id, event_id, webhook_id, customer_id, task_id)
      SELECT (${ids}::text[])[(tg.start + tg.rn - 1)::int], tg.event_id, tg.webhook_id, tg.customer_id, tg.task_id
      FROM tg JOIN ok ON ok.event_id = tg.event_id
      ON CONFLICT (event_id, webhook_id) DO NOTHING
      RETURNING id, event_id, webhook_id, created_at
    ), pending_task AS (
      UPDATE tasks t SET webhook_status = 'pending', updated_at = now()
      FROM ok WHERE ok.targeted AND t.id = ok.task_id AND t.webhook_status IS NULL
      RETURNING t.id
    ), rec AS (
      UPDATE events e SET recorded_at = now()
      FROM ok WHERE e.id = ok.event_id AND e.recorded_at IS NULL
      RETURNING e.id
    )
    SELECT ev.event_id, ev.task_found,
           EXISTS (SELECT 1 FROM ok WHERE ok.event_id = ev.event_id) AS routed,
           (SELECT max(tg.n)::int FROM tg WHERE tg.event_id = ev.event_id) AS targets,
           EXISTS (SELECT 1 FROM rec WHERE rec.id = ev.event_id) AS recorded,
           (SELECT COALESCE(json_agg(json_build_object(
                     'id', p.id, 'attempts', p.attempts, 'auto_attempts', p.auto_attempts, 'event_id', ev.event_id, 'task_id', ev.task_id, 'webhook_id', p.webhook_id,
                     'callback_url', w.callback_url, 'secret_ciphertext', w.secret_ciphertext, 'active', w.active, 'payload', ev.payload
                   ) ORDER BY p.created_at, p.id), '[]'::json)
            FROM (
              SELECT id, webhook_id, 0 AS attempts, 0 AS auto_attempts, created_at FROM ins WHERE ins.event_id = ev.event_id
              UNION
              SELECT d.id, d.webhook_id, d.attempts, d.auto_attempts, d.created_at FROM deliveries d
              WHERE d.event_id = ev.event_id AND d.status = 'pending'
            ) p JOIN webhooks w ON w.id = p.webhook_id) AS pending
    FROM ev`,
  ]);
  const byEvent = new Map(rows.map((r) => [r.event_id, r]));
  return eventIds.map((id): RouteResult => {
    const r = byEvent.get(id);
    if (!r) return { kind: "notFound", reason: `event ${id} not found` };
    if (!r.task_found) return { kind: "notFound", reason: `task of event ${id} not found` };
    if (!r.routed) return { kind: "moreIds", targets: r.targets ?? 0 };
    return { kind: "routed", recorded: r.recorded, pending: r.pending };
  });
}

export interface DeliveryRow extends PendingDelivery {
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
    SELECT r.i::int AS i, d.id, d.status::text AS status, d.attempts, d.auto_attempts, d.event_id, d.task_id, d.webhook_id,
           w.callback_url, w.secret_ciphertext, w.active, ${ENVELOPED_PAYLOAD} AS payload,
           (r.attempt_id IS NOT NULL AND EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.id = r.attempt_id)) AS redelivered
    FROM unnest(${deliveryIds}::text[], ${attemptIds}::text[]) WITH ORDINALITY AS r(delivery_id, attempt_id, i)
    JOIN deliveries d ON d.id = r.delivery_id
    JOIN webhooks w ON w.id = d.webhook_id
    JOIN events e ON e.id = d.event_id`,
  ]);
  const byIndex = new Map(rows.map((row) => [row.i, row]));
  return requests.map((_, i) => byIndex.get(i + 1));
}

/**
 * One attempt to store, and the delivery's resulting status (`unchanged`: a manual redelivery that failed,
 * which leaves the delivery as the schedule has it: pending, failed or delivered).
 */
export interface AttemptRecord {
  attemptId: string;
  deliveryId: string;
  /** the delivery's task (whose row lock the locked write takes); null for a job event */
  taskId: string | null;
  /** the attempt's number among all the delivery's attempts (its `X-SVC-Delivery-Attempt`) */
  attempt: number;
  /** an automatic attempt's number in the schedule (its automatic attempts so far + 1); unused for a manual one */
  autoAttempt: number;
  /** a manual redelivery: an attempt of its own, outside the automatic schedule */
  manual: boolean;
  success: boolean;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  startedAt: Date;
  finishedAt: Date;
  status: "delivered" | "failed" | "pending" | "unchanged";
}

/**
 * `written`: attempt stored, delivery and task updated; `duplicate`: another run stored this attempt
 * first (a manual redelivery run twice: its attempt id; a scheduled job run again while its first run still
 * waited on the receiver: its automatic attempt number), nothing written; `deferred` (without `locked` only): the task has other
 * deliveries, nothing written.
 */
export type WriteOutcome = "written" | "duplicate" | "deferred";

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
  const attemptColumns = Prisma.sql`id, delivery_id, webhook_id, event_id, attempt, manual, success, status_code, error, latency_ms, started_at, finished_at`;
  return Prisma.sql`
    WITH input AS (
      SELECT x.*, d.task_id, d.webhook_id, d.event_id
      FROM unnest(${col((r) => r.attemptId)}::text[], ${col((r) => r.deliveryId)}::text[], ${col((r) => r.attempt)}::int[],
                  ${col((r) => r.autoAttempt)}::int[], ${col((r) => r.manual)}::boolean[], ${col((r) => r.success)}::boolean[],
                  ${col((r) => r.statusCode)}::int[], ${col((r) => r.error)}::text[], ${col((r) => r.latencyMs)}::int[],
                  ${col((r) => r.startedAt.getTime())}::float8[], ${col((r) => r.finishedAt.getTime())}::float8[],
                  ${col((r) => r.status)}::text[])
           AS x(attempt_id, delivery_id, attempt, auto_attempt, manual, success, status_code, error, latency_ms, started_ms,
                finished_ms, status)
      JOIN deliveries d ON d.id = x.delivery_id
    ), eligible AS (
      SELECT * FROM input i
      WHERE ${locked}::boolean OR NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.task_id = i.task_id AND o.id <> i.delivery_id)
    ), man AS (
      -- a manual attempt is written once, by its reserved id: of two runs of one redelivery, the second's
      -- insert finds the first's row (waiting for it to commit) and writes nothing
      INSERT INTO delivery_attempts (${attemptColumns})
      SELECT attempt_id, delivery_id, webhook_id, event_id, attempt, true, success, status_code, error, latency_ms,
             to_timestamp(started_ms / 1000), to_timestamp(finished_ms / 1000)
      FROM eligible WHERE manual
      ON CONFLICT (id) DO NOTHING
      RETURNING delivery_id
    ), upd AS (
      -- an automatic attempt is written only by the run whose number follows the stored automatic count: of
      -- two runs of one delivery (a job run again while its first run still waited on the receiver, after its
      -- lock expired) that made the same attempt, the second finds the count moved on (the row is re-checked
      -- after the first commits) and writes nothing, so the schedule never logs an attempt twice nor more than
      -- WEBHOOK_RETRY_MAX. A manual attempt counts in attempts only, and a failed one leaves the status as is.
      UPDATE deliveries d
      SET attempts = d.attempts + 1, auto_attempts = d.auto_attempts + CASE WHEN i.manual THEN 0 ELSE 1 END,
          status = CASE WHEN i.status = 'unchanged' THEN d.status ELSE i.status::"WebhookStatus" END,
          last_status_code = i.status_code, last_error = i.error,
          delivered_at = CASE WHEN i.success THEN to_timestamp(i.finished_ms / 1000) ELSE d.delivered_at END, updated_at = now()
      FROM eligible i
      WHERE d.id = i.delivery_id
        AND CASE WHEN i.manual THEN i.delivery_id IN (SELECT delivery_id FROM man) ELSE d.auto_attempts = i.auto_attempt - 1 END
      RETURNING d.id, d.task_id, d.status, d.attempts
    ), att AS (
      -- numbered by the count it made (a manual attempt keeps the number it was sent with)
      INSERT INTO delivery_attempts (${attemptColumns})
      SELECT e.attempt_id, e.delivery_id, e.webhook_id, e.event_id, upd.attempts, false, e.success, e.status_code, e.error,
             e.latency_ms, to_timestamp(e.started_ms / 1000), to_timestamp(e.finished_ms / 1000)
      FROM eligible e JOIN upd ON upd.id = e.delivery_id
      WHERE NOT e.manual
      RETURNING delivery_id
    ), agg AS (
      ${webhookStatusSql(Prisma.sql`(
        SELECT task_id, status FROM upd
        UNION ALL
        SELECT o.task_id, o.status FROM deliveries o
        WHERE o.task_id IN (SELECT task_id FROM upd) AND o.id NOT IN (SELECT id FROM upd)
      )`)}
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
  const taskIds = [...new Set(records.flatMap((r) => (r.taskId ? [r.taskId] : [])))].sort();
  const [, rows] = await transactionRows<[{ id: string }, NotWrittenRow]>(pool, [
    Prisma.sql`SELECT id FROM tasks WHERE id = ANY (${taskIds}::text[]) ORDER BY id FOR UPDATE`,
    writeSql(records, true),
  ]);
  return writeOutcomes(records, rows);
}

function newDeliveryIds(n: number): string[] {
  return Array.from({ length: n }, () => newId("delivery"));
}

export function deliveriesStore(db: Db) {
  const { pool } = db;
  // an event appears at most once per routing batch, so each run sees its own `recorded`
  const routing = new Batcher<RouteRequest, RouteResult>((requests) => routeBatch(pool, requests), { key: (r) => r.eventId });
  const reads = new Batcher<ReadRequest, DeliveryRow | undefined>((requests) => readBatch(pool, requests));
  // a delivery appears at most once per write batch (two runs of one delivery write one after the other)
  const byDelivery = { key: (r: AttemptRecord) => r.deliveryId };
  const writes = new Batcher<AttemptRecord, WriteOutcome>((records) => writeUnlocked(pool, records), byDelivery);
  const lockedWrites = new Batcher<AttemptRecord, WriteOutcome>((records) => writeLocked(pool, records), byDelivery);

  return {
    /**
     * Routes an event: records it (`events.recorded_at`), creates its deliveries and returns the pending
     * ones with what their first attempt needs. `recorded`: true for the one run that recorded the event
     * first. @throws when the event (or its task) does not exist.
     */
    async route(eventId: string): Promise<{ recorded: boolean; pending: PendingDelivery[] }> {
      let ids = newDeliveryIds(IDS_PER_EVENT);
      for (;;) {
        const routed = await routing.call({ eventId, ids });
        if (routed.kind === "notFound") throw new Error(routed.reason);
        if (routed.kind === "routed") return { recorded: routed.recorded, pending: routed.pending };
        // more target webhooks than ids offered (nothing was written): again, with one id per target
        ids = newDeliveryIds(routed.targets);
      }
    },

    /** A delivery with its webhook and event (undefined when it does not exist); batched. */
    read: (request: ReadRequest): Promise<DeliveryRow | undefined> => reads.call(request),

    /**
     * Stores an attempt, updates its delivery and its task's `webhook_status`: without locks when the task
     * has no other delivery, else under the task's row lock. `duplicate`: another run stored this attempt
     * number first (nothing written).
     */
    async writeAttempt(record: AttemptRecord): Promise<"written" | "duplicate"> {
      let written = await writes.call(record);
      // the task has other deliveries: recompute its status under its row lock
      if (written === "deferred") written = await lockedWrites.call(record);
      if (written === "deferred") throw new Error(`attempt of delivery ${record.deliveryId} deferred under the task lock`);
      return written;
    },

    /** Ends a pending delivery of a deleted webhook without an attempt, and recomputes the task's status. */
    async endForDeletedWebhook(deliveryId: string, taskId: string | null): Promise<void> {
      if (taskId === null) {
        await transactionRows(pool, [
          Prisma.sql`UPDATE deliveries SET status = 'failed', last_error = 'webhook deleted', updated_at = now()
                     WHERE id = ${deliveryId} AND status = 'pending'`,
        ]);
        return;
      }
      await withTransaction(pool, (run) =>
        run(
          [
            Prisma.sql`SELECT id FROM tasks WHERE id = ${taskId} FOR UPDATE`,
            Prisma.sql`UPDATE deliveries SET status = 'failed', last_error = 'webhook deleted', updated_at = now()
                       WHERE id = ${deliveryId} AND status = 'pending'`,
            // a later statement: its snapshot sees the delivery just ended
            Prisma.sql`
              WITH agg AS (${webhookStatusSql(Prisma.sql`(SELECT task_id, status FROM deliveries WHERE task_id = ${taskId})`)})
              UPDATE tasks SET webhook_status = agg.status FROM agg WHERE tasks.id = agg.task_id`,
          ],
          { commit: true },
        ),
      );
    },
  };
}

export type DeliveriesStore = ReturnType<typeof deliveriesStore>;
