/**
 * The OpenAPI 3.1 document of the gateway, generated from the zod schemas the routes validate with
 * (request bodies and queries: schemas.ts, webhooks.ts, jobs.ts, admin.ts, billing.ts, dashboard.ts) and
 * the response schemas of responses.ts, with zod's own JSON Schema output (`z.toJSONSchema`, draft 2020-12,
 * the dialect of OpenAPI 3.1). `ROUTES_BY_TAG` is the one table of every route, by tag: method, path,
 * auth, body, success responses and the error kinds it can answer (statuses and messages from errors.ts);
 * path parameters are derived from the path and request examples kept by request schema. `ROUTES` flattens it.
 * test/openapi.test.ts checks it against the routes the express app really registers, validates the
 * document and every example, and validates real responses against it.
 *
 * Served at `GET /v1/openapi.json`; `docsRouter()` serves the reference page (swagger-ui-dist, offline) at `/docs/`.
 */

import {
  batchBody,
  batchesQuery,
  claimBody,
  customerPatchBody,
  customersQuery,
  deliveriesQuery,
  ERRORS,
  type ErrorKind,
  EXAMPLE,
  idempotencyKey,
  invoicesQuery,
  jobBody,
  jobsQuery,
  labelBody,
  labelerBody,
  noQuery,
  pathId,
  RESPONSE_SCHEMAS,
  registrationBody,
  settingsPatchBody,
  taskBody,
  tasksQuery,
  upgradeBody,
  usageQuery,
  webhookBody,
} from "@labelgate/api";
import { type RequestHandler, Router } from "express";
import swaggerUi from "swagger-ui-express";
import { z } from "zod";

/** Where the document and the reference page are served. */
export const OPENAPI_PATH = "/v1/openapi.json";
export const DOCS_PATH = "/docs";

/**
 * Routes of the app that are not part of the HTTP API and so are not in the document, by mount path, with
 * the reason. The coverage test accepts an undocumented route only under one of these.
 */
export const UNDOCUMENTED_MOUNTS: Record<string, string> = {
  [DOCS_PATH]: "the API reference page itself (HTML and swagger-ui assets)",
  "/admin/queues": "the operators' queue dashboard (bull-board HTML UI and its private JSON API)",
  "/label": "the labeler app (static files of packages/web, web.ts)",
  "/console": "the customer console (static files of packages/web, web.ts)",
};

export type JsonSchema = { [key: string]: unknown };

/** The OpenAPI 3.1 document (only the fields this module writes are typed). */
export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
    parameters: Record<string, JsonSchema>;
    headers: Record<string, JsonSchema>;
  };
}

export interface OpenApiMediaType {
  schema: JsonSchema;
  example?: unknown;
  examples?: Record<string, { summary: string; value: unknown }>;
  [extension: `x-${string}`]: unknown;
}

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, JsonSchema>;
  content?: Record<string, OpenApiMediaType>;
}

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters: JsonSchema[];
  requestBody?: { description: string; required: boolean; content: Record<string, OpenApiMediaType> };
  responses: Record<string, OpenApiResponse>;
}

// --- the route table ----------------------------------------------------------------------------------

export type Auth = "none" | "customer" | "labeler" | "admin";
export type Method = "get" | "post" | "patch" | "delete";

/** Request body schemas by component name (validated with `parse` in the handlers). */
export const REQUEST_SCHEMAS = {
  RegistrationInput: registrationBody,
  TaskInput: taskBody,
  BatchInput: batchBody,
  WebhookInput: webhookBody,
  JobInput: jobBody,
  ClaimInput: claimBody,
  LabelInput: labelBody,
  LabelerInput: labelerBody,
  CustomerPatchInput: customerPatchBody,
  SettingsPatchInput: settingsPatchBody,
  UpgradeInput: upgradeBody,
} as const satisfies Record<string, z.ZodType>;

const REQUEST_DESCRIPTIONS: Record<keyof typeof REQUEST_SCHEMAS, string> = {
  RegistrationInput: "A new customer account.",
  TaskInput:
    "A labeling task. `data_url`: an http(s) URL, or `s3://bucket/key` / `gs://bucket/key` (both a bucket and a key); `label_spec.options`: unique; `callback_url` needs an active webhook of the same URL; unknown fields are rejected. Policy (../shared/DESIGN.md §10; each field absent here comes from the batch's top level, the manifest job, then the customer's task defaults): `consensus_threshold` 1..25 (default 3); `max_labels` ≤ 50 (default 2t+1; at least the threshold under the threshold policy, at least `min_labels` under the confidence policy); `confidence_target` 0.5..0.999 selects the confidence policy (null: the threshold policy, overriding a default target); `min_labels` (default 1). `gold_label` (one of the options) makes a gold task: served to labelers to measure them, never settled, delivered or exported.",
  BatchInput:
    "Up to 10,000 tasks accepted together or not at all; `callback_url` applies to every task without one; `confidence_target`, `min_labels` and `max_labels` to every task that does not set its own.",
  WebhookInput:
    "A webhook endpoint: a public http(s) URL, checked now (DNS included) and before every attempt; one active webhook per URL. The signing secret (at least 16 characters) is stored sealed (AES-256-GCM) and never returned.",
  JobInput:
    "A manifest job: `manifest_url` is `s3://bucket/key` (with S3 credentials), `gs://bucket/key` (with `service_account_json`) or `https://...` (none). `credentials` and `s3_credentials` are synonyms.",
  ClaimInput: "`{}` for the next open task, or a specific `task_id`.",
  LabelInput: "One of the task's options.",
  LabelerInput: "A new labeler.",
  CustomerPatchInput: "The customer's new label quota.",
  SettingsPatchInput:
    "Fields to change in the settings: a value replaces, `null` clears, an absent field is kept. The merged task defaults must make a consistent policy.",
  UpgradeInput: "Upgrade options.",
};

