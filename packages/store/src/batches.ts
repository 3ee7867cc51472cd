/**
 * Batches: the customer's list of batches, newest first, each with its tasks counted by status
 * (`GET /v1/batches`, contract §wire). One statement reads a page of batches and the counts of all
 * of them (`tasks_batch_id_status_idx`); the page itself walks `batches_customer_id_created_at_id_idx`.
 */
import { type TaskCounts, zeroTaskCounts } from "@labelgate/api";
import type { Db } from "./database";
import { type Batch, Prisma } from "./generated/client";
import { queryRows } from "./sql";

/** One batch of a page with its tasks other than gold tasks counted by status, and its gold tasks. */
export interface BatchWithCounts {
  batch: Batch;
  counts: TaskCounts;
  goldTasks: number;
}

interface PageRow {
  id: string;
  customer_id: string;
  task_count: number;
  callback_url: string | null;
  idempotency_key: string | null;
  request_hash: string | null;
  created_at: Date;
  /** `{status: n}` of the batch's tasks other than gold tasks (staged included: the caller drops it) */
  counts: Record<string, number> | null;
  gold_tasks: number;
  total: number;
}

/**
 * The page of a customer's batches, newest first (`created_at DESC, id DESC`), with `total` (the count of
 * all the customer's batches), in one statement. `page` from 1, `perPage` 1..100.
 */
export function batchPageSql(customerId: string, page: number, perPage: number): Prisma.Sql {
  return Prisma.sql`
    WITH p AS (
      SELECT * FROM batches WHERE customer_id = ${customerId}
      ORDER BY created_at DESC, id DESC
      OFFSET ${(page - 1) * perPage} LIMIT ${perPage}
    ),
    c AS (
      SELECT t.batch_id, t.status::text AS status, count(*) FILTER (WHERE t.gold_label IS NULL)::int AS n,
             count(*) FILTER (WHERE t.gold_label IS NOT NULL)::int AS gold
      FROM tasks t WHERE t.batch_id IN (SELECT id FROM p)
      GROUP BY t.batch_id, t.status
    )
    SELECT p.id, p.customer_id, p.task_count, p.callback_url, p.idempotency_key, p.request_hash, p.created_at,
           (SELECT jsonb_object_agg(c.status, c.n) FROM c WHERE c.batch_id = p.id AND c.n > 0) AS counts,
           COALESCE((SELECT sum(c.gold) FROM c WHERE c.batch_id = p.id), 0)::int AS gold_tasks,
           (SELECT count(*) FROM batches WHERE customer_id = ${customerId})::int AS total
    FROM p
    ORDER BY p.created_at DESC, p.id DESC`;
}

/** The batches store over one database. */
/** One label of a compared pair (`batchesStore.comparisons`): its task's items, space, labeler and stored value. */
export interface ComparisonLabel {
  data_url: string;
  data_text: string | null;
  data_url_b: string | null;
  data_text_b: string | null;
  label_space_id: string;
  labeler_id: string;
  value: string;
}

/** A label space of compared pairs: its label_spec and stored model (space row and labelers' rows). */
export interface ComparisonSpace {
  id: string;
  label_spec: unknown;
  model: unknown;
  labelers: { labeler_id: string; params: unknown }[];
}

export function batchesStore(db: Db) {
  const { pool } = db;
  return {
    /**
     * Every label of the batch's (or the job's) tasks of `taskType` (the ranking of pairwise comparisons, contract
     * §task-types), gold tasks included (their labels are comparisons too), and the label spaces of those tasks
     * with their stored models; null when the customer has no such batch or job.
     */
    async comparisons(
      customerId: string,
      scope: { kind: "batch" | "job"; id: string },
      taskType: string,
    ): Promise<{ labels: ComparisonLabel[]; spaces: ComparisonSpace[] } | null> {
      const owner =
        scope.kind === "batch"
          ? Prisma.sql`SELECT id FROM batches WHERE id = ${scope.id} AND customer_id = ${customerId}`
          : Prisma.sql`SELECT id FROM jobs WHERE id = ${scope.id} AND customer_id = ${customerId}`;
      const found = await queryRows<{ id: string }>(pool, owner);
      if (found.length === 0) return null;
      const ofScope = scope.kind === "batch" ? Prisma.sql`t.batch_id = ${scope.id}` : Prisma.sql`t.job_id = ${scope.id}`;
      const labels = await queryRows<ComparisonLabel>(
        pool,
        Prisma.sql`
          SELECT t.data_url, t.data_text, t.data_url_b, t.data_text_b, t.label_space_id, l.labeler_id, l.value
          FROM tasks t JOIN labels l ON l.task_id = t.id
          WHERE ${ofScope} AND t.task_type = ${taskType}
          ORDER BY t.id, l.created_at, l.id`,
      );
      const ids = [...new Set(labels.map((l) => l.label_space_id))];
      if (ids.length === 0) return { labels, spaces: [] };
      const spaces = await queryRows<{ id: string; label_spec: unknown; model: unknown }>(
        pool,
        Prisma.sql`SELECT id, label_spec, model FROM label_spaces WHERE id = ANY(${ids}::text[]) ORDER BY id`,
      );
      const rows = await queryRows<{ label_space_id: string; labeler_id: string; params: unknown }>(
        pool,
        Prisma.sql`SELECT label_space_id, labeler_id, params FROM labeler_models
                   WHERE label_space_id = ANY(${ids}::text[]) AND params IS NOT NULL ORDER BY label_space_id, labeler_id`,
      );
      return {
        labels,
        spaces: spaces.map((sp) => ({
          ...sp,
          labelers: rows.filter((r) => r.label_space_id === sp.id).map((r) => ({ labeler_id: r.labeler_id, params: r.params })),
        })),
      };
    },
    /**
     * A page of the customer's batches, newest first, each as `tasks.batch()` reads one, and the count of
     * all of them. An empty page past the end still answers the total (a second statement, only then).
     */
    async list(customerId: string, page: number, perPage: number): Promise<{ total: number; items: BatchWithCounts[] }> {
      const rows = await queryRows<PageRow>(pool, batchPageSql(customerId, page, perPage));
      const total =
        rows[0]?.total ??
        (await queryRows<{ n: number }>(pool, Prisma.sql`SELECT count(*)::int AS n FROM batches WHERE customer_id = ${customerId}`))[0]
          ?.n ??
        0;
      const items = rows.map((r): BatchWithCounts => {
        const counts = zeroTaskCounts();
        for (const [status, n] of Object.entries(r.counts ?? {})) {
          if (status !== "staged" && status in counts) counts[status as keyof TaskCounts] = n;
        }
        return {
          batch: {
            id: r.id,
            customerId: r.customer_id,
            taskCount: r.task_count,
            callbackUrl: r.callback_url,
            idempotencyKey: r.idempotency_key,
            requestHash: r.request_hash,
            createdAt: r.created_at,
          },
          counts,
          goldTasks: r.gold_tasks,
        };
      });
      return { total, items };
    },
  };
}

export type BatchesStore = ReturnType<typeof batchesStore>;
