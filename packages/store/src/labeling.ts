/**
 * Claims and labels (contract §labelers, §quality): the labelers' hot path.
 *
 * A task is claimable by a labeler when it is open (and, for a manifest job's task, its job is `labeling`:
 * a job still ingesting has pending tasks nobody may claim yet), the labeler has not labeled it nor holds a
 * live claim on it, the labeler is not excluded from its label space (gold accuracy, contract §quality), and its
 * live claims are fewer than `claim_cap` (the fewest further labels that could decide it, an answer of the
 * decision rule; any number for a gold task). A gold task is claimable only while its reservation lasts or
 * its customer has quota left (it never finishes, so it must not run past the quota). Expired claims stop
 * counting by themselves (`expires_at`), which returns their slot; a released claim (skip) returns it at once.
 * While live claims hold every slot, the task's `slots_full_until` says until when (the earliest expiry among
 * them): the claim that fills the last slot sets it, a label recomputes it with the task's new cap, a release
 * clears it. Generic claims pass such a task on that column alone (`SLOTS_MAY_BE_FREE`); it is never the check.
 *
 * Gold tasks are served mixed among the others: a generic claim finds the oldest claimable task (never a
 * gold one), then, with probability `gold_rate` of its customer (default 0.1), the oldest gold task of the
 * same label space the labeler has not answered, if any, instead. Any task, gold included, may be claimed
 * by id. Qualification (contract §qualification, docs/decisions/0276): a labeler in training in the candidate's
 * space (its customer sets `quality.qualification`, and its row there has no `qualified_at`) always gets the gold
 * candidate, and no non-gold task of that space passes the re-check; a training label decides the exam at its
 * last answer (`examVerdict`): `qualified_at`, or exclusion with `excluded_reason = 'failed_qualification'`, which
 * no later rule lifts.
 *
 * A label is recorded with the decision of the rule (decision.ts) taken in the same transaction, under the
 * task's label space model (spaces.ts: the space row and the rows of the task's labelers): the label that
 * decides a task moves it to `settling` with its label, confidence, posterior and resolution, and returns
 * the unused part of its quota reservation; the settlement later keeps exactly that. A label on a gold task
 * decides nothing: it updates the labeler's gold record in the space (answers, correct) and, when the
 * customer set `min_labeler_accuracy`, excludes the labeler from the label that makes the exclusion rule
 * hold (@labelgate/quality `isExcluded`).
 *
 * Concurrency: a task's claims and labels are only written under the task's row lock (`FOR UPDATE`),
 * taken first in the transaction (the same order as cancellation and settlement), and every check reads in
 * a later statement than the lock: under READ COMMITTED each statement takes a fresh snapshot, so it sees
 * every claim and label committed by the lock's previous holders. Concurrent requests of a process share
 * ONE transaction (group commit, core's `Batcher`): the generic claim attempts of a batch in turn, or the
 * labels of a batch in turn, each seeing the writes of those before it, so a batch checks and counts
 * exactly as its requests one after the other would.
 */

import { type AnswerBody, type AnyLabelSpec, OPEN_TASK_STATUSES, type Prelabel, storedLabelSpec } from "@labelgate/api";
import { Batcher, newId } from "@labelgate/core";
import { isExcluded, type KindDecision, type LabelVote, type StoredLabelerRow, taskKindOf } from "@labelgate/quality";
import type { FollowUps } from "@labelgate/queue";
import type { Db } from "./database";
import { StoreError } from "./errors";
import { statusIn } from "./fragments";
import { Prisma } from "./generated/client";
import { assertTransition, type TaskStatus } from "./lifecycle";
import { policyOf } from "./policy";
import { chargeSql } from "./quota";
import { exclusionSettingsOf, qualitySettingsOf } from "./settings";
import { queryRows, transactionRows, withTransaction } from "./sql";
import type { TaskPolicyColumns } from "./tasks";

const OPEN = statusIn("t.status", OPEN_TASK_STATUSES);

export interface ClaimResult {
  claim_id: string;
  task_id: string;
  /** the task's `type` (e.g. `image_classification`): what kind of item the labeler is shown */
  task_type: string;
  data_url: string;
  label_spec: AnyLabelSpec;
  /** a text_span task's text */
  data_text?: string;
  /** a pairwise task's item b: its URL or its text */
  data_url_b?: string;
  data_text_b?: string;
  expires_at: string;
  /** the task's label space, and the current version of its instructions (null while it has none) */
  label_space: string;
  instructions_version: number | null;
  /** the task's pre-label, shown to people when its label spec said `show_prelabel` (contract §prelabels) */
  prelabel?: Prelabel;
  /** the manifest job the task came from (its stored storage credentials sign `view_url`s), or null; not on the wire */
  job_id: string | null;
}

/** How many candidates a generic claim tries before answering that nothing is open. */
const CLAIM_ATTEMPTS = 8;

/** The default share of a labeler's claims served from unanswered gold tasks (contract §quality). */
export const DEFAULT_GOLD_RATE = 0.1;

/**
 * SQL condition: task `t` is claimable by `labelerId`, not counting the claim `exceptClaimId` (the
 * tentative claim of the current transaction, which must not count against itself).
 *
 * The two NOT EXISTS end in `OFFSET 0`, which keeps Postgres from turning them into anti-joins (a subquery
 * with an OFFSET is not pulled up). As anti-joins they are estimated from the tables' statistics, and once
 * `tasks` and `labeler_models` are analyzed (autovacuum does it in any real deployment) the estimate is that
 * almost no open task passes: no labeler is excluded, so `excluded_at IS NOT NULL` matches no row, and the
 * anti-join on the one label space looks like it removes every task. With one row expected, the planner
 * stops walking the (status, created_at) index in order and instead checks every open task and sorts them:
 * 50 ms per claim at 16,000 pending tasks instead of 0.3 ms, growing with the backlog. As filters the checks
 * get Postgres' fixed estimate for a subquery (half the rows), and the walk stops at the first claimable task.
 * test/claim-plan.test.ts holds this with analyzed tables.
 */