type RequestSchemaName = keyof typeof REQUEST_SCHEMAS;
type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS;

export interface PathParamDoc {
  name: string;
  /** id prefix of the resource (`tsk_`, ...) */
  prefix: string;
  description: string;
  example: string;
}

export interface BodyDoc {
  schema: RequestSchemaName;
  /** false: a missing body counts as `{}` (default true) */
  required?: boolean;
  /** express.json limit of the route (default 1 MB, the app's JSON_LIMIT) */
  limit?: "1 MB" | "10 MB";
  examples: Record<string, { summary: string; value: unknown }>;
}

export interface ResponseDoc {
  status: number;
  description: string;
  /** a response component; absent: no body */
  schema?: ResponseSchemaName;
  /** default `application/json`; `application/x-ndjson`: one `schema` object per line */
  contentType?: "application/json" | "application/x-ndjson";
  /** extra response headers (components.headers names) */
  headers?: string[];
}

export interface RouteDoc {
  method: Method;
  /** OpenAPI path template; the express pattern with `{name}` for `:name` */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  auth: Auth;
  pathParams?: PathParamDoc[];
  /** the zod schema the handler parses `req.query` with */
  query?: z.ZodObject;
  /** answers without Postgres or the queue (so never 503) */
  offline?: boolean;
  /** the route spends a rate-limit budget (default: customer routes, per key); registration: per client address */
  rateLimited?: boolean;
  /** the route reads the `Idempotency-Key` header */
  idempotencyKey?: boolean;
  body?: BodyDoc;
  responses: ResponseDoc[];
  /** error kinds of this route besides those implied by its auth, body and query, and 500/503 (default none) */
  errors?: ErrorKind[];
}

const JSON_LIMIT = "1 MB" as const;
const E = EXAMPLE;

/** Path parameters: `{id}` by the resource before it (`/v1/<resource>/{id}`), any other by its name. */
const PATH_PARAMS: Record<string, Omit<PathParamDoc, "name">> = {
  tasks: { prefix: "tsk_", description: "task id", example: E.taskId },
  batches: { prefix: "bat_", description: "batch id", example: E.batchId },
  webhooks: { prefix: "whk_", description: "webhook id", example: E.webhookId },
  jobs: { prefix: "job_", description: "job id", example: E.jobId },
  customers: { prefix: "cust_", description: "customer id", example: E.customerId },
  deliveryId: { prefix: "dlv_", description: "delivery id", example: E.deliveryId },
  claimId: { prefix: "clm_", description: "claim id", example: E.claimId },
};

/**
 * The parameters of an OpenAPI path template, in order (`/v1/webhooks/{id}/deliveries/{deliveryId}` →
 * webhook id, delivery id). @throws Error for a parameter PATH_PARAMS does not know
 */
export function pathParamsOf(path: string): PathParamDoc[] {
  return [...path.matchAll(/\/([^/{}]+)\/\{(\w+)\}/g)].map(([, resource = "", name = ""]) => {
    const doc = PATH_PARAMS[name === "id" ? resource : name];
    if (!doc) throw new Error(`no path parameter doc for {${name}} in ${path}`);
    return { name, ...doc };
  });
}

const taskExample = {
  type: "image_classification",
  data_url: E.dataUrl,
  label_spec: { question: E.labelSpec.question, options: [...E.labelSpec.options] },
};

