/**
 * Items fetched after their task was created (contract §task-types, docs/decisions/0194): a task whose kind labels a text
 * (`text_span`) and that came without `data_text` is created `item_pending`, not claimable; the manifest worker
 * fetches the body of its `data_url` (`itemFetch` queue) and stores it here, which makes the task claimable. A
 * fetch that cannot succeed cancels the task with the reason (`item_error`), returning its quota and, when it
 * was the last open task of a manifest job, completing the job. Both writes are conditional on the task still
 * waiting for its item, so a fetch run twice (a retry, a requeue by the reconciliation) changes nothing twice.
 */
import type { FollowUps } from "@labelgate/queue";
import type { Db } from "./database";
import { Prisma } from "./generated/client";
import { type CompletedJobRow, completeJobSql, eventIdOf, routeFollowUps, taskCanceledEventSql } from "./jobs";
import { assertTransition, type TaskStatus } from "./lifecycle";
import { releaseSql } from "./quota";
import { queryRows, withTransaction } from "./sql";

/** What the fetch of a task's item needs: where it is, and the manifest job whose credentials may read it. */
export interface PendingItem {
  taskId: string;
  customerId: string;
  dataUrl: string;
  /** the manifest job the task came from (its sealed storage credentials read s3:// and gs:// items), or null */
  jobId: string | null;
}

export function itemsStore(db: Db) {
  const { pool } = db;
  return {
    /** The task's item to fetch, or undefined when the task is gone or no longer waits for it (open and `item_pending`). */
    async pending(taskId: string): Promise<PendingItem | undefined> {
      const [row] = await queryRows<{ id: string; customer_id: string; data_url: string; job_id: string | null }>(
        pool,
        Prisma.sql`SELECT id, customer_id, data_url, job_id FROM tasks WHERE id = ${taskId} AND item_pending AND status = 'pending'`,
      );
      return row && { taskId: row.id, customerId: row.customer_id, dataUrl: row.data_url, jobId: row.job_id };
    },

    /**
     * Stores the fetched text of a task waiting for its item and makes it claimable (`item_pending` cleared).
     * @returns `stored`, or `skipped` when the task no longer waits (stored before, canceled, deleted)
     */
    async storeText(taskId: string, text: string): Promise<"stored" | "skipped"> {
      const rows = await queryRows<{ id: string }>(
        pool,
        Prisma.sql`
          UPDATE tasks SET data_text = ${text}, item_pending = false, updated_at = now()
          WHERE id = ${taskId} AND item_pending AND status = 'pending'
          RETURNING id`,
      );
      return rows.length > 0 ? "stored" : "skipped";
    },

    /**
     * Cancels a task whose item cannot be fetched, with the reason (`item_error`): its quota reservation is
     * returned and, when it was the last open task of a manifest job, the job completes in the same
     * transaction and its export follows (`followUps`, for the caller to dispatch). Only a task still waiting
     * for its item (`pending`, `item_pending`) is canceled.
     * @returns `canceled` with its follow-ups, or `skipped` (nothing written)
     */
    async fail(taskId: string, reason: string): Promise<{ outcome: "canceled" | "skipped"; followUps: FollowUps }> {
      return withTransaction(pool, async (run) => {
        const [, rows] = await run<
          [object, { status: TaskStatus; customer_id: string; job_id: string | null; quota_reserved: number; labels_collected: number }]
        >([
          Prisma.sql`SELECT id FROM tasks WHERE id = ${taskId} FOR UPDATE`,
          Prisma.sql`
            SELECT status::text AS status, customer_id, job_id, quota_reserved, labels_collected FROM tasks
            WHERE id = ${taskId} AND item_pending AND status = 'pending'`,
        ]);
        const row = rows[0];
        if (!row) return { outcome: "skipped" as const, followUps: {} };
        assertTransition(row.status, "canceled");
        const done = await run<object[]>(
          [
            Prisma.sql`
              UPDATE tasks SET status = 'canceled', canceled_at = now(), item_pending = false, item_error = ${reason.slice(0, 2000)},
                updated_at = now()
              WHERE id = ${taskId}`,
            releaseSql(row.customer_id, Math.max(0, row.quota_reserved - row.labels_collected)),
            // the event catalog's task.canceled, in the cancellation's transaction (contract §events)
            taskCanceledEventSql(taskId, {
              event: "task.canceled",
              task_id: taskId,
              reason: "item_unreadable",
              item_error: reason.slice(0, 2000),
            }),
            ...(row.job_id ? completeJobSql(row.job_id) : []),
          ],
          { commit: true },
        );
        const events = (done[2] ?? []) as { id: string }[];
        const jobRows = (done[4] ?? []) as CompletedJobRow[];
        const completed = row.job_id !== null && jobRows.length > 0;
        return {
          outcome: "canceled" as const,
          followUps: {
            manifestExport: completed && row.job_id ? [{ manifestJobId: row.job_id }] : [],
            ...routeFollowUps([...events, ...jobRows].map(eventIdOf)),
          },
        };
      });
    },
  };
}

export type ItemsStore = ReturnType<typeof itemsStore>;
