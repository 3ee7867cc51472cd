/**
 * The consensus handler: re-evaluates one task and, when decided, settles it. The settlements a worker
 * process has at once share ONE transaction (group commit: one ledger lock, one commit for all of them).
 * Locks, always in this order: the tasks' rows (`FOR UPDATE`, in id order) → their labelers' rows (in id
 * order) → the ledger's advisory lock (held until commit) → manifest jobs' rows. Writes, per task: the
 * ledger record, then in the same statement the labelers' accuracy counts, the task, its remaining claims
 * and the `task.settled` outbox row.
 * Exactly once: a second run (duplicate job, racing replica) finds the task settled and does nothing;
 * the unique `events(task_id, type)` and `ledger_entries(task_id)` make a double write impossible.
 * Every statement is raw SQL; reads that must see the latest commits run in a later statement than the
 * lock they depend on (READ COMMITTED: each statement takes a fresh snapshot).
 */
import { Batcher, type Logger, newId, perOwner } from "@labelgate/core";
import { completeJobSql, type Pool, Prisma, type PrismaClient, queryRows, type TransactionRun, withTransaction } from "@labelgate/store";
import type { Metrics } from "@labelgate/metrics";
import type { QueueClient } from "@labelgate/queue";
import type { TaskSettledEvent } from "@labelgate/webhook-verify";
import { type AccuracyPrior, type Decision, decide, type LabelVote, labelerAccuracy } from "./consensus";

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

/** A task's state as the settlement reads it, under the task's lock. */
interface SettlingTask {
  id: string;
  customer_id: string;
  /** manifest job of the task, if any */
  job_id: string | null;
  options: string[];
  consensus_threshold: number;
  max_labels: number;
  /** the task's labels in recording order (created_at, id) */
  labels: { id: string; labeler_id: string; value: string }[];
  /** when the newest (deciding) label was recorded (ISO text) */
  last_label_at: string | null;
}

/** A labeler's accuracy counts, read under its lock. */
interface LabelerCounts {
  id: string;
  settled_labels: number;
  agreed_labels: number;
}

/** What the settlement of one task came to. */
interface Settlement {
  outcome: EvaluationOutcome;
  eventId?: string;
  /** the manifest job this settlement completed (its last open task) */
  completedJobId?: string;
  /** deciding label recorded → settled, seconds */
  lagSeconds?: number;
}

/**
 * The statement that settles one decided task, after the ledger lock of the same transaction (its labelers'
 * rows are already locked): the ledger record, the labelers' accuracy counts, the task, its remaining
 * claims and the `task.settled` outbox row. Returns the record's txid.
 */
function settleStatement(task: SettlingTask, decision: Extract<Decision, { settle: true }>, eventId: string, settledAt: Date): Prisma.Sql {
  const record = {
    task_id: task.id,
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
    task_id: task.id,
    consensus_label: decision.label,
    confidence: decision.confidence,
    settled_at: settledAt.toISOString(),
  };
  const labelerIds = [...new Set(task.labels.map((l) => l.labeler_id))];
  const agreeing = task.labels.filter((l) => l.value === decision.label).map((l) => l.labeler_id);
  return Prisma.sql`
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
      WHERE id = ${task.id}
    ),
    released AS (
      UPDATE claims SET status = 'expired'::"ClaimStatus" WHERE task_id = ${task.id} AND status = 'active'
    ),
    event AS (
      INSERT INTO events (id, type, task_id, customer_id, payload)
      SELECT ${eventId}, 'task.settled', ${task.id}, ${task.customer_id},
        ${JSON.stringify(payload)}::jsonb || jsonb_build_object('ledger_txid', ledger.txid)
      FROM ledger
    )
    SELECT txid FROM ledger`;
}

/**
 * The settlement transaction of a batch of tasks (the settlements a worker process has at once: group
 * commit), in two round trips (`withTransaction`):
 * (1) BEGIN, lock the tasks in id order; then (a later statement: a fresh snapshot that sees every label
 *     committed before the locks) read the open ones with all their labels, and lock all their labelers in
 *     id order (FOR NO KEY UPDATE suffices for the counters and, unlike FOR UPDATE, does not block the
 *     key-share locks that claims and labels take);
 * then, in JS, each task's decision in id order, each with the labelers' accuracy counts as the settlements
 *     before it in the batch left them: exactly the decisions and confidences of one task after the other;
 * (2) the ledger's advisory lock, each decided task's statement in turn (each appends after the record of
 *     the one before: a later statement of the same transaction sees it), then each manifest job's
 *     completion once, COMMIT.
 * So a batch holds the ledger lock for one message's execution and ONE commit (one WAL flush for all its
 * records), never across a round trip of the worker. Locks are taken in the order every writer takes them:
 * tasks → labelers → ledger → jobs, each kind in id order. Returns one Settlement per id, in order.
 */
