/**
 * Response bodies: database rows → wire shapes of SPEC §4 and ../shared/DESIGN.md §3, each typed by the
 * response schema it must satisfy (@labelgate/api), so a view and its documented schema cannot drift apart.
 */
import type * as wire from "@labelgate/api/types";
import type { Batch, Customer, Task } from "@labelgate/store";

/** A task's status as customers see it. @throws on the retired `staged`, which no row takes. */
export function visibleStatus(status: Task["status"]): wire.TaskStatus {
  if (status === "staged") throw new Error("task status 'staged' is retired and never stored");
  return status;
}

/** A stored JSON object (metadata), or null. @throws when the stored value is not an object. */
function objectOrNull(value: Task["metadata"]): Record<string, unknown> | null {
  if (value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) throw new Error("stored metadata is not a JSON object");
  return value as Record<string, unknown>;
}

export function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}

/** `GET /v1/tasks/{id}` (SPEC §4: task_id, status, task_type, data_url, created_at; more fields allowed). */
export function taskView(t: Task): wire.Task {
  return {
    task_id: t.id,
    status: visibleStatus(t.status),
    task_type: t.taskType,
    data_url: t.dataUrl,
    label_spec: { question: t.question, options: t.options },
    created_at: t.createdAt.toISOString(),
    callback_url: t.callbackUrl,
    consensus_threshold: t.consensusThreshold,
    max_labels: t.maxLabels,
    metadata: objectOrNull(t.metadata),
    idempotency_key: t.idempotencyKey,
    batch_id: t.batchId,
    labels_collected: t.labelsCollected,
    consensus_label: t.consensusLabel,
    confidence: t.confidence,
    resolution: t.resolution,
    ledger_txid: t.ledgerTxid,
    settled_at: iso(t.settledAt),
    canceled_at: iso(t.canceledAt),
    /** delivery of the task.settled webhook: pending | delivered | failed (`webhook_fail`), null without a webhook */
    webhook_status: t.webhookStatus,
  };
}

/** `GET /v1/customers/me` (SPEC §4) plus the quota left (DESIGN §6). */
export function customerView(c: Customer, apiKeyHint: string | null): wire.CustomerProfile {
  return {
    customer_id: c.id,
    name: c.name,
    email: c.email,
    tier: c.tier,
    label_quota: c.labelQuota,
    label_quota_used: c.quotaUsed,
    label_quota_remaining: Math.max(0, c.labelQuota - c.quotaUsed),
    created_at: Math.floor(c.createdAt.getTime() / 1000),
    api_key_hint: apiKeyHint,
  };
}

export type { TaskCounts } from "@labelgate/api";

import type { TaskCounts } from "@labelgate/api";

/**
 * `GET /v1/batches/{id}`: status is `accepted` until a task gets a label, `in_progress` while any task is
 * open, `completed` when every task is settled or canceled.
 */
export function batchView(b: Batch, counts: TaskCounts): wire.Batch {
  const open = counts.pending + counts.labeling + counts.settling;
  const status = open === 0 ? "completed" : counts.pending === b.taskCount ? "accepted" : "in_progress";
  return {
    batch_id: b.id,
    task_count: b.taskCount,
    status,
    callback_url: b.callbackUrl,
    created_at: b.createdAt.toISOString(),
    counts,
  };
}
