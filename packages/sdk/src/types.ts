/**
 * Wire types of the labelgate API (SPEC §4, README "API"): request and response bodies exactly as they
 * travel, field names in snake_case. Timestamps are ISO 8601 UTC strings, except the customer's
 * `created_at`, which is Unix seconds (SPEC §4). Money is integer cents.
 */

import type { EvmSettlement, LocalSettlement } from "@labelgate/chain";

// --- shared ---------------------------------------------------------------------------------------

/** The task statuses a customer sees. */
export type TaskStatus = "pending" | "labeling" | "settling" | "settled" | "canceled";
export type Tier = "sandbox" | "production";
/** How a settled task was decided: an option reached the threshold, or `max_labels` was reached (plurality). */
export type Resolution = "consensus" | "max_labels";

/** The question and its answer options (2..50 unique strings). */
export interface LabelSpec {
  question: string;
  options: string[];
}

/** One validation problem of a 400: `path` is dotted (`tasks.3.data_url`). */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** Every error response: `{error, details?, request_id?}` plus route-specific fields (e.g. `status`). */
export interface ErrorBody {
  error: string;
  details?: ErrorDetail[];
  request_id?: string;
  [extra: string]: unknown;
}

/** A page of a list route. */
export interface Page<T> {
  page: number;
  per_page: number;
  total: number;
  items: T[];
}

/** `page` (from 1) and `per_page` (1..100, default 20) of a list route. */
export interface PageQuery {
  page?: number;
  per_page?: number;
}

/** Counts of a customer's (or a batch's) tasks by status. */
export interface TaskCounts {
  pending: number;
  labeling: number;
  settling: number;
  settled: number;
  canceled: number;
}

// --- system ---------------------------------------------------------------------------------------

export interface Health {
  ok: boolean;
  service: string;
  checks: { database: "ok" | "unavailable"; queue: "ok" | "unavailable" };
}

/** `GET /v1/openapi.json`: the OpenAPI 3.1 document (only its top level is typed here). */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, unknown>>;
  [field: string]: unknown;
}

// --- customers ------------------------------------------------------------------------------------

export interface RegisterCustomerRequest {
  name: string;
  email: string;
}

/** `POST /v1/customers` 201: the API key is shown only here. `created_at` is Unix seconds. */
export interface RegisteredCustomer {
  customer_id: string;
  name: string;
  email: string;
  api_key: string;
  tier: Tier;
  label_quota: number;
  created_at: number;
  message: string;
}

/** `GET /v1/customers/me` (and the admin customer views). `created_at` is Unix seconds. */
export interface CustomerProfile {
  customer_id: string;
  name: string;
  email: string;
  tier: Tier;
  label_quota: number;
  label_quota_used: number;
  label_quota_remaining: number;
  created_at: number;
  api_key_hint: string | null;
}

// --- tasks ----------------------------------------------------------------------------------------

/** Body of `POST /v1/tasks`, and each element of a batch's `tasks`. Unknown fields are rejected (400). */
export interface TaskRequest {
  /** e.g. `image_classification` (lowercase letters, digits, `_`) */
  type: string;
  /** http(s), s3:// or gs:// */
  data_url: string;
  label_spec: LabelSpec;
  /** needs an active webhook of this URL (POST /v1/webhooks first) */
  callback_url?: string;
  /** 1..25, default 3 */
  consensus_threshold?: number;
  /** threshold..50, default 2t+1 */
  max_labels?: number;
  /** echoed back */
  metadata?: Record<string, unknown>;
  /** the `Idempotency-Key` header wins over this field */
  idempotency_key?: string;
}

/** `POST /v1/tasks` 202. */
export interface TaskAccepted {
  task_id: string;
  status: TaskStatus;
  created_at: string;
}

/** Body of `POST /v1/tasks/batch` (1..10,000 tasks, 10 MB). */
export interface BatchRequest {
  tasks: TaskRequest[];
  /** applied to every task without its own */
  callback_url?: string;
  idempotency_key?: string;
}

/** `POST /v1/tasks/batch` 202: all tasks were created (in order of `tasks`) or none. */
export interface BatchAccepted {
  batch_id: string;
  task_count: number;
  status: "accepted";
  created_at: string;
  task_ids: string[];
}

