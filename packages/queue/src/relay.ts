/**
 * The follow-up relay (docs/decisions/0300): the one place that moves queue work into BullMQ. Every
 * follow-up of a change is a `follow_up` row written in the change's transaction (packages/store
 * follow-ups.ts; the rows each table's changes cause are declared in the migration 20261202000100_follow_ups);
 * a relay claims the due rows (`FOR UPDATE SKIP LOCKED`, leased so that a second relay skips them), enqueues
 * them under the catalog's deterministic job ids, and deletes them. A row whose enqueue failed (the queue
 * backend down) is released for a later try: it waits in Postgres, never lost, and its age is the backlog
 * signal (`labelgate_follow_up_backlog_age_seconds`). Several relays on one table enqueue each row once; a
 * row relayed twice (a lease that ran out mid-enqueue) is a duplicate job id, a no-op.
 *
 * A row whose work cannot be enqueued for a reason other than an outage is parked (docs/decisions/0331): its
 * payload fails its queue's schema, the queue rejects it, or no relay has known its queue for
 * `unknownQueueAttempts` claims (a row of a newer version that never came). The relay logs it as an error
 * (its id, queue and reason), stops trying it, and the rows beside it go on; it stays in the table, counted
 * by `labelgate_follow_up_parked_rows`, until an operator retries it (`pnpm admin retry-follow-ups`).
 */
import { catalog, type Payload, type QueueKey } from "./catalog";
import { type QueueClient, QueueUnavailableError } from "./engine";

/** A claimed `follow_up` row. */
export interface FollowUpRow {
  /** the row's id (a bigint as text) */
  id: string;
  /** the queue catalog key */
  queue: string;
  payload: unknown;
  /** the job's attempts when not the catalog's */
  attempts: number | null;
  /** re-run work whose job ran already (QueueClient.requeue) rather than only add it */
  requeue: boolean;
  /** the job's delay once enqueued, ms (null: none) */
  delayMs: number | null;
  /** claims of the row so far, this one included */
  relayAttempts: number;
}

/** The store side of the relay (packages/store `followUps`). */
export interface FollowUpTable {
  /**
   * Claims up to `limit` due rows, oldest first, skipping rows another relay holds, and leases them for
   * `leaseMs` (they are not due again before then).
   */
  claim(limit: number, leaseMs: number): Promise<FollowUpRow[]>;
  /** Deletes relayed rows. */
  remove(ids: string[]): Promise<void>;
  /** Makes claimed rows due again in `delayMs` (their enqueue failed). */
  release(ids: string[], delayMs: number): Promise<void>;
  /** Parks claimed rows: never claimed again until retried; `error` says why. */
  park(rows: { id: string; error: string }[]): Promise<void>;
  /**
   * The rows due now (parked ones left out): how many, and the age of the oldest, seconds (0 when none); and
   * how many are parked.
   */
  backlog(): Promise<{ due: number; oldestSeconds: number; parked: number }>;
}

/** What a relay warns on (a pino logger fits). */
export interface RelayLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** What a writer of follow-ups tells its process's relay after its commit (in-process, no round trip). */
export interface FollowUpNudge {
  nudge(): void;
}

export interface RelayOptions {
  /** how often due rows are looked for when nothing nudged, ms (default 250) */
  pollMs?: number;
  /** rows per claim (default 500: one `addBulk` round trip per queue) */
  batch?: number;
  /** how long claimed rows are held by this relay, ms (default 30,000: well over an enqueue's timeout) */
  leaseMs?: number;
  /** how long rows whose enqueue failed wait before the next try, ms (default 1,000) */
  retryDelayMs?: number;
  /** how long a row of a queue this version does not know waits for a relay that knows it, ms (default 30,000) */
  unknownQueueDelayMs?: number;
  /** claims of a row of an unknown queue before it is parked (default 120: an hour at the default delay) */
  unknownQueueAttempts?: number;
  /**
   * passes in flight at once (default 3): a commit's rows need not wait for the pass in flight before them
   * (at 500 labels/s and more, one pass at a time made each row wait for the one before)
   */
  maxPasses?: number;
}

