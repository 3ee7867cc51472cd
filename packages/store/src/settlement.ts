/**
 * Settlement of decided tasks (contract §lifecycle, §settlement): a task the decision rule decided when its label
 * was recorded (status `settling`, its label, confidence, posterior and resolution stored) gets its ledger
 * record, becomes `settled`, and its `task.settled` event is written to the outbox. The settlement keeps
 * what was decided; it never decides again.
 *
 * Locks, always in this order: the tasks' rows (`FOR UPDATE`, in id order) → the ledger's advisory lock
 * (held until commit) → manifest jobs' rows. The labelers' models are the refit's (spaces.ts), not the
 * settlement's: settling touches no labeler row. Exactly once: a second run
 * (duplicate job, racing replica) finds the task settled and does nothing; the unique `events(task_id,
 * type, revision)` and `ledger_entries(task_id, revision)` make a double write impossible. A later revision
 * (a review changed the result: docs/decisions/0261) settles the same way, with `task.revised` for its event. Reads that must see the latest
 * commits run in a later statement than the lock they depend on (READ COMMITTED: a fresh snapshot each).
 */

import type { EventPayload } from "@labelgate/api";
import { Batcher, newId } from "@labelgate/core";
import type { FollowUps } from "@labelgate/queue";
import type { Db } from "./database";
import { Prisma } from "./generated/client";
import { type CompletedJobRow, completeJobSql } from "./jobs";
import { LEDGER_LOCK_SQL, type LedgerRecordBody, ledgerAppendSql } from "./ledger";
import { assertTransition } from "./lifecycle";
import { type TransactionRun, withTransaction } from "./sql";

/**
 * The `task.settled` payload of contract §events as stored in the outbox: the event catalog's entry, without the
 * envelope (`event_id`, `created_at`, and `timestamp` set at each delivery attempt). Its shape is @labelgate/api's,
 * the one customers verify with @labelgate/webhook-verify.
 */
export type TaskSettledPayload = EventPayload<"task.settled">;

/** The `task.revised` payload (the event catalog's entry; docs/decisions/0261) as stored in the outbox. */
export type TaskRevisedPayload = EventPayload<"task.revised">;

/**
 * The outbox payload of a task's settled revision, without `ledger_txid` (known once its record is appended or
 * anchored): `task.settled` for revision 1, `task.revised` with the revision it replaced for a later one.
 */
export function revisionEventPayload(
  task: {
    id: string;
    consensus_label: string;
    confidence: number;
    consensus: TaskSettledPayload["consensus"] | null;
    revision: number;
    previous: TaskRevisedPayload["previous"] | null;
  },
  settledAt: string,
): Omit<TaskSettledPayload, "ledger_txid"> | Omit<TaskRevisedPayload, "ledger_txid"> {
  const consensus = task.consensus ? { consensus: task.consensus } : {};
  if (task.revision <= 1)
    return {
      event: "task.settled",
      task_id: task.id,
      consensus_label: task.consensus_label,
      confidence: task.confidence,
      settled_at: settledAt,
      ...consensus,
    };
  if (!task.previous) throw new Error(`revision ${task.revision} of ${task.id} has no revision before it`);
  return {
    event: "task.revised",
    task_id: task.id,
    revision: task.revision,
    consensus_label: task.consensus_label,
    confidence: task.confidence,
    ...consensus,
    settled_at: settledAt,
    previous: task.previous,
  };
}

/**
 * The audit draw of a task settled for the first time (docs/decisions/0262), as a CTE body: its row in
 * `audits` with probability `quality.audit_rate` of its customer's settings (0 when unset), drawn
 * independently for each task, so each label space's audited tasks are a uniform sample of what settled there.
 */
