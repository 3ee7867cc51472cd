/**
 * Claims and labels (DESIGN §4). A task is claimable by a labeler when it is open (and, for a manifest
 * job's task, its job is `labeling`: a job still ingesting has `pending` tasks that nobody may claim yet,
 * services/manifest-worker/src/ingest.ts), the labeler has not
 * labeled it nor holds a live claim on it, and its live claims are fewer than `labels_needed` (the
 * smallest number of further labels that could settle it). Expired claims stop counting by themselves
 * (`expires_at`), which returns their slot.
 *
 * Concurrency: a task's claims and labels are only written under the task's row lock (`FOR UPDATE`),
 * taken first in the transaction (the same order as cancellation and settlement). The checks run in a
 * later statement than the lock: under READ COMMITTED each statement takes a fresh snapshot, so they see
 * every claim and label committed by the lock's previous holders. (A check in the locking statement
 * itself would not: its snapshot predates the wait for the lock.) So concurrent claims never over-assign
 * and a claim is never labeled twice. This is the labelers' hot path: its statements go to the pg pool
 * under Prisma (`transactionRows`: one message, prepared statements), with no application logic between
 * them, and concurrent requests of a process share ONE transaction (group commit, core's `Batcher`): the
 * generic claim attempts of a batch in turn, or the labels of a batch in turn. Each statement of a batch
 * sees the writes of those before it, so a batch checks and counts exactly as its requests one after the
 * other would, with one round trip and one commit for all of them.
 * Since a batch cannot branch between its statements, a claim inserts its row tentatively in the locking
 * statement, and the second statement deletes it again if the re-check fails; as the transaction is
 * still open, no other transaction ever sees a withdrawn claim.
 */

import { ApiError } from "@labelgate/api";
import { Batcher, newId, perOwner } from "@labelgate/core";
import { type Pool, Prisma, transactionRows } from "@labelgate/store";

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
  return Prisma.sql`t.status IN ('pending', 'labeling')
    AND (t.job_id IS NULL OR EXISTS (SELECT 1 FROM jobs j WHERE j.id = t.job_id AND j.status = 'labeling'))
    AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.task_id = t.id AND c.labeler_id = ${labelerId} AND c.id <> ${exceptClaimId}
                    AND (c.status = 'labeled' OR (c.status = 'active' AND c.expires_at > now())))
    AND (SELECT count(*) FROM claims c WHERE c.task_id = t.id AND c.id <> ${exceptClaimId}
           AND c.status = 'active' AND c.expires_at > now()) < t.labels_needed`;
}

/**
 * Statement 1 of a claim: locks the task row and inserts a tentative claim on it. A named task is
 * locked waiting for its lock (whatever its state: the next statement decides); a generic claim takes
 * the oldest task that looks claimable in this statement's snapshot and is not locked by anyone
 * (`SKIP LOCKED`). Returns the task id, or no row (named: no such task; generic: nothing to claim).
 * A generic claim looks for the oldest `pending` and the oldest `labeling` candidate separately (each
 * walks the (status, created_at) index and stops at its first match) and takes the older: with both
 * statuses in one scan, Postgres cannot use the index order and evaluates the claim checks on every open
 * task, then sorts (1.8 s per claim at 100,000 open tasks, 0.3 ms this way). The other candidate's row
 * lock is held until this short transaction ends; concurrent claims skip it.
 */