/** Request examples by request schema (the body of the one route that takes it); test/openapi.test.ts validates each. */
const REQUEST_EXAMPLES: Record<RequestSchemaName, BodyDoc["examples"]> = {
  RegistrationInput: { default: { summary: "a new account", value: { name: "Acme Vision", email: "ml@acme.example" } } },
  SettingsPatchInput: {
    confidence: {
      summary: "stop on a calibrated confidence of 0.95, exclude labelers below 70% on gold",
      value: { task_defaults: { confidence_target: 0.95, max_labels: 10 }, quality: { min_labeler_accuracy: 0.7 } },
    },
    clear: { summary: "back to the threshold policy", value: { task_defaults: { confidence_target: null } } },
  },
  TaskInput: {
    minimal: { summary: "the required fields", value: taskExample },
    full: {
      summary: "every field",
      value: {
        ...taskExample,
        callback_url: E.callbackUrl,
        consensus_threshold: 3,
        max_labels: 7,
        metadata: { sku: "A-1001" },
        idempotency_key: "order-1001",
      },
    },
    confidence: {
      summary: "the confidence policy: settle when the calibrated posterior reaches 0.95",
      value: { ...taskExample, confidence_target: 0.95, min_labels: 2, max_labels: 10 },
    },
    gold: { summary: "a gold (control) task", value: { ...taskExample, gold_label: "cat" } },
  },
  BatchInput: {
    default: {
      summary: "two tasks",
      value: {
        tasks: [taskExample, { ...taskExample, data_url: "https://images.example/cats/0002.jpg" }],
        idempotency_key: "batch-2026-03-14",
      },
    },
  },
  WebhookInput: {
    default: {
      summary: "task.settled to one endpoint",
      value: { callback_url: E.callbackUrl, secret: "whsec_3f9a1c7e5b2d8f40", events: ["task.settled"] },
    },
  },
  JobInput: {
    s3: {
      summary: "a manifest on S3, export written back",
      value: {
        manifest_url: "s3://acme-datasets/pets/manifest.jsonl",
        label_spec: { question: E.labelSpec.question, options: [...E.labelSpec.options] },
        credentials: {
          access_key_id: "AKIAIOSFODNN7EXAMPLE",
          secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
          region: "eu-west-1",
        },
        output_url: "s3://acme-datasets/pets/labels.jsonl",
      },
    },
    https: {
      summary: "a public https manifest",
      value: {
        manifest_url: "https://data.example.com/pets/manifest.jsonl",
        label_spec: { question: "Cat or dog?", options: ["cat", "dog"] },
      },
    },
  },
  ClaimInput: {
    next: { summary: "the next open task", value: {} },
    specific: { summary: "a given task", value: { task_id: E.taskId } },
  },
  LabelInput: { default: { summary: "an option", value: { label: "cat" } } },
  LabelerInput: { default: { summary: "a labeler", value: { name: "annotator-17" } } },
  CustomerPatchInput: { default: { summary: "grant 10,000 labels", value: { label_quota: 10000 } } },
  UpgradeInput: {
    default: { summary: "revoke the sandbox key", value: {} },
    keep: { summary: "keep the sandbox key", value: { keep_sandbox_key: true } },
  },
};

/** A route as a section lists it: its tag comes from the section, its auth too unless it names its own. */
type SectionRoute = Omit<RouteDoc, "tag" | "auth"> & { auth?: Auth };

/** What {@link op} takes besides a route's first line: its body without examples (from REQUEST_EXAMPLES). */
type RouteFields = Omit<SectionRoute, "method" | "path" | "operationId" | "summary" | "pathParams" | "body"> & {
  body?: Omit<BodyDoc, "examples">;
};

/** One tag of the document: its description (the document's `tags`) and its routes. */
export interface TagSection {
  tag: string;
  description: string;
  routes: RouteDoc[];
}

/** The routes of one tag; `auth` is the credential they take unless a route names another. */
function section(tag: string, description: string, auth: Auth, routes: SectionRoute[]): TagSection {
  return { tag, description, routes: routes.map((route) => ({ tag, auth, ...route })) };
}

/**
 * One route: its method, OpenAPI path, operation id and summary, then the rest of its {@link RouteDoc}.
 * Its `pathParams` come from the path (pathParamsOf), its body's examples from REQUEST_EXAMPLES.
 */
function op(method: Method, path: string, operationId: string, summary: string, rest: RouteFields): SectionRoute {
  const { body, ...fields } = rest;
  const pathParams = pathParamsOf(path);
  return {
    method,
    path,
    operationId,
    summary,
    ...fields,
    ...(pathParams.length > 0 ? { pathParams } : {}),
    ...(body ? { body: { ...body, examples: REQUEST_EXAMPLES[body.schema] } } : {}),
  };
}

/** A GET route that validates its query with `query` and answers 200 with one `schema` body. */
function read(
  path: string,
  operationId: string,
  summary: string,
  query: z.ZodObject,
  schema: ResponseSchemaName,
  description: string,
): SectionRoute {
  return op("get", path, operationId, summary, { query, responses: [{ status: 200, description, schema }] });
}

