/**
 * Response bodies: database rows → wire shapes of contract §routes, §lifecycle, each typed by the
 * response schema it must satisfy (@labelgate/api), so a view and its documented schema cannot drift apart.
 */
import { isReservedTaskType, storedLabelSpec, WEBHOOK_EVENTS } from "@labelgate/api";
import type * as wire from "@labelgate/api/types";
import {
  type AnchoredRecord,
  type AuditRow,
  type Batch,
  type Customer,
  type DeliveryWithAttempts,
  evmSettlementOf,
  type InvoiceRow,
  type Job,
  type LabelRecord,
  type LedgerEntry,
  type ReviewRow,
  type RevisionRow,
  type StoredSettings,
  type Task,
  type TrainingFeedback,
  type Webhook,
} from "@labelgate/store";

/** A task's status as customers see it. @throws on the retired `staged`, which no row takes. */
export function visibleStatus(status: Task["status"]): wire.TaskStatus {
  if (status === "staged") throw new Error("task status 'staged' is retired and never stored");
  return status;
}

/** A stored JSON object (metadata, label counts, posterior), or null. @throws when the stored value is not an object. */
function objectOrNull<T = unknown>(value: Task["metadata"]): Record<string, T> | null {
  if (value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) throw new Error("stored JSON is not an object");
  return value as Record<string, T>;
}

export function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}

/** A task's gold fields (contract §quality): for a gold task its label, answers and their agreement with it. */
function goldFields(t: Task): Pick<wire.Task, "gold" | "gold_label" | "gold_answers" | "gold_agreement" | "gold_answer"> {
  if (t.goldLabel === null) return { gold: false, gold_label: null, gold_answers: null, gold_agreement: null };
  if (isReservedTaskType(t.taskType)) {
    // a reserved type's answers are not counted per gold answer: its labelers' gold records are (dashboard)
    const gold_answer = JSON.parse(t.goldLabel) as wire.AnswerBody;
    return { gold: true, gold_label: t.goldLabel, gold_answer, gold_answers: t.labelsCollected, gold_agreement: null };
  }
  const counts = objectOrNull<number>(t.labelCounts) ?? {};
  const agreeing = counts[t.goldLabel] ?? 0;
  return {
    gold: true,
    gold_label: t.goldLabel,
    gold_answers: t.labelsCollected,
    gold_agreement: t.labelsCollected > 0 ? Math.round((agreeing / t.labelsCollected) * 10_000) / 10_000 : null,
  };
}

/**
 * The fields of a reserved type's task (contract §task-types): its text, why its text could not be fetched, its consensus once
 * decided. Empty for single choice.
 */
function typedFields(t: Task): Pick<wire.Task, "data_text" | "data_url_b" | "data_text_b" | "item_error" | "consensus"> {
  if (!isReservedTaskType(t.taskType)) return {};
  return {
    ...(t.dataText !== null ? { data_text: t.dataText } : {}),
    ...(t.dataUrlB !== null ? { data_url_b: t.dataUrlB } : {}),
    ...(t.dataTextB !== null ? { data_text_b: t.dataTextB } : {}),
    ...(t.itemError !== null ? { item_error: t.itemError } : {}),
    consensus: (t.consensus as wire.Task["consensus"]) ?? null,
  };
}

/** What the gateway knows of the chain a deployment settles on (the runtime's or its own probe of EVM_RPC_URL). */
export interface ChainState {
  /** since when the chain's RPC has not answered; undefined while it answers */
  unavailableSince(): Date | undefined;
}

/**
 * `waiting_for` of `GET /v1/tasks/{id}` (decision 0202): null unless the task is `settling`. Without a chain
 * (local ledger) a settling task waits for the consensus worker's ledger write; with one, for its anchor's
 * confirmation, or for the chain itself while its RPC does not answer (since the later of the decision
 * and the outage's start).
 */
export function waitingFor(t: Task, chain: ChainState | undefined): wire.Task["waiting_for"] {
  if (t.status !== "settling") return null;
  const decidedAt = t.lastLabelAt ?? t.updatedAt;
  if (!chain) return { reason: "settlement", since: decidedAt.toISOString() };
  const down = chain.unavailableSince();
  if (!down) return { reason: "anchor_confirmation", since: decidedAt.toISOString() };
  return { reason: "chain_unavailable", since: new Date(Math.max(down.getTime(), decidedAt.getTime())).toISOString() };
}

