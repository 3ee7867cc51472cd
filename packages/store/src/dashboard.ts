/**
 * Dashboard (contract §routes Dashboard): overview, the task list, quality and daily usage of the calling customer.
 * Every statement is answered from an index range of that customer (docs/decisions.md "Billing and
 * dashboard"): tasks (customer_id, status, created_at, id), (customer_id, status, settled_at, id) and
 * (customer_id, settled_at, id) (both of settled tasks only), and (customer_id, created_at); labels (customer_id, created_at); deliveries
 * (customer_id, status, created_at). Periods are bounded (this month, 30 or 90 days) so their cost does
 * not grow with the customer's history. The SQL builders are exported so tests can EXPLAIN exactly what
 * the routes run. Time is the database clock; days and months are UTC.
 */

import { RESERVED_TASK_TYPES, TASK_STATUSES, type TaskCounts, type TaskSort, type TaskStatus } from "@labelgate/api";
import type { Db } from "./database";
import { Prisma, type Task } from "./generated/client";

/** Windows of the time-bounded views. */
export const SETTLE_WINDOW_DAYS = 30;
export const DELIVERY_WINDOW_DAYS = 30;
export const QUALITY_WINDOW_DAYS = 90;
export const USAGE_DAYS = 30;

const RESERVED: string[] = [...RESERVED_TASK_TYPES];

const visible = Prisma.sql`ARRAY['pending', 'labeling', 'settling', 'settled', 'canceled']::"TaskStatus"[]`;

// --- overview -------------------------------------------------------------------------------------

/**
 * One statement. Status counts: an index-only scan of (customer_id, status, …) over the customer's tasks
 * (the one view that reads an entry per task: 100,000 tasks ≈ 30 ms). Labels this month: index-only range
 * of labels (customer_id, created_at). Median time to settle: range of tasks (customer_id, settled_at, id)
 * over the window. Deliveries: two index-only ranges of deliveries (customer_id, status, created_at).
 */
export function overviewSql(customerId: string): Prisma.Sql {
  return Prisma.sql`
    SELECT c.label_quota, c.quota_used,
      (SELECT COALESCE(json_object_agg(g.status, g.n), '{}'::json) FROM (
        SELECT status::text AS status, count(*)::int AS n FROM tasks
        WHERE customer_id = ${customerId} AND status = ANY(${visible}) GROUP BY status) g) AS tasks_by_status,
      (SELECT count(*)::int FROM labels
        WHERE customer_id = ${customerId} AND created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') AS labels_this_month,
      (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM settled_at - created_at))::float8 FROM tasks
        WHERE customer_id = ${customerId} AND settled_at >= now() - make_interval(days => ${SETTLE_WINDOW_DAYS}::int)) AS median_seconds_to_settle,
      (SELECT count(*)::int FROM deliveries WHERE customer_id = ${customerId} AND status = 'delivered'
        AND created_at >= now() - make_interval(days => ${DELIVERY_WINDOW_DAYS}::int)) AS deliveries_delivered,
      (SELECT count(*)::int FROM deliveries WHERE customer_id = ${customerId} AND status = 'failed'
        AND created_at >= now() - make_interval(days => ${DELIVERY_WINDOW_DAYS}::int)) AS deliveries_failed
    FROM customers c WHERE c.id = ${customerId}`;
}

export interface OverviewRow {
  label_quota: number;
  quota_used: number;
  tasks_by_status: Partial<TaskCounts>;
  labels_this_month: number;
  median_seconds_to_settle: number | null;
  deliveries_delivered: number;
  deliveries_failed: number;
}

// --- tasks ----------------------------------------------------------------------------------------

export interface TaskListOptions {
  status?: TaskStatus;
  sort: TaskSort;
  limit: number;
  offset: number;
}

/** Count of the list: index-only scan of (customer_id, status, …). */
export function taskCountSql(customerId: string, status: TaskStatus | undefined): Prisma.Sql {
  return status
    ? Prisma.sql`SELECT count(*)::int AS total FROM tasks WHERE customer_id = ${customerId} AND status = ${status}::"TaskStatus"`
    : Prisma.sql`SELECT count(*)::int AS total FROM tasks WHERE customer_id = ${customerId} AND status = ANY(${visible})`;
}