/** Every route of the HTTP API, by tag (in the document's order). */
export const ROUTES_BY_TAG: TagSection[] = [
  section("system", "Health and this document.", "none", [
    op("get", "/v1/health", "getHealth", "Health of the gateway and its dependencies", {
      responses: [
        { status: 200, description: "Postgres and the queue are reachable.", schema: "Health" },
        { status: 503, description: "Postgres or the queue is unreachable.", schema: "HealthUnavailable", headers: ["Retry-After"] },
      ],
    }),
    op("get", OPENAPI_PATH, "getOpenApiDocument", "This OpenAPI 3.1 document", {
      description: "Generated from the zod schemas the gateway validates with. A rendered reference is at `/docs/`.",
      offline: true,
      responses: [{ status: 200, description: "The document.", schema: "OpenApiDocument" }],
    }),
  ]),
  section("customers", "Registration and the calling customer's profile.", "customer", [
    op("post", "/v1/customers", "registerCustomer", "Register a customer (sandbox tier)", {
      auth: "none",
      description: "Returns the sandbox API key once; only its SHA-256 is stored. Registrations are rate-limited per client address.",
      body: { schema: "RegistrationInput" },
      responses: [
        {
          status: 201,
          description: "Registered.",
          schema: "CustomerCreated",
          headers: ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"],
        },
      ],
      rateLimited: true,
      errors: ["emailTaken"],
    }),
    op("get", "/v1/customers/me", "getCurrentCustomer", "The calling customer's profile and quota", {
      responses: [{ status: 200, description: "The profile.", schema: "Customer" }],
    }),
    op("get", "/v1/customers/me/settings", "getSettings", "The calling customer's settings: task defaults and quality", {
      description:
        "Task defaults are the least specific layer of a task's policy (task body, then batch, then manifest job, then these). Quality: `gold_rate` (share of a labeler's claims served from unanswered gold tasks, default 0.1), `min_labeler_accuracy` (exclusion floor, unset = nobody excluded), `min_gold_answers` (default 10). Unset fields are null.",
      responses: [{ status: 200, description: "The settings.", schema: "Settings" }],
    }),
    op("patch", "/v1/customers/me/settings", "updateSettings", "Change the calling customer's settings", {
      description:
        "Merges the fields given (`null` clears one) and answers the full settings. A change of `min_labeler_accuracy` or `min_gold_answers` re-evaluates every labeler's exclusion at once. 400 when the merged task defaults are inconsistent (e.g. `max_labels` below `consensus_threshold`).",
      body: { schema: "SettingsPatchInput" },
      responses: [{ status: 200, description: "The settings after the change.", schema: "Settings" }],
    }),
  ]),
  section("tasks", "Tasks, batches and results.", "customer", [
    op("post", "/v1/tasks", "createTask", "Submit a task", {
      description:
        "Reserves `consensus_threshold` labels of quota with the insert (403 `quota exhausted` if fewer remain). The same idempotency key with the same body returns the original task; with another body, 422.",
      idempotencyKey: true,
      body: { schema: "TaskInput" },
      responses: [{ status: 202, description: "Accepted.", schema: "TaskAccepted" }],
      errors: ["quotaExhausted", "idempotencyMismatch"],
    }),
    op("post", "/v1/tasks/batch", "createTaskBatch", "Submit up to 10,000 tasks at once (all or none)", {
      description: "Validation details name `tasks.<i>.<field>`. Quota is reserved for the whole batch in one transaction.",
      idempotencyKey: true,
      body: { schema: "BatchInput", limit: "10 MB" },
      responses: [{ status: 202, description: "Every task is accepted.", schema: "BatchAccepted" }],
      errors: ["quotaExhausted", "idempotencyMismatch"],
    }),
    op("get", "/v1/tasks/{id}", "getTask", "A task", {
      responses: [{ status: 200, description: "The task.", schema: "Task" }],
      errors: ["taskNotFound"],
    }),
    op("get", "/v1/tasks/{id}/result", "getTaskResult", "A task's consensus result", {
      description:
        "202 while labeling is in progress, 200 with the settlement once settled, 409 if the task was canceled or is a gold task (gold tasks never settle).",
      responses: [
        { status: 200, description: "Settled.", schema: "TaskResult" },
        { status: 202, description: "Still labeling.", schema: "TaskProgress" },
      ],
      errors: ["taskNotFound", "taskCanceled", "goldHasNoResult"],
    }),
    op("post", "/v1/tasks/{id}/cancel", "cancelTask", "Cancel a pending or labeling task", {
      description: "Returns the unused reserved quota. A settling or settled task cannot be canceled (409).",
      responses: [{ status: 200, description: "Canceled (`status: canceled`).", schema: "Task" }],
      errors: ["taskNotFound", "taskNotCancelable"],
    }),
    op("get", "/v1/batches", "listBatches", "The customer's batches", {
      description: "Newest first; each item is the batch as `GET /v1/batches/{id}` answers it, with its tasks counted by status.",
      query: batchesQuery,
      responses: [{ status: 200, description: "Newest first.", schema: "BatchPage" }],
    }),
    op("get", "/v1/batches/{id}", "getBatch", "A batch and its tasks by status", {
      responses: [{ status: 200, description: "The batch.", schema: "Batch" }],
      errors: ["batchNotFound"],
    }),
  ]),
  section("webhooks", "task.settled webhooks, their delivery log and redelivery.", "customer", [
    op("post", "/v1/webhooks", "createWebhook", "Register a webhook", {
      body: { schema: "WebhookInput" },
      responses: [{ status: 201, description: "Registered.", schema: "WebhookCreated" }],
      errors: ["webhookExists"],
    }),
    op("get", "/v1/webhooks", "listWebhooks", "The customer's webhooks, deleted ones included", {
      responses: [{ status: 200, description: "Newest first.", schema: "WebhookList" }],
    }),
    op("delete", "/v1/webhooks/{id}", "deleteWebhook", "Deactivate a webhook (soft delete; again: 200)", {
      responses: [{ status: 200, description: "The webhook, inactive, with `deleted_at`.", schema: "Webhook" }],
      errors: ["webhookNotFound"],
    }),
    op("get", "/v1/webhooks/{id}/deliveries", "listWebhookDeliveries", "A webhook's deliveries and every attempt", {
      query: deliveriesQuery,
      responses: [{ status: 200, description: "Newest first.", schema: "DeliveryPage" }],
      errors: ["webhookNotFound"],
    }),
    op("post", "/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver", "redeliverWebhookDelivery", "Send a delivery again (one attempt)", {
      description:
        "One manual attempt (`manual: true` in the attempt log) with the same event id and a fresh timestamp and signature. It is not one of the WEBHOOK_RETRY_MAX automatic attempts: an automatic schedule still running goes on. Success makes the delivery `delivered`; failure leaves it as it was.",
      responses: [{ status: 202, description: "Queued.", schema: "Redelivery" }],
      errors: ["webhookNotFound", "deliveryNotFound", "webhookInactive"],
    }),
  ]),
  section("jobs", "Manifest jobs (S3, GCS, https) and their JSONL export.", "customer", [
    op("post", "/v1/jobs", "createJob", "Create a manifest job", {
      description:
        "The manifest (JSONL, one object per line with `data_url` or `source-ref`) is ingested asynchronously; its tasks become claimable once the whole manifest is in. Credentials are sealed and never returned.",
      body: { schema: "JobInput" },
      responses: [{ status: 202, description: "Queued.", schema: "JobAccepted" }],
    }),
    read("/v1/jobs", "listJobs", "The customer's jobs", jobsQuery, "JobPage", "Newest first."),
    op("get", "/v1/jobs/{id}", "getJob", "A job's status and progress", {
      responses: [{ status: 200, description: "The job.", schema: "Job" }],
      errors: ["jobNotFound"],
    }),
    op("get", "/v1/jobs/{id}/export", "exportJob", "A completed job's results as JSONL (streamed)", {
      description: "One line per manifest line, in manifest order.",
      responses: [
        {
          status: 200,
          description: "One ExportLine per line.",
          schema: "ExportLine",
          contentType: "application/x-ndjson",
          headers: ["Content-Disposition"],
        },
      ],
      errors: ["jobNotFound", "jobNotCompleted"],
    }),
  ]),
  section("billing", "Monthly usage and invoices.", "customer", [
    read("/v1/billing/usage", "getUsage", "Usage and amount of one UTC month", usageQuery, "Usage", "The month's usage."),
    read(
      "/v1/billing/invoices",
      "listInvoices",
      "Invoices (built on read: the current month open, past months finalized once)",
      invoicesQuery,
      "InvoiceList",
      "Newest month first.",
    ),
  ]),
  section("dashboard", "Overview, task list, quality and daily usage.", "customer", [
    read(
      "/v1/dashboard/overview",
      "getDashboardOverview",
      "Tasks by status, quota and delivery health",
      noQuery,
      "Overview",
      "The overview.",
    ),
    op("get", "/v1/dashboard/tasks", "listDashboardTasks", "The customer's tasks, filtered and sorted", {
      description: "`sort`: `created_at_desc` (default), `created_at_asc`, `settled_at_desc` (settled first); ties by id.",
      query: tasksQuery,
      responses: [{ status: 200, description: "One page.", schema: "TaskPage" }],
    }),
    read("/v1/dashboard/quality", "getDashboardQuality", "Label quality of the last 90 days", noQuery, "Quality", "Quality."),
    read(
      "/v1/dashboard/labelers",
      "getDashboardLabelers",
      "The labelers of the customer's label spaces: gold record, estimated accuracy, exclusion",
      noQuery,
      "LabelerQualityList",
      "One row per labeler and label space.",
    ),
    read("/v1/dashboard/usage", "getDashboardUsage", "Labels per UTC day, the last 30 days", noQuery, "UsageDays", "Oldest day first."),
  ]),
  section("labeling", "Claims and labels (labeler keys).", "labeler", [
    op("post", "/v1/labeling/claims", "claimTask", "Claim a task to label", {
      description:
        "A labeler never gets a task twice; a claim expires after CLAIM_TTL_SECONDS and its slot returns. 204 when nothing is open for this labeler (or the named task is not claimable by it: settled, canceled, labeled by it, or every slot claimed); 404 when the named task does not exist. Retry-safe: with an `Idempotency-Key`, the same labeler and key return the same claim (201, same `claim_id`) while it is live (neither labeled, released nor expired); the key's live claim of another task than the named one is 422. Without a key, naming a task the labeler holds a live claim on returns that claim. The claim names the task's `task_type`; an `s3://` or `gs://` item of a manifest job that stored credentials also gets `view_url`, a presigned GET of the object valid at most 15 minutes (and never past the claim).",
      idempotencyKey: true,
      body: { schema: "ClaimInput", required: false },
      responses: [
        { status: 201, description: "Claimed.", schema: "Claim" },
        { status: 204, description: "Nothing is open for this labeler (or the named task is not claimable by it)." },
      ],
      errors: ["taskNotFound", "idempotencyMismatch"],
    }),
    op("delete", "/v1/labeling/claims/{claimId}", "releaseClaim", "Release a claim without labeling it (skip)", {
      description:
        "The claim's slot returns at once, so another labeler may take the task. Releasing a claim again, or one that expired, answers 204 too; a labeled claim cannot be released.",
      responses: [{ status: 204, description: "Released: the slot is free." }],
      errors: ["claimNotFound", "claimAlreadyLabeled"],
    }),
    op("post", "/v1/labeling/claims/{claimId}/label", "labelClaim", "Label a claimed task", {
      body: { schema: "LabelInput" },
      description:
        "The label is recorded with the decision of its task taken in the same transaction: `labels_needed` is 0 exactly when this label decided the task (it is `settling`, its settlement enqueued); otherwise it is the most labels the task may still take.",
      responses: [{ status: 201, description: "Recorded.", schema: "LabelRecorded" }],
      errors: ["claimNotFound", "claimAlreadyLabeled", "claimExpired", "taskNotOpen"],
    }),
  ]),
  section("admin", "Operator routes (ADMIN_TOKEN).", "admin", [
    op("post", "/v1/admin/labelers", "createLabeler", "Create a labeler and its key", {
      body: { schema: "LabelerInput" },
      responses: [{ status: 201, description: "Created; the key is shown once.", schema: "LabelerCreated" }],
    }),
    read("/v1/admin/customers", "listCustomers", "Customers, newest first", customersQuery, "CustomerPage", "One page."),
    op("patch", "/v1/admin/customers/{id}", "setCustomerQuota", "Set a customer's label quota", {
      body: { schema: "CustomerPatchInput" },
      responses: [{ status: 200, description: "The updated profile.", schema: "Customer" }],
      errors: ["customerNotFound"],
    }),
    op("post", "/v1/admin/customers/{id}/upgrade", "upgradeCustomer", "Upgrade a customer to production", {
      description:
        "Issues an `sk_live_` key (shown once), raises the quota to the production default if below it, and revokes the sandbox key(s) unless `keep_sandbox_key`.",
      body: { schema: "UpgradeInput", required: false },
      responses: [{ status: 200, description: "Upgraded.", schema: "CustomerUpgraded" }],
      errors: ["customerNotFound", "alreadyProduction"],
    }),
  ]),
];

