/**
 * Manifest jobs (docs/contract.md, DESIGN §8): creation, reads, the writes of ingestion (chunks of tasks with
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

import { Readable } from "node:stream";
import { type AnyLabelSpec, choicesOf, isReservedTaskType, type JobStatus, reservedLabels, storedLabelSpec } from "@labelgate/api";
import { GOLD_CLAIM_CAP, taskKindOf } from "@labelgate/quality";
import type { FollowUps } from "@labelgate/queue";
import type { Db } from "./database";
import { newestFirstPage, statusIn } from "./fragments";
import type { Job } from "./generated/client";
import { Prisma } from "./generated/client";
import { UNFINISHED_STATUSES } from "./lifecycle";
import { QuotaExhaustedError, releaseSql, reserveOneSql } from "./quota";
import { spaceIdOf } from "./spaces";
import { transactionRows, withTransaction } from "./sql";

/** Tasks of a job that keep it from completing (the retired `staged` included, should a row hold it); never gold tasks. */
const UNFINISHED = Prisma.sql`(${statusIn("status", UNFINISHED_STATUSES)} OR status = 'staged') AND gold_label IS NULL`;

/**
 * The two statements of a job's completion, for a caller that sends them with others (the settlement's and
 * the cancellation's last round trip): lock the job row, then (a later statement: a fresh snapshot) complete
 * it, returning its id when this completed it.
 */
export function completeJobSql(jobId: string): [Prisma.Sql, Prisma.Sql] {
  return [
    Prisma.sql`SELECT 1 FROM jobs WHERE id = ${jobId} FOR UPDATE`,
    Prisma.sql`
    UPDATE jobs SET status = 'completed', completed_at = now(), updated_at = now()
    WHERE id = ${jobId} AND status = 'labeling'
      AND NOT EXISTS (SELECT 1 FROM tasks WHERE job_id = ${jobId} AND ${UNFINISHED})
    RETURNING id`,
  ];
}

/** rows per export page (one query, one pushed chunk of about 1.6 MB) */
const EXPORT_PAGE = 5000;

interface ExportRow {
  manifest_line: number;
  id: string;
  data_url: string;
  consensus_label: string | null;
  confidence: number | null;
  /** a reserved type's consensus (jsonb as text), null for single choice and until decided */
  consensus: string | null;
  /** why the item could not be fetched (a canceled text_span task) */
  item_error: string | null;
  ledger_txid: string | null;
  /** `Date.toISOString()`'s format, made by Postgres */
  settled_at: string | null;
  /** the jsonb as text (Postgres spacing): parsed and re-serialized compact */
  source: string | null;
}

/**
 * One chunk of manifest lines to write: `records` holds `<task id>\t<line number>\t<gold>\t<line text>` rows
 * joined with "\n" (a manifest line never contains "\n", an id or a number never a tab), `<gold>` being empty
 * or the JSON string of the line's stored gold answer (an option, or the canonical JSON of a reserved type's
 * gold answer: JSON escapes tabs and newlines): one string parameter costs the driver far less than parallel
 * arrays of a thousand elements each.
 */
export interface ManifestChunk {
  rows: number;
  records: string;
}

/** A bounding_box consensus box as the export's COCO detection result (`annotations`). */
interface ConsensusBox {
  label: string;
  x: number;
  y: number;
  w: number;
  h: number;
  confidence: number;
}

/**
 * The fields a reserved type's export line adds after `confidence` (DESIGN §12), as JSON text with a leading
 * comma: `consensus` (null until decided) and, for bounding_box, `annotations`: the consensus boxes as COCO
 * detection results `{bbox: [x, y, w, h], category_id: 1-based index in classes, category, score}` ([] when
 * not decided); for text_span, `item_error` when its text could not be fetched.
 */
function typedExportFields(type: string, classes: readonly string[], r: ExportRow): string {
  const consensus = r.consensus === null ? null : (JSON.parse(r.consensus) as Record<string, unknown>);
  let out = `,"consensus":${JSON.stringify(consensus)}`;
  if (type === "bounding_box") {
    const boxes = (consensus?.boxes ?? []) as ConsensusBox[];
    const annotations = boxes.map((b) => ({
      bbox: [b.x, b.y, b.w, b.h],
      category_id: classes.indexOf(b.label) + 1,
      category: b.label,
      score: b.confidence,
    }));
    out += `,"annotations":${JSON.stringify(annotations)}`;
  }
  if (r.item_error !== null) out += `,"item_error":${JSON.stringify(r.item_error)}`;
  return out;
}

