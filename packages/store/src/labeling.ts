/**
 * Claims and labels (../shared/DESIGN.md §4, §10): the labelers' hot path.
 *
 * A task is claimable by a labeler when it is open (and, for a manifest job's task, its job is `labeling`:
 * a job still ingesting has pending tasks nobody may claim yet), the labeler has not labeled it nor holds a
 * live claim on it, and its live claims are fewer than `claim_cap` (the fewest further labels that could
 * decide it, an answer of the decision rule). Expired claims stop counting by themselves (`expires_at`),
 * which returns their slot; a released claim (skip) returns it at once.
 *
 * A label is recorded with the decision of the rule (decision.ts) taken in the same transaction: the
 * label that decides a task moves it to `settling` with its label, confidence, posterior and resolution;
 * the settlement later keeps exactly that.
 *
 * Concurrency: a task's claims and labels are only written under the task's row lock (`FOR UPDATE`),
 * taken first in the transaction (the same order as cancellation and settlement), and every check reads in
 * a later statement than the lock: under READ COMMITTED each statement takes a fresh snapshot, so it sees
 * every claim and label committed by the lock's previous holders. Concurrent requests of a process share
 * ONE transaction (group commit, core's `Batcher`): the generic claim attempts of a batch in turn, or the
 * labels of a batch in turn, each seeing the writes of those before it, so a batch checks and counts
 * exactly as its requests one after the other would.
 */
import { ApiError, OPEN_TASK_STATUSES } from "@labelgate/api";
import { Batcher, newId } from "@labelgate/core";
import type { Db } from "./database";
import { type AccuracyPrior, type Decision, decide, type LabelerRecord, oneCoinModel, type Vote } from "./decision";
import { statusIn } from "./fragments";
import { Prisma } from "./generated/client";
import { assertTransition, type TaskStatus } from "./lifecycle";
import { chargeSql } from "./quota";
import { transactionRows, withTransaction } from "./sql";

const OPEN = statusIn("t.status", OPEN_TASK_STATUSES);

export interface ClaimResult {
  claim_id: string;
  task_id: string;
  data_url: string;
  label_spec: { question: string; options: string[] };
  expires_at: string;
}

/** How many candidates a generic claim tries before answering that nothing is open. */
const CLAIM_ATTEMPTS = 8;

/**
 * SQL condition: task `t` is claimable by `labelerId`, not counting the claim `exceptClaimId` (the
 * tentative claim of the current transaction, which must not count against itself).
 */
function claimable(labelerId: string, exceptClaimId: string): Prisma.Sql {
  return Prisma.sql`${OPEN}
    AND (t.job_id IS NULL OR EXISTS (SELECT 1 FROM jobs j WHERE j.id = t.job_id AND j.status = 'labeling'))
    AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.task_id = t.id AND c.labeler_id = ${labelerId} AND c.id <> ${exceptClaimId}
                    AND (c.status = 'labeled' OR (c.status = 'active' AND c.expires_at > now())))
    AND (SELECT count(*) FROM claims c WHERE c.task_id = t.id AND c.id <> ${exceptClaimId}
           AND c.status = 'active' AND c.expires_at > now()) < t.claim_cap`;
}

/**
 * Statement 1 of a claim: locks the task row and inserts a tentative claim on it. A named task is locked
 * waiting for its lock (whatever its state: the next statement decides); a generic claim takes the oldest
 * task that looks claimable in this statement's snapshot and is not locked by anyone (`SKIP LOCKED`).
 * Returns the task id, or no row (named: no such task; generic: nothing to claim).
 * A generic claim looks for the oldest `pending` and the oldest `labeling` candidate separately (each walks
 * the (status, created_at) index and stops at its first match) and takes the older: with both statuses in
 * one scan, Postgres cannot use the index order and evaluates the claim checks on every open task, then
 * sorts (1.8 s per claim at 100,000 open tasks, 0.3 ms this way). The other candidate's row lock is held
 * until this short transaction ends; concurrent claims skip it.
 */
