/**
 * The route catalog: every operation of the HTTP API declared once, keyed by its operation id (like the queue
 * catalog of @labelgate/queue): method, path, tag, auth (customer, labeler, admin, none), request body and
 * query schemas (by name: REQUEST_SCHEMAS and QUERY_SCHEMAS of schemas-by-name.ts), responses by status (response
 * components of responses.ts), the error kinds it can answer besides those its auth, body and query imply,
 * summary and description. Request examples are kept by request schema (routes.ts), response examples by
 * response schema (`.meta()`).
 *
 * This file is plain data with no runtime import (zod, schemas and examples are imported as types only), so
 * a browser client reads it without bundling the schemas. Everything else derives from it:
 * - routes.ts joins each declaration with its zod schemas, path parameters and examples (`ROUTES`);
 * - the gateway registers one handler per operation id (services/gateway/src/operations.ts, `Handlers`: a
 *   missing handler does not compile) at the operation's method and path, behind the middleware of its auth
 *   and body;
 * - the OpenAPI document (openapi.ts) and docs/api.md (markdown.ts, `pnpm docs:api`);
 * - the SDK's methods (packages/sdk/src/client.ts call operations by id, typed by {@link RequestBody} and
 *   {@link SuccessBody});
 * - the Python client's routes (clients/python/labelgate/_routes.py, `pnpm gen:clients`, route-clients.ts).
 * A route's path literal appears in this file only (test/api-catalog.test.ts, test/clients-catalog.test.ts).
 */
import type { z } from "zod";
import type { ErrorKind } from "./errors";
import type { RESPONSE_SCHEMAS } from "./responses";
import type { QUERY_SCHEMAS, REQUEST_SCHEMAS } from "./schemas-by-name";

export type Auth = "none" | "customer" | "labeler" | "admin";
export type Method = "get" | "post" | "patch" | "delete";

export type RequestSchemaName = keyof typeof REQUEST_SCHEMAS;
export type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS;

export type QuerySchemaName = keyof typeof QUERY_SCHEMAS;

/** The request body of an operation as declared. */
export interface BodyDecl {
  schema: RequestSchemaName;
  /** false: a missing body counts as `{}` (default true) */
  required?: boolean;
  /** express.json limit of the route (default 1 MB, the gateway's JSON limit; answers: 256 KB, task-types.ts MAX_ANSWER_BYTES) */
  limit?: "256 KB" | "1 MB" | "10 MB";
}

export interface ResponseDoc {
  status: number;
  description: string;
  /** a response component; absent: no body */
  schema?: ResponseSchemaName;
  /** default `application/json`; `application/x-ndjson`: one `schema` object per line */
  contentType?: "application/json" | "application/x-ndjson";
  /** extra response headers (components.headers names) */
  headers?: readonly string[];
  /** the same status in other media types (an export's other formats): each a text body described in words */
  alternatives?: readonly { contentType: "application/json" | "text/plain"; description: string; example: string }[];
}

/** One operation as the catalog declares it. */
export interface OperationDecl {
  method: Method;
  /** OpenAPI path template; the express pattern with `{name}` for `:name` */
  path: `/v1/${string}`;
  tag: Tag;
  auth: Auth;
  summary: string;
  description?: string;
  /** the query schema the handler parses `req.query` with (QUERY_SCHEMAS of schemas-by-name.ts) */
  query?: QuerySchemaName;
  /** answers without Postgres or the queue (so never 503) */
  offline?: boolean;
  /** the route spends a rate-limit budget (default: customer routes, per key); registration: per client address */
  rateLimited?: boolean;
  /** the route reads the `Idempotency-Key` header */
  idempotencyKey?: boolean;
  body?: BodyDecl;
  responses: readonly ResponseDoc[];
  /** error kinds of this route besides those implied by its auth, body and query, and 500/503 (default none) */
  errors?: readonly ErrorKind[];
}