/** Every route of the HTTP API. */
export const ROUTES: RouteDoc[] = ROUTES_BY_TAG.flatMap((section) => section.routes);

// --- errors -------------------------------------------------------------------------------------------

/** An example error body of a kind, as the error handler renders it. */
export function errorExample(kind: ErrorKind): Record<string, unknown> {
  const body: Record<string, unknown> = { error: ERRORS[kind].message };
  switch (kind) {
    case "validation":
      body.details = [{ path: "label_spec.options", message: "Too small: expected array to have >=2 items" }];
      break;
    case "taskCanceled":
      Object.assign(body, { task_id: E.taskId, status: "canceled" });
      break;
    case "taskNotCancelable":
    case "taskNotOpen":
      body.status = "settled";
      break;
    case "jobNotCompleted":
      body.status = "labeling";
      break;
    case "webhookExists":
      body.webhook_id = E.webhookId;
      break;
    default:
      break;
  }
  if (ERRORS[kind].status >= 500) body.request_id = E.requestId;
  return body;
}

function spendsBudget(route: RouteDoc): boolean {
  return route.rateLimited ?? route.auth === "customer";
}

/** Every error kind a route can answer: its own, those of its auth, body and query, 500, and 503 unless offline. */
export function errorKindsOf(route: RouteDoc): ErrorKind[] {
  const kinds: ErrorKind[] = [...(route.errors ?? [])];
  if (route.auth !== "none") kinds.push("unauthorized");
  if (spendsBudget(route)) kinds.push("rateLimited");
  if (route.body) kinds.push("validation", "invalidJson", "payloadTooLarge", "unsupportedMediaType");
  if (route.query) kinds.push("validation");
  kinds.push("internal");
  if (!route.offline) kinds.push("unavailable");
  return [...new Set(kinds)];
}