/** What a chunk write needs of its job. */
export type IngestingJob = Pick<
  Job,
  | "id"
  | "customerId"
  | "taskType"
  | "labelSpec"
  | "question"
  | "options"
  | "consensusThreshold"
  | "maxLabels"
  | "confidenceTarget"
  | "minLabels"
  | "callbackUrl"
>;

/** What a committed chunk leaves to do: the item fetch of each of its tasks waiting for its item. */
export interface ChunkWritten {
  followUps: FollowUps;
}

export function jobsStore(db: Db) {
  const { prisma, pool } = db;
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
      const policy = {
        consensus_threshold: job.consensusThreshold,
        max_labels: job.maxLabels,
        confidence_target: job.confidenceTarget,
        min_labels: job.minLabels,
      };
      const spec = storedLabelSpec(job);
      const kind = taskKindOf(job.taskType);
      const claimCap = kind.initialClaimCap(spec, {
        consensusThreshold: job.consensusThreshold,
        maxLabels: job.maxLabels,
        confidenceTarget: job.confidenceTarget,
        minLabels: job.minLabels,
        gold: false,
      });
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
            WITH created AS (
              INSERT INTO tasks (id, customer_id, job_id, manifest_line, source, status, task_type, data_url, question, options,
                                 label_spec, data_text, item_pending,
                                 callback_url, consensus_threshold, max_labels, confidence_target, min_labels, gold_label,
                                 label_space_id, claim_cap, quota_reserved)
              SELECT r.id, ${job.customerId}, ${job.id}, r.line::int, r.source, 'pending'::"TaskStatus", ${job.taskType},
                     coalesce(r.source->>'data_url', r.source->>'source-ref'), ${job.question}, ${job.options}::text[],
                     ${reserved ? JSON.stringify(spec) : null}::jsonb,
                     CASE WHEN ${needsText} THEN r.source->>'data_text' END, ${needsText} AND r.source->>'data_text' IS NULL,
                     ${job.callbackUrl}, ${job.consensusThreshold}, ${job.maxLabels}, ${job.confidenceTarget}::float8, ${job.minLabels}::int,
                     r.gold, ${spaceId},
                     CASE WHEN r.gold IS NULL THEN ${claimCap}::int ELSE ${GOLD_CLAIM_CAP}::int END, ${reserve}::int
              FROM unnest(string_to_array(${chunk.records}, E'\\n')) AS rec,
                   LATERAL (SELECT split_part(rec, E'\\t', 1) AS id, split_part(rec, E'\\t', 2) AS line, split_part(rec, E'\\t', 3) AS gold) AS f,
                   LATERAL (SELECT f.id, f.line, CASE WHEN f.gold = '' THEN NULL ELSE f.gold::jsonb #>> '{}' END AS gold,
                                   substr(rec, length(f.id) + length(f.line) + length(f.gold) + 4)::jsonb AS source) AS r
              ON CONFLICT (job_id, manifest_line) DO NOTHING
              RETURNING id, gold_label, item_pending
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
     * @returns the job's new status and task count (undefined when it was no longer ingesting)
     */
    async open(jobId: string): Promise<{ status: JobStatus; task_count: number } | undefined> {
      const [, opened] = await transactionRows<[object, { status: JobStatus; task_count: number }]>(pool, [
        Prisma.sql`SELECT 1 FROM jobs WHERE id = ${jobId} FOR UPDATE`,
        Prisma.sql`
          WITH open_tasks AS (SELECT EXISTS (SELECT 1 FROM tasks WHERE job_id = ${jobId} AND ${UNFINISHED}) AS has_open)
          UPDATE jobs SET status = CASE WHEN (SELECT has_open FROM open_tasks) THEN 'labeling'::"JobStatus" ELSE 'completed'::"JobStatus" END,
            ingested_at = now(), completed_at = CASE WHEN (SELECT has_open FROM open_tasks) THEN completed_at ELSE now() END, updated_at = now()
          WHERE id = ${jobId} AND status = 'ingesting'
          RETURNING status::text AS status, task_count`,
      ]);
      return opened[0];
    },

    /**
     * Fails the job with `error`, deletes its tasks (never claimable: the job never reached `labeling`) and
     * returns the quota they still hold (a task the customer canceled meanwhile returned its own already).
     */
    async fail(jobId: string, customerId: string, error: string): Promise<void> {
      await transactionRows(pool, [
        Prisma.sql`SELECT 1 FROM jobs WHERE id = ${jobId} FOR UPDATE`,
        Prisma.sql`
          WITH gone AS (
            DELETE FROM tasks WHERE job_id = ${jobId} AND (status IN ('pending', 'canceled') OR status = 'staged')
            RETURNING status, quota_reserved
          )
          ${releaseSql(customerId, Prisma.sql`(SELECT COALESCE(sum(quota_reserved) FILTER (WHERE status <> 'canceled'), 0) FROM gone)`)}`,
        Prisma.sql`UPDATE jobs SET status = 'failed', error = ${error}, task_count = 0, updated_at = now() WHERE id = ${jobId}`,
      ]);
    },

    /** Completes a `labeling` job none of whose tasks is unfinished (reconciliation). Returns true when it did. */
    async completeIfDone(jobId: string): Promise<boolean> {
      const [, completed] = await transactionRows<[object, { id: string }]>(pool, completeJobSql(jobId));
      return completed.length > 0;
    },

    /** Records that a completed job's export was written to its output_url. */
    exportWritten: (jobId: string): Promise<unknown> => prisma.job.update({ where: { id: jobId }, data: { exportWrittenAt: new Date() } }),

    /** Records why a completed job's export could not be written to its output_url. */
    exportFailed: (jobId: string, error: string): Promise<unknown> => prisma.job.update({ where: { id: jobId }, data: { error } }),

    /**
     * A readable stream of the job's export lines (one per manifest line other than gold lines, in manifest order:
     * `{task_id, data_url, consensus_label, confidence, ledger_txid, settled_at, source}`; a reserved type's
     * lines add `consensus`, bounding_box's `annotations` and text_span's `item_error`: `typedExportFields`), read
     * page by page along the (job_id, manifest_line) index, one page per `read()`: constant memory and backpressure at
     * any size. Each line is built as a string: the same bytes as `JSON.stringify` of that object. It is
     * destroyed with the database error if a page fails.
     */
    exportStream(jobId: string): Readable {
      let after = 0;
      return new Readable({
        async read() {
          try {
            const [jobs, rows] = await transactionRows<[{ task_type: string; label_spec: AnyLabelSpec | null }, ExportRow]>(pool, [
              Prisma.sql`SELECT task_type, label_spec FROM jobs WHERE id = ${jobId}`,
              Prisma.sql`
                SELECT manifest_line, id, data_url, consensus_label, confidence, consensus::text AS consensus, item_error, ledger_txid,
                       to_char(settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS settled_at, source::text AS source
                FROM tasks WHERE job_id = ${jobId} AND manifest_line > ${after} AND gold_label IS NULL
                ORDER BY manifest_line LIMIT ${EXPORT_PAGE}`,
            ]);
            // the job's type and classes (one row by its key, with each page): a reserved type's lines add its fields
            const job = jobs[0];
            const typed =
              job && isReservedTaskType(job.task_type) && job.label_spec !== null
                ? { type: job.task_type, classes: choicesOf(job.label_spec) }
                : null;
            if (rows.length === 0) {
              this.push(null);
              return;
            }
            after = (rows[rows.length - 1] as ExportRow).manifest_line;
            let chunk = "";
            for (const r of rows) {
              chunk +=
                `{"task_id":${JSON.stringify(r.id)},"data_url":${JSON.stringify(r.data_url)},` +
                `"consensus_label":${JSON.stringify(r.consensus_label)},"confidence":${JSON.stringify(r.confidence)}` +
                (typed ? typedExportFields(typed.type, typed.classes, r) : "") +
                `,"ledger_txid":${JSON.stringify(r.ledger_txid)},"settled_at":${r.settled_at === null ? "null" : `"${r.settled_at}"`},` +
                `"source":${JSON.stringify((r.source === null ? null : JSON.parse(r.source)) ?? {})}}\n`;
            }
            this.push(chunk);
          } catch (err) {
            this.destroy(err as Error);
          }
        },
      });
    },
  };
}

export type JobsStore = ReturnType<typeof jobsStore>;