function lockAndClaim(claimId: string, labelerId: string, taskId: string | undefined, skip: string[], ttlSeconds: number): Prisma.Sql {
  const target = taskId
    ? Prisma.sql`SELECT t.id FROM tasks t WHERE t.id = ${taskId} FOR UPDATE`
    : Prisma.sql`WITH ${Prisma.join(
        OPEN_TASK_STATUSES.map(
          (status) => Prisma.sql`${Prisma.raw(status)} AS (
            SELECT t.id, t.created_at FROM tasks t
            WHERE t.status = ${Prisma.raw(`'${status}'`)} AND t.claim_cap > 0 AND t.id <> ALL(${skip}::text[])
              AND ${claimable(labelerId, claimId)}
            ORDER BY t.created_at
            LIMIT 1
            FOR UPDATE OF t SKIP LOCKED)`,
        ),
      )}
      SELECT id FROM (${Prisma.join(
        OPEN_TASK_STATUSES.map((status) => Prisma.sql`SELECT * FROM ${Prisma.raw(status)}`),
        " UNION ALL ",
      )}) candidates ORDER BY created_at, id LIMIT 1`;
  return Prisma.sql`
    WITH target AS (${target})
    INSERT INTO claims (id, task_id, labeler_id, status, expires_at)
    SELECT ${claimId}, target.id, ${labelerId}, 'active'::"ClaimStatus", now() + make_interval(secs => ${ttlSeconds})
    FROM target
    RETURNING task_id`;
}

/**
 * Statement 2 of a claim, under the task lock with a fresh snapshot: re-checks that the task was claimable
 * without the tentative claim, withdraws (deletes) the claim if it was not, and returns the task's data. A
 * withdrawn claim was never visible to any other transaction.
 */
function confirmClaim(claimId: string, labelerId: string): Prisma.Sql {
  return Prisma.sql`
    WITH checked AS (
      SELECT m.task_id, m.expires_at, t.data_url, t.question, t.options, (${claimable(labelerId, claimId)}) AS ok
      FROM claims m JOIN tasks t ON t.id = m.task_id
      WHERE m.id = ${claimId}
    ),
    withdrawn AS (DELETE FROM claims WHERE id = ${claimId} AND EXISTS (SELECT 1 FROM checked WHERE NOT ok))
    SELECT task_id, expires_at, data_url, question, options, ok FROM checked`;
}

interface ConfirmedRow {
  task_id: string;
  expires_at: Date;
  data_url: string;
  question: string;
  options: string[];
  ok: boolean;
}

interface ClaimAttempt {
  claimId: string;
  labelerId: string;
  /** candidates that failed an earlier attempt's re-check */
  skip: string[];
  ttlSeconds: number;
}

interface ClaimAttemptResult {
  /** the task the attempt locked and claimed tentatively; undefined when nothing was claimable */
  candidate?: string;
  /** the re-check under the lock (and the task's data) */
  confirmed?: ConfirmedRow;
}

// --- labels -------------------------------------------------------------------------------------------

/** A label as the route answers it. */
export interface RecordedLabel {
  label_id: string;
  claim_id: string;
  task_id: string;
  label: string;
  created_at: string;
  /** 0 exactly when this label decided the task; otherwise the most labels the task may still take (≥ 1) */
  labels_needed: number;
}

/** The outcome of one label request: recorded (and whether it decided its task), or refused. */
export type LabelOutcome = { kind: "recorded"; label: RecordedLabel; decided: boolean } | { kind: "refused"; error: ApiError };

interface LabelRequest {
  labelId: string;
  labelerId: string;
  claimId: string;
  value: string;
}

/** A task's state as the label transaction reads it under its lock. */
interface LabelingTask {
  id: string;
  customer_id: string;
  status: TaskStatus;
  options: string[];
  consensus_threshold: number;
  max_labels: number;
  quota_reserved: number;
  /** the task's labels in recording order */
  votes: Vote[];
}

interface ClaimState {
  claim_id: string;
  labeler_id: string;
  task_id: string;
  status: string;
  expired: boolean;
}

