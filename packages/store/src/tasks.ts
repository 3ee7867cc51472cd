/**
 * Tasks: submission (single and batch, group commit), reads, cancellation (contract §wire, §lifecycle, §accounts, §quality).
 * Quota is reserved in the same statement as the insert: `consensus_threshold` labels per task (never more
 * than `max_labels`). A new task's claim cap is the decision rule's answer for a task without labels, so
 * submission, manifest ingestion and the label transaction all derive it from `decide`. Each task names its
 * label space (spaces.ts), inserted by the same statement when it is new.
 */

import { createHash } from "node:crypto";
import {
  type AnswerBody,
  type AnyLabelSpec,
  type BatchInput,
  choicesOf,
  isReservedTaskType,
  type Prelabel,
  splitGuide,
  type TaskCounts,
  type TaskInput,
  zeroTaskCounts,
} from "@labelgate/api";
import { canonicalJson } from "@labelgate/canonical-json";
import { Batcher, newId } from "@labelgate/core";
import { reservedLabels, taskKindOf } from "@labelgate/quality";
import type { FollowUps } from "@labelgate/queue";
import type { Db } from "./database";
import { isUniqueViolation, StoreError } from "./errors";
import type { Batch, LedgerEntry, Task } from "./generated/client";
import { Prisma } from "./generated/client";
import { type CompletedJobRow, completeJobSql, eventIdOf, routeFollowUps, taskCanceledEventSql } from "./jobs";
import { assertTransition, CANCELABLE_STATUSES, type TaskStatus } from "./lifecycle";
import { type PolicyColumns, policyOf } from "./policy";
import { releaseSql, reserveOneSql, reserveSql } from "./quota";
import { spaceIdOf } from "./spaces";
import { queryRows, withTransaction } from "./sql";

/** SHA-256 of the canonical request, without its idempotency key: equal requests give equal hashes. */
export function requestFingerprint(body: object): string {
  const { idempotency_key: _ignored, ...rest } = body as Record<string, unknown>;
  return createHash("sha256").update(canonicalJson(rest)).digest("hex");
}

/** A task to create: the request as sent (its fingerprint) and the columns of its effective policy (@labelgate/quality `resolvePolicy`, `policyColumns`). */
export interface NewTask {
  input: TaskInput;
  policy: PolicyColumns;
}

/** The policy columns of a task row as the store's raw statements read them, with its gold answer and space. */
export interface TaskPolicyColumns extends PolicyColumns {
  gold_label: string | null;
  label_space_id: string;
}

interface TaskRecord extends TaskPolicyColumns {
  id: string;
  /** a gold task's explanation, shown after a qualification training answer (contract §qualification) */
  gold_explanation: string | null;
  customer_id: string;
  batch_id: string | null;
  task_type: string;
  data_url: string;
  question: string;
  options: string[];
  /** a reserved type's label_spec (null: single choice) */
  label_spec: AnyLabelSpec | null;
  /** a text_span task's text when given */
  data_text: string | null;
  /** a pairwise task's item b (URL or text) */
  data_url_b: string | null;
  data_text_b: string | null;
  /** the task waits for its item (its kind `needsText` and no `data_text`): not claimable until the fetch */
  item_pending: boolean;
  callback_url: string | null;
  metadata: Record<string, unknown> | null;
  idempotency_key: string | null;
  /** fingerprint of the request, kept only when the task has an idempotency key (all it is compared for) */
  request_hash: string | null;
  claim_cap: number;
  quota_reserved: number;
  /** ISO time; null = the transaction's start (the column default) */
  created_at: string | null;
  /** the pre-label as given, and whether claims carry it (label_spec.show_prelabel) */
  prelabel: Prelabel | null;
  show_prelabel: boolean;
  /** the pre-label's label: its model labeler, stored value, and the ids of its label and (labeled) claim; null without one */
  prelabel_labeler_id: string | null;
  prelabel_value: string | null;
  prelabel_label_id: string | null;
  prelabel_claim_id: string | null;
}