/** `GET /v1/tasks/{id}`, `POST /v1/tasks/{id}/cancel` and the items of `GET /v1/dashboard/tasks`. */
export interface Task {
  task_id: string;
  status: TaskStatus;
  task_type: string;
  data_url: string;
  label_spec: LabelSpec;
  created_at: string;
  callback_url: string | null;
  consensus_threshold: number;
  max_labels: number;
  metadata: Record<string, unknown> | null;
  idempotency_key: string | null;
  batch_id: string | null;
  labels_collected: number;
  consensus_label: string | null;
  confidence: number | null;
  resolution: Resolution | null;
  ledger_txid: string | null;
  settled_at: string | null;
  canceled_at: string | null;
  /** delivery of the task.settled webhook; null without a webhook */
  webhook_status: "pending" | "delivered" | "failed" | null;
}

/** `GET /v1/tasks/{id}/result` 202: still being labeled. */
export interface PendingResult {
  task_id: string;
  status: Exclude<TaskStatus, "settled" | "canceled">;
  labels_collected: number;
  consensus_threshold: number;
}

/** `GET /v1/tasks/{id}/result` 200: settled, with its ledger record. */
export interface SettledResult {
  task_id: string;
  status: "settled";
  consensus_label: string;
  confidence: number;
  resolution: Resolution;
  /** option → labels */
  label_counts: Record<string, number>;
  labels_collected: number;
  settled_at: string;
  /** option → posterior probability (DESIGN §3; part of the ledger record of `ledger: "evm"` settlements) */
  posterior?: Record<string, number>;
  /** the ledger record: `ledger: "local"` (hash-chained table only) or `"evm"` (anchored; see verifySettlement) */
  settlement: LocalSettlement | EvmSettlement;
}

export type TaskResult = PendingResult | SettledResult;

/** `GET /v1/batches/{id}`. */
export interface Batch {
  batch_id: string;
  task_count: number;
  status: "accepted" | "in_progress" | "completed";
  callback_url: string | null;
  created_at: string;
  counts: TaskCounts;
}

// --- webhooks -------------------------------------------------------------------------------------

export type WebhookEventType = "task.settled";

export interface WebhookCreateRequest {
  callback_url: string;
  /** at least 16 characters; stored sealed, never returned */
  secret: string;
  /** default `["task.settled"]` */
  events?: WebhookEventType[];
}

/** `POST /v1/webhooks` 201 (no `deleted_at`). */
export interface WebhookCreated {
  webhook_id: string;
  callback_url: string;
  events: WebhookEventType[];
  active: boolean;
  created_at: string;
}

/** `GET /v1/webhooks` items and `DELETE /v1/webhooks/{id}`. */
export interface Webhook extends WebhookCreated {
  deleted_at: string | null;
}

export type DeliveryStatus = "pending" | "delivered" | "failed";

export interface DeliveryAttempt {
  attempt_id: string;
  attempt: number;
  manual: boolean;
  success: boolean;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
  started_at: string;
  finished_at: string;
}

export interface Delivery {
  delivery_id: string;
  event_id: string;
  event: WebhookEventType;
  task_id: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
  /** newest first */
  attempt_log: DeliveryAttempt[];
}

export interface DeliveriesQuery extends PageQuery {
  /** empty or absent: every status */
  status?: DeliveryStatus | "";
}

/** `POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver` 202. */
export interface RedeliveryQueued {
  delivery_id: string;
  attempt_id: string;
  status: "queued";
}

// --- manifest jobs --------------------------------------------------------------------------------

export interface S3Credentials {
  access_key_id: string;
  secret_access_key: string;
  region: string;
  /** S3-compatible stores (MinIO, R2, ...) */
  endpoint?: string;
  session_token?: string;
}

export interface GcsCredentials {
  /** the service account key file's JSON text */
  service_account_json: string;
}

/** Body of `POST /v1/jobs`. */
export interface JobCreateRequest {
  /** s3://bucket/key, gs://bucket/key or https://... (JSONL, one object per line with `data_url` or `source-ref`) */
  manifest_url: string;
  label_spec: LabelSpec;
  /** default `image_classification` */
  type?: string;
  consensus_threshold?: number;
  max_labels?: number;
  callback_url?: string;
  credentials?: S3Credentials | GcsCredentials;
  /** older name of `credentials` */
  s3_credentials?: S3Credentials | GcsCredentials;
  /** s3:// or gs://: the export is also written there */
  output_url?: string;
}