function claimable(labelerId: string, exceptClaimId: string): Prisma.Sql {
  return Prisma.sql`${OPEN}
    AND (t.job_id IS NULL OR EXISTS (SELECT 1 FROM jobs j WHERE j.id = t.job_id AND j.status = 'labeling'))
    AND NOT t.item_pending
    AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.task_id = t.id AND c.labeler_id = ${labelerId} AND c.id <> ${exceptClaimId}
                    AND (c.status = 'labeled' OR (c.status = 'active' AND c.expires_at > now())) OFFSET 0)
    AND NOT EXISTS (SELECT 1 FROM labeler_models m WHERE m.label_space_id = t.label_space_id AND m.labeler_id = ${labelerId}
                    AND m.excluded_at IS NOT NULL OFFSET 0)
    AND (t.gold_label IS NULL OR t.labels_collected < t.quota_reserved
         OR EXISTS (SELECT 1 FROM customers q WHERE q.id = t.customer_id AND q.quota_used < q.label_quota))
    AND (SELECT count(*) FROM claims c WHERE c.task_id = t.id AND c.id <> ${exceptClaimId}
           AND c.status = 'active' AND c.expires_at > now()) < t.claim_cap`;
}

/**
 * SQL condition on task `t` of a generic claim's walk: its slots may not all be held. `slots_full_until`
 * (set while live claims hold every slot, to the earliest expiry among them) lets the walk pass a full task
 * on its own row instead of three index lookups in `claimable`. Only a hint: `claimable` stays the check.
 */
const SLOTS_MAY_BE_FREE = Prisma.sql`(t.slots_full_until IS NULL OR t.slots_full_until <= now())`;

/**
 * SQL value of a task's `slots_full_until` after a write under its row lock: when its live claims (those in
 * `leaving` excepted: claims this statement labels) number at least `cap`, the earliest expiry among them;
 * otherwise null. The statement's snapshot sees the transaction's earlier statements (the claim just made).
 */
function slotsFullUntil(taskId: Prisma.Sql, cap: Prisma.Sql, leaving: string[]): Prisma.Sql {
  return Prisma.sql`(
    SELECT CASE WHEN count(*) >= ${cap} THEN min(c.expires_at) END FROM claims c
    WHERE c.task_id = ${taskId} AND c.status = 'active' AND c.expires_at > now() AND c.id <> ALL(${leaving}::text[]))`;
}

/**
 * SQL condition: `labelerId` is in training in label space `space` (contract §qualification): the quality
 * settings `quality` (a jsonb value) set a qualification and the labeler has not passed its exam there. A
 * CASE, so a customer without qualification costs no lookup of the labeler's row.
 */