/** The stored gold answer of a task body (task-kinds.ts: an option, or the canonical JSON of the canonical answer), or null. */
function goldOf(input: TaskInput): string | null {
  if ("gold_label" in input && input.gold_label !== undefined) return input.gold_label;
  if (!("gold_answer" in input) || input.gold_answer === undefined) return null;
  const read = taskKindOf(input.type).readAnswer(input.label_spec, input.gold_answer, {
    text: "data_text" in input ? input.data_text : undefined,
  });
  // the body's schema checked the gold answer (answerIssues) before it came here
  if (!("value" in read))
    throw new StoreError(
      "invalid",
      read.issues.map((i) => ({ path: ["gold_answer", ...i.path].join("."), message: i.message })),
    );
  return read.value;
}

/** The stored value of a task body's pre-label answer (an option, or the canonical JSON of the canonical answer), or null. */
function prelabelValueOf(input: TaskInput): string | null {
  if (input.prelabel === undefined) return null;
  const read = taskKindOf(input.type).readAnswer(input.label_spec, input.prelabel.answer as AnswerBody, {
    text: "data_text" in input ? input.data_text : undefined,
  });
  // the body's schema checked the pre-label (prelabelIssues) before it came here
  if (!("value" in read))
    throw new StoreError(
      "invalid",
      read.issues.map((i) => ({ path: ["prelabel", "answer", ...i.path].join("."), message: i.message })),
    );
  return read.value;
}

function taskRecord(
  customerId: string,
  { input, policy }: NewTask,
  extra: {
    id: string;
    batchId?: string;
    callbackUrl?: string;
    idempotencyKey?: string;
    createdAt?: Date;
    spaceId?: string;
    /** model name → its labeler's id (modelLabelers), for a task with a pre-label */
    models?: ReadonlyMap<string, string>;
  },
): TaskRecord {
  const gold = goldOf(input);
  const prelabelValue = prelabelValueOf(input);
  const modelLabeler = input.prelabel ? extra.models?.get(input.prelabel.model) : undefined;
  if (input.prelabel && modelLabeler === undefined) throw new Error(`no labeler for model ${input.prelabel.model}`);
  const rule = { policy: policyOf(policy), gold: gold !== null };
  const reserved = isReservedTaskType(input.type);
  const kind = taskKindOf(input.type);
  const dataText = "data_text" in input ? (input.data_text ?? null) : null;
  return {
    id: extra.id,
    customer_id: customerId,
    batch_id: extra.batchId ?? null,
    task_type: input.type,
    data_url: input.data_url,
    question: input.label_spec.question,
    options: choicesOf(input.type, input.label_spec),
    // the guide (instructions, examples) is the space's, recorded apart (instructions.ts): not part of the task
    label_spec: reserved ? splitGuide(input.label_spec).spec : null,
    data_text: dataText,
    data_url_b: "data_url_b" in input ? (input.data_url_b ?? null) : null,
    data_text_b: "data_text_b" in input ? (input.data_text_b ?? null) : null,
    item_pending: kind.needsText && dataText === null,
    callback_url: input.callback_url ?? extra.callbackUrl ?? null,
    consensus_threshold: policy.consensus_threshold,
    max_labels: policy.max_labels,
    confidence_target: policy.confidence_target,
    min_labels: policy.min_labels,
    min_gain: policy.min_gain ?? null,
    gold_label: gold,
    gold_explanation: gold !== null && "gold_explanation" in input ? (input.gold_explanation ?? null) : null,
    label_space_id: extra.spaceId ?? spaceIdOf(customerId, input.type, input.label_spec),
    metadata: input.metadata ?? null,
    idempotency_key: extra.idempotencyKey ?? input.idempotency_key ?? null,
    request_hash: (extra.idempotencyKey ?? input.idempotency_key) ? requestFingerprint(input) : null,
    claim_cap: kind.initialClaimCap(input.label_spec, rule),
    quota_reserved: reservedLabels(rule.policy),
    created_at: extra.createdAt?.toISOString() ?? null,
    prelabel: input.prelabel ?? null,
    show_prelabel: (input.label_spec as { show_prelabel?: boolean }).show_prelabel === true,
    prelabel_labeler_id: modelLabeler ?? null,
    prelabel_value: prelabelValue,
    prelabel_label_id: prelabelValue === null ? null : newId("label"),
    prelabel_claim_id: prelabelValue === null ? null : newId("claim"),
  };
}