interface LabelerCounts {
  id: string;
  settled_labels: number;
  agreed_labels: number;
}

interface LabelState {
  claims: ClaimState[];
  tasks: LabelingTask[];
  labelers: LabelerCounts[];
}

/** A task's new state after the batch's labels, written in round trip 2. */
interface TaskUpdate {
  id: string;
  status: TaskStatus;
  labels_collected: number;
  label_counts: Record<string, number>;
  claim_cap: number;
  last_label_id: string;
  consensus_label: string | null;
  confidence: number | null;
  resolution: string | null;
  posterior: Record<string, number> | null;
}

/**
 * Round trip 1 of a label batch: BEGIN, lock the tasks of the batch's claims in id order (no deadlock with
 * other batches), then (a later statement: a fresh snapshot) read each claim, each task with its labels in
 * recording order, and the accuracy records of every labeler concerned.
 */
function labelStateSql(requests: LabelRequest[]): [Prisma.Sql, Prisma.Sql] {
  const claimIds = requests.map((r) => r.claimId);
  const labelerIds = requests.map((r) => r.labelerId);
  const asked = Prisma.sql`unnest(${claimIds}::text[], ${labelerIds}::text[]) AS r(claim_id, labeler_id)`;
  return [
    Prisma.sql`
      SELECT t.id FROM tasks t
      WHERE t.id IN (SELECT c.task_id FROM claims c JOIN ${asked} ON c.id = r.claim_id AND c.labeler_id = r.labeler_id)
      ORDER BY t.id
      FOR UPDATE OF t`,
    Prisma.sql`
      WITH cl AS (
        SELECT c.id AS claim_id, c.labeler_id, c.task_id, c.status::text AS status, (c.status = 'expired' OR c.expires_at <= now()) AS expired
        FROM claims c JOIN ${asked} ON c.id = r.claim_id AND c.labeler_id = r.labeler_id
      ),
      tk AS (
        SELECT t.id, t.customer_id, t.status::text AS status, t.options, t.consensus_threshold, t.max_labels, t.quota_reserved
        FROM tasks t WHERE t.id IN (SELECT task_id FROM cl)
      ),
      lb AS (SELECT l.task_id, l.labeler_id, l.value, l.created_at, l.id FROM labels l WHERE l.task_id IN (SELECT id FROM tk))
      SELECT
        COALESCE((SELECT json_agg(row_to_json(cl)) FROM cl), '[]'::json) AS claims,
        COALESCE((SELECT json_agg(json_build_object(
            'id', tk.id, 'customer_id', tk.customer_id, 'status', tk.status, 'options', tk.options,
            'consensus_threshold', tk.consensus_threshold, 'max_labels', tk.max_labels, 'quota_reserved', tk.quota_reserved,
            'votes', COALESCE((SELECT json_agg(json_build_object('labelerId', lb.labeler_id, 'value', lb.value) ORDER BY lb.created_at, lb.id)
                               FROM lb WHERE lb.task_id = tk.id), '[]'::json)
          )) FROM tk), '[]'::json) AS tasks,
        COALESCE((SELECT json_agg(json_build_object('id', b.id, 'settled_labels', b.settled_labels, 'agreed_labels', b.agreed_labels))
                  FROM labelers b WHERE b.id IN (SELECT labeler_id FROM lb UNION SELECT labeler_id FROM cl)), '[]'::json) AS labelers`,
  ];
}

/**
 * Round trip 2 of a label batch: the accepted labels (each `created_at` the time it is written, so a task's
 * labels in `created_at` order are in recording order), their claims marked labeled, each task's new state,
 * then the quota the batch owes: the customers locked in id order, then charged. COMMIT travels with it.
 */
