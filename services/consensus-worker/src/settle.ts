/**
 * The consensus handler: re-evaluates one task and, when decided, settles it in ONE transaction.
 * Locks, always in this order: the task row (`FOR UPDATE`) → its labelers' rows (in id order) → the
 * ledger's advisory lock (last, held until commit). Writes: the ledger record, then in one statement the
 * labelers' accuracy counts, the task, its remaining claims and the `task.settled` outbox row.
 * Exactly once: a second run (duplicate job, racing replica) finds the task settled and does nothing;
 * the unique `events(task_id, type)` and `ledger_entries(task_id)` make a double write impossible.
 * Every statement is raw SQL; reads that must see the latest commits run in a later statement than the
 * lock they depend on (READ COMMITTED: each statement takes a fresh snapshot).
 */
import { Batcher, type Logger, newId, perOwner } from "@labelgate/core";
import { completeJobSql, type Pool, Prisma, type PrismaClient, queryRows, type TransactionRun, withTransaction } from "@labelgate/db";
import type { Metrics } from "@labelgate/metrics";
import type { QueueClient } from "@labelgate/queue";
import type { TaskSettledEvent } from "@labelgate/webhook-verify";
import { type AccuracyPrior, decide, type LabelVote, labelerAccuracy } from "./consensus";

import { LEDGER_LOCK_SQL, ledgerAppendSql } from "./ledger";

export interface ConsensusDeps {
  prisma: PrismaClient;
  /** the pg pool under `prisma` (createDb's `pool`): the settlement's statements run on it */
  pool: Pool;
  queue: QueueClient;
  logger: Logger;
  prior: AccuracyPrior;
  /** tasks settled and consensus lag (deciding label recorded → settled); optional in tests */
  metrics?: Pick<Metrics, "tasksSettled" | "consensusLag">;
}

export type EvaluationOutcome = "settled" | "open" | "closed";

/**
 * The `task.settled` payload of SPEC §6 as stored in the outbox, without `timestamp` (set at each delivery
 * attempt). Its shape is the one customers verify with @labelgate/webhook-verify: one source of truth.
 */
export type TaskSettledPayload = Omit<TaskSettledEvent, "timestamp">;

interface TaskState {
  customer_id: string;
  /** manifest job of the task, if any */
  job_id: string | null;
  options: string[];
  consensus_threshold: number;
  max_labels: number;
  /** the task's labels in recording order (created_at, id) */
  labels: { id: string; labeler_id: string; value: string }[];
  /** the labelers of those labels, locked in id order */
  labelers: { id: string; settled_labels: number; agreed_labels: number }[];
  /** when the newest (deciding) label was recorded */
  last_label_at: Date | null;
}

/**
 * The settlement transaction, in two round trips (`withTransaction`): (1) BEGIN, lock the task, read its
 * state and lock its labelers; then, in JS, the decision; (2) the ledger's advisory lock, the ledger record
 * with every other write in one statement, the job's completion if it was its last open task, COMMIT.
 * The ledger lock is thus held for one message's execution and the commit, never across a round trip of
 * the worker (a loaded worker held it for hundreds of ms, which serialized every settlement behind it).
 */
