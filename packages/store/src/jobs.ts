/**
 * Manifest jobs (contract §jobs): creation, reads, the writes of ingestion (chunks of tasks with
 * their quota reservation and the resume point, opening the job, failing it), completion, and the JSONL
 * export read page by page.
 *
 * Completion: a job in `labeling` becomes `completed` when none of its tasks other than gold tasks (which
 * never settle) is unfinished any more (every such task settled or canceled), in the transaction that closes
 * its last task (settlement or cancellation), and by the reconciliation as a safety net. The job row is
 * locked first: of two transactions closing a job's last two tasks at once, the second waits, then checks
 * with a fresh snapshot that sees the first's commit, so the job always completes. The job row is the last
 * lock any caller takes (task → ledger → job). Gold tasks never appear in the export.
 */

import type { Readable } from "node:stream";
import { type EventPayload, isReservedTaskType, type JobStatus, storedLabelSpec } from "@labelgate/api";
import { newId } from "@labelgate/core";
import { GOLD_CLAIM_CAP, reservedLabels, taskKindOf } from "@labelgate/quality";
import type { FollowUps } from "@labelgate/queue";
import type { Db } from "./database";
import { exportsStore } from "./exports";
import { newestFirstPage, statusIn } from "./fragments";
import type { Job } from "./generated/client";
import { Prisma } from "./generated/client";
import { UNFINISHED_STATUSES } from "./lifecycle";
import { policyOf } from "./policy";
import { QuotaExhaustedError, releaseSql, reserveOneSql } from "./quota";
import { spaceIdOf } from "./spaces";
import { transactionRows, withTransaction } from "./sql";

/** Tasks of a job that keep it from completing (the retired `staged` included, should a row hold it); never gold tasks. */
const UNFINISHED = Prisma.sql`(${statusIn("status", UNFINISHED_STATUSES)} OR status = 'staged') AND gold_label IS NULL`;

/**
 * The `events` row of a job's end (the event catalog's `job.completed` / `job.failed`), from `ended`: a
 * relation of the job rows that ended in this statement (`id`, `customer_id`, `task_count`, and `error` for
 * job.failed). One per job and type (the partial unique index on (job_id, type)): a second emit is a no-op.
 * Returns the CTE body; its rows are `(id, job_id)` of the events written.
 */
function jobEventSql(type: "job.completed" | "job.failed", ended: Prisma.Sql): Prisma.Sql {
  const eventId = newId("event");
  const error = type === "job.failed" ? Prisma.sql`, 'error', x.error` : Prisma.empty;
  return Prisma.sql`
    INSERT INTO events (id, type, job_id, customer_id, payload)
    SELECT ${eventId}, ${type}, x.id, x.customer_id,
      jsonb_build_object('event', ${type}::text, 'job_id', x.id, 'task_count', x.task_count,
        'tasks_settled', (SELECT count(*)::int FROM tasks t WHERE t.job_id = x.id AND t.status = 'settled' AND t.gold_label IS NULL)${error})
    FROM ${ended} x
    ON CONFLICT (job_id, type) WHERE job_id IS NOT NULL DO NOTHING
    RETURNING id, job_id`;
}

/** A row of a job's completion statement: the job completed now, and the id of its `job.completed` event. */
export interface CompletedJobRow {
  id: string;
  event_id: string | null;
}

/**
 * The two statements of a job's completion, for a caller that sends them with others (the settlement's and
 * the cancellation's last round trip): lock the job row, then (a later statement: a fresh snapshot) complete
 * it and emit its `job.completed` event (contract §events), returning a {@link CompletedJobRow} when this
 * completed it (no row otherwise).
 */
export function completeJobSql(jobId: string): [Prisma.Sql, Prisma.Sql] {
  return [
    Prisma.sql`SELECT 1 FROM jobs WHERE id = ${jobId} FOR UPDATE`,
    Prisma.sql`
    WITH done AS (
      UPDATE jobs SET status = 'completed', completed_at = now(), updated_at = now()
      WHERE id = ${jobId} AND status = 'labeling'
        AND NOT EXISTS (SELECT 1 FROM tasks WHERE job_id = ${jobId} AND ${UNFINISHED})
      RETURNING id, customer_id, task_count
    ), ev AS (${jobEventSql("job.completed", Prisma.sql`done`)})
    SELECT done.id, (SELECT ev.id FROM ev) AS event_id FROM done`,
  ];
}

/**
 * The `events` row of a task's cancellation (the event catalog's `task.canceled`), for the cancellation's
 * transaction: one per task (unique (task_id, type, revision)); a gold task emits none. Returns `(id)` of the
 * event written (no row when none was).
 */