export function auditDrawSql(taskIds: string[]): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO audits (task_id, customer_id, label_space_id)
    SELECT t.id, t.customer_id, t.label_space_id FROM tasks t JOIN customers c ON c.id = t.customer_id
    WHERE t.id = ANY(${taskIds}::text[]) AND t.revision = 1 AND t.gold_label IS NULL
      AND random() < COALESCE((c.settings->'quality'->>'audit_rate')::float8, 0)
    ON CONFLICT (task_id) DO NOTHING`;
}

/**
 * Which ledger settles (contract §settlement): `local` settles in the ledger's transaction; `evm` appends
 * the ledger record only, the task staying `settling` until the anchorer confirms the record's anchor
 * (packages/store/src/anchors.ts `confirm`), which then settles it and writes its `task.settled` event.
 */
export type LedgerMode = "local" | "evm";

/** What the settlement of one task came to. */
export interface Settlement {
  /**
   * settled now; `recorded` (LEDGER=evm): its ledger record appended, settled when its anchor confirms;
   * `closed`: nothing to do (already settled or recorded, canceled, unknown); `open`: not decided yet
   */
  outcome: "settled" | "recorded" | "open" | "closed";
  eventId?: string;
  /** the manifest job this settlement completed (its last open task) */
  completedJobId?: string;
  /** the `job.completed` event of that job */
  jobEventId?: string;
  /** deciding label recorded → settled, seconds */
  lagSeconds?: number;
}

/** A local settlement with what must follow its commit. */
export interface SettlementDone extends Settlement {
  /** settledFollowUps of the settlement: its event and the job it completed */
  followUps: FollowUps;
}

/**
 * What follows settled tasks, written once for both ledgers (a local settlement, and an anchor's
 * confirmation under LEDGER=evm): each new event (`task.settled`, `task.revised`, a job's `job.completed`) is routed to its webhooks (`routeEvent`),
 * each delivery moved to a re-signed anchor is sent again (`webhookDelivery`), each manifest job whose last
 * task settled writes its export (`manifestExport`, a no-op for a job without `output_url`).
 */
export function settledFollowUps(done: { eventIds: string[]; completedJobIds: string[]; redeliveries?: string[] }): FollowUps {
  return {
    routeEvent: done.eventIds.map((eventId) => ({ eventId })),
    webhookDelivery: (done.redeliveries ?? []).map((deliveryId) => ({ deliveryId })),
    manifestExport: done.completedJobIds.map((manifestJobId) => ({ manifestJobId })),
  };
}

/** The decision's fields of a ledger record, as the task row holds them. */
type Decision = Pick<LedgerRecordBody, "consensus_label" | "confidence" | "resolution" | "label_counts" | "posterior" | "labels_collected">;

/** A decided task as the settlement reads it, under its lock. */
interface DecidedTask extends Decision {
  id: string;
  customer_id: string;
  job_id: string | null;
  status: "settling";
  /** when the deciding label was recorded (ISO text) */
  last_label_at: string | null;
  /** the revision being settled (1: the first settlement; later: a review changed it) */
  revision: number;
  /** the revision it replaces (null for revision 1) */
  previous: TaskRevisedPayload["previous"] | null;
}

/**
 * The statement that settles one decided task, after the ledger lock of the same transaction: the ledger
 * record, the task, its remaining claims and the `task.settled` outbox row. Returns the record's txid.
 */
function settleStatement(task: DecidedTask, eventId: string, settledAt: Date, mode: LedgerMode): Prisma.Sql {
  const at = settledAt.toISOString();
  const record: LedgerRecordBody = {
    task_id: task.id,
    consensus_label: task.consensus_label,
    confidence: task.confidence,
    resolution: task.resolution,
    label_counts: task.label_counts,
    posterior: task.posterior,
    labels_collected: task.labels_collected,
    settled_at: at,
  };
  // the event's payload; its ledger_txid is the record's and a reserved type's consensus the task row's (tens of
  // kB for a long free_text: never read into this process), both added by the statement
  const payload = revisionEventPayload({ ...task, consensus: null }, at);
  if (mode === "evm") {
    // the record only: the task stays `settling` until its anchor is confirmed (anchors.ts `confirm`)
    return Prisma.sql`
    WITH ledger AS (${ledgerAppendSql(record, task.revision)}),
    released AS (
      UPDATE claims SET status = 'expired'::"ClaimStatus" WHERE task_id = ${task.id} AND status = 'active'
    )
    SELECT txid FROM ledger`;
  }
  return Prisma.sql`
    WITH ledger AS (${ledgerAppendSql(record, task.revision)}),
    settled AS (
      UPDATE tasks SET status = 'settled'::"TaskStatus", ledger_txid = (SELECT txid FROM ledger),
        settled_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
      WHERE id = ${task.id} AND status = 'settling'
    ),
    released AS (
      UPDATE claims SET status = 'expired'::"ClaimStatus" WHERE task_id = ${task.id} AND status = 'active'
    ),
    event AS (
      INSERT INTO events (id, type, task_id, customer_id, payload, revision)
      SELECT ${eventId}, ${payload.event}, ${task.id}, ${task.customer_id},
        ${JSON.stringify(payload)}::jsonb || jsonb_build_object('ledger_txid', ledger.txid)
          || COALESCE((SELECT jsonb_build_object('consensus', t.consensus) FROM tasks t WHERE t.id = ${task.id} AND t.consensus IS NOT NULL), '{}'::jsonb),
        ${task.revision}::int
      FROM ledger
    ),
    audit AS (${auditDrawSql([task.id])})
    SELECT txid FROM ledger`;
}

/**
 * The settlement transaction of a batch of tasks (the settlements a worker process has at once: group
 * commit), in two round trips:
 * (1) BEGIN, lock the tasks in id order; then (a later statement: a fresh snapshot) read the decided ones;
 * (2) the ledger's advisory lock, each task's statement in turn (each appends after the record of the one
 *     before), then each manifest job's completion once, COMMIT.
 * So a batch holds the ledger lock for one message's execution and ONE commit. Returns one Settlement per id.
 */
async function settleInTransaction(run: TransactionRun, taskIds: string[], mode: LedgerMode): Promise<Settlement[]> {
  const [, state] = await run<[object, { tasks: DecidedTask[]; open: string[] }]>([
    Prisma.sql`SELECT id FROM tasks WHERE id = ANY(${taskIds}::text[]) ORDER BY id FOR UPDATE`,
    Prisma.sql`
    WITH decided AS (
      SELECT id, customer_id, job_id, consensus_label, confidence, resolution::text AS resolution, label_counts, posterior,
        labels_collected, last_label_at, revision,
        (SELECT json_build_object('consensus_label', r.consensus_label, 'confidence', r.confidence)
         FROM task_revisions r WHERE r.task_id = tasks.id AND r.revision = tasks.revision - 1) AS previous
      FROM tasks WHERE id = ANY(${taskIds}::text[]) AND status = 'settling'
        AND NOT EXISTS (SELECT 1 FROM ledger_entries l WHERE l.task_id = tasks.id AND l.revision = tasks.revision)
    )
    SELECT
      COALESCE((SELECT json_agg(json_build_object(
          'id', t.id, 'customer_id', t.customer_id, 'job_id', t.job_id, 'status', 'settling', 'consensus_label', t.consensus_label,
          'confidence', t.confidence, 'resolution', t.resolution, 'label_counts', t.label_counts, 'posterior', t.posterior,
          'labels_collected', t.labels_collected, 'last_label_at', t.last_label_at,
          'revision', t.revision, 'previous', t.previous
        ) ORDER BY t.id) FROM decided t), '[]'::json) AS tasks,
      COALESCE((SELECT json_agg(id) FROM tasks WHERE id = ANY(${taskIds}::text[]) AND status IN ('pending', 'labeling')), '[]'::json) AS open`,
  ]);
  const { tasks, open } = state[0] as { tasks: DecidedTask[]; open: string[] };
  const results = new Map<string, Settlement>(open.map((id) => [id, { outcome: "open" }]));
  const statements: Prisma.Sql[] = [];
  const settledIds: string[] = [];
  /** each manifest job of a settled task, with the first such task */
  const jobs = new Map<string, string>();
  for (const task of tasks) {
    assertTransition(task.status, "settled");
    const settledAt = new Date();
    const eventId = newId("event");
    statements.push(settleStatement(task, eventId, settledAt, mode));
    settledIds.push(task.id);
    const lastLabelAt = task.last_label_at ? new Date(task.last_label_at).getTime() : undefined;
    const lagSeconds = lastLabelAt === undefined ? undefined : Math.max(0, (settledAt.getTime() - lastLabelAt) / 1000);
    results.set(task.id, mode === "evm" ? { outcome: "recorded", lagSeconds } : { outcome: "settled", eventId, lagSeconds });
    // LEDGER=evm: the task is still open here; its job completes when its anchor is confirmed
    if (mode === "local" && task.job_id && !jobs.has(task.job_id)) jobs.set(task.job_id, task.id);
  }
  if (statements.length > 0) {
    const jobIds = [...jobs.keys()].sort();
    // The last open task of a manifest job completes the job, in the same transaction.
    const rows = await run<object[]>([LEDGER_LOCK_SQL, ...statements, ...jobIds.flatMap((id) => completeJobSql(id))], { commit: true });
    settledIds.forEach((id, i) => {
      if (!rows[1 + i]?.[0]) throw new Error(`settlement of ${id} wrote no ledger record`);
    });
    jobIds.forEach((jobId, i) => {
      const completed = (rows[1 + statements.length + 2 * i + 1] ?? []) as CompletedJobRow[];
      const settlement = results.get(jobs.get(jobId) as string);
      if (completed[0] && settlement) {
        settlement.completedJobId = jobId;
        if (completed[0].event_id) settlement.jobEventId = completed[0].event_id;
      }
    });
  }
  return taskIds.map((id) => results.get(id) ?? { outcome: "closed" });
}

/** The settlements of the store: concurrent calls of this process share one transaction per batch. */
export function settlementStore(db: Db) {
  /**
   * The settlements of this process's jobs running at once: ONE transaction per batch (a task appears once
   * per batch; a later job of it waits for the next batch and finds it closed). When a batch fails, each
   * of its tasks is settled again alone (core's `Batcher`).
   */
  const batcherOf = (mode: LedgerMode) =>
    new Batcher<string, Settlement>((ids) => withTransaction(db.pool, (run) => settleInTransaction(run, ids, mode)), {
      key: (id) => id,
    });
  const local = batcherOf("local");
  const evm = batcherOf("evm");
  return {
    /**
     * Settles a decided task (`settling`), LEDGER=local, and returns what must follow (its event, the job it
     * completed). Safe to run any number of times, concurrently.
     */
    settle: async (taskId: string): Promise<SettlementDone> => {
      const done = await local.call(taskId);
      const followUps = settledFollowUps({
        eventIds: [...(done.outcome === "settled" && done.eventId ? [done.eventId] : []), ...(done.jobEventId ? [done.jobEventId] : [])],
        completedJobIds: done.completedJobId ? [done.completedJobId] : [],
      });
      return { ...done, followUps };
    },
    /**
     * LEDGER=evm: appends a decided task's ledger record (outcome `recorded`); the task stays `settling`
     * until the anchorer confirms its anchor. Safe to run any number of times, concurrently: a task with a
     * record is `closed`.
     */
    record: (taskId: string): Promise<Settlement> => evm.call(taskId),
  };
}

export type SettlementStore = ReturnType<typeof settlementStore>;
