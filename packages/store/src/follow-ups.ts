/**
 * The `follow_up` table (docs/decisions/0300): the queue work a commit causes, as rows written in its
 * transaction, moved to BullMQ by the relay (@labelgate/queue `FollowUpRelay`, which this store serves as
 * its `FollowUpTable`). The rows of the changes of `events`, `tasks` and `jobs` are written by the triggers
 * of the migration 20261202000100_follow_ups (docs/decisions/0301); `followUpsSql` writes the others in a
 * store transaction, and `add` on their own (work that follows no change of ours: a redelivery asked for,
 * a retry, a reconciliation).
 */
import type { FollowUpRow, FollowUps, FollowUpTable, QueueKey } from "@labelgate/queue";
import type { Db } from "./database";
import { Prisma } from "./generated/client";
import { queryRows } from "./sql";

/**
 * A row is due when its `available_at` is not after now, up to the column's precision: `available_at` is stored
 * in ms (`timestamptz(3)`), rounded half up, so a row written (or released with no delay) an instant before a
 * claim in the same millisecond would otherwise look due only in the next one.
 */
const DUE = Prisma.sql`now() + interval '1 millisecond'`;

/**
 * How the rows of one queue are relayed: `requeue` re-runs work that ran already; `attempts` replaces the
 * catalog's; `delayMs` is the job's delay once enqueued (BullMQ's `delay`: the row is relayed at once).
 */
export type FollowUpModes = { [K in QueueKey]?: { requeue?: boolean; attempts?: number; delayMs?: number } };

/**
 * The statement that writes `followUps` as rows (one INSERT for all of them), for a store transaction;
 * undefined when there is none. `missingOnly`: skips a row whose queue and payload a row waits with already,
 * and returns the ids of the rows written.
 */
export function followUpsSql(
  followUps: FollowUps,
  modes: FollowUpModes = {},
  options: { missingOnly?: boolean } = {},
): Prisma.Sql | undefined {
  const rows = Object.entries(followUps).flatMap(([queue, payloads]) => {
    const mode = modes[queue as QueueKey] ?? {};
    return (payloads ?? []).map((payload) => ({
      queue,
      payload,
      attempts: mode.attempts ?? null,
      requeue: mode.requeue ?? false,
      delay_ms: mode.delayMs ?? null,
    }));
  });
  if (rows.length === 0) return undefined;
  return Prisma.sql`
    INSERT INTO follow_up (queue, payload, attempts, requeue, delay_ms)
    SELECT r.queue, r.payload, r.attempts, r.requeue, r.delay_ms
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(queue text, payload jsonb, attempts int, requeue boolean, delay_ms int)
    ${
      options.missingOnly
        ? Prisma.sql`WHERE NOT EXISTS (SELECT 1 FROM follow_up w WHERE w.queue = r.queue AND w.payload = r.payload) RETURNING id::text AS id`
        : Prisma.empty
    }`;
}