function lockAndClaim(claimId: string, labelerId: string, taskId: string | undefined, skip: string[], ttlSeconds: number): Prisma.Sql {
  const target = taskId
    ? Prisma.sql`SELECT t.id FROM tasks t WHERE t.id = ${taskId} FOR UPDATE`
    : Prisma.sql`WITH ${Prisma.join(
        (["pending", "labeling"] as const).map(
          (status) => Prisma.sql`${Prisma.raw(status)} AS (
            SELECT t.id, t.created_at FROM tasks t
            WHERE t.status = ${Prisma.raw(`'${status}'`)} AND t.labels_needed > 0 AND t.id <> ALL(${skip}::text[])
              AND ${claimable(labelerId, claimId)}
            ORDER BY t.created_at
            LIMIT 1
            FOR UPDATE OF t SKIP LOCKED)`,
        ),
      )}
      SELECT id FROM (SELECT * FROM pending UNION ALL SELECT * FROM labeling) candidates ORDER BY created_at, id LIMIT 1`;
  return Prisma.sql`
    WITH target AS (${target})
    INSERT INTO claims (id, task_id, labeler_id, status, expires_at)
    SELECT ${claimId}, target.id, ${labelerId}, 'active'::"ClaimStatus", now() + make_interval(secs => ${ttlSeconds})
    FROM target
    RETURNING task_id`;
}

/**
 * Statement 2 of a claim, under the task lock with a fresh snapshot: re-checks that the task was
 * claimable without the tentative claim, withdraws (deletes) the claim if it was not, and returns the
 * task's data. A withdrawn claim was never visible to any other transaction.
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

/**
 * Generic claim attempts of concurrent requests, ONE transaction per batch (group commit: one round trip
 * and one commit for many claims): each attempt's two statements in turn, in request order. An attempt's
 * statements see the claims of the attempts before it in the batch (the same transaction), so the checks
 * are exactly those of the attempts run one after the other; a task the batch has locked is skipped by
 * other transactions' claims (`SKIP LOCKED`) but not by the batch's own later attempts, which may fill
 * its other slots. Generic claims never wait for a lock, so a batch cannot deadlock.
 */
async function claimBatch(pool: Pool, attempts: ClaimAttempt[]): Promise<ClaimAttemptResult[]> {
  const rows = await transactionRows<object[]>(
    pool,
    attempts.flatMap((a) => [lockAndClaim(a.claimId, a.labelerId, undefined, a.skip, a.ttlSeconds), confirmClaim(a.claimId, a.labelerId)]),
  );
  return attempts.map((_, i) => ({
    candidate: (rows[2 * i]?.[0] as { task_id: string } | undefined)?.task_id,
    confirmed: rows[2 * i + 1]?.[0] as ConfirmedRow | undefined,
  }));
}

/** A named claim attempt: its own transaction (it waits for the task's lock, which a batch must not). */
async function claimNamed(pool: Pool, attempt: ClaimAttempt, taskId: string): Promise<ClaimAttemptResult> {
  const [locked, confirmed] = await transactionRows<[{ task_id: string }, ConfirmedRow]>(pool, [
    lockAndClaim(attempt.claimId, attempt.labelerId, taskId, [], attempt.ttlSeconds),
    confirmClaim(attempt.claimId, attempt.labelerId),
  ]);
  return { candidate: locked[0]?.task_id, confirmed: confirmed[0] };
}

const claimBatcherOf = perOwner((pool: Pool) => new Batcher<ClaimAttempt, ClaimAttemptResult>((attempts) => claimBatch(pool, attempts)));

/**
 * Claims the oldest open task for a labeler, or the named one. Returns undefined when nothing is open
 * for this labeler (the route answers 204). Each attempt locks the task and inserts a tentative claim,
 * then re-checks under the lock with a fresh snapshot (see the module comment); generic attempts of
 * concurrent requests share one transaction (`claimBatch`), a named one has its own. A generic claim
 * whose candidate fails the re-check tries the next one, up to 8.
 * @throws ApiError taskNotFound when `taskId` names no task.
 */
export async function claimTask(
  pool: Pool,
  labelerId: string,
  taskId: string | undefined,
  ttlSeconds: number,
): Promise<ClaimResult | undefined> {
  const skipped: string[] = [];
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    const claimId = newId("claim");
    const request: ClaimAttempt = { claimId, labelerId, skip: [...skipped], ttlSeconds };
    const { candidate, confirmed: row } = taskId ? await claimNamed(pool, request, taskId) : await claimBatcherOf(pool).call(request);
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
}

export interface RecordedLabel {
  label_id: string;
  claim_id: string;
  task_id: string;
  label: string;
  created_at: string;
  /** further labels that could settle the task; 0 means consensus can be decided now */
  labels_needed: number;
}