function labelWriteSql(labels: LabelRequest[], taskIdOf: Map<string, string>, customerOf: Map<string, string>, tasks: TaskUpdate[]) {
  const rows = labels.map((l) => ({
    id: l.labelId,
    task_id: taskIdOf.get(l.claimId),
    customer_id: customerOf.get(taskIdOf.get(l.claimId) as string),
    labeler_id: l.labelerId,
    claim_id: l.claimId,
    value: l.value,
  }));
  return Prisma.sql`
    WITH ins AS (
      INSERT INTO labels (id, task_id, customer_id, labeler_id, claim_id, value, created_at)
      SELECT r.id, r.task_id, r.customer_id, r.labeler_id, r.claim_id, r.value, clock_timestamp()
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS r(id text, task_id text, customer_id text, labeler_id text, claim_id text, value text)
      RETURNING id, created_at
    ),
    claimed AS (
      UPDATE claims SET status = 'labeled'::"ClaimStatus" WHERE id = ANY(${labels.map((l) => l.claimId)}::text[])
    ),
    upd AS (
      UPDATE tasks t SET status = u.status::"TaskStatus", labels_collected = u.labels_collected, label_counts = u.label_counts,
        claim_cap = u.claim_cap, last_label_id = u.last_label_id, last_label_at = (SELECT created_at FROM ins WHERE ins.id = u.last_label_id),
        consensus_label = COALESCE(u.consensus_label, t.consensus_label), confidence = COALESCE(u.confidence, t.confidence),
        resolution = COALESCE(u.resolution::"Resolution", t.resolution), posterior = COALESCE(u.posterior, t.posterior), updated_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(tasks)}::jsonb)
        AS u(id text, status text, labels_collected int, label_counts jsonb, claim_cap int, last_label_id text,
             consensus_label text, confidence float8, resolution text, posterior jsonb)
      WHERE t.id = u.id
    )
    SELECT id, created_at FROM ins`;
}

/** The error of a label that cannot be recorded, from the states the transaction read (undefined: acceptable). */
function refusal(request: LabelRequest, claim: ClaimState | undefined, task: LabelingTask | undefined): ApiError | undefined {
  if (!claim || !task) return new ApiError("claimNotFound");
  if (claim.status === "labeled") return new ApiError("claimAlreadyLabeled");
  if (!(OPEN_TASK_STATUSES as readonly string[]).includes(task.status))
    return new ApiError("taskNotOpen", undefined, { status: task.status });
  if (claim.expired) return new ApiError("claimExpired");
  if (!task.options.includes(request.value)) {
    return new ApiError("validation", [{ path: "label", message: `must be one of the task's options: ${task.options.join(", ")}` }]);
  }
  if (task.votes.some((v) => v.labelerId === request.labelerId)) return new ApiError("claimAlreadyLabeled");
  return undefined;
}

export interface LabelingOptions {
  /** Beta prior of a labeler's accuracy (one-coin model) */
  prior: AccuracyPrior;
}

/**
 * The claims and labels of the store. Concurrent calls of this process share transactions (group commit);
 * the batchers are members of this object, one per store.
 */