function inTraining(labelerId: string, quality: Prisma.Sql, space: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(CASE WHEN jsonb_typeof(${quality} -> 'qualification') = 'object'
    THEN NOT EXISTS (SELECT 1 FROM labeler_models m WHERE m.label_space_id = ${space} AND m.labeler_id = ${labelerId}
                     AND m.qualified_at IS NOT NULL)
    ELSE false END)`;
}

/**
 * Statement 1 of a claim: locks the task row and inserts a tentative claim on it. A named task is locked
 * waiting for its lock (whatever its state: the next statement decides); a generic claim takes the oldest
 * task that looks claimable in this statement's snapshot and is not locked by anyone (`SKIP LOCKED`), or,
 * at its customer's gold rate, a gold task of the same label space (see the module doc).
 * Returns the task id, or no row (named: no such task; generic: nothing to claim).
 * A generic claim looks for the oldest `pending` and the oldest `labeling` candidate separately (each walks
 * the (status, created_at) index and stops at its first match) and takes the older: with both statuses in
 * one scan, Postgres cannot use the index order and evaluates the claim checks on every open task, then
 * sorts (1.8 s per claim at 100,000 open tasks, 0.3 ms this way). The other candidate's row lock is held
 * until this short transaction ends; concurrent claims skip it. The gold candidate walks the space's gold
 * tasks (a partial index) in creation order; the random draw is made once per statement (a CTE). A labeler in
 * training in the candidate's space (contract §qualification) always gets the gold candidate; when there is
 * none, the regular candidate is claimed tentatively and fails the re-check (`confirmClaim`), and the next
 * attempt passes the space by (`skipSpaces`).
 * Exported for the plan test (test/claim-plan.test.ts).
 */
export function lockAndClaim(
  claimId: string,
  labelerId: string,
  taskId: string | undefined,
  skip: string[],
  ttlSeconds: number,
  idempotencyKey?: string,
  skipSpaces: string[] = [],
): Prisma.Sql {
  const target = taskId
    ? Prisma.sql`SELECT t.id FROM tasks t WHERE t.id = ${taskId} FOR UPDATE`
    : Prisma.sql`WITH ${Prisma.join(
        OPEN_TASK_STATUSES.map(
          (status) => Prisma.sql`${Prisma.raw(status)} AS (
            SELECT t.id, t.created_at, t.label_space_id, t.customer_id FROM tasks t
            WHERE t.status = ${Prisma.raw(`'${status}'`)} AND t.claim_cap > 0 AND t.gold_label IS NULL AND t.id <> ALL(${skip}::text[])
              ${skipSpaces.length > 0 ? Prisma.sql`AND t.label_space_id <> ALL(${skipSpaces}::text[])` : Prisma.empty} AND ${SLOTS_MAY_BE_FREE} AND ${claimable(labelerId, claimId)}
            ORDER BY t.created_at
            LIMIT 1
            FOR UPDATE OF t SKIP LOCKED)`,
        ),
      )},
      regular AS (
        SELECT * FROM (${Prisma.join(
          OPEN_TASK_STATUSES.map((status) => Prisma.sql`SELECT * FROM ${Prisma.raw(status)}`),
          " UNION ALL ",
        )}) candidates ORDER BY created_at, id LIMIT 1),
      quality AS MATERIALIZED (SELECT c.settings -> 'quality' AS q FROM customers c WHERE c.id = (SELECT customer_id FROM regular)),
      draw AS MATERIALIZED (
        SELECT ${inTraining(labelerId, Prisma.sql`(SELECT q FROM quality)`, Prisma.sql`(SELECT label_space_id FROM regular)`)}
               OR random() < COALESCE((SELECT (q ->> 'gold_rate')::float8 FROM quality), ${DEFAULT_GOLD_RATE}) AS gold),
      gold AS (
        SELECT t.id FROM tasks t
        WHERE (SELECT gold FROM draw) AND t.label_space_id = (SELECT label_space_id FROM regular) AND t.gold_label IS NOT NULL
          AND t.id <> ALL(${skip}::text[]) AND ${SLOTS_MAY_BE_FREE} AND ${claimable(labelerId, claimId)}
        ORDER BY t.created_at
        LIMIT 1
        FOR UPDATE OF t SKIP LOCKED)
      SELECT id FROM gold
      UNION ALL
      SELECT id FROM regular WHERE NOT EXISTS (SELECT 1 FROM gold)`;
  if (idempotencyKey === undefined) {
    return Prisma.sql`
      WITH target AS (${target})
      INSERT INTO claims (id, task_id, labeler_id, status, expires_at)
      SELECT ${claimId}, target.id, ${labelerId}, 'active'::"ClaimStatus", now() + make_interval(secs => ${ttlSeconds})
      FROM target
      RETURNING task_id`;
  }
  // a keyed claim: nothing is inserted when the labeler's active claim of this key exists (or is being
  // committed by a concurrent request: the insert waits for it), and the caller then returns that claim
  return Prisma.sql`
    WITH target AS (${target})
    INSERT INTO claims (id, task_id, labeler_id, status, expires_at, idempotency_key)
    SELECT ${claimId}, target.id, ${labelerId}, 'active'::"ClaimStatus", now() + make_interval(secs => ${ttlSeconds}), ${idempotencyKey}
    FROM target
    ON CONFLICT (labeler_id, idempotency_key) WHERE idempotency_key IS NOT NULL AND status = 'active' DO NOTHING
    RETURNING task_id`;
}

/** SQL value: the current instructions version of task `t`'s label space (a primary-key lookup), or null. */
const INSTRUCTIONS_VERSION = Prisma.sql`(SELECT s.instructions_version FROM label_spaces s WHERE s.id = t.label_space_id)`;

/** The columns of a claim as `ClaimResult` needs them, for a claim `c` joined with its task `t`. */
const CLAIM_COLUMNS = Prisma.sql`c.id AS claim_id, c.task_id, c.expires_at, t.task_type, t.data_url, t.job_id, t.question, t.options,
  t.label_spec, t.data_text, t.data_url_b, t.data_text_b, t.label_space_id, ${INSTRUCTIONS_VERSION} AS instructions_version,
  CASE WHEN t.show_prelabel THEN t.prelabel END AS prelabel`;

interface StoredClaimRow {
  claim_id: string;
  task_id: string;
  expires_at: Date;
  task_type: string;
  data_url: string;
  job_id: string | null;
  label_spec: AnyLabelSpec | null;
  data_text: string | null;
  data_url_b: string | null;
  data_text_b: string | null;
  question: string;
  options: string[];
  label_space_id: string;
  instructions_version: number | null;
  prelabel: Prelabel | null;
}

function claimResultOf(row: StoredClaimRow): ClaimResult {
  return {
    claim_id: row.claim_id,
    task_id: row.task_id,
    task_type: row.task_type,
    data_url: row.data_url,
    label_spec: storedLabelSpec({ labelSpec: row.label_spec, question: row.question, options: row.options }),
    ...(row.data_text !== null ? { data_text: row.data_text } : {}),
    ...(row.data_url_b !== null ? { data_url_b: row.data_url_b } : {}),
    ...(row.data_text_b !== null ? { data_text_b: row.data_text_b } : {}),
    expires_at: row.expires_at.toISOString(),
    label_space: row.label_space_id,
    instructions_version: row.instructions_version,
    ...(row.prelabel ? { prelabel: row.prelabel } : {}),
    job_id: row.job_id,
  };
}

/**
 * Statement 2 of a claim, under the task lock with a fresh snapshot: re-checks that the task was claimable
 * without the tentative claim, withdraws (deletes) the claim if it was not, and returns the task's data. A
 * withdrawn claim was never visible to any other transaction. A non-gold task of a space where the labeler is in
 * training (contract §qualification) is not claimable by it (`trained` false). A kept claim that fills the task's last slot
 * sets `slots_full_until`; the task row is written only when that value changes.
 */
function confirmClaim(claimId: string, labelerId: string): Prisma.Sql {
  return Prisma.sql`
    WITH checked AS (
      SELECT m.task_id, m.expires_at, t.task_type, t.data_url, t.job_id, t.question, t.options, t.label_spec, t.data_text,
             t.data_url_b, t.data_text_b, t.label_space_id, ${INSTRUCTIONS_VERSION} AS instructions_version, CASE WHEN t.show_prelabel THEN t.prelabel END AS prelabel,
             (t.gold_label IS NOT NULL OR NOT ${inTraining(
               labelerId,
               Prisma.sql`(SELECT cu.settings -> 'quality' FROM customers cu WHERE cu.id = t.customer_id)`,
               Prisma.sql`t.label_space_id`,
             )}) AS trained,
             (${claimable(labelerId, claimId)}) AS ok0,
             t.slots_full_until AS slots_was, ${slotsFullUntil(Prisma.sql`t.id`, Prisma.sql`t.claim_cap`, [])} AS slots_until
      FROM claims m JOIN tasks t ON t.id = m.task_id
      WHERE m.id = ${claimId}
    ),
    withdrawn AS (DELETE FROM claims WHERE id = ${claimId} AND EXISTS (SELECT 1 FROM checked WHERE NOT (ok0 AND trained))),
    filled AS (
      UPDATE tasks t SET slots_full_until = c.slots_until
      FROM checked c WHERE t.id = c.task_id AND c.ok0 AND c.trained AND c.slots_until IS DISTINCT FROM c.slots_was
    )
    SELECT task_id, expires_at, task_type, data_url, job_id, question, options, label_spec, data_text, data_url_b, data_text_b,
           label_space_id, instructions_version, prelabel, ok0 AND trained AS ok, trained FROM checked`;
}

/** A row of `confirmClaim`: the claim's task data, and whether the claim was kept. */
type ConfirmedRow = Omit<StoredClaimRow, "claim_id"> & { ok: boolean; trained: boolean };

interface ClaimAttempt {
  claimId: string;
  labelerId: string;
  /** candidates that failed an earlier attempt's re-check */
  skip: string[];
  /** label spaces where the labeler is in training and no gold task was free (contract §qualification) */
  skipSpaces: string[];
  ttlSeconds: number;
  /** the request's `Idempotency-Key`, stored on the claim */
  idempotencyKey?: string;
}

interface ClaimAttemptResult {
  /** the task the attempt locked and claimed tentatively; undefined when nothing was claimable */
  candidate?: string;
  /** the re-check under the lock (and the task's data) */
  confirmed?: ConfirmedRow;
}

// --- labels -------------------------------------------------------------------------------------------

/** A label as recorded (the gateway's views shape its answer). */
export interface LabelRecord {
  id: string;
  claimId: string;
  taskId: string;
  /** the option chosen; a reserved type's canonical answer as canonical JSON */
  value: string;
  /** a reserved type's answer as recorded (its parts in canonical order) */
  answer?: AnswerBody;
  createdAt: Date;
  /** 0 exactly when this label decided the task (it is now `settling`); otherwise the most labels the task may still take (≥ 1) */
  labelsNeeded: number;
  /** a qualification training answer's feedback (contract §qualification); absent on any other label */
  training?: TrainingFeedback;
}

/** The feedback of a training answer: the right answer, the gold task's explanation and the exam's state after it. */
export interface TrainingFeedback {
  correct: boolean;
  /** the gold answer as stored (an option, or a reserved type's canonical JSON) */
  goldValue: string;
  explanation: string | null;
  goldAnswers: number;
  goldCorrect: number;
  goldTasks: number;
  minAccuracy: number;
  /** `training`: more exam questions follow; `qualified`: passed; `failed_qualification`: excluded from the space */
  status: "training" | "qualified" | "failed_qualification";
}

/** The outcome of one label request: recorded (and whether it decided its task), or refused. */
export type LabelOutcome = { kind: "recorded"; label: LabelRecord; decided: boolean } | { kind: "refused"; error: StoreError };

interface LabelRequest {
  labelId: string;
  labelerId: string;
  claimId: string;
  /** the answer body as sent (its shape checked by the gateway); its meaning is checked against the task here */
  body: AnswerBody;
  /** the stored value, once the answer is accepted, and a reserved type's canonical answer */
  value?: string;
  answer?: AnswerBody;
}

/** A task's state as the label transaction reads it under its lock. */
interface LabelingTask extends TaskPolicyColumns {
  id: string;
  customer_id: string;
  status: TaskStatus;
  task_type: string;
  question: string;
  options: string[];
  /** a reserved type's label_spec (null: single choice, `{question, options}`) */
  label_spec: AnyLabelSpec | null;
  /** a text_span task's text */
  data_text: string | null;
  quota_reserved: number;
  /** options rejected by reviews, and the labels the task had when a review last reopened it (docs/decisions/0260) */
  excluded_options: string[];
  labels_before: number;
  /** the customer's `settings` (its quality part applies: exclusion) */
  settings: unknown;
  /** the task's labels in recording order; `model`: a model labeler's (a pre-label, contract §prelabels) */
  votes: (LabelVote & { model?: boolean })[];
  /** a gold task's explanation (contract §qualification) */
  gold_explanation: string | null;
  /** a gold task: the open gold tasks of its space (the longest exam the space can give); null otherwise */
  gold_open: number | null;
}

interface ClaimState {
  claim_id: string;
  labeler_id: string;
  task_id: string;
  status: string;
  expired: boolean;
}

/** A labeler's row in a label space: its fitted parameters and live gold record. */
interface LabelerModelRow {
  label_space_id: string;
  labeler_id: string;
  params: unknown;
  gold_answers: number;
  gold_correct: number;
  excluded: boolean;
  /** passed the space's qualification exam; and why it is excluded (null: min_labeler_accuracy) */
  qualified: boolean;
  excluded_reason: string | null;
}

interface LabelState {
  claims: ClaimState[];
  tasks: LabelingTask[];
  /** the label spaces of the tasks, with their stored model (null before the first fit) */
  spaces: { id: string; model: unknown }[];
  /** the rows of the tasks' labelers (and claimers) in the tasks' spaces */
  models: LabelerModelRow[];
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
  /** a reserved type's consensus at the decision */
  consensus: unknown;
}

/** A labeler's gold record in a space after the batch's gold labels, written in round trip 2. */
interface GoldUpdate {
  label_space_id: string;
  labeler_id: string;
  gold_answers: number;
  gold_correct: number;
  excluded: boolean;
  qualified: boolean;
  excluded_reason: string | null;
}

/** `unnest` of the batch's (claim, labeler) pairs as the relation `r`. */
function askedSql(requests: LabelRequest[]): Prisma.Sql {
  return Prisma.sql`unnest(${requests.map((r) => r.claimId)}::text[], ${requests.map((r) => r.labelerId)}::text[]) AS r(claim_id, labeler_id)`;
}

/**
 * Round trip 1 of a label batch: BEGIN, lock the tasks of the batch's claims in id order (no deadlock with
 * other batches); create the missing rows of the labelers answering gold tasks in those tasks' spaces, then
 * lock those rows in key order (their gold records are read and rewritten here); then (a later statement:
 * a fresh snapshot) read each claim, each task with its labels in recording order and its customer's
 * settings, the tasks' label space models, and the rows of every labeler concerned in those spaces.
 */
function labelStateSql(requests: LabelRequest[]): [Prisma.Sql, Prisma.Sql, Prisma.Sql, Prisma.Sql] {
  const asked = askedSql(requests);
  const goldPairs = Prisma.sql`
    SELECT DISTINCT t.label_space_id, c.labeler_id
    FROM claims c JOIN ${asked} ON c.id = r.claim_id AND c.labeler_id = r.labeler_id JOIN tasks t ON t.id = c.task_id
    WHERE t.gold_label IS NOT NULL`;
  return [
    Prisma.sql`
      SELECT t.id FROM tasks t
      WHERE t.id IN (SELECT c.task_id FROM claims c JOIN ${asked} ON c.id = r.claim_id AND c.labeler_id = r.labeler_id)
      ORDER BY t.id
      FOR UPDATE OF t`,
    Prisma.sql`
      INSERT INTO labeler_models (label_space_id, labeler_id)
      SELECT g.label_space_id, g.labeler_id FROM (${goldPairs}) g ORDER BY 1, 2
      ON CONFLICT (label_space_id, labeler_id) DO NOTHING`,
    Prisma.sql`
      SELECT 1 FROM labeler_models m
      WHERE (m.label_space_id, m.labeler_id) IN (${goldPairs})
      ORDER BY m.label_space_id, m.labeler_id
      FOR NO KEY UPDATE OF m`,
    Prisma.sql`
      WITH cl AS (
        SELECT c.id AS claim_id, c.labeler_id, c.task_id, c.status::text AS status, (c.status = 'expired' OR c.expires_at <= now()) AS expired
        FROM claims c JOIN ${asked} ON c.id = r.claim_id AND c.labeler_id = r.labeler_id
      ),
      tk AS (
        SELECT t.id, t.customer_id, t.status::text AS status, t.task_type, t.question, t.options, t.label_spec, t.data_text,
               t.consensus_threshold, t.max_labels, t.confidence_target, t.min_labels, t.min_gain, t.gold_label, t.label_space_id,
               t.quota_reserved, t.excluded_options, t.labels_before, cu.settings, t.gold_explanation,
               CASE WHEN t.gold_label IS NOT NULL THEN (
                 SELECT count(*) FROM tasks g WHERE g.label_space_id = t.label_space_id AND g.gold_label IS NOT NULL AND ${statusIn("g.status", OPEN_TASK_STATUSES)})
               END AS gold_open
        FROM tasks t JOIN customers cu ON cu.id = t.customer_id WHERE t.id IN (SELECT task_id FROM cl)
      ),
      lb AS (
        SELECT l.task_id, l.labeler_id, l.value, l.created_at, l.id,
               EXISTS (SELECT 1 FROM labelers lr WHERE lr.id = l.labeler_id AND lr.model IS NOT NULL) AS model
        FROM labels l WHERE l.task_id IN (SELECT id FROM tk)),
      pairs AS (
        SELECT tk.label_space_id, lb.labeler_id FROM lb JOIN tk ON tk.id = lb.task_id
        UNION SELECT tk.label_space_id, cl.labeler_id FROM cl JOIN tk ON tk.id = cl.task_id
      )
      SELECT
        COALESCE((SELECT json_agg(row_to_json(cl)) FROM cl), '[]'::json) AS claims,
        COALESCE((SELECT json_agg(json_build_object(
            'id', tk.id, 'customer_id', tk.customer_id, 'status', tk.status, 'task_type', tk.task_type, 'question', tk.question,
            'options', tk.options, 'label_spec', tk.label_spec, 'data_text', tk.data_text,
            'consensus_threshold', tk.consensus_threshold, 'max_labels', tk.max_labels, 'confidence_target', tk.confidence_target,
            'min_labels', tk.min_labels, 'min_gain', tk.min_gain, 'gold_label', tk.gold_label, 'label_space_id', tk.label_space_id,
            'quota_reserved', tk.quota_reserved, 'excluded_options', tk.excluded_options, 'labels_before', tk.labels_before,
            'settings', tk.settings, 'gold_explanation', tk.gold_explanation, 'gold_open', tk.gold_open,
            'votes', COALESCE((SELECT json_agg(json_build_object('labelerId', lb.labeler_id, 'value', lb.value, 'model', lb.model) ORDER BY lb.created_at, lb.id)
                               FROM lb WHERE lb.task_id = tk.id), '[]'::json)
          )) FROM tk), '[]'::json) AS tasks,
        COALESCE((SELECT json_agg(json_build_object('id', s.id, 'model', s.model))
                  FROM label_spaces s WHERE s.id IN (SELECT label_space_id FROM tk)), '[]'::json) AS spaces,
        COALESCE((SELECT json_agg(json_build_object(
            'label_space_id', m.label_space_id, 'labeler_id', m.labeler_id, 'params', m.params, 'gold_answers', m.gold_answers,
            'gold_correct', m.gold_correct, 'excluded', m.excluded_at IS NOT NULL,
            'qualified', m.qualified_at IS NOT NULL, 'excluded_reason', m.excluded_reason))
                  FROM labeler_models m WHERE (m.label_space_id, m.labeler_id) IN (SELECT label_space_id, labeler_id FROM pairs)), '[]'::json) AS models`,
  ];
}

/**
 * Round trip 2 of a label batch: the accepted labels (each `created_at` the time it is written, so a task's
 * labels in `created_at` order are in recording order), their claims marked labeled, each task's new state,
 * the gold records of the labelers who answered gold tasks, then the quota the batch owes or returns: the
 * customers locked in id order, then charged. COMMIT travels with it.
 */
function labelWriteSql(
  labels: LabelRequest[],
  taskOf: Map<string, LabelingTask>,
  claims: Map<string, ClaimState>,
  tasks: TaskUpdate[],
  gold: GoldUpdate[],
) {
  const rows = labels.map((l) => {
    const task = taskOf.get((claims.get(l.claimId) as ClaimState).task_id) as LabelingTask;
    return {
      id: l.labelId,
      task_id: task.id,
      customer_id: task.customer_id,
      label_space_id: task.label_space_id,
      labeler_id: l.labelerId,
      claim_id: l.claimId,
      value: l.value as string,
    };
  });
  return Prisma.sql`
    WITH ins AS (
      INSERT INTO labels (id, task_id, customer_id, label_space_id, labeler_id, claim_id, value, created_at)
      SELECT r.id, r.task_id, r.customer_id, r.label_space_id, r.labeler_id, r.claim_id, r.value, clock_timestamp()
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS r(id text, task_id text, customer_id text, label_space_id text, labeler_id text, claim_id text, value text)
      RETURNING id, created_at
    ),
    claimed AS (
      UPDATE claims SET status = 'labeled'::"ClaimStatus" WHERE id = ANY(${labels.map((l) => l.claimId)}::text[])
    ),
    upd AS (
      UPDATE tasks t SET status = u.status::"TaskStatus", labels_collected = u.labels_collected, label_counts = u.label_counts,
        claim_cap = u.claim_cap, last_label_id = u.last_label_id, last_label_at = (SELECT created_at FROM ins WHERE ins.id = u.last_label_id),
        consensus_label = COALESCE(u.consensus_label, t.consensus_label), confidence = COALESCE(u.confidence, t.confidence),
        resolution = COALESCE(u.resolution::"Resolution", t.resolution), posterior = COALESCE(u.posterior, t.posterior),
        consensus = COALESCE(u.consensus, t.consensus), updated_at = now(),
        slots_full_until = CASE WHEN u.claim_cap > 0 THEN ${slotsFullUntil(
          Prisma.sql`t.id`,
          Prisma.sql`u.claim_cap`,
          labels.map((l) => l.claimId),
        )} END
      FROM jsonb_to_recordset(${JSON.stringify(tasks)}::jsonb)
        AS u(id text, status text, labels_collected int, label_counts jsonb, claim_cap int, last_label_id text,
             consensus_label text, confidence float8, resolution text, posterior jsonb, consensus jsonb)
      WHERE t.id = u.id
    ),
    gold AS (
      UPDATE labeler_models m SET gold_answers = g.gold_answers, gold_correct = g.gold_correct,
        excluded_at = CASE WHEN NOT g.excluded THEN NULL ELSE COALESCE(m.excluded_at, now()) END, excluded_reason = g.excluded_reason,
        qualified_at = CASE WHEN g.qualified THEN COALESCE(m.qualified_at, now()) ELSE m.qualified_at END
      FROM jsonb_to_recordset(${JSON.stringify(gold)}::jsonb)
        AS g(label_space_id text, labeler_id text, gold_answers int, gold_correct int, excluded boolean, qualified boolean, excluded_reason text)
      WHERE m.label_space_id = g.label_space_id AND m.labeler_id = g.labeler_id
    )
    SELECT id, created_at FROM ins`;
}

/** A task's label_spec: a reserved type's as stored, else single choice's question and options. */
function specOf(task: LabelingTask): AnyLabelSpec {
  return storedLabelSpec({ labelSpec: task.label_spec, question: task.question, options: task.options });
}

/**
 * The error of a label that cannot be recorded, from the states the transaction read (undefined: acceptable,
 * and `request.value` is then its stored value: task-kinds.ts `readAnswer`).
 */
function refusal(request: LabelRequest, claim: ClaimState | undefined, task: LabelingTask | undefined): StoreError | undefined {
  if (!claim || !task) return new StoreError("claimNotFound");
  if (claim.status === "labeled") return new StoreError("claimAlreadyLabeled");
  if (!(OPEN_TASK_STATUSES as readonly string[]).includes(task.status))
    return new StoreError("taskNotOpen", undefined, { status: task.status });
  if (claim.expired) return new StoreError("claimExpired");
  const read = taskKindOf(task.task_type).readAnswer(specOf(task), request.body, { text: task.data_text ?? undefined });
  if ("issues" in read)
    return new StoreError(
      "invalid",
      read.issues.map((i) => ({ path: i.path.join("."), message: i.message })),
    );
  if (task.votes.some((v) => v.labelerId === request.labelerId)) return new StoreError("claimAlreadyLabeled");
  request.value = read.value;
  request.answer = read.answer;
  return undefined;
}

/**
 * The qualification exam's verdict after a training answer (contract §qualification): undecided (`training`)
 * until the labeler has answered `gold_tasks` gold tasks, or every open gold task of the space when it has
 * fewer (`goldOpen`); then `qualified` when the Beta(1, 1) posterior mean of its gold accuracy,
 * (correct + 1) / (answers + 2), is at least `min_accuracy`, else `failed_qualification`.
 */
export function examVerdict(
  exam: { gold_tasks: number; min_accuracy: number },
  answers: number,
  correct: number,
  goldOpen: number,
): TrainingFeedback["status"] {
  if (answers < Math.min(exam.gold_tasks, Math.max(goldOpen, 1))) return "training";
  return (correct + 1) / (answers + 2) >= exam.min_accuracy ? "qualified" : "failed_qualification";
}

/** The label spaces' scoring models of a batch's state, by space id (a space never fitted: the prior). */
function scoringModels(state: LabelState): Map<string, unknown> {
  const taskOf = new Map(state.tasks.map((t) => [t.label_space_id, t]));
  const rows = new Map<string, StoredLabelerRow[]>();
  for (const m of state.models) {
    const list = rows.get(m.label_space_id);
    if (list) list.push(m);
    else rows.set(m.label_space_id, [m]);
  }
  return new Map(
    state.spaces.map((space) => {
      const task = taskOf.get(space.id) as LabelingTask;
      return [space.id, taskKindOf(task.task_type).scoringModel(specOf(task), space.model, rows.get(space.id) ?? [])];
    }),
  );
}

/**
 * The claims and labels of the store. Concurrent calls of this process share transactions (group commit);
 * the batchers are members of this object, one per store.
 */
export function labelingStore(db: Db) {
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
        lockAndClaim(a.claimId, a.labelerId, undefined, a.skip, a.ttlSeconds, a.idempotencyKey, a.skipSpaces),
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
      lockAndClaim(attempt.claimId, attempt.labelerId, taskId, [], attempt.ttlSeconds, attempt.idempotencyKey),
      confirmClaim(attempt.claimId, attempt.labelerId),
    ]);
    return { candidate: locked[0]?.task_id, confirmed: confirmed[0] };
  }

  /**
   * The labels of concurrent requests, ONE transaction in two round trips per batch (`withTransaction`):
   * (1) lock the batch's tasks (and the gold records concerned) and read their states and models; then, in
   * JS, each label in request order: refused (nothing written) or accepted, with the decision rule applied
   * to the task's labels so far (each sees the labels before it in the batch); (2) write the accepted
   * labels, their claims, the tasks' new states, the gold records and the quota owed or returned, and
   * COMMIT. A claim appears at most once per batch (a second label on it waits for the next batch, and gets
   * its 409 there).
   */
  const labelBatcher = new Batcher<LabelRequest, LabelOutcome>(
    (requests) =>
      withTransaction(pool, async (run) => {
        const [, , , stateRows] = await run<[object, object, object, LabelState]>(labelStateSql(requests));
        const state = stateRows[0] as LabelState;
        const claims = new Map(state.claims.map((c) => [c.claim_id, c]));
        const tasks = new Map(state.tasks.map((t) => [t.id, t]));
        const models = scoringModels(state);
        const goldRecords = new Map(state.models.map((m) => [`${m.label_space_id} ${m.labeler_id}`, m]));
        const goldUpdates = new Map<string, GoldUpdate>();
        const accepted: LabelRequest[] = [];
        const updates = new Map<string, TaskUpdate>();
        /** quota units per customer: + labels beyond reservations, − reservations a decision left unused */
        const charges = new Map<string, number>();
        const charge = (customerId: string, units: number) => {
          if (units !== 0) charges.set(customerId, (charges.get(customerId) ?? 0) + units);
        };
        const outcomes: (
          | LabelOutcome
          | { kind: "pending"; decision: KindDecision; taskId: string; answer?: AnswerBody; training?: TrainingFeedback }
        )[] = requests.map((request) => {
          const claim = claims.get(request.claimId);
          const task = claim ? tasks.get(claim.task_id) : undefined;
          const error = refusal(request, claim, task);
          if (error || !claim || !task) return { kind: "refused", error: error ?? new StoreError("claimNotFound") };
          if (!models.has(task.label_space_id)) throw new Error(`label space ${task.label_space_id} of task ${task.id} was not read`);
          const value = request.value as string;
          const kind = taskKindOf(task.task_type);
          // a pre-label (a model's vote, contract §prelabels) counts in the consensus but is no person's label:
          // max_labels and min_labels count people's labels, and the quota is charged for them only
          const machine = task.votes.filter((v) => v.model).length;
          const before = task.votes.length - machine;
          task.votes.push({ labelerId: request.labelerId, value });
          const people = before + 1;
          const decision = kind.decide(
            specOf(task),
            {
              // a task reopened by a review takes up to max_labels more labels, never on a rejected option
              policy: policyOf({
                ...task,
                max_labels: task.labels_before + task.max_labels + machine,
                min_labels: task.min_labels === null ? null : task.min_labels + machine,
              }),
              gold: task.gold_label !== null,
              excludedOptions: task.excluded_options,
            },
            task.votes,
            models.get(task.label_space_id),
            { text: task.data_text ?? undefined },
          );
          const next: TaskStatus = decision.done ? "settling" : "labeling";
          if (next !== task.status) assertTransition(task.status, next);
          task.status = next;
          claim.status = "labeled";
          if (before >= task.quota_reserved) charge(task.customer_id, 1);
          // a decision returns what the reservation holds beyond the labels it took
          if (decision.done) charge(task.customer_id, -Math.max(0, task.quota_reserved - people));
          let training: TrainingFeedback | undefined;
          if (task.gold_label !== null) {
            const key = `${task.label_space_id} ${request.labelerId}`;
            const record = goldRecords.get(key);
            if (!record) throw new Error(`the gold record of ${key} was not locked`);
            const quality = qualitySettingsOf(task.settings);
            const exam = quality.qualification ?? undefined;
            const inTraining = exam !== undefined && !record.qualified && !record.excluded;
            const correct = kind.goldCorrect(specOf(task), task.gold_label, value);
            record.gold_answers += 1;
            if (correct) record.gold_correct += 1;
            if (exam && inTraining) {
              const verdict = examVerdict(exam, record.gold_answers, record.gold_correct, task.gold_open ?? 0);
              if (verdict === "qualified") record.qualified = true;
              if (verdict === "failed_qualification") record.excluded_reason = "failed_qualification";
              training = {
                correct,
                goldValue: task.gold_label,
                explanation: task.gold_explanation,
                goldAnswers: record.gold_answers,
                goldCorrect: record.gold_correct,
                goldTasks: exam.gold_tasks,
                minAccuracy: exam.min_accuracy,
                status: verdict,
              };
            }
            // a failed exam excludes for good (docs/decisions/0276); min_labeler_accuracy as before otherwise
            const failed = record.excluded_reason === "failed_qualification";
            record.excluded =
              failed || isExcluded({ goldAnswers: record.gold_answers, goldCorrect: record.gold_correct }, exclusionSettingsOf(quality));
            goldUpdates.set(key, {
              label_space_id: task.label_space_id,
              labeler_id: request.labelerId,
              gold_answers: record.gold_answers,
              gold_correct: record.gold_correct,
              excluded: record.excluded,
              qualified: record.qualified,
              excluded_reason: failed ? "failed_qualification" : null,
            });
          }
          updates.set(task.id, {
            id: task.id,
            status: next,
            labels_collected: people,
            label_counts: decision.counts,
            claim_cap: decision.claimCap,
            last_label_id: request.labelId,
            consensus_label: decision.done ? decision.label : null,
            confidence: decision.done ? decision.confidence : null,
            resolution: decision.done ? decision.resolution : null,
            posterior: decision.done ? decision.posterior : null,
            consensus: decision.done ? (decision.consensus ?? null) : null,
          });
          accepted.push(request);
          return { kind: "pending", decision, taskId: task.id, ...(training ? { training } : {}) };
        });
        if (accepted.length === 0) return outcomes as LabelOutcome[];
        const statements = [labelWriteSql(accepted, tasks, claims, [...updates.values()], [...goldUpdates.values()])];
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
              id: request.labelId,
              claimId: request.claimId,
              taskId: o.taskId,
              value: request.value as string,
              ...(request.answer ? { answer: request.answer } : {}),
              createdAt: at,
              labelsNeeded: o.decision.labelsNeeded,
              ...(o.training ? { training: o.training } : {}),
            },
          };
        });
      }),
    { key: (r) => r.claimId },
  );

  /** The labeler's active claim made with `key` (unique, or none), and whether it is still live (not expired by time). */
  async function claimOfKey(labelerId: string, key: string): Promise<{ claim: ClaimResult; live: boolean } | undefined> {
    const rows = await queryRows<StoredClaimRow & { live: boolean }>(
      pool,
      Prisma.sql`
        SELECT ${CLAIM_COLUMNS}, c.expires_at > now() AS live
        FROM claims c JOIN tasks t ON t.id = c.task_id
        WHERE c.labeler_id = ${labelerId} AND c.idempotency_key = ${key} AND c.status = 'active'`,
    );
    const row = rows[0];
    return row ? { claim: claimResultOf(row), live: row.live } : undefined;
  }

  /** Marks a claim that expired by time `expired`: its key leaves the unique index and may claim again. */
  async function expireClaim(claimId: string): Promise<void> {
    await queryRows(
      pool,
      Prisma.sql`UPDATE claims SET status = 'expired'::"ClaimStatus" WHERE id = ${claimId} AND status = 'active' AND expires_at <= now()`,
    );
  }

  /** The labeler's live claim of a task (the oldest, should there be several), or undefined. */
  async function heldClaim(labelerId: string, taskId: string): Promise<ClaimResult | undefined> {
    const rows = await queryRows<StoredClaimRow>(
      pool,
      Prisma.sql`
        SELECT ${CLAIM_COLUMNS}
        FROM claims c JOIN tasks t ON t.id = c.task_id
        WHERE c.task_id = ${taskId} AND c.labeler_id = ${labelerId} AND c.status = 'active' AND c.expires_at > now()
        ORDER BY c.created_at, c.id
        LIMIT 1`,
    );
    const row = rows[0];
    return row ? claimResultOf(row) : undefined;
  }

  return {
    /**
     * Claims the oldest open task for a labeler, or the named one. Returns undefined when nothing is open
     * for this labeler (the route answers 204). Each attempt locks the task and inserts a tentative claim,
     * then re-checks under the lock with a fresh snapshot; generic attempts of concurrent requests share one
     * transaction, a named one has its own. A generic claim whose candidate fails the re-check tries the
     * next one, up to 8.
     *
     * Retry-safe (contract §labelers): with `idempotencyKey`, the labeler's live claim made with that key
     * is returned instead of a new one (found only when the insert stopped on it, so a first request costs
     * no extra statement; a claim of the key that expired by time is marked expired and the key claims
     * anew). Without one, a named task on which the labeler holds a live claim returns that claim; when that
     * claim expired between the re-check and this read, the task is tried once more. A live claim is neither
     * labeled, released nor expired.
     * @param ttlSeconds how long the claim holds its slot
     * @throws StoreError taskNotFound when `taskId` names no task; idempotencyMismatch when the key's live
     * claim is of another task than `taskId`.
     */
    async claim(
      labelerId: string,
      taskId: string | undefined,
      ttlSeconds: number,
      idempotencyKey?: string,
    ): Promise<ClaimResult | undefined> {
      const skipped: string[] = [];
      const skippedSpaces: string[] = [];
      let keyFreed = false;
      let heldExpired = false;
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const claimId = newId("claim");
        const request: ClaimAttempt = {
          claimId,
          labelerId,
          skip: [...skipped],
          skipSpaces: [...skippedSpaces],
          ttlSeconds,
          idempotencyKey,
        };
        const { candidate, confirmed: row } = taskId ? await claimNamed(request, taskId) : await claimBatcher.call(request);
        if (!candidate || !row) {
          if (idempotencyKey !== undefined) {
            // the insert may have stopped on the key's claim
            const keyed = await claimOfKey(labelerId, idempotencyKey);
            if (keyed?.live) {
              if (taskId !== undefined && keyed.claim.task_id !== taskId) throw new StoreError("idempotencyMismatch");
              return keyed.claim;
            }
            if (keyed && !keyFreed) {
              await expireClaim(keyed.claim.claim_id);
              keyFreed = true;
              continue;
            }
          }
          if (taskId) throw new StoreError("taskNotFound");
          return undefined;
        }
        if (row.ok) {
          return claimResultOf({ ...row, claim_id: claimId });
        }
        if (taskId) {
          const held = await heldClaim(labelerId, taskId);
          if (held) return held;
          // The re-check may have seen the labeler's own claim live an instant before it expired, and this read
          // after it: then the task is claimable again. One more attempt, and only one (a task that is full,
          // closed or already labeled fails the re-check every time).
          if (heldExpired) return undefined;
          heldExpired = true;
          continue;
        }
        if (!row.trained) skippedSpaces.push(row.label_space_id);
        else skipped.push(candidate);
      }
      return undefined;
    },

    /**
     * Why a generic claim found nothing for the labeler, when the reason is its own (contract §qualification):
     * `failed_qualification` when it failed the qualification exam of a label space that still has open
     * tasks, else undefined (nothing is open for it).
     */
    async idleReason(labelerId: string): Promise<"failed_qualification" | undefined> {
      const rows = await queryRows<{ failed: boolean }>(
        pool,
        Prisma.sql`
          SELECT EXISTS (
            SELECT 1 FROM labeler_models m
            WHERE m.labeler_id = ${labelerId} AND m.excluded_reason = 'failed_qualification'
              AND EXISTS (SELECT 1 FROM tasks t WHERE t.label_space_id = m.label_space_id AND t.gold_label IS NULL AND ${OPEN})
          ) AS failed`,
      );
      return rows[0]?.failed ? "failed_qualification" : undefined;
    },

    /**
     * Releases a labeler's unlabeled claim (skip): its slot returns at once. Releasing a claim again, or
     * one that expired, answers the same (idempotent).
     * @throws StoreError claimNotFound (no such claim of this labeler) | claimAlreadyLabeled
     */
    async release(labelerId: string, claimId: string): Promise<void> {
      const [, rows] = await transactionRows<[object, { status: string }]>(pool, [
        Prisma.sql`SELECT t.id FROM tasks t WHERE t.id = (SELECT task_id FROM claims WHERE id = ${claimId} AND labeler_id = ${labelerId}) FOR UPDATE`,
        Prisma.sql`
          WITH c AS (SELECT id, task_id, status::text AS status FROM claims WHERE id = ${claimId} AND labeler_id = ${labelerId}),
          released AS (UPDATE claims SET status = 'expired'::"ClaimStatus" WHERE id IN (SELECT id FROM c WHERE status = 'active')),
          freed AS (UPDATE tasks SET slots_full_until = NULL WHERE id IN (SELECT task_id FROM c WHERE status = 'active') AND slots_full_until IS NOT NULL)
          SELECT status FROM c`,
      ]);
      const claim = rows[0];
      if (!claim) throw new StoreError("claimNotFound");
      if (claim.status === "labeled") throw new StoreError("claimAlreadyLabeled");
    },

    /**
     * Records a label on a claim, with the decision of the rule taken in the same transaction: one label
     * per claim, `body` an answer of the task's type (an option of a single-choice task: `{label}`; contract §task-types for the others). Charges one quota unit when the task's reservation is
     * already used (contract §accounts; an in-flight task always finishes, even past the quota). `decided`: this
     * label decided the task (it is now `settling`); `followUps`: its settlement (`consensus`), for the caller
     * to dispatch once this returns.
     * @throws StoreError claimNotFound | claimAlreadyLabeled | claimExpired | taskNotOpen | invalid
     */
    async label(
      labelerId: string,
      claimId: string,
      body: AnswerBody,
    ): Promise<{ label: LabelRecord; decided: boolean; followUps: FollowUps }> {
      // Postgres text holds no NUL, so no option does: such a value is refused before it reaches SQL
      if ("label" in body && body.label.includes("\0"))
        throw new StoreError("invalid", [{ path: "label", message: "must be one of the task's options" }]);
      const outcome = await labelBatcher.call({ labelId: newId("label"), labelerId, claimId, body });
      if (outcome.kind === "refused") throw outcome.error;
      const { label, decided } = outcome;
      return { label, decided, followUps: { consensus: decided ? [{ taskId: label.taskId, labelId: label.id }] : [] } };
    },
  };
}

export type LabelingStore = ReturnType<typeof labelingStore>;