interface LabelStateRow {
  claim_status: string;
  expired: boolean;
  task_id: string;
  task_status: string;
  options: string[];
  /** set when the label was recorded */
  created_at: Date | null;
  labels_needed: number | null;
}

interface LabelRequest {
  labelId: string;
  labelerId: string;
  claimId: string;
  value: string;
}

/**
 * The label statement, under the task's lock with a fresh snapshot: reads the claim and the task and, only
 * if the label is acceptable, inserts it, marks the claim labeled and updates the task's counts and
 * `labels_needed` = min(max_labels − n, threshold − top count) (never negative; n labels and the top count
 * including this one). It always returns the states it read, from which a refusal is explained; a refused
 * label writes nothing. A label's `created_at` is the time it is recorded (under the lock, not the
 * transaction's start), so a task's labels in `created_at` order are in the order they were recorded.
 */
function labelStatement({ labelId, labelerId, claimId, value }: LabelRequest): Prisma.Sql {
  return Prisma.sql`
      WITH state AS (
        SELECT c.status::text AS claim_status, (c.status = 'expired' OR c.expires_at <= now()) AS expired,
          t.id AS task_id, t.customer_id, t.status::text AS task_status, t.options, t.label_counts,
          t.labels_collected, t.max_labels, t.consensus_threshold
        FROM claims c JOIN tasks t ON t.id = c.task_id
        WHERE c.id = ${claimId} AND c.labeler_id = ${labelerId}
      ),
      accepted AS (
        SELECT s.*, n.counts
        FROM state s
        CROSS JOIN LATERAL (
          SELECT s.label_counts || jsonb_build_object(${value}::text, COALESCE((s.label_counts ->> ${value}::text)::int, 0) + 1) AS counts
        ) n
        WHERE s.claim_status <> 'labeled' AND s.task_status IN ('pending', 'labeling') AND NOT s.expired
          AND ${value}::text = ANY(s.options)
      ),
      decided AS (
        SELECT a.*, GREATEST(0, LEAST(a.max_labels - x.n, a.consensus_threshold - x.top))::int AS needed
        FROM accepted a
        CROSS JOIN LATERAL (SELECT sum(v::int) AS n, max(v::int) AS top FROM jsonb_each_text(a.counts) AS e(k, v)) x
      ),
      label AS (
        INSERT INTO labels (id, task_id, customer_id, labeler_id, claim_id, value, created_at)
        SELECT ${labelId}, d.task_id, d.customer_id, ${labelerId}, ${claimId}, ${value}::text, clock_timestamp() FROM decided d
        RETURNING created_at
      ),
      claim AS (
        UPDATE claims SET status = 'labeled'::"ClaimStatus" WHERE id = ${claimId} AND EXISTS (SELECT 1 FROM decided)
      ),
      task AS (
        UPDATE tasks t SET status = 'labeling'::"TaskStatus", labels_collected = t.labels_collected + 1,
          label_counts = d.counts, labels_needed = d.needed, last_label_id = ${labelId}, last_label_at = l.created_at,
          updated_at = now()
        FROM decided d, label l
        WHERE t.id = d.task_id
      )
      SELECT s.claim_status, s.expired, s.task_id, s.task_status, s.options, l.created_at, d.needed AS labels_needed
      FROM state s LEFT JOIN decided d ON true LEFT JOIN label l ON true`;
}

/**
 * Quota units owed by the batch's recorded labels, per customer (DESIGN §6): a label is charged when its
 * task's labels before it were already as many as the task's reservation. For a task that got k of the
 * batch's labels, now at n labels with reservation r, that is max(0, n − max(r, n − k)).
 */
function batchCharges(labelIds: string[]): Prisma.Sql {
  return Prisma.sql`
    SELECT b.customer_id, sum(GREATEST(0, t.labels_collected - GREATEST(t.quota_reserved, t.labels_collected - b.k)))::int AS units
    FROM (SELECT l.task_id, l.customer_id, count(*)::int AS k FROM labels l WHERE l.id = ANY(${labelIds}::text[])
          GROUP BY l.task_id, l.customer_id) b
    JOIN tasks t ON t.id = b.task_id
    GROUP BY b.customer_id`;
}