// --- generation ---------------------------------------------------------------------------------------

const RATE_LIMIT_HEADERS = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"];

function ref(kind: "schemas" | "parameters" | "headers", name: string): JsonSchema {
  return { $ref: `#/components/${kind}/${name}` };
}

/** `format`s of JSON Schema 2020-12 that zod emits; others (zod's `starts_with`, ...) are dropped (the `pattern` stays). */
const STANDARD_FORMATS = new Set(["date-time", "date", "time", "duration", "email", "uri", "uuid", "ipv4", "ipv6", "hostname"]);

const generatorOptions = (io: "input" | "output") => ({
  target: "draft-2020-12" as const,
  io,
  override: ({ jsonSchema }: { jsonSchema: { format?: string } }) => {
    if (jsonSchema.format !== undefined && !STANDARD_FORMATS.has(jsonSchema.format)) delete jsonSchema.format;
  },
});

/** JSON Schema (2020-12) of one zod schema, without `$schema`. */
export function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, generatorOptions(io)) as JsonSchema;
  return rest;
}

/**
 * Components from named zod schemas (one registry, so a named schema nested in another becomes a `$ref`).
 * Descriptions and examples come from each schema's `.meta()`; `descriptions` adds more by name.
 */
function componentsOf(
  named: Record<string, z.ZodType>,
  io: "input" | "output",
  descriptions: Record<string, string> = {},
): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { ...generatorOptions(io), uri: (id) => `#/components/schemas/${id}` });
  const out: Record<string, JsonSchema> = {};
  for (const [id, generated] of Object.entries(schemas)) {
    const { $schema: _dialect, $id: _id, ...rest } = generated as JsonSchema;
    const description = descriptions[id];
    out[id] = description ? { description, ...rest } : rest;
  }
  return out;
}