async function settleInTransaction(
  run: TransactionRun,
  taskId: string,
  prior: AccuracyPrior,
): Promise<{ outcome: EvaluationOutcome; eventId?: string; completedJobId?: string; lagSeconds?: number }> {
  // Under the task lock, with a fresh snapshot (a later statement): the task, all its labels (no label can
  // be added while we hold the lock), and its labelers, locked in id order so that concurrent settlements
  // sharing labelers cannot deadlock. FOR NO KEY UPDATE suffices for the counters (it serializes
  // settlements) and, unlike FOR UPDATE, does not block the key-share locks that claims and labels take.
  const [locked, rows] = await run<[{ status: string }, TaskState]>([
    Prisma.sql`SELECT status::text AS status FROM tasks WHERE id = ${taskId} FOR UPDATE`,
    Prisma.sql`
    WITH task_labels AS (
      SELECT id, labeler_id, value, created_at FROM labels WHERE task_id = ${taskId}
    ),
    labelers_locked AS (
      SELECT id, settled_labels, agreed_labels FROM labelers
      WHERE id IN (SELECT labeler_id FROM task_labels)
      ORDER BY id
      FOR NO KEY UPDATE
    )
    SELECT t.customer_id, t.job_id, t.options, t.consensus_threshold, t.max_labels,
      COALESCE((SELECT json_agg(json_build_object('id', l.id, 'labeler_id', l.labeler_id, 'value', l.value) ORDER BY l.created_at, l.id)
                FROM task_labels l), '[]'::json) AS labels,
      COALESCE((SELECT json_agg(json_build_object('id', b.id, 'settled_labels', b.settled_labels, 'agreed_labels', b.agreed_labels) ORDER BY b.id)
                FROM labelers_locked b), '[]'::json) AS labelers,
      (SELECT max(l.created_at) FROM task_labels l) AS last_label_at
    FROM tasks t WHERE t.id = ${taskId}`,
  ]);
  const status = locked[0]?.status;
  if (status !== "pending" && status !== "labeling") return { outcome: "closed" };
  const task = rows[0] as TaskState;
  const votes: LabelVote[] = task.labels.map((l) => ({ labelerId: l.labeler_id, value: l.value }));
  const accuracy = new Map(
    task.labelers.map((l) => [l.id, labelerAccuracy({ settled: l.settled_labels, agreed: l.agreed_labels }, prior)]),
  );
  const decision = decide(
    { options: task.options, consensusThreshold: task.consensus_threshold, maxLabels: task.max_labels, votes },
    accuracy,
    prior,
  );
  if (!decision.settle) return { outcome: "open" };

  const settledAt = new Date();
  const record = {
    task_id: taskId,
    customer_id: task.customer_id,
    consensus_label: decision.label,
    confidence: decision.confidence,
    resolution: decision.resolution,
    label_counts: decision.counts,
    labels: task.labels.map((l) => ({ label_id: l.id, labeler_id: l.labeler_id, value: l.value })),
    settled_at: settledAt.toISOString(),
  };
  // the event's payload; its ledger_txid is the record's, added by the statement
  const payload: Omit<TaskSettledPayload, "ledger_txid"> = {
    event: "task.settled",
    task_id: taskId,
    consensus_label: decision.label,
    confidence: decision.confidence,
    settled_at: settledAt.toISOString(),
  };
  const eventId = newId("event");
  const labelerIds = task.labelers.map((l) => l.id);
  const agreeing = task.labels.filter((l) => l.value === decision.label).map((l) => l.labeler_id);
  // The ledger lock, then ONE statement for the record and the rest (the labelers' rows are already
  // locked): accuracy counts, the task, its remaining claims, and the outbox row; then the job.
  const [, appended, ...job] = await run<[object, { txid: string }, object, { id: string }]>(
    [
      LEDGER_LOCK_SQL,
      Prisma.sql`
    WITH ledger AS (${ledgerAppendSql(record)}),
    counted AS (
      UPDATE labelers SET settled_labels = settled_labels + 1,
        agreed_labels = agreed_labels + CASE WHEN id = ANY(${agreeing}::text[]) THEN 1 ELSE 0 END
      WHERE id = ANY(${labelerIds}::text[])
    ),
    settled AS (
      UPDATE tasks SET status = 'settled'::"TaskStatus", consensus_label = ${decision.label}::text,
        confidence = ${decision.confidence}::float8, resolution = ${decision.resolution}::text::"Resolution",
        label_counts = ${JSON.stringify(decision.counts)}::jsonb, labels_needed = 0, ledger_txid = (SELECT txid FROM ledger),
        settled_at = ${settledAt.toISOString()}::timestamptz, updated_at = ${settledAt.toISOString()}::timestamptz
      WHERE id = ${taskId}
    ),
    released AS (
      UPDATE claims SET status = 'expired'::"ClaimStatus" WHERE task_id = ${taskId} AND status = 'active'
    ),
    event AS (
      INSERT INTO events (id, type, task_id, customer_id, payload)
      SELECT ${eventId}, 'task.settled', ${taskId}, ${task.customer_id},
        ${JSON.stringify(payload)}::jsonb || jsonb_build_object('ledger_txid', ledger.txid)
      FROM ledger
    )
    SELECT txid FROM ledger`,
      // The last open task of a manifest job completes the job, in the same transaction.
      ...(task.job_id ? completeJobSql(task.job_id) : []),
    ] as [Prisma.Sql, Prisma.Sql, Prisma.Sql, Prisma.Sql],
    { commit: true },
  );
  if (!appended[0]) throw new Error(`settlement of ${taskId} wrote no ledger record`);
  const completedJobId = task.job_id && job[1] && job[1].length > 0 ? task.job_id : undefined;
  const lagSeconds = task.last_label_at ? Math.max(0, (settledAt.getTime() - task.last_label_at.getTime()) / 1000) : undefined;
  return { outcome: "settled", eventId, completedJobId, lagSeconds };
}