/**
 * Labels of concurrent requests, ONE transaction per batch (group commit): (1) lock the tasks of all the
 * batch's claims, in id order (no deadlock with other batches); (2) each label's statement in turn, in
 * request order (each sees the labels before it: exactly the checks and counts of labels recorded one
 * after the other); (3) lock the customers owing quota, in id order; (4) charge them. A claim appears at
 * most once per batch (a second label on it waits for the next batch, and gets its 409 there).
 */
async function labelBatch(pool: Pool, requests: LabelRequest[]): Promise<(LabelStateRow | undefined)[]> {
  const labelIds = requests.map((r) => r.labelId);
  const charges = batchCharges(labelIds);
  const rows = await transactionRows<object[]>(pool, [
    Prisma.sql`
      SELECT t.id FROM tasks t
      WHERE t.id IN (SELECT c.task_id FROM claims c
                     JOIN unnest(${requests.map((r) => r.claimId)}::text[], ${requests.map((r) => r.labelerId)}::text[]) AS r(claim_id, labeler_id)
                       ON c.id = r.claim_id AND c.labeler_id = r.labeler_id)
      ORDER BY t.id
      FOR UPDATE OF t`,
    ...requests.map(labelStatement),
    Prisma.sql`
      SELECT c.id FROM customers c
      WHERE c.id IN (SELECT ch.customer_id FROM (${charges}) ch WHERE ch.units > 0)
      ORDER BY c.id
      FOR UPDATE`,
    Prisma.sql`
      UPDATE customers c SET quota_used = c.quota_used + ch.units
      FROM (${charges}) ch
      WHERE c.id = ch.customer_id AND ch.units > 0`,
  ]);
  return requests.map((_, i) => rows[1 + i]?.[0] as LabelStateRow | undefined);
}

const labelBatcherOf = perOwner(
  (pool: Pool) => new Batcher<LabelRequest, LabelStateRow | undefined>((requests) => labelBatch(pool, requests), { key: (r) => r.claimId }),
);

/**
 * Records a label on a claim: one label per claim, the value one of the task's options. Charges one
 * quota unit when the task's reservation is already used (DESIGN §6; an in-flight task always finishes,
 * even past the quota). The caller enqueues consensus. Concurrent labels of this process share one
 * transaction (`labelBatch`); a refused label writes nothing.
 * @throws ApiError claimNotFound | claimAlreadyLabeled | claimExpired | taskNotOpen | validation
 */
export async function recordLabel(pool: Pool, labelerId: string, claimId: string, value: string): Promise<RecordedLabel> {
  // Postgres text holds no NUL, so no option does: such a value is refused before it reaches SQL
  if (value.includes("\0")) throw new ApiError("validation", [{ path: "label", message: "must be one of the task's options" }]);
  const labelId = newId("label");
  const state = await labelBatcherOf(pool).call({ labelId, labelerId, claimId, value });
  if (!state) throw new ApiError("claimNotFound");
  if (state.claim_status === "labeled") throw new ApiError("claimAlreadyLabeled");
  if (state.task_status !== "pending" && state.task_status !== "labeling") {
    throw new ApiError("taskNotOpen", undefined, { status: state.task_status });
  }
  if (state.expired) throw new ApiError("claimExpired");
  if (!state.options.includes(value)) {
    throw new ApiError("validation", [{ path: "label", message: `must be one of the task's options: ${state.options.join(", ")}` }]);
  }
  if (!state.created_at || state.labels_needed === null) throw new Error(`label on claim ${claimId} was accepted but not recorded`);
  return {
    label_id: labelId,
    claim_id: claimId,
    task_id: state.task_id,
    label: value,
    created_at: state.created_at.toISOString(),
    labels_needed: state.labels_needed,
  };
}