/** The example of a response component (its `.meta()` example). */
export function schemaExample(name: ResponseSchemaName): unknown {
  const examples = RESPONSE_SCHEMAS[name].meta()?.examples;
  return Array.isArray(examples) ? examples[0] : undefined;
}

/** Response headers: X-Request-Id always; the rate-limit headers once the budget was spent (not on a 401). */
function responseHeaders(route: RouteDoc, status: number, extra: string[] = []): Record<string, JsonSchema> {
  const limited = spendsBudget(route) && status !== 401;
  const names = ["X-Request-Id", ...(limited ? RATE_LIMIT_HEADERS : []), ...extra];
  return Object.fromEntries([...new Set(names)].map((n) => [n, ref("headers", n)]));
}

function successResponse(route: RouteDoc, r: ResponseDoc): OpenApiResponse {
  const response: OpenApiResponse = { description: r.description, headers: responseHeaders(route, r.status, r.headers) };
  if (!r.schema) return response;
  const example = schemaExample(r.schema);
  if (r.contentType === "application/x-ndjson") {
    response.content = {
      "application/x-ndjson": {
        schema: { type: "string", description: `JSON Lines: one \`${r.schema}\` object per line` },
        example: `${JSON.stringify(example)}\n`,
        "x-item-schema": ref("schemas", r.schema),
      },
    };
  } else {
    response.content = { "application/json": { schema: ref("schemas", r.schema), example } };
  }
  return response;
}

function operationOf(route: RouteDoc): OpenApiOperation {
  const parameters: JsonSchema[] = [];
  for (const p of route.pathParams ?? []) {
    parameters.push({
      name: p.name,
      in: "path",
      required: true,
      description: p.description,
      schema: jsonSchemaOf(pathId(p.prefix), "input"),
      example: p.example,
    });
  }
  if (route.query) {
    const query = jsonSchemaOf(route.query, "input");
    const required = new Set((query.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((query.properties as Record<string, JsonSchema> | undefined) ?? {})) {
      parameters.push({ name, in: "query", required: required.has(name), schema });
    }
  }
  if (route.idempotencyKey) parameters.push(ref("parameters", "Idempotency-Key"));
  parameters.push(ref("parameters", "X-Request-Id"));

  const responses: Record<string, OpenApiResponse> = {};
  for (const r of route.responses) responses[String(r.status)] = successResponse(route, r);
  const byStatus = new Map<number, ErrorKind[]>();
  for (const kind of errorKindsOf(route)) {
    const status = ERRORS[kind].status;
    if (route.responses.some((r) => r.status === status)) continue;
    byStatus.set(status, [...(byStatus.get(status) ?? []), kind]);
  }
  for (const [status, kinds] of [...byStatus].sort(([a], [b]) => a - b)) {
    const extra = status === 429 || status === 503 ? ["Retry-After"] : [];
    responses[String(status)] = {
      description: kinds.map((k) => `\`${ERRORS[k].message}\``).join(", "),
      headers: responseHeaders(route, status, extra),
      content: {
        "application/json": {
          schema: ref("schemas", "Error"),
          examples: Object.fromEntries(kinds.map((k) => [k, { summary: ERRORS[k].message, value: errorExample(k) }])),
        },
      },
    };
  }

  const security = { none: [], customer: [{ customerKey: [] }], labeler: [{ labelerKey: [] }], admin: [{ adminToken: [] }] }[route.auth];
  const operation: OpenApiOperation = {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    security,
    parameters,
    responses,
  };
  if (route.body) {
    const { schema, required = true, limit = JSON_LIMIT } = route.body;
    operation.requestBody = {
      description: `${REQUEST_DESCRIPTIONS[schema]} At most ${limit}.${required ? "" : " May be omitted (counts as `{}`)."}`,
      required,
      content: { "application/json": { schema: ref("schemas", schema), examples: route.body.examples } },
    };
  }
  return operation;
}

const DESCRIPTION = `labelgate: customers submit labeling tasks, labelers label them, consensus settles each task on a
hash-chained ledger, and the customer is told by polling, by a signed webhook or in a manifest job's export.

**Authentication**: \`Authorization: Bearer <secret>\`. Customer routes take an API key (\`sk_sandbox_…\` or
\`sk_live_…\`), labeler routes a labeler key (\`lk_…\`), operator routes (\`/v1/admin/*\`) the \`ADMIN_TOKEN\`.
Missing or wrong credentials: 401 \`invalid API key\`.

**Errors**: \`{"error": "<message>"}\`, one fixed message per error kind; validation failures (400) add
\`details: [{path, message}]\`; 5xx add \`request_id\`.

**Headers**: every response carries \`X-Request-Id\` (a valid incoming one is echoed). Customer routes spend one
unit of the key's rate-limit budget and answer \`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\`;
a 429 or 503 adds \`Retry-After\` (seconds). Task submissions take an \`Idempotency-Key\` header (or the
\`idempotency_key\` body field; the header wins); so do claims (the header), which makes a claim retry-safe.`;

const HEADER_COMPONENTS: Record<string, JsonSchema> = {
  "X-Request-Id": { description: "Id of the request (logged; quoted in 5xx bodies).", required: true, schema: { type: "string" } },
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 1 } },
  "RateLimit-Limit": { description: "Requests per window of the key's tier.", schema: { type: "integer", minimum: 0 } },
  "RateLimit-Remaining": { description: "Requests left in the window.", schema: { type: "integer", minimum: 0 } },
  "RateLimit-Reset": { description: "Seconds until the window resets.", schema: { type: "integer", minimum: 0 } },
  "Content-Disposition": { description: '`attachment; filename="<job_id>.jsonl"`', schema: { type: "string" } },
};

