/**
 * The enumerations of the wire contract, each defined once: every schema, view, SQL statement and client
 * that names a task status, a sort, a tier, ... derives it from here.
 */

/**
 * Task statuses a customer sees (contract §lifecycle): pending → labeling → settling → settled, and
 * canceled from pending or labeling. The database enum also holds `staged`, a retired value that no row
 * takes (see prisma/schema.prisma); it never reaches the wire.
 */
export const TASK_STATUSES = ["pending", "labeling", "settling", "settled", "canceled"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Statuses of a task that still takes labels. */
export const OPEN_TASK_STATUSES = ["pending", "labeling"] as const satisfies readonly TaskStatus[];

/** Sorts of `GET /v1/dashboard/tasks`. */
export const TASK_SORTS = ["created_at_desc", "created_at_asc", "settled_at_desc"] as const;
export type TaskSort = (typeof TASK_SORTS)[number];

/** How a settled task was decided (contract §lifecycle, §quality); `review`: a customer's answer (docs/decisions/0260). */
export const RESOLUTIONS = ["consensus", "confidence", "max_labels", "review", "no_gain"] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export const TIERS = ["sandbox", "production"] as const;
export type Tier = (typeof TIERS)[number];

/** States of one delivery (event × webhook); a task's `webhook_status` takes the same values. */
export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Manifest job statuses (contract §jobs). */
export const JOB_STATUSES = ["queued", "ingesting", "labeling", "completed", "failed"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const BATCH_STATUSES = ["accepted", "in_progress", "completed"] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

export const INVOICE_STATUSES = ["open", "finalized"] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** Counts of tasks by status (every status present, zeros included). */
export type TaskCounts = Record<TaskStatus, number>;

/** A TaskCounts with every status at 0. */
export function zeroTaskCounts(): TaskCounts {
  return { pending: 0, labeling: 0, settling: 0, settled: 0, canceled: 0 };
}