/** The tags of the document, in its order, with their descriptions. */
export const TAGS = {
  system: "Health and this document.",
  customers: "Registration and the calling customer's profile.",
  tasks: "Tasks, batches and results.",
  webhooks: "Webhooks (the events they subscribe to), their delivery log and redelivery.",
  jobs: "Manifest jobs (S3, GCS, https) and their exports.",
  billing: "Monthly usage and invoices.",
  dashboard: "Overview, task list, quality and daily usage.",
  labeling: "Claims and labels (labeler keys).",
  admin: "Operator routes (ADMIN_TOKEN).",
} as const;
export type Tag = keyof typeof TAGS;

/** The words on `format` shared by the two export routes. */
const EXPORT_DESCRIPTION =
  "`format` (contract §exports): `jsonl` (the default; one `ExportLine` per task), `label-studio` (Label Studio's JSON tasks, the consensus as the one annotation), `coco` (COCO object detection JSON; bounding_box only), `conll` (CoNLL-2003 columns with BIO tags, a `-DOCSTART-` document per task; text_span only) or `hf` (JSON Lines for Hugging Face `datasets`: label names as strings, `confidence`). Streamed page by page, never built in memory. A format that does not fit the task type is 400 `validation failed`, its detail and `formats` naming those that fit.";

/** The other media types of the export routes' 200 (format label-studio and coco; conll), with an example each. */
const EXPORT_ALTERNATIVES = [
  {
    contentType: "application/json",
    description: "label-studio: a JSON array of Label Studio tasks; coco: one COCO object detection object.",
    example:
      '[\n{"id":1,"data":{"item":"https://images.example/1.jpg","data_url":"https://images.example/1.jpg","task_id":"tsk_2xK9mQ4vR7pL1nB8cD3fG6","task_type":"image_classification"},"annotations":[{"id":1,"result":[{"id":"r1","from_name":"label","to_name":"item","type":"choices","value":{"choices":["cat"]},"score":0.9846}],"score":0.9846,"ground_truth":false,"was_cancelled":false,"created_at":"2026-03-02T14:05:09.000Z"}],"predictions":[],"meta":{}}\n]\n',
  },
  {
    contentType: "text/plain",
    description: "conll: token and BIO tag per line, a `-DOCSTART- O` document per task.",
    example: "-DOCSTART- O\n\nAda B-PER\nLovelace I-PER\nwrote O\n. O\n\n",
  },
] as const;

/** Keeps the declarations' literal types (the SDK's and the gateway's types are read from them). */
function defineOperations<const T extends Record<string, OperationDecl>>(decls: T): T {
  return decls;
}