export function taskCanceledEventSql(taskId: string, payload: EventPayload<"task.canceled">): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO events (id, type, task_id, customer_id, payload, revision)
    SELECT ${newId("event")}, ${payload.event}, t.id, t.customer_id, ${JSON.stringify(payload)}::jsonb, t.revision
    FROM tasks t WHERE t.id = ${taskId} AND t.gold_label IS NULL
    ON CONFLICT (task_id, type, revision) DO NOTHING
    RETURNING id`;
}

/** The id of an event row returned by an emit statement (`id` of an events row, `event_id` of a job's end). */
export function eventIdOf(row: { id: string } | CompletedJobRow): string | null {
  return "event_id" in row ? row.event_id : row.id;
}

/** The follow-up of events just written: each routed to its webhooks (the `routeEvent` queue). */
export function routeFollowUps(eventIds: (string | null | undefined)[]): FollowUps {
  return { routeEvent: eventIds.flatMap((eventId) => (eventId ? [{ eventId }] : [])) };
}

/**
 * One chunk of manifest lines to write: `records` holds `<task id>\t<line number>\t<gold>\t<pre-label labeler>\t<pre-label
 * value>\t<pre-label claim id>\t<pre-label label id>\t<items>\t<line text>` rows (the pre-label fields empty without one;
 * `<items>` empty, or the JSON object of the line's item fields its type's lines carry, e.g. a pairwise line's
 * `data_url_b` or `data_text` and `data_text_b`, stored in the task's columns of those names: docs/decisions/0305)
 * joined with "\n" (a manifest line never contains "\n", an id or a number never a tab), `<gold>` being empty
 * or the JSON string of the line's stored gold answer (an option, or the canonical JSON of a reserved type's
 * gold answer: JSON escapes tabs and newlines): one string parameter costs the driver far less than parallel
 * arrays of a thousand elements each.
 */
export interface ManifestChunk {
  rows: number;
  records: string;
}

/** What a chunk write needs of its job. */
export type IngestingJob = Pick<
  Job,
  | "id"
  | "customerId"
  | "taskType"
  | "labelSpec"
  | "showPrelabel"
  | "question"
  | "options"
  | "consensusThreshold"
  | "maxLabels"
  | "confidenceTarget"
  | "minLabels"
  | "minGain"
  | "callbackUrl"
>;

/** What a committed chunk leaves to do: the item fetch of each of its tasks waiting for its item. */
export interface ChunkWritten {
  followUps: FollowUps;
}

export function jobsStore(db: Db) {
  const { prisma, pool } = db;
  const exports = exportsStore(db);
  return {
    /** Creates a queued job (the credentials arrive sealed); its ingestion follows (`followUps`, for the caller to dispatch). */
    create: async (data: Prisma.JobUncheckedCreateInput): Promise<{ job: Job; followUps: FollowUps }> => {
      const job = await prisma.job.create({ data });
      return { job, followUps: { manifestIngest: [{ manifestJobId: job.id }] } };
    },

    /** A customer's job with its settled task count, or undefined. */
    async get(customerId: string, jobId: string): Promise<{ job: Job; tasksSettled: number } | undefined> {
      const job = await prisma.job.findFirst({ where: { id: jobId, customerId } });
      if (!job) return undefined;
      return { job, tasksSettled: await prisma.task.count({ where: { jobId, status: "settled" } }) };
    },

    /** A page of the customer's jobs, newest first, each with its settled task count. */
    async list(customerId: string, page: number, perPage: number): Promise<{ total: number; items: { job: Job; tasksSettled: number }[] }> {
      const [total, jobs] = await Promise.all([
        prisma.job.count({ where: { customerId } }),
        prisma.job.findMany({ where: { customerId }, ...newestFirstPage(page, perPage) }),
      ]);
      const settled = await Promise.all(jobs.map((j) => prisma.task.count({ where: { jobId: j.id, status: "settled" } })));
      return { total, items: jobs.map((job, i) => ({ job, tasksSettled: settled[i] ?? 0 })) };
    },

    /** A job by id (workers), or undefined. */
    find: async (jobId: string): Promise<Job | undefined> => (await prisma.job.findUnique({ where: { id: jobId } })) ?? undefined,

    /**
     * Marks a queued job `ingesting` (keeps its first start time) and creates its label space if it is new, in
     * one transaction, before any chunk is written. Chunks are written on two connections at once; were the
     * first of them to create the space, the second's insert of the same key would wait for the first's
     * commit while the first waits (in JS) for the second's predecessor: a stall only the statement timeout ends.
     */
    startIngesting: async (job: Job): Promise<Job> => {
      const spec = storedLabelSpec(job);
      const spaceId = spaceIdOf(job.customerId, job.taskType, spec);
      const reserved = isReservedTaskType(job.taskType);
      const [, started] = await prisma.$transaction([
        prisma.$executeRaw`
          INSERT INTO label_spaces (id, customer_id, question, options, task_type, label_spec)
          VALUES (${spaceId}, ${job.customerId}, ${job.question}, ${job.options}::text[], ${reserved ? job.taskType : null},
                  ${reserved ? JSON.stringify(spec) : null}::jsonb)
          ON CONFLICT (id) DO NOTHING`,
        prisma.job.update({ where: { id: job.id }, data: { status: "ingesting", startedAt: job.startedAt ?? new Date() } }),
      ]);
      return started;
    },

    /**
     * Writes a chunk in one transaction: its tasks (one INSERT of all its rows), then, once `previous` (the
     * chunk before it) committed, their quota reservation and the new resume point `jobs.lines_ingested` =
     * `throughLine`. Lines already written by an interrupted run are skipped by the unique (job_id,
     * manifest_line) and neither counted nor reserved. Tasks are created `pending` but are not claimable
     * while their job is not `labeling` (the claim checks the job's status). A task of a type labeled on its
     * text (text_span) without the line's `data_text` waits for its item (`item_pending`): `followUps` holds
     * their fetches, for the caller to dispatch once this resolves (committed).
     * @throws QuotaExhaustedError (the chunk rolls back) or what `previous` throws
     */
    async writeChunk(job: IngestingJob, chunk: ManifestChunk, throughLine: number, previous: Promise<void>): Promise<ChunkWritten> {
      const policy = policyOf({
        consensus_threshold: job.consensusThreshold,
        max_labels: job.maxLabels,
        confidence_target: job.confidenceTarget,
        min_labels: job.minLabels,
        min_gain: job.minGain,
      });
      const spec = storedLabelSpec(job);
      const kind = taskKindOf(job.taskType);
      const claimCap = kind.initialClaimCap(spec, { policy, gold: false });
      const reserved = isReservedTaskType(job.taskType);
      const reserve = reservedLabels(policy);
      const spaceId = spaceIdOf(job.customerId, job.taskType, spec);
      // a text task (text_span) takes the line's `data_text` (validated by the worker) or waits for its item
      const needsText = kind.needsText;
      return withTransaction(pool, async (run) => {
        let created = 0;
        let gold = 0;
        let itemPending: string[] = [];
        if (chunk.rows > 0) {
          // `source` is the line itself (JSON.parse accepted it; Postgres parses it once more), `data_url` the
          // field the worker validated: "data_url" unless absent or null, else "source-ref"; `gold` the line's
          // stored gold answer (validated by the worker), which makes it a gold task.
          // the label space exists: startIngesting created it
          const [rows] = await run<[{ created: number; gold: number; item_pending: string[] | null }]>([
            Prisma.sql`
            WITH r AS MATERIALIZED (
              SELECT f.id, f.line, CASE WHEN f.gold = '' THEN NULL ELSE f.gold::jsonb #>> '{}' END AS gold,
                     NULLIF(f.plabeler, '') AS prelabel_labeler_id, CASE WHEN f.pvalue = '' THEN NULL ELSE f.pvalue::jsonb #>> '{}' END AS prelabel_value,
                     f.pclaim AS prelabel_claim_id, f.plabel AS prelabel_label_id,
                     CASE WHEN f.items = '' THEN '{}'::jsonb ELSE f.items::jsonb END AS items,
                     substr(rec, length(f.id) + length(f.line) + length(f.gold) + length(f.plabeler) + length(f.pvalue) + length(f.pclaim)
                                 + length(f.plabel) + length(f.items) + 9)::jsonb AS source
              FROM unnest(string_to_array(${chunk.records}, E'\\n')) AS rec,
                   LATERAL (SELECT split_part(rec, E'\\t', 1) AS id, split_part(rec, E'\\t', 2) AS line, split_part(rec, E'\\t', 3) AS gold,
                                   split_part(rec, E'\\t', 4) AS plabeler, split_part(rec, E'\\t', 5) AS pvalue,
                                   split_part(rec, E'\\t', 6) AS pclaim, split_part(rec, E'\\t', 7) AS plabel,
                                   split_part(rec, E'\\t', 8) AS items) AS f
            ),
            created AS (
              INSERT INTO tasks (id, customer_id, job_id, manifest_line, source, status, task_type, data_url, question, options,
                                 label_spec, data_text, data_url_b, data_text_b, item_pending,
                                 callback_url, consensus_threshold, max_labels, confidence_target, min_labels, min_gain, gold_label,
                                 label_space_id, claim_cap, quota_reserved, prelabel, show_prelabel, gold_explanation)
              SELECT r.id, ${job.customerId}, ${job.id}, r.line::int, r.source, 'pending'::"TaskStatus", ${job.taskType},
                     coalesce(r.source->>'data_url', r.source->>'source-ref'), ${job.question}, ${job.options}::text[],
                     ${reserved ? JSON.stringify(spec) : null}::jsonb,
                     coalesce(r.items->>'data_text', CASE WHEN ${needsText} THEN r.source->>'data_text' END), r.items->>'data_url_b',
                     r.items->>'data_text_b', ${needsText} AND r.source->>'data_text' IS NULL,
                     ${job.callbackUrl}, ${job.consensusThreshold}, ${job.maxLabels}, ${job.confidenceTarget}::float8, ${job.minLabels}::int,
                     ${job.minGain}::float8, r.gold, ${spaceId},
                     CASE WHEN r.gold IS NULL THEN ${claimCap}::int ELSE ${GOLD_CLAIM_CAP}::int END, ${reserve}::int,
                     CASE WHEN r.prelabel_value IS NULL THEN NULL ELSE r.source->'prelabel' END, ${job.showPrelabel},
                     -- a gold line's explanation (contract §qualification; validated by the worker)
                     CASE WHEN r.gold IS NULL THEN NULL ELSE r.source->>'gold_explanation' END
              FROM r
              ON CONFLICT (job_id, manifest_line) DO NOTHING
              RETURNING id, gold_label, item_pending
            ),
            -- a line's pre-label (contract §prelabels): a labeled claim of its model labeler and its label, for the tasks created
            pre AS MATERIALIZED (SELECT r.* FROM r JOIN created c ON c.id = r.id WHERE r.prelabel_value IS NOT NULL),
            pclaims AS (
              INSERT INTO claims (id, task_id, labeler_id, status, expires_at)
              SELECT p.prelabel_claim_id, p.id, p.prelabel_labeler_id, 'labeled'::"ClaimStatus", now() FROM pre p
            ),
            plabels AS (
              INSERT INTO labels (id, task_id, customer_id, label_space_id, labeler_id, claim_id, value, created_at)
              SELECT p.prelabel_label_id, p.id, ${job.customerId}, ${spaceId}, p.prelabel_labeler_id, p.prelabel_claim_id, p.prelabel_value, now()
              FROM pre p
            )
            SELECT count(*)::int AS created, count(gold_label)::int AS gold, array_agg(id) FILTER (WHERE item_pending) AS item_pending
            FROM created`,
          ]);
          created = rows[0]?.created ?? 0;
          gold = rows[0]?.gold ?? 0;
          itemPending = rows[0]?.item_pending ?? [];
        }
        // The chunk before this one commits first (its error, if it failed, rolls this one back).
        await previous;
        if (created > 0) {
          // reserve only for tasks really created (a resumed chunk may already exist)
          const [reserved] = await run<[{ id: string }]>([reserveOneSql(job.customerId, created * reserve)]);
          if (reserved.length === 0) throw new QuotaExhaustedError(`fewer than ${created * reserve} labels of quota remain`);
        }
        await run(
          [
            Prisma.sql`UPDATE jobs SET lines_ingested = ${throughLine}, task_count = task_count + ${created},
                         gold_task_count = gold_task_count + ${gold}, updated_at = now()
                       WHERE id = ${job.id}`,
          ],
          { commit: true },
        );
        return { followUps: { itemFetch: itemPending.map((taskId) => ({ taskId })) } };
      });
    },

    /**
     * The whole manifest is in: its tasks become claimable at once, by the job's status (one row). The job
     * row is locked first and the check runs in a later statement (fresh snapshot), so a cancel of the job's
     * last open task committed meanwhile is seen: such a job completes at once.
     * A job that completes at once emits its `job.completed` event in the same statement (`followUps` routes it).
     * @returns the job's new status and task count (undefined when it was no longer ingesting)
     */
    async open(jobId: string): Promise<{ status: JobStatus; task_count: number; followUps: FollowUps } | undefined> {
      const [, opened] = await transactionRows<[object, { status: JobStatus; task_count: number; event_id: string | null }]>(pool, [
        Prisma.sql`SELECT 1 FROM jobs WHERE id = ${jobId} FOR UPDATE`,
        Prisma.sql`
          WITH open_tasks AS (SELECT EXISTS (SELECT 1 FROM tasks WHERE job_id = ${jobId} AND ${UNFINISHED}) AS has_open),
          opened AS (
            UPDATE jobs SET status = CASE WHEN (SELECT has_open FROM open_tasks) THEN 'labeling'::"JobStatus" ELSE 'completed'::"JobStatus" END,
              ingested_at = now(), completed_at = CASE WHEN (SELECT has_open FROM open_tasks) THEN completed_at ELSE now() END, updated_at = now()
            WHERE id = ${jobId} AND status = 'ingesting'
            RETURNING id, customer_id, status, task_count
          ),
          ev AS (${jobEventSql("job.completed", Prisma.sql`(SELECT * FROM opened WHERE status = 'completed')`)})
          SELECT status::text AS status, task_count, (SELECT ev.id FROM ev) AS event_id FROM opened`,
      ]);
      const row = opened[0];
      if (!row) return undefined;
      return { status: row.status, task_count: row.task_count, followUps: routeFollowUps([row.event_id]) };
    },

    /**
     * Fails the job with `error`, deletes its tasks (never claimable: the job never reached `labeling`) with their
     * pre-labels (contract §prelabels), and
     * returns the quota they still hold (a task the customer canceled meanwhile returned its own already).
     * The first failure emits the job's `job.failed` event in the same transaction (contract §events).
     * @returns the follow-ups to dispatch (the event's routing)
     */
    async fail(jobId: string, customerId: string, error: string): Promise<{ followUps: FollowUps }> {
      const [, , , , failed] = await transactionRows<[object, object, object, object, { event_id: string | null }]>(pool, [
        Prisma.sql`SELECT 1 FROM jobs WHERE id = ${jobId} FOR UPDATE`,
        // the pre-labels of its tasks (their model labelers' labels and claims: no person could claim them) go first
        Prisma.sql`DELETE FROM labels WHERE task_id IN (SELECT id FROM tasks WHERE job_id = ${jobId} AND (status IN ('pending', 'canceled') OR status = 'staged'))`,
        Prisma.sql`DELETE FROM claims WHERE task_id IN (SELECT id FROM tasks WHERE job_id = ${jobId} AND (status IN ('pending', 'canceled') OR status = 'staged'))`,
        Prisma.sql`
          WITH gone AS (
            DELETE FROM tasks WHERE job_id = ${jobId} AND (status IN ('pending', 'canceled') OR status = 'staged')
            RETURNING status, quota_reserved
          )
          ${releaseSql(customerId, Prisma.sql`(SELECT COALESCE(sum(quota_reserved) FILTER (WHERE status <> 'canceled'), 0) FROM gone)`)}`,
        Prisma.sql`
          WITH failed AS (
            UPDATE jobs SET status = 'failed', error = ${error}, task_count = 0, updated_at = now() WHERE id = ${jobId}
            RETURNING id, customer_id, task_count, error
          ), ev AS (${jobEventSql("job.failed", Prisma.sql`failed`)})
          SELECT (SELECT ev.id FROM ev) AS event_id FROM failed`,
      ]);
      return { followUps: routeFollowUps(failed.map((r) => r.event_id)) };
    },

    /**
     * Completes a `labeling` job none of whose tasks is unfinished (reconciliation), emitting its `job.completed`
     * event. @returns whether it did, and the follow-ups (the event's routing)
     */
    async completeIfDone(jobId: string): Promise<{ completed: boolean; followUps: FollowUps }> {
      const [, completed] = await transactionRows<[object, CompletedJobRow]>(pool, completeJobSql(jobId));
      return { completed: completed.length > 0, followUps: routeFollowUps(completed.map((r) => r.event_id)) };
    },

    /** Records that a completed job's export was written to its output_url. */
    exportWritten: (jobId: string): Promise<unknown> => prisma.job.update({ where: { id: jobId }, data: { exportWrittenAt: new Date() } }),

    /** Records why a completed job's export could not be written to its output_url. */
    exportFailed: (jobId: string, error: string): Promise<unknown> => prisma.job.update({ where: { id: jobId }, data: { error } }),

    /**
     * A readable stream of the job's JSONL export (contract §jobs: one line per manifest line other than gold lines,
     * in manifest order; exports.ts), for the copy to output_url.
     */
    exportStream: (jobId: string): Readable => exports.stream({ kind: "job", id: jobId }, "jsonl"),
  };
}

export type JobsStore = ReturnType<typeof jobsStore>;