/** A claimed row's enqueue options, grouped: one `enqueueMany` per queue and attempts. */
function groupOf(row: FollowUpRow): string {
  return `${row.queue}\u0000${row.attempts ?? ""}\u0000${row.delayMs ?? ""}`;
}

/**
 * Moves `follow_up` rows to BullMQ. `start()` polls every `pollMs`; `nudge()` (after a commit that wrote
 * rows) runs a pass at once. At most `maxPasses` passes run at once (each claims its own rows); a nudge while they all run runs another after one ends.
 */
export class FollowUpRelay implements FollowUpNudge {
  private timer: NodeJS.Timeout | undefined;
  /** the passes in flight (at most `maxPasses`: SKIP LOCKED gives each its own rows) */
  private readonly running = new Set<Promise<void>>();
  private again = false;
  private scheduled = false;
  private stopped = false;
  /** the enqueue is failing (one warning per outage, one info line when it recovers) */
  private failing = false;
  /** the table cannot be read (the database is down: one warning per outage) */
  private unreadable = false;
  private readonly pollMs: number;
  private readonly batch: number;
  private readonly leaseMs: number;
  private readonly retryDelayMs: number;
  private readonly unknownQueueDelayMs: number;
  private readonly unknownQueueAttempts: number;
  private readonly maxPasses: number;

  constructor(
    private readonly table: FollowUpTable,
    private readonly queue: Pick<QueueClient, "enqueueMany" | "requeue">,
    private readonly logger: RelayLogger,
    options: RelayOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 250;
    this.batch = options.batch ?? 500;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.unknownQueueDelayMs = options.unknownQueueDelayMs ?? 30_000;
    this.unknownQueueAttempts = options.unknownQueueAttempts ?? 120;
    this.maxPasses = options.maxPasses ?? 3;
  }

  /** Starts the poll. */
  start(): void {
    this.stopped = false;
    this.timer ??= setInterval(() => this.nudge(), this.pollMs);
    this.timer.unref();
  }