export function labelingStore(db: Db, options: LabelingOptions) {
  const { pool } = db;

  /**
   * Generic claim attempts of concurrent requests, ONE transaction per batch: each attempt's two statements
   * in turn, in request order. A task the batch has locked is skipped by other transactions' claims (`SKIP
   * LOCKED`) but not by the batch's own later attempts, which may fill its other slots. Generic claims never
   * wait for a lock, so a batch cannot deadlock.
   */
  const claimBatcher = new Batcher<ClaimAttempt, ClaimAttemptResult>(async (attempts) => {
    const rows = await transactionRows<object[]>(
      pool,
      attempts.flatMap((a) => [
        lockAndClaim(a.claimId, a.labelerId, undefined, a.skip, a.ttlSeconds),
        confirmClaim(a.claimId, a.labelerId),
      ]),
    );
    return attempts.map((_, i) => ({
      candidate: (rows[2 * i]?.[0] as { task_id: string } | undefined)?.task_id,
      confirmed: rows[2 * i + 1]?.[0] as ConfirmedRow | undefined,
    }));
  });

  /** A named claim attempt: its own transaction (it waits for the task's lock, which a batch must not). */
  async function claimNamed(attempt: ClaimAttempt, taskId: string): Promise<ClaimAttemptResult> {
    const [locked, confirmed] = await transactionRows<[{ task_id: string }, ConfirmedRow]>(pool, [
      lockAndClaim(attempt.claimId, attempt.labelerId, taskId, [], attempt.ttlSeconds),
      confirmClaim(attempt.claimId, attempt.labelerId),
    ]);
    return { candidate: locked[0]?.task_id, confirmed: confirmed[0] };
  }

  /**
   * The labels of concurrent requests, ONE transaction in two round trips per batch (`withTransaction`):
   * (1) lock the batch's tasks and read their states; then, in JS, each label in request order: refused
   * (nothing written) or accepted, with the decision rule applied to the task's labels so far (each sees
   * the labels before it in the batch); (2) write the accepted labels, their claims, the tasks' new states
   * and the quota owed, and COMMIT. A claim appears at most once per batch (a second label on it waits for
   * the next batch, and gets its 409 there).
   */
  const labelBatcher = new Batcher<LabelRequest, LabelOutcome>(
    (requests) =>
      withTransaction(pool, async (run) => {
        const [, stateRows] = await run<[object, LabelState]>(labelStateSql(requests));
        const state = stateRows[0] as LabelState;
        const claims = new Map(state.claims.map((c) => [c.claim_id, c]));
        const tasks = new Map(state.tasks.map((t) => [t.id, t]));
        const records = new Map<string, LabelerRecord>(
          state.labelers.map((l) => [l.id, { settled: l.settled_labels, agreed: l.agreed_labels }]),
        );
        const model = oneCoinModel(records, options.prior);
        const accepted: LabelRequest[] = [];
        const updates = new Map<string, TaskUpdate>();
        const charges = new Map<string, number>();
        const outcomes: (LabelOutcome | { kind: "pending"; decision: Decision; taskId: string })[] = requests.map((request) => {
          const claim = claims.get(request.claimId);
          const task = claim ? tasks.get(claim.task_id) : undefined;
          const error = refusal(request, claim, task);
          if (error || !claim || !task) return { kind: "refused", error: error ?? new ApiError("claimNotFound") };
          const before = task.votes.length;
          task.votes.push({ labelerId: request.labelerId, value: request.value });
          const decision = decide(
            { options: task.options, consensusThreshold: task.consensus_threshold, maxLabels: task.max_labels },
            task.votes,
            model,
          );
          const next: TaskStatus = decision.done ? "settling" : "labeling";
          if (next !== task.status) assertTransition(task.status, next);
          task.status = next;
          claim.status = "labeled";
          if (before >= task.quota_reserved) charges.set(task.customer_id, (charges.get(task.customer_id) ?? 0) + 1);
          updates.set(task.id, {
            id: task.id,
            status: next,
            labels_collected: task.votes.length,
            label_counts: decision.counts,
            claim_cap: decision.claimCap,
            last_label_id: request.labelId,
            consensus_label: decision.done ? decision.label : null,
            confidence: decision.done ? decision.confidence : null,
            resolution: decision.done ? decision.resolution : null,
            posterior: decision.done ? decision.posterior : null,
          });
          accepted.push(request);
          return { kind: "pending", decision, taskId: task.id };
        });
        if (accepted.length === 0) return outcomes as LabelOutcome[];
        const taskIdOf = new Map(accepted.map((r) => [r.claimId, (claims.get(r.claimId) as ClaimState).task_id]));
        const customerOf = new Map([...tasks.values()].map((t) => [t.id, t.customer_id]));
        const statements = [labelWriteSql(accepted, taskIdOf, customerOf, [...updates.values()])];
        if (charges.size > 0) statements.push(...chargeSql(charges));
        const [inserted] = (await run<object[]>(statements, { commit: true })) as [{ id: string; created_at: Date }[], ...object[][]];
        const createdAt = new Map(inserted.map((r) => [r.id, r.created_at]));
        return outcomes.map((o, i): LabelOutcome => {
          if (o.kind !== "pending") return o;
          const request = requests[i] as LabelRequest;
          const at = createdAt.get(request.labelId);
          if (!at) throw new Error(`label ${request.labelId} was accepted but not recorded`);
          return {
            kind: "recorded",
            decided: o.decision.done,
            label: {
              label_id: request.labelId,
              claim_id: request.claimId,
              task_id: o.taskId,
              label: request.value,
              created_at: at.toISOString(),
              labels_needed: o.decision.labelsNeeded,
            },
          };
        });
      }),
    { key: (r) => r.claimId },
  );

  return {
    /**
     * Claims the oldest open task for a labeler, or the named one. Returns undefined when nothing is open
     * for this labeler (the route answers 204). Each attempt locks the task and inserts a tentative claim,
     * then re-checks under the lock with a fresh snapshot; generic attempts of concurrent requests share one
     * transaction, a named one has its own. A generic claim whose candidate fails the re-check tries the
     * next one, up to 8.
     * @param ttlSeconds how long the claim holds its slot
     * @throws ApiError taskNotFound when `taskId` names no task.
     */
    async claim(labelerId: string, taskId: string | undefined, ttlSeconds: number): Promise<ClaimResult | undefined> {
      const skipped: string[] = [];
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const claimId = newId("claim");
        const request: ClaimAttempt = { claimId, labelerId, skip: [...skipped], ttlSeconds };
        const { candidate, confirmed: row } = taskId ? await claimNamed(request, taskId) : await claimBatcher.call(request);
        if (!candidate || !row) {
          if (taskId) throw new ApiError("taskNotFound");
          return undefined;
        }
        if (row.ok) {
          return {
            claim_id: claimId,
            task_id: row.task_id,
            data_url: row.data_url,
            label_spec: { question: row.question, options: row.options },
            expires_at: row.expires_at.toISOString(),
          };
        }
        if (taskId) return undefined;
        skipped.push(candidate);
      }
      return undefined;
    },

    /**
     * Releases a labeler's unlabeled claim (skip): its slot returns at once. Releasing a claim again, or
     * one that expired, answers the same (idempotent).
     * @throws ApiError claimNotFound (no such claim of this labeler) | claimAlreadyLabeled
     */
    async release(labelerId: string, claimId: string): Promise<void> {
      const [rows] = await transactionRows<[{ status: string }]>(pool, [
        Prisma.sql`
          WITH c AS (SELECT id, status::text AS status FROM claims WHERE id = ${claimId} AND labeler_id = ${labelerId}),
          released AS (UPDATE claims SET status = 'expired'::"ClaimStatus" WHERE id IN (SELECT id FROM c WHERE status = 'active'))
          SELECT status FROM c`,
      ]);
      const claim = rows[0];
      if (!claim) throw new ApiError("claimNotFound");
      if (claim.status === "labeled") throw new ApiError("claimAlreadyLabeled");
    },

    /**
     * Records a label on a claim, with the decision of the rule taken in the same transaction: one label
     * per claim, the value one of the task's options. Charges one quota unit when the task's reservation is
     * already used (../shared/DESIGN.md §6; an in-flight task always finishes, even past the quota). `decided`: this
     * label decided the task (it is now `settling`): the caller enqueues its settlement.
     * @throws ApiError claimNotFound | claimAlreadyLabeled | claimExpired | taskNotOpen | validation
     */
    async label(labelerId: string, claimId: string, value: string): Promise<{ label: RecordedLabel; decided: boolean }> {
      // Postgres text holds no NUL, so no option does: such a value is refused before it reaches SQL
      if (value.includes("\0")) throw new ApiError("validation", [{ path: "label", message: "must be one of the task's options" }]);
      const outcome = await labelBatcher.call({ labelId: newId("label"), labelerId, claimId, value });
      if (outcome.kind === "refused") throw outcome.error;
      return { label: outcome.label, decided: outcome.decided };
    },
  };
}

export type LabelingStore = ReturnType<typeof labelingStore>;