async function settleInTransaction(run: TransactionRun, taskIds: string[], prior: AccuracyPrior): Promise<Settlement[]> {
  const [, state] = await run<[object, { tasks: SettlingTask[]; labelers: LabelerCounts[] }]>([
    Prisma.sql`SELECT id FROM tasks WHERE id = ANY(${taskIds}::text[]) ORDER BY id FOR UPDATE`,
    Prisma.sql`
    WITH open_tasks AS (
      SELECT id, customer_id, job_id, options, consensus_threshold, max_labels FROM tasks
      WHERE id = ANY(${taskIds}::text[]) AND status IN ('pending', 'labeling')
    ),
    task_labels AS (
      SELECT l.task_id, l.id, l.labeler_id, l.value, l.created_at FROM labels l WHERE l.task_id IN (SELECT id FROM open_tasks)
    ),
    labelers_locked AS (
      SELECT id, settled_labels, agreed_labels FROM labelers
      WHERE id IN (SELECT labeler_id FROM task_labels)
      ORDER BY id
      FOR NO KEY UPDATE
    )
    SELECT
      COALESCE((SELECT json_agg(json_build_object(
          'id', t.id, 'customer_id', t.customer_id, 'job_id', t.job_id, 'options', t.options,
          'consensus_threshold', t.consensus_threshold, 'max_labels', t.max_labels,
          'labels', COALESCE((SELECT json_agg(json_build_object('id', l.id, 'labeler_id', l.labeler_id, 'value', l.value) ORDER BY l.created_at, l.id)
                              FROM task_labels l WHERE l.task_id = t.id), '[]'::json),
          'last_label_at', (SELECT max(l.created_at) FROM task_labels l WHERE l.task_id = t.id)
        ) ORDER BY t.id) FROM open_tasks t), '[]'::json) AS tasks,
      COALESCE((SELECT json_agg(json_build_object('id', b.id, 'settled_labels', b.settled_labels, 'agreed_labels', b.agreed_labels) ORDER BY b.id)
                FROM labelers_locked b), '[]'::json) AS labelers`,
  ]);
  const { tasks, labelers } = state[0] as { tasks: SettlingTask[]; labelers: LabelerCounts[] };
  const counts = new Map(labelers.map((l) => [l.id, { settled: l.settled_labels, agreed: l.agreed_labels }]));
  const results = new Map<string, Settlement>();
  const statements: Prisma.Sql[] = [];
  const settledIds: string[] = [];
  /** each manifest job of a settled task, with the first such task */
  const jobs = new Map<string, string>();
  for (const task of tasks) {
    const votes: LabelVote[] = task.labels.map((l) => ({ labelerId: l.labeler_id, value: l.value }));
    const accuracy = new Map(votes.map((v) => [v.labelerId, labelerAccuracy(counts.get(v.labelerId) ?? { settled: 0, agreed: 0 }, prior)]));
    const decision = decide(
      { options: task.options, consensusThreshold: task.consensus_threshold, maxLabels: task.max_labels, votes },
      accuracy,
      prior,
    );
    if (!decision.settle) {
      results.set(task.id, { outcome: "open" });
      continue;
    }
    const settledAt = new Date();
    const eventId = newId("event");
    statements.push(settleStatement(task, decision, eventId, settledAt));
    settledIds.push(task.id);
    // the counts the next task of the batch sees, as the statement leaves them
    for (const v of votes) {
      const c = counts.get(v.labelerId);
      if (!c) continue;
      c.settled++;
      if (v.value === decision.label) c.agreed++;
    }
    const lastLabelAt = task.last_label_at ? new Date(task.last_label_at).getTime() : undefined;
    results.set(task.id, {
      outcome: "settled",
      eventId,
      lagSeconds: lastLabelAt === undefined ? undefined : Math.max(0, (settledAt.getTime() - lastLabelAt) / 1000),
    });
    if (task.job_id && !jobs.has(task.job_id)) jobs.set(task.job_id, task.id);
  }
  if (statements.length > 0) {
    const jobIds = [...jobs.keys()].sort();
    // The last open task of a manifest job completes the job, in the same transaction.
    const rows = await run<object[]>([LEDGER_LOCK_SQL, ...statements, ...jobIds.flatMap((id) => completeJobSql(id))], { commit: true });
    settledIds.forEach((id, i) => {
      if (!rows[1 + i]?.[0]) throw new Error(`settlement of ${id} wrote no ledger record`);
    });
    jobIds.forEach((jobId, i) => {
      const completed = rows[1 + statements.length + 2 * i + 1] ?? [];
      const settlement = results.get(jobs.get(jobId) as string);
      if (completed.length > 0 && settlement) settlement.completedJobId = jobId;
    });
  }
  return taskIds.map((id) => results.get(id) ?? { outcome: "closed" });
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
 * The settlements of this process's consensus jobs running at once: ONE transaction per batch
 * (`settleInTransaction`; a task appears once per batch, a later job of it waits for the next batch and
 * finds it closed). When a batch fails, each of its tasks is settled again alone (core's `Batcher`).
 */
const settlementsOf = perOwner(
  (deps: ConsensusDeps) =>
    new Batcher<string, Settlement>((ids) => withTransaction(deps.pool, (run) => settleInTransaction(run, ids, deps.prior)), {
      key: (id) => id,
    }),
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
  const result = await settlementsOf(deps).call(taskId);
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