  /**
   * Runs a pass soon (on the next turn of the event loop: the nudges of one turn make one pass), beside the
   * passes in flight while there are fewer than `maxPasses`; else once one of them ends.
   */
  nudge(): void {
    if (this.stopped) return;
    if (this.running.size >= this.maxPasses) {
      this.again = true;
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.stopped || this.running.size >= this.maxPasses) return;
      const pass: Promise<void> = this.loop().finally(() => this.running.delete(pass));
      this.running.add(pass);
    });
  }

  /** Stops the poll and waits for the pass in progress. Rows left are relayed by another relay or at the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all([...this.running]);
  }

  /**
   * Relays every due row now, pass after pass while passes fill their batch (tests, shutdown).
   * @returns rows enqueued
   */
  async drain(): Promise<number> {
    await Promise.all([...this.running]);
    let total = 0;
    for (;;) {
      const { sent, claimed, parked } = await this.pass();
      total += sent;
      if (claimed < this.batch || sent + parked < claimed) return total;
    }
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      try {
        const { claimed, sent, parked } = await this.pass();
        this.unreadable = false;
        // a full batch all sent (or parked): more may be due
        if (claimed === this.batch && sent + parked === claimed) this.again = true;
      } catch (err) {
        // the database is down: the rows wait in it; the poll tries again
        if (!this.unreadable) this.logger.warn({ err }, "follow-up relay could not read its table");
        this.unreadable = true;
      }
    } while (this.again && !this.stopped);
  }

  /**
   * One claim and its enqueues. Rows whose enqueue failed in an outage are released for a later try; rows
   * that cannot be enqueued otherwise are parked. @returns rows claimed, enqueued (and deleted), and parked
   */
  async pass(): Promise<{ claimed: number; sent: number; parked: number }> {
    const rows = await this.table.claim(this.batch, this.leaseMs);
    if (rows.length === 0) return { claimed: 0, sent: 0, parked: 0 };
    const done: string[] = [];
    const failed: string[] = [];
    const waiting: string[] = [];
    const parked: { row: FollowUpRow; error: string }[] = [];
    let firstError: unknown;
    /** An enqueue failed: an outage is tried again, anything else parks the row. */
    const failure = (row: FollowUpRow, err: unknown) => {
      if (err instanceof QueueUnavailableError) {
        failed.push(row.id);
        firstError ??= err;
      } else parked.push({ row, error: `${row.queue} rejected the job: ${(err as Error).message}` });
    };
    const groups = new Map<string, FollowUpRow[]>();
    for (const row of rows) {
      if (!(row.queue in catalog)) {
        // a row of a queue this version does not know (written by a newer one): left for it, for a while
        if (row.relayAttempts >= this.unknownQueueAttempts)
          parked.push({ row, error: `unknown queue ${row.queue}: no relay knew it in ${row.relayAttempts} claims` });
        else waiting.push(row.id);
        continue;
      }
      const checked = catalog[row.queue as QueueKey].payload.safeParse(row.payload);
      if (!checked.success) {
        const issues = checked.error.issues.map((i) => `${i.path.join(".") || "payload"}: ${i.message}`).join("; ");
        parked.push({ row, error: `payload does not fit queue ${row.queue}: ${issues}` });
        continue;
      }
      if (row.requeue) {
        try {
          await this.queue.requeue(row.queue as QueueKey, row.payload as Payload<QueueKey>, optionsOf(row));
          done.push(row.id);
        } catch (err) {
          failure(row, err);
        }
        continue;
      }
      const group = groups.get(groupOf(row));
      if (group) group.push(row);
      else groups.set(groupOf(row), [row]);
    }
    for (const group of groups.values()) {
      const first = group[0] as FollowUpRow;
      try {
        await this.queue.enqueueMany(
          first.queue as QueueKey,
          group.map((r) => r.payload as Payload<QueueKey>),
          optionsOf(first),
        );
        done.push(...group.map((r) => r.id));
      } catch (err) {
        // a chunk that failed may have been added in part: the rows stay, and a second add is a no-op
        if (err instanceof QueueUnavailableError) {
          failed.push(...group.map((r) => r.id));
          firstError ??= err;
          continue;
        }
        // not an outage: one row at a time, so that the row at fault is parked and the others go on
        for (const row of group) {
          try {
            await this.queue.enqueueMany(row.queue as QueueKey, [row.payload as Payload<QueueKey>], optionsOf(row));
            done.push(row.id);
          } catch (rowErr) {
            failure(row, rowErr);
          }
        }
      }
    }
    if (done.length > 0) await this.table.remove(done);
    if (waiting.length > 0) await this.table.release(waiting, this.unknownQueueDelayMs);
    if (parked.length > 0) {
      await this.table.park(parked.map((p) => ({ id: p.row.id, error: p.error })));
      for (const { row, error } of parked)
        this.logger.error(
          { followUpId: row.id, queue: row.queue, payload: row.payload, reason: error },
          `follow-up parked: its work will not run until it is retried (pnpm admin retry-follow-ups): ${error}`,
        );
    }
    if (failed.length > 0) {
      await this.table.release(failed, this.retryDelayMs);
      if (!this.failing) {
        this.failing = true;
        this.logger.warn(
          { err: firstError, rows: failed.length },
          "follow-up relay could not enqueue: the rows wait in follow_up and are tried again (labelgate_follow_up_backlog_age_seconds)",
        );
      }
    } else if (this.failing) {
      this.failing = false;
      this.logger.info({ rows: done.length }, "follow-up relay enqueues again");
    }
    return { claimed: rows.length, sent: done.length, parked: parked.length };
  }
}

function optionsOf(row: FollowUpRow): { attempts?: number; delay?: number } {
  return { ...(row.attempts === null ? {} : { attempts: row.attempts }), ...(row.delayMs === null ? {} : { delay: row.delayMs }) };
}