export type JobStatus = "queued" | "ingesting" | "labeling" | "completed" | "failed";

/** `POST /v1/jobs` 202. */
export interface JobAccepted {
  job_id: string;
  status: JobStatus;
  created_at: string;
}

/** `GET /v1/jobs/{id}` and the items of `GET /v1/jobs`. Credentials never appear. */
export interface Job {
  job_id: string;
  status: JobStatus;
  manifest_url: string;
  label_spec: LabelSpec;
  type: string;
  consensus_threshold: number;
  max_labels: number;
  callback_url: string | null;
  output_url: string | null;
  task_count: number;
  lines_ingested: number;
  tasks_settled: number;
  /** settled share of the tasks, 0..1 */
  progress: number;
  error: string | null;
  created_at: string;
  started_at: string | null;
  ingested_at: string | null;
  completed_at: string | null;
  export_written_at: string | null;
}

/** One line of `GET /v1/jobs/{id}/export`, in manifest order; `source` is the manifest line as sent. */
export interface ExportLine {
  task_id: string;
  data_url: string;
  consensus_label: string | null;
  confidence: number | null;
  ledger_txid: string | null;
  settled_at: string | null;
  source: Record<string, unknown>;
}

// --- billing --------------------------------------------------------------------------------------

export interface LineItem {
  tier: Tier;
  labels: number;
  unit_price_cents: number;
  amount_cents: number;
}

/** `GET /v1/billing/usage?month=YYYY-MM`; `tier` and `price_per_label_cents` are the current ones. */
export interface Usage {
  month: string;
  currency: string;
  tier: Tier;
  price_per_label_cents: number;
  labels_collected: number;
  tasks_settled: number;
  amount_cents: number;
  line_items: LineItem[];
}

export interface Invoice {
  invoice_id: string;
  month: string;
  status: "open" | "finalized";
  currency: string;
  labels_collected: number;
  tasks_settled: number;
  amount_cents: number;
  line_items: LineItem[];
  created_at: string;
  finalized_at: string | null;
}

export interface InvoiceList {
  /** newest month first */
  items: Invoice[];
}

// --- dashboard ------------------------------------------------------------------------------------

export interface DashboardOverview {
  tasks_by_status: TaskCounts;
  labels_this_month: number;
  label_quota: number;
  label_quota_remaining: number;
  /** tasks settled in the last 30 days; null if none */
  median_seconds_to_settle: number | null;
  /** delivered / (delivered + failed) over the last 30 days; null if none */
  webhook_delivery_success_rate: number | null;
}

export type TaskSort = "created_at_desc" | "created_at_asc" | "settled_at_desc";

export interface DashboardTasksQuery extends PageQuery {
  /** empty or absent: every status */
  status?: TaskStatus | "";
  sort?: TaskSort;
}

export interface DashboardQuality {
  window_days: number;
  tasks_settled: number;
  mean_confidence: number | null;
  resolution: { consensus: { tasks: number; share: number | null }; max_labels: { tasks: number; share: number | null } };
  labels_per_task: { labels: number; tasks: number }[];
  agreement_rate: number | null;
}

export interface DashboardUsage {
  /** the last 30 UTC days, oldest first, zeros included */
  days: { date: string; labels: number }[];
}

// --- labeling (labeler key) -----------------------------------------------------------------------

/** `POST /v1/labeling/claims` 201. */
export interface Claim {
  claim_id: string;
  task_id: string;
  data_url: string;
  label_spec: LabelSpec;
  expires_at: string;
}

/** `POST /v1/labeling/claims/{claim_id}/label` 201. */
export interface RecordedLabel {
  label_id: string;
  claim_id: string;
  task_id: string;
  label: string;
  created_at: string;
  /** further labels that could settle the task; 0 = it can be decided now */
  labels_needed: number;
}

// --- admin (ADMIN_TOKEN) --------------------------------------------------------------------------

/** `POST /v1/admin/labelers` 201: the `lk_` key is shown only here. */
export interface LabelerCreated {
  labeler_id: string;
  name: string;
  api_key: string;
  created_at: string;
}

export interface AdminCustomersQuery extends PageQuery {
  tier?: Tier | "";
}

/** `POST /v1/admin/customers/{id}/upgrade` 200: the `sk_live_` key is shown only here. */
export interface UpgradedCustomer extends CustomerProfile {
  api_key: string;
  sandbox_keys_revoked: number;
  message: string;
}