export function followUpsStore(db: Db): FollowUpTable & {
  /** Writes `followUps` as rows on their own (no change of ours goes with them). */
  add(followUps: FollowUps, modes?: FollowUpModes): Promise<void>;
  /**
   * Writes the `followUps` that no row waits for yet (same queue and payload), for work found again and again
   * while it waits (a reconciliation during a Redis outage). @returns rows written
   */
  addMissing(followUps: FollowUps, modes?: FollowUpModes): Promise<number>;
  /** Every row, oldest first (tests, diagnostics). */
  list(): Promise<(FollowUpRow & { availableAt: Date })[]>;
  /** The parked rows (the relay gave up on them), oldest first, at most `limit`. */
  parked(limit: number): Promise<ParkedFollowUp[]>;
  /**
   * Makes parked rows due again (after the cause was fixed): those of `ids`, or every one when `ids` is
   * undefined. @returns rows made due
   */
  retryParked(ids?: string[]): Promise<number>;
} {
  const { pool } = db;
  return {
    async add(followUps, modes) {
      const sql = followUpsSql(followUps, modes);
      if (sql) await queryRows(pool, sql);
    },

    async addMissing(followUps, modes) {
      const sql = followUpsSql(followUps, modes, { missingOnly: true });
      if (!sql) return 0;
      return (await queryRows<{ id: string }>(pool, sql)).length;
    },

    async claim(limit, leaseMs) {
      return queryRows<FollowUpRow>(
        pool,
        Prisma.sql`
          UPDATE follow_up f SET available_at = now() + ${leaseMs} * interval '1 millisecond', relay_attempts = relay_attempts + 1
          FROM (SELECT id FROM follow_up WHERE available_at <= ${DUE} AND parked_at IS NULL ORDER BY available_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED) due
          WHERE f.id = due.id
          RETURNING f.id::text AS id, f.queue, f.payload, f.attempts, f.requeue, f.delay_ms AS "delayMs", f.relay_attempts AS "relayAttempts"`,
      );
    },

    async remove(ids) {
      await queryRows(pool, Prisma.sql`DELETE FROM follow_up WHERE id = ANY(${ids}::bigint[])`);
    },

    async release(ids, delayMs) {
      await queryRows(
        pool,
        Prisma.sql`UPDATE follow_up SET available_at = now() + ${delayMs} * interval '1 millisecond' WHERE id = ANY(${ids}::bigint[])`,
      );
    },

    async park(rows) {
      if (rows.length === 0) return;
      await queryRows(
        pool,
        Prisma.sql`UPDATE follow_up f SET parked_at = now(), error = r.error
                   FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(id bigint, error text)
                   WHERE f.id = r.id`,
      );
    },

    async backlog() {
      const [row] = await queryRows<{ due: number; oldest: number | null; parked: number }>(
        pool,
        // a row never claimed waits since it was due; one claimed already (its enqueue failed, or is in flight) since it was written
        Prisma.sql`SELECT count(*) FILTER (WHERE parked_at IS NULL)::int AS due,
                     EXTRACT(EPOCH FROM max(now() - CASE WHEN relay_attempts = 0 THEN available_at ELSE created_at END)
                       FILTER (WHERE parked_at IS NULL))::float8 AS oldest,
                     count(*) FILTER (WHERE parked_at IS NOT NULL)::int AS parked
                   FROM follow_up WHERE available_at <= ${DUE} OR relay_attempts > 0`,
      );
      return { due: row?.due ?? 0, oldestSeconds: Math.max(0, row?.oldest ?? 0), parked: row?.parked ?? 0 };
    },

    async parked(limit) {
      return queryRows<ParkedFollowUp>(
        pool,
        Prisma.sql`SELECT id::text AS id, queue, payload, error, relay_attempts AS "relayAttempts", created_at AS "createdAt", parked_at AS "parkedAt"
                   FROM follow_up WHERE parked_at IS NOT NULL ORDER BY id LIMIT ${limit}`,
      );
    },

    async retryParked(ids) {
      const rows = await queryRows<{ id: string }>(
        pool,
        Prisma.sql`UPDATE follow_up SET parked_at = NULL, error = NULL, relay_attempts = 0, available_at = now()
                   WHERE parked_at IS NOT NULL ${ids === undefined ? Prisma.empty : Prisma.sql`AND id = ANY(${ids}::bigint[])`}
                   RETURNING id::text AS id`,
      );
      return rows.length;
    },

    async list() {
      const rows = await queryRows<FollowUpRow & { available_at: Date }>(
        pool,
        Prisma.sql`SELECT id::text AS id, queue, payload, attempts, requeue, delay_ms AS "delayMs", relay_attempts AS "relayAttempts", available_at
                   FROM follow_up ORDER BY id`,
      );
      return rows.map(({ available_at, ...row }) => ({ ...row, availableAt: available_at }));
    },
  };
}

export type FollowUpsStore = ReturnType<typeof followUpsStore>;

/** A parked `follow_up` row: work the relay gave up on, and why. */
export interface ParkedFollowUp {
  id: string;
  queue: string;
  payload: unknown;
  /** why it was parked */
  error: string;
  /** the relay's claims of it before it was parked */
  relayAttempts: number;
  createdAt: Date;
  parkedAt: Date;
}