/**
 * `INSERT INTO tasks ... SELECT` of every row of `source` (a relation with the columns of `TaskRecord`),
 * returning `id, created_at`. One statement for any number of tasks: the rows travel as ONE jsonb
 * parameter (`jsonb_to_recordset`), which costs the driver far less than a column array per field.
 */
function insertTasksSql(source: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO tasks (id, customer_id, batch_id, task_type, data_url, question, options, label_spec, data_text, data_url_b, data_text_b, item_pending, callback_url,
                       consensus_threshold, max_labels, confidence_target, min_labels, min_gain, gold_label, label_space_id, metadata,
                       idempotency_key, gold_explanation, request_hash, claim_cap, quota_reserved, created_at, prelabel, show_prelabel)
    SELECT r.id, r.customer_id, r.batch_id, r.task_type, r.data_url, r.question, ARRAY(SELECT jsonb_array_elements_text(r.options)),
           r.label_spec, r.data_text, r.data_url_b, r.data_text_b, r.item_pending, r.callback_url, r.consensus_threshold, r.max_labels, r.confidence_target, r.min_labels, r.min_gain, r.gold_label, r.label_space_id,
           r.metadata, r.idempotency_key, r.gold_explanation, r.request_hash, r.claim_cap, r.quota_reserved, COALESCE(r.created_at, now()), r.prelabel, r.show_prelabel
    FROM ${source}
    RETURNING id, created_at`;
}

/**
 * The pre-labels of `source`'s rows (those with `prelabel_value`), as data-modifying CTE bodies: each a claim
 * of its model labeler, already `labeled`, and the label on it (contract §prelabels). Written by the statement
 * that inserts the tasks (foreign keys are checked at its end), so a task and its pre-label exist together.
 * The label's `created_at` is the statement's time: it comes before every human label of the task.
 */
export function insertPrelabelsSql(source: Prisma.Sql): { claims: Prisma.Sql; labels: Prisma.Sql } {
  return {
    claims: Prisma.sql`
      INSERT INTO claims (id, task_id, labeler_id, status, expires_at)
      SELECT r.prelabel_claim_id, r.id, r.prelabel_labeler_id, 'labeled'::"ClaimStatus", now()
      FROM ${source} AND r.prelabel_value IS NOT NULL`,
    labels: Prisma.sql`
      INSERT INTO labels (id, task_id, customer_id, label_space_id, labeler_id, claim_id, value, created_at)
      SELECT r.prelabel_label_id, r.id, r.customer_id, r.label_space_id, r.prelabel_labeler_id, r.prelabel_claim_id, r.prelabel_value, now()
      FROM ${source} AND r.prelabel_value IS NOT NULL`,
  };
}

/**
 * The labelers of a customer's models (`model:<name>`, contract §prelabels), created on first use: model name →
 * labeler id. Such a labeler has no key (its key_hash is no key's hash) and is never charged for. One statement,
 * safe to run concurrently (the unique (customer_id, model) key; an existing row is returned as it is).
 */
export async function modelLabelers(db: Db, customerId: string, models: Iterable<string>): Promise<Map<string, string>> {
  const names = [...new Set(models)].sort();
  if (names.length === 0) return new Map();
  const ids = names.map(() => newId("labeler"));
  const rows = await queryRows<{ id: string; model: string }>(
    db.pool,
    Prisma.sql`
      INSERT INTO labelers (id, name, key_hash, hint, customer_id, model)
      SELECT n.id, 'model:' || n.model, 'model:' || n.id, '', ${customerId}, n.model
      FROM unnest(${ids}::text[], ${names}::text[]) AS n(id, model)
      ON CONFLICT (customer_id, model) DO UPDATE SET model = EXCLUDED.model
      RETURNING id, model`,
  );
  return new Map(rows.map((r) => [r.model, r.id]));
}

/**
 * `INSERT INTO label_spaces` of the spaces of `source`'s rows that do not exist yet (a data-modifying CTE
 * body). The tasks' foreign key is checked at the statement's end, after this insert.
 */
export function insertSpacesSql(source: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO label_spaces (id, customer_id, question, options, task_type, label_spec)
    SELECT DISTINCT ON (r.label_space_id) r.label_space_id, r.customer_id, r.question, ARRAY(SELECT jsonb_array_elements_text(r.options)),
           CASE WHEN r.label_spec IS NULL THEN NULL ELSE r.task_type END, r.label_spec
    FROM ${source}
    ORDER BY r.label_space_id
    ON CONFLICT (id) DO NOTHING`;
}