/** Every operation of the HTTP API, by operation id, in the document's order (tags as in TAGS). */
export const OPERATIONS = defineOperations({
  // --- system
  getHealth: {
    method: "get",
    path: "/v1/health",
    tag: "system",
    auth: "none",
    summary: "Health of the gateway and its dependencies",
    responses: [
      { status: 200, description: "Postgres, the queue and, where the process settles on one, the chain are reachable.", schema: "Health" },
      {
        status: 503,
        description: "Postgres, the queue, the chain (LEDGER=evm) or a worker is unavailable.",
        schema: "HealthUnavailable",
        headers: ["Retry-After"],
      },
    ],
  },
  getOpenApiDocument: {
    method: "get",
    path: "/v1/openapi.json",
    tag: "system",
    auth: "none",
    summary: "This OpenAPI 3.1 document",
    description: "Generated from the zod schemas the gateway validates with. A rendered reference is at `/docs/`.",
    offline: true,
    responses: [{ status: 200, description: "The document.", schema: "OpenApiDocument" }],
  },

  // --- customers
  registerCustomer: {
    method: "post",
    path: "/v1/customers",
    tag: "customers",
    auth: "none",
    summary: "Register a customer (sandbox tier)",
    description: "Returns the sandbox API key once; only its SHA-256 is stored. Registrations are rate-limited per client address.",
    rateLimited: true,
    body: { schema: "RegistrationInput" },
    responses: [
      {
        status: 201,
        description: "Registered.",
        schema: "CustomerCreated",
        headers: ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"],
      },
    ],
    errors: ["emailTaken"],
  },
  getCurrentCustomer: {
    method: "get",
    path: "/v1/customers/me",
    tag: "customers",
    auth: "customer",
    summary: "The calling customer's profile and quota",
    responses: [{ status: 200, description: "The profile.", schema: "Customer" }],
  },
  getSettings: {
    method: "get",
    path: "/v1/customers/me/settings",
    tag: "customers",
    auth: "customer",
    summary: "The calling customer's settings: task defaults and quality",
    description:
      "Task defaults are the least specific layer of a task's policy (task body, then batch, then manifest job, then these). Quality: `gold_rate` (share of a labeler's claims served from unanswered gold tasks, default 0.1), `min_labeler_accuracy` (exclusion floor, unset = nobody excluded), `min_gold_answers` (default 10). Unset fields are null.",
    responses: [{ status: 200, description: "The settings.", schema: "Settings" }],
  },
  updateSettings: {
    method: "patch",
    path: "/v1/customers/me/settings",
    tag: "customers",
    auth: "customer",
    summary: "Change the calling customer's settings",
    description:
      "Merges the fields given (`null` clears one) and answers the full settings. A change of `min_labeler_accuracy` or `min_gold_answers` re-evaluates every labeler's exclusion at once. 400 when the merged task defaults are inconsistent (e.g. `max_labels` below `consensus_threshold`).",
    body: { schema: "SettingsPatchInput" },
    responses: [{ status: 200, description: "The settings after the change.", schema: "Settings" }],
  },

  // --- tasks
  createTask: {
    method: "post",
    path: "/v1/tasks",
    tag: "tasks",
    auth: "customer",
    summary: "Submit a task",
    description:
      "Reserves `consensus_threshold` labels of quota with the insert (403 `quota exhausted` if fewer remain). The same idempotency key with the same body returns the original task; with another body, 422.",
    idempotencyKey: true,
    body: { schema: "TaskInput" },
    responses: [{ status: 202, description: "Accepted.", schema: "TaskAccepted" }],
    errors: ["quotaExhausted", "idempotencyMismatch"],
  },
  createTaskBatch: {
    method: "post",
    path: "/v1/tasks/batch",
    tag: "tasks",
    auth: "customer",
    summary: "Submit up to 10,000 tasks at once (all or none)",
    description: "Validation details name `tasks.<i>.<field>`. Quota is reserved for the whole batch in one transaction.",
    idempotencyKey: true,
    body: { schema: "BatchInput", limit: "10 MB" },
    responses: [{ status: 202, description: "Every task is accepted.", schema: "BatchAccepted" }],
    errors: ["quotaExhausted", "idempotencyMismatch"],
  },
  getTask: {
    method: "get",
    path: "/v1/tasks/{id}",
    tag: "tasks",
    auth: "customer",
    summary: "A task",
    responses: [{ status: 200, description: "The task.", schema: "Task" }],
    errors: ["taskNotFound"],
  },
  getTaskResult: {
    method: "get",
    path: "/v1/tasks/{id}/result",
    tag: "tasks",
    auth: "customer",
    summary: "A task's consensus result",
    description:
      "202 while labeling is in progress, 200 with the settlement once settled, 409 if the task was canceled or is a gold task (gold tasks never settle).",
    responses: [
      { status: 200, description: "Settled.", schema: "TaskResult" },
      { status: 202, description: "Still labeling.", schema: "TaskProgress" },
    ],
    errors: ["taskNotFound", "taskCanceled", "goldHasNoResult"],
  },
  cancelTask: {
    method: "post",
    path: "/v1/tasks/{id}/cancel",
    tag: "tasks",
    auth: "customer",
    summary: "Cancel a pending or labeling task",
    description: "Returns the unused reserved quota. A settling or settled task cannot be canceled (409).",
    responses: [{ status: 200, description: "Canceled (`status: canceled`).", schema: "Task" }],
    errors: ["taskNotFound", "taskNotCancelable"],
  },
  reviewTask: {
    method: "post",
    path: "/v1/tasks/{id}/review",
    tag: "tasks",
    auth: "customer",
    summary: "Review a settled result: accept it, or reject it (with the right answer)",
    description:
      '`{verdict: "accept"}`: the result is right. `{verdict: "reject", answer}`: the answer (of the task\'s type) is right; when it differs from the result, it becomes the next revision (resolution `review`, confidence 1), recorded on the ledger, and `task.revised` goes out. `{verdict: "reject"}` alone (single choice only): the task reopens (`labeling`), takes up to `max_labels` more labels from labelers who have not labeled it, and settles again as the next revision, never on a rejected option. Every review is kept (`reviews` of `GET /v1/tasks/{id}`); a review closes the task\'s audit. A reviewed answer is a known truth for the label space\'s labeler model.',
    body: { schema: "ReviewInput", limit: "256 KB" },
    responses: [{ status: 200, description: "Reviewed: the review and the task's result after it.", schema: "ReviewOutcome" }],
    errors: ["taskNotFound", "taskNotSettled"],
  },
  listAudits: {
    method: "get",
    path: "/v1/audits",
    tag: "tasks",
    auth: "customer",
    summary: "The audit queue: settled tasks drawn for review",
    description:
      "At the customer's `quality.audit_rate`, each task that settles is drawn at random into the queue (so each label space's audits are a uniform sample of its settled results). Reviewing the task (`POST /v1/tasks/{id}/review`) closes its audit. Oldest first.",
    query: "auditsQuery",
    responses: [{ status: 200, description: "A page of audits.", schema: "AuditPage" }],
  },
  listBatches: {
    method: "get",
    path: "/v1/batches",
    tag: "tasks",
    auth: "customer",
    summary: "The customer's batches",
    description: "Newest first; each item is the batch as `GET /v1/batches/{id}` answers it, with its tasks counted by status.",
    query: "batchesQuery",
    responses: [{ status: 200, description: "Newest first.", schema: "BatchPage" }],
  },
  getBatch: {
    method: "get",
    path: "/v1/batches/{id}",
    tag: "tasks",
    auth: "customer",
    summary: "A batch and its tasks by status",
    responses: [{ status: 200, description: "The batch.", schema: "Batch" }],
    errors: ["batchNotFound"],
  },
  getBatchRanking: {
    method: "get",
    path: "/v1/batches/{id}/ranking",
    tag: "tasks",
    auth: "customer",
    summary: "The ranking of the items a batch's pairwise comparisons compared",
    description:
      "Bradley-Terry scores (with Davidson's ties) fitted on every label of the batch's `pairwise_comparison` tasks, settled or not, each label weighted by what the labeler model of its label space knows of its labeler, with 95% Wald intervals; best first. Empty without labels. At most 2,000 distinct items (the intervals cost O(N^3)): more is 400 (docs/decisions/0289).",
    responses: [{ status: 200, description: "The ranking.", schema: "Ranking" }],
    errors: ["batchNotFound", "validation"],
  },
  exportBatch: {
    method: "get",
    path: "/v1/batches/{id}/export",
    tag: "tasks",
    auth: "customer",
    summary: "A completed batch's results in a format (streamed)",
    description:
      "One task per task of the batch other than gold tasks, in task id order (lines end with `metadata` where a job's have `source`); 409 until the batch is `completed`. A batch mixing task types fits `jsonl` and `label-studio` only. " +
      EXPORT_DESCRIPTION,
    query: "exportQuery",
    responses: [
      {
        status: 200,
        description: "jsonl: one ExportLine per line; hf: one record per line (application/x-ndjson).",
        schema: "ExportLine",
        contentType: "application/x-ndjson",
        headers: ["Content-Disposition"],
        alternatives: EXPORT_ALTERNATIVES,
      },
    ],
    errors: ["batchNotFound", "batchNotCompleted"],
  },

  // --- webhooks
  createWebhook: {
    method: "post",
    path: "/v1/webhooks",
    tag: "webhooks",
    auth: "customer",
    summary: "Register a webhook",
    body: { schema: "WebhookInput" },
    responses: [{ status: 201, description: "Registered.", schema: "WebhookCreated" }],
    errors: ["webhookExists"],
  },
  listWebhooks: {
    method: "get",
    path: "/v1/webhooks",
    tag: "webhooks",
    auth: "customer",
    summary: "The customer's webhooks, deleted ones included",
    responses: [{ status: 200, description: "Newest first.", schema: "WebhookList" }],
  },
  updateWebhook: {
    method: "patch",
    path: "/v1/webhooks/{id}",
    tag: "webhooks",
    auth: "customer",
    summary: "Change the events a webhook subscribes to",
    description:
      "`events` replaces the webhook's subscription (names of the event catalog, contract §events; at least one). Events emitted from now on are routed by the new list; deliveries already made are unchanged. A deleted webhook cannot be changed (409 `webhookInactive`).",
    body: { schema: "WebhookPatchInput" },
    responses: [{ status: 200, description: "The webhook as changed.", schema: "Webhook" }],
    errors: ["webhookNotFound", "webhookInactive"],
  },
  deleteWebhook: {
    method: "delete",
    path: "/v1/webhooks/{id}",
    tag: "webhooks",
    auth: "customer",
    summary: "Deactivate a webhook (soft delete; again: 200)",
    responses: [{ status: 200, description: "The webhook, inactive, with `deleted_at`.", schema: "Webhook" }],
    errors: ["webhookNotFound"],
  },
  listWebhookDeliveries: {
    method: "get",
    path: "/v1/webhooks/{id}/deliveries",
    tag: "webhooks",
    auth: "customer",
    summary: "A webhook's deliveries and every attempt",
    query: "deliveriesQuery",
    responses: [{ status: 200, description: "Newest first.", schema: "DeliveryPage" }],
    errors: ["webhookNotFound"],
  },
  redeliverWebhookDelivery: {
    method: "post",
    path: "/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver",
    tag: "webhooks",
    auth: "customer",
    summary: "Send a delivery again (one attempt)",
    description:
      "One manual attempt (`manual: true` in the attempt log) with the same event id and a fresh timestamp and signature. It is not one of the WEBHOOK_RETRY_MAX automatic attempts: an automatic schedule still running goes on. Success makes the delivery `delivered`; failure leaves it as it was.",
    responses: [{ status: 202, description: "Queued.", schema: "Redelivery" }],
    errors: ["webhookNotFound", "deliveryNotFound", "webhookInactive"],
  },

  // --- jobs
  createJob: {
    method: "post",
    path: "/v1/jobs",
    tag: "jobs",
    auth: "customer",
    summary: "Create a manifest job",
    description:
      "The manifest (JSONL, one object per line with `data_url` or `source-ref`) is ingested asynchronously; its tasks become claimable once the whole manifest is in. Credentials are sealed and never returned.",
    body: { schema: "JobInput" },
    responses: [{ status: 202, description: "Queued.", schema: "JobAccepted" }],
  },
  listJobs: {
    method: "get",
    path: "/v1/jobs",
    tag: "jobs",
    auth: "customer",
    summary: "The customer's jobs",
    query: "jobsQuery",
    responses: [{ status: 200, description: "Newest first.", schema: "JobPage" }],
  },
  getJob: {
    method: "get",
    path: "/v1/jobs/{id}",
    tag: "jobs",
    auth: "customer",
    summary: "A job's status and progress",
    responses: [{ status: 200, description: "The job.", schema: "Job" }],
    errors: ["jobNotFound"],
  },
  getJobRanking: {
    method: "get",
    path: "/v1/jobs/{id}/ranking",
    tag: "jobs",
    auth: "customer",
    summary: "The ranking of the items a pairwise job's comparisons compared",
    description:
      "As `GET /v1/batches/{id}/ranking`, over the job's tasks: Bradley-Terry scores (with Davidson's ties) fitted on every label of the job's `pairwise_comparison` tasks, settled or not, each label weighted by what the labeler model of its label space knows of its labeler, with 95% Wald intervals; best first. Empty without labels. A job of another type is 400; more than 2,000 distinct items is 400 (docs/decisions/0289, 0306).",
    responses: [{ status: 200, description: "The ranking.", schema: "Ranking" }],
    errors: ["jobNotFound", "validation"],
  },
  exportJob: {
    method: "get",
    path: "/v1/jobs/{id}/export",
    tag: "jobs",
    auth: "customer",
    summary: "A completed job's results in a format (streamed)",
    description: "One task per manifest line other than gold lines, in manifest order. " + EXPORT_DESCRIPTION,
    query: "exportQuery",
    responses: [
      {
        status: 200,
        description: "jsonl: one ExportLine per line; hf: one record per line (application/x-ndjson).",
        schema: "ExportLine",
        contentType: "application/x-ndjson",
        headers: ["Content-Disposition"],
        alternatives: EXPORT_ALTERNATIVES,
      },
    ],
    errors: ["jobNotFound", "jobNotCompleted"],
  },

  // --- billing
  getUsage: {
    method: "get",
    path: "/v1/billing/usage",
    tag: "billing",
    auth: "customer",
    summary: "Usage and amount of one UTC month",
    query: "usageQuery",
    responses: [{ status: 200, description: "The month's usage.", schema: "Usage" }],
  },
  listInvoices: {
    method: "get",
    path: "/v1/billing/invoices",
    tag: "billing",
    auth: "customer",
    summary: "Invoices (built on read: the current month open, past months finalized once)",
    query: "invoicesQuery",
    responses: [{ status: 200, description: "Newest month first.", schema: "InvoiceList" }],
  },

  // --- dashboard
  getDashboardOverview: {
    method: "get",
    path: "/v1/dashboard/overview",
    tag: "dashboard",
    auth: "customer",
    summary: "Tasks by status, quota and delivery health",
    query: "noQuery",
    responses: [{ status: 200, description: "The overview.", schema: "Overview" }],
  },
  listDashboardTasks: {
    method: "get",
    path: "/v1/dashboard/tasks",
    tag: "dashboard",
    auth: "customer",
    summary: "The customer's tasks, filtered and sorted",
    description: "`sort`: `created_at_desc` (default), `created_at_asc`, `settled_at_desc` (settled first); ties by id.",
    query: "tasksQuery",
    responses: [{ status: 200, description: "One page.", schema: "TaskPage" }],
  },
  getDashboardQuality: {
    method: "get",
    path: "/v1/dashboard/quality",
    tag: "dashboard",
    auth: "customer",
    summary: "Label quality of the last 90 days",
    query: "noQuery",
    responses: [{ status: 200, description: "Quality.", schema: "Quality" }],
  },
  getDashboardLabelers: {
    method: "get",
    path: "/v1/dashboard/labelers",
    tag: "dashboard",
    auth: "customer",
    summary: "The labelers of the customer's label spaces: gold record, estimated accuracy, exclusion",
    query: "noQuery",
    responses: [{ status: 200, description: "One row per labeler and label space.", schema: "LabelerQualityList" }],
  },
  getDashboardUsage: {
    method: "get",
    path: "/v1/dashboard/usage",
    tag: "dashboard",
    auth: "customer",
    summary: "Labels per UTC day, the last 30 days",
    query: "noQuery",
    responses: [{ status: 200, description: "Oldest day first.", schema: "UsageDays" }],
  },

  // --- labeling
  claimTask: {
    method: "post",
    path: "/v1/labeling/claims",
    tag: "labeling",
    auth: "labeler",
    summary: "Claim a task to label",
    description:
      "A labeler never gets a task twice; a claim expires after CLAIM_TTL_SECONDS and its slot returns. 204 when nothing is open for this labeler (or the named task is not claimable by it: settled, canceled, labeled by it, or every slot claimed); 404 when the named task does not exist. Retry-safe: with an `Idempotency-Key`, the same labeler and key return the same claim (201, same `claim_id`) while it is live (neither labeled, released nor expired); the key's live claim of another task than the named one is 422. Without a key, naming a task the labeler holds a live claim on returns that claim. The claim names the task's `task_type`; an `s3://` or `gs://` item of a manifest job that stored credentials also gets `view_url`, a presigned GET of the object valid at most 15 minutes (and never past the claim).",
    idempotencyKey: true,
    body: { schema: "ClaimInput", required: false },
    responses: [
      { status: 201, description: "Claimed.", schema: "Claim" },
      {
        status: 204,
        description:
          "Nothing is open for this labeler (or the named task is not claimable by it). A generic claim adds `Labelgate-Idle-Reason: failed_qualification` when the labeler failed the qualification exam of a label space that still has open tasks (contract §qualification).",
        headers: ["Labelgate-Idle-Reason"],
      },
    ],
    errors: ["taskNotFound", "idempotencyMismatch"],
  },
  releaseClaim: {
    method: "delete",
    path: "/v1/labeling/claims/{claimId}",
    tag: "labeling",
    auth: "labeler",
    summary: "Release a claim without labeling it (skip)",
    description:
      "The claim's slot returns at once, so another labeler may take the task. Releasing a claim again, or one that expired, answers 204 too; a labeled claim cannot be released.",
    responses: [{ status: 204, description: "Released: the slot is free." }],
    errors: ["claimNotFound", "claimAlreadyLabeled"],
  },
  labelClaim: {
    method: "post",
    path: "/v1/labeling/claims/{claimId}/label",
    tag: "labeling",
    auth: "labeler",
    summary: "Label a claimed task",
    description:
      "The label is recorded with the decision of its task taken in the same transaction: `labels_needed` is 0 exactly when this label decided the task (it is `settling`, its settlement enqueued); otherwise it is the most labels the task may still take.",
    body: { schema: "LabelInput", limit: "256 KB" },
    responses: [{ status: 201, description: "Recorded.", schema: "LabelRecorded" }],
    errors: ["claimNotFound", "claimAlreadyLabeled", "claimExpired", "taskNotOpen"],
  },
  getInstructions: {
    method: "get",
    path: "/v1/labeling/spaces/{id}/instructions",
    tag: "labeling",
    auth: "labeler",
    summary: "Read a label space's instructions",
    description:
      "The current instructions of the label space a claim names (`label_space`): the Markdown and the worked examples its customer gave last in a label spec, and their `version`, the claim's `instructions_version`. 404 when the space has none.",
    responses: [{ status: 200, description: "The current instructions.", schema: "Instructions" }],
    errors: ["instructionsNotFound"],
  },

  // --- admin
  createLabeler: {
    method: "post",
    path: "/v1/admin/labelers",
    tag: "admin",
    auth: "admin",
    summary: "Create a labeler and its key",
    body: { schema: "LabelerInput" },
    responses: [{ status: 201, description: "Created; the key is shown once.", schema: "LabelerCreated" }],
  },
  listCustomers: {
    method: "get",
    path: "/v1/admin/customers",
    tag: "admin",
    auth: "admin",
    summary: "Customers, newest first",
    query: "customersQuery",
    responses: [{ status: 200, description: "One page.", schema: "CustomerPage" }],
  },
  listParkedFollowUps: {
    method: "get",
    path: "/v1/admin/follow-ups",
    tag: "admin",
    auth: "admin",
    summary: "Follow-ups the relay gave up on",
    description:
      "The parked follow-ups, oldest first (docs/decisions/0331): queue work written with a change (a settlement, a delivery, an ingestion) that the follow-up relay could not enqueue for a reason other than an outage, so it stopped trying. Each says why. They do not run until retried.",
    query: "followUpsQuery",
    responses: [{ status: 200, description: "The parked follow-ups.", schema: "ParkedFollowUps" }],
  },
  retryFollowUps: {
    method: "post",
    path: "/v1/admin/follow-ups/retry",
    tag: "admin",
    auth: "admin",
    summary: "Try parked follow-ups again",
    description:
      "Makes the parked follow-ups of `ids` (every parked one when absent) due again, after the cause was fixed: the relay tries them at once and parks again any that still cannot be enqueued. Ids that are not parked are skipped.",
    body: { schema: "FollowUpsRetryInput" },
    responses: [{ status: 200, description: "How many were made due again.", schema: "FollowUpsRetried" }],
  },
  setCustomerQuota: {
    method: "patch",
    path: "/v1/admin/customers/{id}",
    tag: "admin",
    auth: "admin",
    summary: "Set a customer's label quota",
    body: { schema: "CustomerPatchInput" },
    responses: [{ status: 200, description: "The updated profile.", schema: "Customer" }],
    errors: ["customerNotFound"],
  },
  upgradeCustomer: {
    method: "post",
    path: "/v1/admin/customers/{id}/upgrade",
    tag: "admin",
    auth: "admin",
    summary: "Upgrade a customer to production",
    description:
      "Issues an `sk_live_` key (shown once), raises the quota to the production default if below it, and revokes the sandbox key(s) unless `keep_sandbox_key`.",
    body: { schema: "UpgradeInput", required: false },
    responses: [{ status: 200, description: "Upgraded.", schema: "CustomerUpgraded" }],
    errors: ["customerNotFound", "alreadyProduction"],
  },
});