/** `GET /v1/tasks/{id}` (contract §routes: task_id, status, task_type, data_url, created_at; more fields allowed); `reviews` when given. */
export function taskView(t: Task, reviews?: ReviewRow[]): wire.Task {
  return {
    task_id: t.id,
    status: visibleStatus(t.status),
    task_type: t.taskType,
    data_url: t.dataUrl,
    label_spec: storedLabelSpec(t),
    ...typedFields(t),
    created_at: t.createdAt.toISOString(),
    callback_url: t.callbackUrl,
    consensus_threshold: t.consensusThreshold,
    max_labels: t.maxLabels,
    confidence_target: t.confidenceTarget,
    min_labels: t.minLabels,
    min_gain: t.minGain,
    ...goldFields(t),
    metadata: objectOrNull(t.metadata),
    idempotency_key: t.idempotencyKey,
    batch_id: t.batchId,
    labels_collected: t.labelsCollected,
    consensus_label: t.consensusLabel,
    confidence: t.confidence,
    resolution: t.resolution,
    posterior: objectOrNull<number>(t.posterior),
    ledger_txid: t.ledgerTxid,
    settled_at: iso(t.settledAt),
    canceled_at: iso(t.canceledAt),
    /** delivery of the task.settled webhook: pending | delivered | failed (`webhook_fail`), null without a webhook */
    webhook_status: t.webhookStatus,
    revision: t.revision,
    ...(reviews ? { reviews: reviews.map(reviewView) } : {}),
  };
}

/** A stored review (docs/decisions/0260). */
export function reviewView(r: ReviewRow): wire.Review {
  return {
    review_id: r.id,
    task_id: r.task_id,
    verdict: r.verdict,
    answer: r.answer,
    revision: r.revision,
    consensus_label: r.consensus_label,
    confidence: r.confidence,
    revised: r.revised,
    created_at: r.created_at.toISOString(),
  };
}

/** The `settlement` of a ledger record: its anchor when the result's txid is the anchor's (LEDGER=evm), else the local record. */
function settlementView(
  ledgerTxid: string | null,
  entry: { payload: unknown; seq: bigint; prevHash: string; txid: string; createdAt: Date },
  anchored?: AnchoredRecord,
): wire.SettledResult["settlement"] {
  return anchored && anchored.txHash === ledgerTxid
    ? evmSettlementOf(anchored, entry)
    : {
        ledger_txid: entry.txid as wire.SettledResult["settlement"]["ledger_txid"],
        ledger: "local",
        sequence: Number(entry.seq),
        prev_hash: entry.prevHash,
        recorded_at: entry.createdAt.toISOString(),
      };
}

/** An earlier revision of a result as it was settled, with its settlement (docs/decisions/0261). */
export function revisionView(r: RevisionRow, taskType: string, anchored?: AnchoredRecord): wire.ResultRevision {
  return {
    task_id: r.task_id,
    revision: r.revision,
    consensus_label: r.consensus_label,
    confidence: r.confidence,
    resolution: r.resolution as wire.ResultRevision["resolution"],
    label_counts: r.label_counts,
    posterior: r.posterior,
    ...(isReservedTaskType(taskType) && r.consensus !== null ? { consensus: r.consensus as wire.ResultRevision["consensus"] } : {}),
    labels_collected: r.labels_collected,
    settled_at: r.settled_at.toISOString(),
    settlement: settlementView(r.ledger_txid, r.entry, anchored),
  };
}

/** An audit with its task (`GET /v1/audits`, docs/decisions/0262). */
export function auditView(a: AuditRow): wire.Audit {
  return {
    task_id: a.task_id,
    status: a.status,
    label_space_id: a.label_space_id,
    task_type: a.task_type,
    data_url: a.data_url,
    label_spec: storedLabelSpec({ labelSpec: a.label_spec, question: a.question, options: a.options }),
    ...(a.data_text !== null ? { data_text: a.data_text } : {}),
    consensus_label: a.consensus_label,
    ...(isReservedTaskType(a.task_type) ? { consensus: (a.consensus as wire.Audit["consensus"]) ?? null } : {}),
    confidence: a.confidence,
    resolution: a.resolution as wire.Audit["resolution"],
    revision: a.revision,
    settled_at: iso(a.settled_at),
    created_at: a.created_at.toISOString(),
    closed_at: iso(a.closed_at),
    review_id: a.review_id,
  };
}