const RECORDS = Prisma.raw(`AS r(id text, customer_id text, batch_id text, task_type text, data_url text, question text, options jsonb,
  label_spec jsonb, data_text text, data_url_b text, data_text_b text, item_pending boolean, callback_url text, consensus_threshold int, max_labels int, confidence_target float8, min_labels int, min_gain float8, gold_label text,
  label_space_id text, metadata jsonb, idempotency_key text, request_hash text, claim_cap int, quota_reserved int,
  created_at timestamptz, prelabel jsonb, show_prelabel boolean, prelabel_labeler_id text, prelabel_value text, prelabel_label_id text,
  prelabel_claim_id text, gold_explanation text)`);

/** `jsonb_to_recordset` of `records` as the relation `r`. */
function recordsOf(records: TaskRecord[]): Prisma.Sql {
  return Prisma.sql`jsonb_to_recordset(${JSON.stringify(records)}::jsonb) ${RECORDS}`;
}

/** A task as the submission routes answer it. */
export interface CreatedTask {
  id: string;
  /** `pending` when just created; a replayed task's current status */
  status: string;
  createdAt: Date;
}

export interface CreatedBatch {
  batchId: string;
  taskIds: string[];
  createdAt: Date;
  created: boolean;
  /** the fetch of each new task's item that waits for it (`item_pending`), for the caller to dispatch */
  followUps: FollowUps;
}

/**
 * Group commit of single task submissions: the concurrent submissions of this process share ONE statement.
 * It locks the customers concerned in id order, reserves each customer's quota for all its tasks of the
 * batch at once (one conditional UPDATE per customer), and inserts the tasks of the customers whose
 * reservation succeeded. A task whose customer could not reserve for the whole group is answered
 * `undefined` and retried alone (exact quota semantics: it may fit alone). The statement is atomic; a
 * failing one (a unique violation of an idempotency key raced by another replica) makes each item run alone.
 */
async function insertGroup(db: Db, records: TaskRecord[]): Promise<(CreatedTask | undefined)[]> {
  const prelabels = insertPrelabelsSql(Prisma.sql`r WHERE r.customer_id IN (SELECT id FROM reserved)`);
  const rows = await queryRows<{ id: string; created_at: Date }>(
    db.pool,
    Prisma.sql`
    WITH r AS MATERIALIZED (SELECT * FROM ${recordsOf(records)}),
    need AS (SELECT customer_id, sum(quota_reserved)::int AS n FROM r GROUP BY customer_id),
    locked AS (SELECT c.id FROM customers c WHERE c.id IN (SELECT customer_id FROM need) ORDER BY c.id FOR UPDATE),
    reserved AS (${reserveSql(Prisma.sql`need`)}),
    spaces AS (${insertSpacesSql(Prisma.sql`r WHERE r.customer_id IN (SELECT id FROM reserved)`)}),
    ins AS (${insertTasksSql(Prisma.sql`r WHERE r.customer_id IN (SELECT id FROM reserved)`)}),
    pclaims AS (${prelabels.claims}),
    plabels AS (${prelabels.labels})
    SELECT id, created_at FROM ins`,
  );
  const created = new Map(rows.map((r) => [r.id, r.created_at]));
  return records.map((r) => {
    const at = created.get(r.id);
    return at ? { id: r.id, status: "pending", createdAt: at } : undefined;
  });
}