/** Statuses whose tasks have no `settled_at` (only settlement sets it). */
const UNSETTLED_STATUSES = TASK_STATUSES.filter((s) => s !== "settled");

/**
 * Ids of one page, in order. Each shape walks one index in its order and stops after offset + limit entries:
 * - a status and created_at: (customer_id, status, created_at, id), forwards or backwards;
 * - every status and created_at: (customer_id, created_at), `id` breaking ties by an incremental sort of
 *   tasks created in one transaction (at most a batch: 10,000);
 * - `settled` and settled_at: (customer_id, status, settled_at, id), which holds settled tasks only;
 * - another status and settled_at: no task of it is settled, so newest first like created_at_desc;
 * - every status and settled_at: settled tasks, most recently settled first, from (customer_id, settled_at,
 *   id), then the others newest first: one range of (customer_id, status, created_at, id) per unsettled
 *   status, each cut at offset + limit; the final sort sees at most 5 × (offset + limit) ids.
 * The settled_at indexes hold settled tasks only (migration 20261121220000_cheaper_task_writes): a new
 * task, whose `settled_at` is null, is not written into them, which made creating tasks 25% cheaper.
 */
export function taskPageSql(customerId: string, o: TaskListOptions): Prisma.Sql {
  const { limit, offset } = o;
  if (o.sort === "settled_at_desc") {
    if (o.status === "settled") {
      return Prisma.sql`SELECT id FROM tasks WHERE customer_id = ${customerId} AND status = 'settled' AND settled_at IS NOT NULL
        ORDER BY settled_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`;
    }
    if (o.status) return taskPageSql(customerId, { ...o, sort: "created_at_desc" });
    const upTo = offset + limit;
    const unsettled = UNSETTLED_STATUSES.map(
      (status) => Prisma.sql`
        (SELECT id, 1 AS part, NULL::timestamptz AS settled_at, created_at FROM tasks
          WHERE customer_id = ${customerId} AND status = ${status}::"TaskStatus"
          ORDER BY created_at DESC, id DESC LIMIT ${upTo})`,
    );
    return Prisma.sql`
      SELECT id FROM (
        (SELECT id, 0 AS part, settled_at, created_at FROM tasks WHERE customer_id = ${customerId} AND settled_at IS NOT NULL
          ORDER BY settled_at DESC, id DESC LIMIT ${upTo})
        UNION ALL ${Prisma.join(unsettled, " UNION ALL ")}
      ) p
      ORDER BY part, settled_at DESC, created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`;
  }
  const where = o.status
    ? Prisma.sql`customer_id = ${customerId} AND status = ${o.status}::"TaskStatus"`
    : Prisma.sql`customer_id = ${customerId} AND status <> 'staged'`;
  const order = o.sort === "created_at_asc" ? Prisma.sql`created_at ASC, id ASC` : Prisma.sql`created_at DESC, id DESC`;
  return Prisma.sql`SELECT id FROM tasks WHERE ${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`;
}

// --- quality --------------------------------------------------------------------------------------

/**
 * Over the customer's tasks settled in the last QUALITY_WINDOW_DAYS: one range of tasks (customer_id,
 * settled_at, id). Agreement uses the per-option counts recorded at settlement (`label_counts`, the task's
 * labels), so no label row is read, and only single-choice tasks with at least 2 labels: a task's only label
 * is its consensus by construction, and counting it would report agreement where no two labelers were
 * compared; a reserved type's answer is judged part by part (its `label_counts` count names, not answers
 * equal to the consensus). `labels` and `agreeing` are 0 when no such task settled; the route then answers null.
 */