interface OpenState {
  status: string;
  labels_needed: number;
}

/**
 * The status and `labels_needed` of tasks, for the consensus jobs of this process running at once: ONE
 * statement per batch (core's `Batcher`; a task appears once per batch). undefined: no such task.
 */
const openStates = perOwner(
  (pool: Pool) =>
    new Batcher<string, OpenState | undefined>(
      async (ids) => {
        const rows = await queryRows<OpenState & { id: string }>(
          pool,
          Prisma.sql`SELECT id, status::text AS status, labels_needed FROM tasks WHERE id = ANY(${ids}::text[])`,
        );
        const byId = new Map(rows.map((r) => [r.id, r]));
        return ids.map((id) => byId.get(id));
      },
      { key: (id) => id },
    ),
);

/**
 * Evaluates a task and settles it if decided. Safe to run any number of times, concurrently.
 * After commit, the `task.settled` event is enqueued; if the queue is down the reconciliation does it.
 */
export async function evaluateTask(deps: ConsensusDeps, taskId: string): Promise<EvaluationOutcome> {
  // Most jobs (one per label) find the task still needing labels: answer those with one read, no
  // transaction. labels_needed only decreases, and reaches 0 exactly when `decide` would settle (threshold
  // reached or max_labels collected); a label that brings it to 0 enqueues its own job after its commit
  // (or the reconciliation does), and that job sees it. A stale read here therefore never loses a settlement.
  const task = await openStates(deps.pool).call(taskId);
  if (!task || (task.status !== "pending" && task.status !== "labeling")) return "closed";
  if (task.labels_needed > 0) return "open";
  const result = await withTransaction(deps.pool, (run) => settleInTransaction(run, taskId, deps.prior));
  if (result.outcome === "settled" && result.eventId) {
    deps.logger.info({ task_id: taskId, event_id: result.eventId }, "task settled");
    deps.metrics?.tasksSettled.inc();
    if (result.lagSeconds !== undefined) deps.metrics?.consensusLag.observe(result.lagSeconds);
    await deps.queue.enqueue("taskSettled", { eventId: result.eventId }).catch((err: unknown) => {
      deps.logger.warn({ err, event_id: result.eventId }, "task.settled enqueue deferred to reconciliation");
    });
  }
  if (result.completedJobId) {
    // The job's last task: its export goes to output_url now (a no-op for jobs without one).
    await deps.queue.enqueue("manifestExport", { jobId: result.completedJobId }).catch((err: unknown) => {
      deps.logger.warn({ err, job_id: result.completedJobId }, "export enqueue deferred to reconciliation");
    });
  }
  return result.outcome;
}