export function tasksStore(db: Db) {
  const { prisma, pool } = db;
  // two submissions with one idempotency key never share a statement (the second replays the first)
  const submissions = new Batcher<TaskRecord, CreatedTask | undefined>((records) => insertGroup(db, records), {
    key: (r) => `${r.customer_id} ${r.idempotency_key ?? r.id}`,
  });

  return {
    /**
     * Creates one task (POST /v1/tasks). With an idempotency key, a repeat of the same request returns the
     * original task (`created: false`); the same key with another request is 422. The insert and its quota
     * reservation are one statement shared with the concurrent submissions of this process. `followUps`: the
     * fetch of a new task's item when it waits for it (`item_pending`), for the caller to dispatch.
     * @throws StoreError quotaExhausted | idempotencyMismatch
     */
    async create(
      customerId: string,
      task: NewTask,
      idempotencyKey: string | undefined,
    ): Promise<{ task: CreatedTask; created: boolean; followUps: FollowUps }> {
      const { input } = task;
      const models = input.prelabel ? await modelLabelers(db, customerId, [input.prelabel.model]) : undefined;
      const record = taskRecord(customerId, task, { id: newId("task"), idempotencyKey, models });
      // a new task waiting for its item: the fetch follows (a replay's fetch was sent with the original, or the reconciliation finds it)
      const itemFetchOf = (created: CreatedTask): FollowUps => ({ itemFetch: record.item_pending ? [{ taskId: created.id }] : [] });
      const replay = async (): Promise<{ task: CreatedTask; created: boolean; followUps: FollowUps } | undefined> => {
        if (!idempotencyKey) return undefined;
        const fingerprint = requestFingerprint(input);
        const existing = await prisma.task.findUnique({ where: { customerId_idempotencyKey: { customerId, idempotencyKey } } });
        if (!existing) return undefined;
        if (existing.requestHash !== fingerprint || existing.batchId) throw new StoreError("idempotencyMismatch");
        return { task: { id: existing.id, status: existing.status, createdAt: existing.createdAt }, created: false, followUps: {} };
      };
      const earlier = await replay();
      if (earlier) return earlier;
      try {
        const grouped = await submissions.call(record);
        if (grouped) return { task: grouped, created: true, followUps: itemFetchOf(grouped) };
        // the customer's quota did not cover all its tasks of the group: this one alone, exactly
        const [alone] = await insertGroup(db, [record]);
        if (!alone) throw new StoreError("quotaExhausted");
        return { task: alone, created: true, followUps: itemFetchOf(alone) };
      } catch (err) {
        // Two identical requests raced: the loser answers with the winner's task.
        if (isUniqueViolation(err)) {
          const raced = await replay();
          if (raced) return raced;
        }
        throw err;
      }
    },

    /**
     * Creates a batch atomically (POST /v1/tasks/batch): every task or none, one quota reservation for all.
     * A top-level `callback_url` applies to every task without its own; `policies` are the tasks' effective
     * policies, in order (the batch's top-level policy fields are one of their layers). A batch-level
     * idempotency key replays the original batch; a task-level key that already exists is 422 (a batch
     * never adopts tasks).
     * @throws StoreError quotaExhausted | idempotencyMismatch
     */
    async createBatch(
      customerId: string,
      input: BatchInput,
      policies: PolicyColumns[],
      idempotencyKey: string | undefined,
    ): Promise<CreatedBatch> {
      if (policies.length !== input.tasks.length) throw new Error("one policy per task of the batch");
      // the fingerprint of a large batch costs a canonical serialization of all of it: only when it can be compared
      const fingerprint = idempotencyKey ? requestFingerprint(input) : null;
      const replay = async (): Promise<CreatedBatch | undefined> => {
        if (!idempotencyKey) return undefined;
        const existing = await prisma.batch.findUnique({ where: { customerId_idempotencyKey: { customerId, idempotencyKey } } });
        if (!existing) return undefined;
        if (existing.requestHash !== fingerprint) throw new StoreError("idempotencyMismatch");
        const tasks = await prisma.task.findMany({ where: { batchId: existing.id }, select: { id: true }, orderBy: { createdAt: "asc" } });
        return { batchId: existing.id, taskIds: tasks.map((t) => t.id), createdAt: existing.createdAt, created: false, followUps: {} };
      };
      const earlier = await replay();
      if (earlier) return earlier;

      const batchId = newId("batch");
      const createdAt = new Date();
      const models = await modelLabelers(
        db,
        customerId,
        input.tasks.flatMap((t) => (t.prelabel ? [t.prelabel.model] : [])),
      );
      // Tasks of a batch share its creation time; ordering inside it follows the ids' insertion order.
      // one label space id per distinct spec of the batch (a hash each)
      const spaces = new Map<string, string>();
      const spaceOf = (t: TaskInput): string => {
        const key = JSON.stringify([t.type, t.label_spec]);
        let id = spaces.get(key);
        if (id === undefined) {
          id = spaceIdOf(customerId, t.type, t.label_spec);
          spaces.set(key, id);
        }
        return id;
      };
      const records = input.tasks.map((t, i) =>
        taskRecord(
          customerId,
          { input: t, policy: policies[i] as PolicyColumns },
          {
            id: newId("task"),
            batchId,
            callbackUrl: input.callback_url,
            createdAt: new Date(createdAt.getTime() + i),
            spaceId: spaceOf(t),
            models,
          },
        ),
      );
      const reserved = records.reduce((sum, r) => sum + r.quota_reserved, 0);
      const prelabels = insertPrelabelsSql(Prisma.sql`r WHERE true`);
      try {
        // ONE statement (atomic): reserve the quota, and only if that succeeded insert the batch and its
        // tasks (foreign keys are checked at the statement's end).
        const [done] = await queryRows<{ reserved: boolean }>(
          pool,
          Prisma.sql`
          WITH reserved AS (${reserveOneSql(customerId, reserved)}),
          batch AS (
            INSERT INTO batches (id, customer_id, task_count, callback_url, idempotency_key, request_hash, created_at)
            SELECT ${batchId}, ${customerId}, ${records.length}, ${input.callback_url ?? null}, ${idempotencyKey ?? null}, ${fingerprint},
                   ${createdAt}::timestamptz
            WHERE EXISTS (SELECT 1 FROM reserved)
            RETURNING id
          ),
          r AS MATERIALIZED (SELECT * FROM ${recordsOf(records)} WHERE EXISTS (SELECT 1 FROM batch)),
          spaces AS (${insertSpacesSql(Prisma.sql`r`)}),
          tasks AS (${insertTasksSql(Prisma.sql`r`)}),
          pclaims AS (${prelabels.claims}),
          plabels AS (${prelabels.labels})
          SELECT EXISTS (SELECT 1 FROM reserved) AS reserved, (SELECT count(*) FROM tasks) AS n`,
        );
        if (!done?.reserved) throw new StoreError("quotaExhausted");
      } catch (err) {
        if (isUniqueViolation(err)) {
          const raced = await replay();
          if (raced) return raced;
          throw new StoreError("idempotencyMismatch", [
            { path: "tasks.idempotency_key", message: "a task with this idempotency_key already exists" },
          ]);
        }
        throw err;
      }
      const itemFetch = records.flatMap((r) => (r.item_pending ? [{ taskId: r.id }] : []));
      return { batchId, taskIds: records.map((r) => r.id), createdAt, created: true, followUps: { itemFetch } };
    },

    /** The labelers of a customer's models, created on first use: model name → labeler id (`modelLabelers`). */
    modelLabelers: (customerId: string, models: Iterable<string>): Promise<Map<string, string>> => modelLabelers(db, customerId, models),

    /** A customer's task, or undefined (another customer's task does not exist for it). */
    async get(customerId: string, taskId: string): Promise<Task | undefined> {
      return (await prisma.task.findFirst({ where: { id: taskId, customerId } })) ?? undefined;
    },

    /** A settled task's ledger record (of its current revision). @throws when the settled task has none (a broken invariant). */
    async ledgerRecord(task: Task): Promise<LedgerEntry> {
      const entry = await prisma.ledgerEntry.findUnique({ where: { taskId_revision: { taskId: task.id, revision: task.revision } } });
      if (!entry) throw new Error(`settled task ${task.id} has no ledger entry`);
      return entry;
    },

    /**
     * Cancels an open task (pending or labeling): active claims expire, the unused part of the quota
     * reservation is returned. Canceling a canceled task answers it again. When it was the last open task
     * of a manifest job, the job completes in the same transaction (`completedJobId`) and its export follows
     * (`followUps`, for the caller to dispatch).
     * @throws StoreError taskNotFound | taskNotCancelable (settling, settled)
     */
    async cancel(customerId: string, taskId: string): Promise<{ task: Task; completedJobId?: string; followUps: FollowUps }> {
      const outcome = await withTransaction(pool, async (run) => {
        const [, rows] = await run<
          [object, { status: TaskStatus; job_id: string | null; quota_reserved: number; labels_collected: number }]
        >([
          Prisma.sql`SELECT id FROM tasks WHERE id = ${taskId} AND customer_id = ${customerId} FOR UPDATE`,
          Prisma.sql`SELECT status::text AS status, job_id, quota_reserved, labels_collected FROM tasks WHERE id = ${taskId} AND customer_id = ${customerId}`,
        ]);
        const row = rows[0];
        if (!row) throw new StoreError("taskNotFound");
        if (row.status === "canceled") return undefined;
        if (!(CANCELABLE_STATUSES as readonly TaskStatus[]).includes(row.status)) {
          throw new StoreError("taskNotCancelable", undefined, { status: row.status });
        }
        assertTransition(row.status, "canceled");
        const done = await run<object[]>(
          [
            Prisma.sql`UPDATE tasks SET status = 'canceled', canceled_at = now(), updated_at = now() WHERE id = ${taskId}`,
            Prisma.sql`UPDATE claims SET status = 'expired' WHERE task_id = ${taskId} AND status = 'active'`,
            releaseSql(customerId, Math.max(0, row.quota_reserved - row.labels_collected)),
            // the event catalog's task.canceled, in the cancellation's transaction (contract §events)
            taskCanceledEventSql(taskId, { event: "task.canceled", task_id: taskId, reason: "customer" }),
            ...(row.job_id ? completeJobSql(row.job_id) : []),
          ],
          { commit: true },
        );
        const events = (done[3] ?? []) as { id: string }[];
        const completed = (done[5] ?? []) as CompletedJobRow[];
        return { jobId: row.job_id && completed.length > 0 ? row.job_id : undefined, eventIds: [...events, ...completed].map(eventIdOf) };
      });
      const task = await prisma.task.findUniqueOrThrow({ where: { id: taskId } });
      const completedJobId = outcome?.jobId;
      const followUps: FollowUps = {
        manifestExport: completedJobId ? [{ manifestJobId: completedJobId }] : [],
        ...routeFollowUps(outcome?.eventIds ?? []),
      };
      return completedJobId ? { task, completedJobId, followUps } : { task, followUps };
    },

    /** A customer's batch with its tasks other than gold tasks counted by status, and its gold tasks; or undefined. */
    async batch(customerId: string, batchId: string): Promise<{ batch: Batch; counts: TaskCounts; goldTasks: number } | undefined> {
      const batch = await prisma.batch.findFirst({ where: { id: batchId, customerId } });
      if (!batch) return undefined;
      const [grouped, goldTasks] = await Promise.all([
        prisma.task.groupBy({ by: ["status"], where: { batchId, goldLabel: null }, _count: { _all: true } }),
        prisma.task.count({ where: { batchId, goldLabel: { not: null } } }),
      ]);
      const counts = zeroTaskCounts();
      for (const g of grouped) if (g.status !== "staged") counts[g.status] = g._count._all;
      return { batch, counts, goldTasks };
    },
  };
}

export type TasksStore = ReturnType<typeof tasksStore>;