/**
 * Builds the OpenAPI 3.1 document from ROUTES and the zod schemas. Pure and deterministic.
 * @throws Error when a request and a response component share a name.
 */
export function buildOpenApiDocument(): OpenApiDocument {
  const requests = componentsOf(REQUEST_SCHEMAS, "input", REQUEST_DESCRIPTIONS);
  const responses = componentsOf(RESPONSE_SCHEMAS, "output");
  for (const name of Object.keys(requests)) if (name in responses) throw new Error(`schema name ${name} is both a request and a response`);
  const paths: OpenApiDocument["paths"] = {};
  for (const route of ROUTES) {
    const item = paths[route.path] ?? {};
    item[route.method] = operationOf(route);
    paths[route.path] = item;
  }
  return {
    openapi: "3.1.0",
    info: { title: "labelgate API", version: "1.0.0", description: DESCRIPTION },
    servers: [{ url: "/", description: "this gateway" }],
    tags: ROUTES_BY_TAG.map(({ tag, description }) => ({ name: tag, description })),
    paths,
    components: {
      schemas: { ...requests, ...responses },
      securitySchemes: {
        customerKey: {
          type: "http",
          scheme: "bearer",
          description: "A customer API key: `sk_sandbox_…` (sandbox) or `sk_live_…` (production).",
        },
        labelerKey: { type: "http", scheme: "bearer", description: "A labeler key: `lk_…` (issued by POST /v1/admin/labelers)." },
        adminToken: { type: "http", scheme: "bearer", description: "The operators' `ADMIN_TOKEN`." },
      },
      parameters: {
        "Idempotency-Key": {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description:
            "Task submissions: idempotent per customer (wins over the body's `idempotency_key`). Claims: the same labeler and key return the same live claim.",
          schema: jsonSchemaOf(idempotencyKey, "input"),
          example: "order-1001",
        },
        "X-Request-Id": {
          name: "X-Request-Id",
          in: "header",
          required: false,
          description: "Echoed in the response's `X-Request-Id` when it matches `^[A-Za-z0-9._:-]{1,128}$`; otherwise a UUID is assigned.",
          schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
        },
      },
      headers: HEADER_COMPONENTS,
    },
  };
}

let cached: OpenApiDocument | undefined;

/** The document, built once per process. */
export function openApiDocument(): OpenApiDocument {
  cached ??= buildOpenApiDocument();
  return cached;
}

/** `GET /v1/openapi.json` */
export const serveOpenApi: RequestHandler = (_req, res) => {
  res.json(openApiDocument());
};

/**
 * The reference page: swagger-ui (from swagger-ui-dist, no network needed) at `/docs/`, loading the
 * document from OPENAPI_PATH. `/docs` redirects to `/docs/` so the page's relative asset URLs resolve.
 * Mount at DOCS_PATH.
 */
export function docsRouter(): Router {
  const router = Router();
  const options = { swaggerUrl: OPENAPI_PATH, customSiteTitle: "labelgate API reference" };
  const page = swaggerUi.setup(undefined, options);
  router.get("/", (req, res, next) => {
    const path = req.originalUrl.split("?")[0] ?? "";
    if (!path.endsWith("/")) {
      res.redirect(301, `${req.baseUrl}/`);
      return;
    }
    page(req, res, next);
  });
  router.use(swaggerUi.serveFiles(undefined, options));
  return router;
}