export type Operations = typeof OPERATIONS;
export type OperationId = keyof Operations;

// --- types derived from the declarations (SDK, gateway) ---------------------------------------------------

type Declared<K extends OperationId> = Operations[K];
type ResponsesOf<K extends OperationId> = Declared<K>["responses"][number];

/** The body types of an operation's 2xx responses (undefined for one without a body, e.g. 204). */
export type SuccessBody<K extends OperationId> =
  ResponsesOf<K> extends infer R
    ? R extends { status: infer S extends number }
      ? `${S}` extends `2${string}`
        ? R extends { schema: infer N extends ResponseSchemaName }
          ? z.output<(typeof RESPONSE_SCHEMAS)[N]>
          : undefined
        : never
      : never
    : never;

/** The request body an operation takes, as a client may send it (the schema's input type); never without one. */
export type RequestBody<K extends OperationId> =
  Declared<K> extends { body: { schema: infer N extends RequestSchemaName } } ? z.input<(typeof REQUEST_SCHEMAS)[N]> : never;

/** The names of a path template's parameters (`/v1/webhooks/{id}/deliveries/{deliveryId}` → `id | deliveryId`). */
export type ParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}` ? N | ParamNames<Rest> : never;

/** The path parameters of an operation, by name. */
export type PathParams<K extends OperationId> = { [N in ParamNames<Declared<K>["path"]>]: string };

/**
 * The path of operation `id` with its parameters filled in, each URL-encoded
 * (`pathOf("getTask", {id: "tsk_1"})` → `/v1/tasks/tsk_1`).
 */
export function pathOf<K extends OperationId>(id: K, params: PathParams<K>): string {
  const values = params as Record<string, string>;
  return OPERATIONS[id].path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? ""));
}