/** `GET /v1/customers/me` (contract §routes) plus the quota left (contract §accounts). */
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
 * `GET /v1/tasks/{id}/result` of a settled task: its decision and its settlement record (docs/contract.md
 * §3, §5), with its revision and the earlier ones (`revisions`, oldest first, each with its settlement).
 * @throws when the settled task lacks a decision field (a broken invariant, a 500).
 */
export function resultView(
  t: Task,
  entry: LedgerEntry,
  anchored?: AnchoredRecord,
  revisions: wire.ResultRevision[] = [],
): wire.SettledResult {
  if (t.status !== "settled" || !t.settledAt || t.consensusLabel === null || t.confidence === null || t.resolution === null) {
    throw new Error(`settled task ${t.id} lacks its decision`);
  }
  const posterior = objectOrNull<number>(t.posterior);
  const counts = objectOrNull<number>(t.labelCounts);
  if (!posterior || !counts) throw new Error(`settled task ${t.id} lacks its posterior or label counts`);
  return {
    task_id: t.id,
    status: "settled",
    revision: t.revision,
    revisions,
    consensus_label: t.consensusLabel,
    confidence: t.confidence,
    resolution: t.resolution,
    label_counts: counts,
    posterior,
    ...(isReservedTaskType(t.taskType) && t.consensus !== null ? { consensus: t.consensus as wire.SettledResult["consensus"] } : {}),
    labels_collected: t.labelsCollected,
    settled_at: t.settledAt.toISOString(),
    // LEDGER=evm: the anchor the task was settled with (its ledger_txid), the proof as stored at batch close
    settlement: settlementView(t.ledgerTxid, entry, anchored),
  };
}

/**
 * `GET /v1/batches/{id}`: `counts` and `status` cover the batch's tasks other than gold tasks (which never
 * settle); status is `accepted` until such a task gets a label, `in_progress` while any is open, `completed`
 * when every one is settled or canceled.
 */
export function batchView(b: Batch, counts: TaskCounts, goldTasks: number): wire.Batch {
  const open = counts.pending + counts.labeling + counts.settling;
  const status = open === 0 ? "completed" : counts.pending === b.taskCount - goldTasks ? "accepted" : "in_progress";
  return {
    batch_id: b.id,
    task_count: b.taskCount,
    status,
    callback_url: b.callbackUrl,
    created_at: b.createdAt.toISOString(),
    counts,
    gold_tasks: goldTasks,
  };
}

/** `POST /v1/labeling/claims/{claimId}/label` body: the recorded label and the labels its task may still take. */
export function labelView(l: LabelRecord): wire.RecordedLabel {
  return {
    label_id: l.id,
    claim_id: l.claimId,
    task_id: l.taskId,
    label: l.value,
    ...(l.answer ? { answer: l.answer } : {}),
    created_at: l.createdAt.toISOString(),
    labels_needed: l.labelsNeeded,
    ...(l.training ? { training: trainingView(l.training, l.answer !== undefined) } : {}),
  };
}

/** A training answer's feedback (contract §qualification); `reserved`: the gold value is a reserved type's canonical JSON. */
function trainingView(t: TrainingFeedback, reserved: boolean): NonNullable<wire.RecordedLabel["training"]> {
  return {
    correct: t.correct,
    right_answer: reserved ? (JSON.parse(t.goldValue) as wire.RecordedLabel["answer"] & object) : { label: t.goldValue },
    explanation: t.explanation,
    gold_answers: t.goldAnswers,
    gold_correct: t.goldCorrect,
    gold_tasks: t.goldTasks,
    min_accuracy: t.minAccuracy,
    status: t.status,
  };
}