export function qualitySql(customerId: string): Prisma.Sql {
  return Prisma.sql`
    WITH s AS MATERIALIZED (
      SELECT confidence, resolution::text AS resolution, labels_collected,
        COALESCE((label_counts ->> consensus_label)::int, 0) AS agreeing,
        labels_collected >= 2 AND NOT (task_type = ANY(${RESERVED}::text[])) AS compared
      FROM tasks
      WHERE customer_id = ${customerId} AND settled_at >= now() - make_interval(days => ${QUALITY_WINDOW_DAYS}::int)
    )
    SELECT count(*)::int AS tasks_settled,
      avg(confidence)::float8 AS mean_confidence,
      count(*) FILTER (WHERE resolution = 'consensus')::int AS consensus,
      count(*) FILTER (WHERE resolution = 'confidence')::int AS confidence,
      count(*) FILTER (WHERE resolution = 'max_labels')::int AS max_labels,
      COALESCE(sum(labels_collected) FILTER (WHERE compared), 0)::float8 AS labels,
      COALESCE(sum(agreeing) FILTER (WHERE compared), 0)::float8 AS agreeing,
      (SELECT COALESCE(json_agg(json_build_object('labels', d.labels, 'tasks', d.tasks) ORDER BY d.labels), '[]'::json)
        FROM (SELECT labels_collected AS labels, count(*)::int AS tasks FROM s GROUP BY labels_collected) d) AS labels_per_task
    FROM s`;
}

export interface QualityRow {
  tasks_settled: number;
  mean_confidence: number | null;
  consensus: number;
  confidence: number;
  max_labels: number;
  /** labels of the settled single-choice tasks with at least 2 labels */
  labels: number;
  /** of those, the labels equal to their task's consensus label */
  agreeing: number;
  labels_per_task: { labels: number; tasks: number }[];
}

// --- usage ----------------------------------------------------------------------------------------

/** Labels per UTC day, the last USAGE_DAYS days including today, zeros included: one index-only range of labels. */
export function usageDaysSql(customerId: string): Prisma.Sql {
  return Prisma.sql`
    WITH bounds AS (SELECT (now() AT TIME ZONE 'UTC')::date AS today),
    days AS (
      SELECT (b.today - n) AS day FROM bounds b, generate_series(0, ${USAGE_DAYS - 1}::int) AS n
    ),
    counted AS (
      SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*)::int AS labels FROM labels
      WHERE customer_id = ${customerId}
        AND created_at >= ((SELECT today FROM bounds) - ${USAGE_DAYS - 1}::int)::timestamp AT TIME ZONE 'UTC'
      GROUP BY 1
    )
    SELECT to_char(d.day, 'YYYY-MM-DD') AS date, COALESCE(c.labels, 0)::int AS labels
    FROM days d LEFT JOIN counted c ON c.day = d.day
    ORDER BY d.day`;
}

// --- reads ----------------------------------------------------------------------------------------

/** Dashboard reads of the store: each one statement per view (the task list two, then its rows). */
export function dashboardStore(db: Db) {
  const { prisma } = db;
  return {
    /** @throws when the customer vanished (customers are never deleted) */
    async overview(customerId: string): Promise<OverviewRow | undefined> {
      return (await prisma.$queryRaw<OverviewRow[]>(overviewSql(customerId)))[0];
    },
    /** One page of the customer's tasks in the asked order, and the total of the list. */
    async tasks(customerId: string, o: TaskListOptions): Promise<{ total: number; items: Task[] }> {
      const total = (await prisma.$queryRaw<{ total: number }[]>(taskCountSql(customerId, o.status)))[0]?.total ?? 0;
      // A page past the end reads nothing (an offset beyond the total would walk every task of the customer).
      if (o.offset >= total) return { total, items: [] };
      const ids = (await prisma.$queryRaw<{ id: string }[]>(taskPageSql(customerId, o))).map((r) => r.id);
      const rows = await prisma.task.findMany({ where: { id: { in: ids }, customerId } });
      const byId = new Map(rows.map((t) => [t.id, t]));
      return { total, items: ids.flatMap((id) => byId.get(id) ?? []) };
    },
    async quality(customerId: string): Promise<QualityRow> {
      return (await prisma.$queryRaw<QualityRow[]>(qualitySql(customerId)))[0] as QualityRow;
    },
    usageDays: (customerId: string) => prisma.$queryRaw<{ date: string; labels: number }[]>(usageDaysSql(customerId)),
  };
}

export type DashboardStore = ReturnType<typeof dashboardStore>;