/** A stored webhook's events (validated at registration). @throws on a value no schema allows (a broken invariant). */
function storedEvents(events: string[]): wire.WebhookEventType[] {
  for (const e of events) if (!(WEBHOOK_EVENTS as readonly string[]).includes(e)) throw new Error(`stored webhook event ${e} is unknown`);
  return events as wire.WebhookEventType[];
}

/** A webhook as the webhook routes answer it. */
export function webhookView(w: Webhook): wire.Webhook {
  return {
    webhook_id: w.id,
    callback_url: w.callbackUrl,
    events: storedEvents(w.events),
    active: w.active,
    created_at: w.createdAt.toISOString(),
    deleted_at: w.deletedAt ? w.deletedAt.toISOString() : null,
  };
}

/** A delivery with its attempt log (newest first), as `GET /v1/webhooks/{id}/deliveries` lists it. */
export function deliveryView(d: DeliveryWithAttempts): wire.Delivery {
  return {
    delivery_id: d.id,
    event_id: d.eventId,
    event: storedEvents([d.eventType])[0] as wire.WebhookEventType,
    task_id: d.taskId,
    job_id: d.jobId,
    status: d.status,
    attempts: d.attempts,
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    delivered_at: d.deliveredAt ? d.deliveredAt.toISOString() : null,
    attempt_log: d.attemptsLog.map((a) => ({
      attempt_id: a.id,
      attempt: a.attempt,
      manual: a.manual,
      success: a.success,
      status_code: a.statusCode,
      error: a.error,
      latency_ms: a.latencyMs,
      started_at: a.startedAt.toISOString(),
      finished_at: a.finishedAt.toISOString(),
    })),
  };
}

/** `GET /v1/jobs/{id}` body. `progress` = settled share of the tasks other than gold tasks (0..1). Credentials never appear. */
export function jobView(j: Job, tasksSettled: number): wire.Job {
  return {
    job_id: j.id,
    status: j.status,
    manifest_url: j.manifestUrl,
    label_spec: storedLabelSpec(j),
    type: j.taskType,
    consensus_threshold: j.consensusThreshold,
    max_labels: j.maxLabels,
    confidence_target: j.confidenceTarget,
    min_labels: j.minLabels,
    min_gain: j.minGain,
    callback_url: j.callbackUrl,
    output_url: j.outputUrl,
    task_count: j.taskCount,
    gold_tasks: j.goldTaskCount,
    lines_ingested: j.linesIngested,
    tasks_settled: tasksSettled,
    progress: j.taskCount > j.goldTaskCount ? Math.round((tasksSettled / (j.taskCount - j.goldTaskCount)) * 10_000) / 10_000 : 0,
    error: j.error,
    created_at: j.createdAt.toISOString(),
    started_at: j.startedAt?.toISOString() ?? null,
    ingested_at: j.ingestedAt?.toISOString() ?? null,
    completed_at: j.completedAt?.toISOString() ?? null,
    export_written_at: j.exportWrittenAt?.toISOString() ?? null,
  };
}

/** `GET /v1/billing/invoices` item. */
export function invoiceView(r: InvoiceRow): wire.Invoice {
  return {
    invoice_id: r.id,
    month: r.month,
    status: r.status,
    currency: r.currency,
    labels_collected: r.labels_collected,
    tasks_settled: r.tasks_settled,
    amount_cents: Number(r.amount_cents),
    line_items: r.line_items,
    created_at: r.created_at.toISOString(),
    finalized_at: r.finalized_at ? r.finalized_at.toISOString() : null,
  };
}

/** `GET`/`PATCH /v1/customers/me/settings` body: every field present, unset ones null. */
export function settingsView(stored: StoredSettings): wire.Settings {
  const d = stored.task_defaults ?? {};
  const q = stored.quality ?? {};
  return {
    task_defaults: {
      consensus_threshold: d.consensus_threshold ?? null,
      confidence_target: d.confidence_target ?? null,
      min_labels: d.min_labels ?? null,
      min_gain: d.min_gain ?? null,
      max_labels: d.max_labels ?? null,
    },
    quality: {
      gold_rate: q.gold_rate ?? null,
      min_labeler_accuracy: q.min_labeler_accuracy ?? null,
      min_gold_answers: q.min_gold_answers ?? null,
      audit_rate: q.audit_rate ?? null,
      qualification: q.qualification ?? null,
    },
  };
}
