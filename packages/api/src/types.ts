/**
 * The wire types of the API, inferred from the schemas (never written by hand): request bodies are the
 * schemas' input types (what a client may send: defaults optional), queries and responses their output
 * types. Field names are snake_case as they travel. @labelgate/sdk re-exports these names.
 */
import type { z } from "zod";
import type * as req from "./requests";
import type * as res from "./responses";

export type { DeliveryStatus, JobStatus, Resolution, TaskCounts, TaskSort, TaskStatus, Tier, WebhookEventType } from "./enums";
export type { ErrorDetail } from "./errors";

type Out<S extends z.ZodType> = z.output<S>;
type In<S extends z.ZodType> = z.input<S>;

// --- shared -----------------------------------------------------------------------------------------

/** The question and its answer options (2..50 unique strings). */
export type LabelSpec = Out<typeof req.labelSpec>;
/** Every error response: `{error, details?, request_id?}` plus route-specific fields (e.g. `status`). */
export type ErrorBody = Out<typeof res.ErrorBody> & { [extra: string]: unknown };
/** A page of a list route. */
export type Page<T> = Omit<Out<typeof res.TaskPage>, "items"> & { items: T[] };
/** `page` (from 1) and `per_page` (1..100, default 20) of a list route. */
export type PageQuery = Partial<Out<typeof req.jobsQuery>>;

// --- system -----------------------------------------------------------------------------------------

export type Health = Out<typeof res.Health>;
export type OpenApiDocument = Out<typeof res.OpenApiDocument>;

// --- customers --------------------------------------------------------------------------------------

export type RegisterCustomerRequest = In<typeof req.registrationBody>;
/** `POST /v1/customers` 201: the API key is shown only here. `created_at` is Unix seconds. */
export type RegisteredCustomer = Out<typeof res.CustomerCreated>;
/** `GET /v1/customers/me` (and the admin customer views). `created_at` is Unix seconds. */
export type CustomerProfile = Out<typeof res.Customer>;
/** `GET` / `PATCH /v1/customers/me/settings`: every field present, unset ones null. */
export type Settings = Out<typeof res.Settings>;
/** Body of `PATCH /v1/customers/me/settings`: merged into the settings; `null` clears a field. */
export type SettingsPatchRequest = In<typeof req.settingsPatchBody>;

// --- tasks ------------------------------------------------------------------------------------------

/** Body of `POST /v1/tasks`, and each element of a batch's `tasks`. Unknown fields are rejected (400). */
export type TaskRequest = In<typeof req.taskBody>;
export type TaskAccepted = Out<typeof res.TaskAccepted>;
/** Body of `POST /v1/tasks/batch` (1..10,000 tasks, 10 MB). */
export type BatchRequest = In<typeof req.batchBody>;
/** `POST /v1/tasks/batch` 202: all tasks were created (in order of `tasks`) or none. */
export type BatchAccepted = Out<typeof res.BatchAccepted>;
/** `GET /v1/tasks/{id}`, `POST /v1/tasks/{id}/cancel` and the items of `GET /v1/dashboard/tasks`. */
export type Task = Out<typeof res.Task>;
/** `GET /v1/tasks/{id}/result` 202: still being labeled. */
export type PendingResult = Out<typeof res.TaskProgress>;
/** `GET /v1/tasks/{id}/result` 200: settled, with its settlement record. */
export type SettledResult = Out<typeof res.TaskResult>;
export type TaskResult = PendingResult | SettledResult;
/** `GET /v1/batches/{id}`. */
export type Batch = Out<typeof res.Batch>;
/** `GET /v1/batches`: a page of batches, newest first. */
export type BatchPage = Out<typeof res.BatchPage>;
/** `page` and `per_page` of `GET /v1/batches`. */
export type BatchesQuery = Partial<Out<typeof req.batchesQuery>>;

// --- webhooks ---------------------------------------------------------------------------------------

export type WebhookCreateRequest = In<typeof req.webhookBody>;
/** `POST /v1/webhooks` 201 (no `deleted_at`). */
export type WebhookCreated = Out<typeof res.WebhookCreated>;
/** `GET /v1/webhooks` items and `DELETE /v1/webhooks/{id}`. */
export type Webhook = Out<typeof res.Webhook>;
export type Delivery = Out<typeof res.Delivery>;
export type DeliveryAttempt = Delivery["attempt_log"][number];
export type DeliveriesQuery = Partial<Out<typeof req.deliveriesQuery>>;
/** `POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver` 202. */
export type RedeliveryQueued = Out<typeof res.Redelivery>;

// --- manifest jobs ----------------------------------------------------------------------------------

export type S3Credentials = In<typeof req.s3Credentials>;
export type GcsCredentials = In<typeof req.gcsCredentials>;
export type JobCreateRequest = In<typeof req.jobBody>;
export type JobAccepted = Out<typeof res.JobAccepted>;
/** `GET /v1/jobs/{id}` and the items of `GET /v1/jobs`. Credentials never appear. */
export type Job = Out<typeof res.Job>;
/** One line of `GET /v1/jobs/{id}/export`, in manifest order; `source` is the manifest line as sent. */
export type ExportLine = Out<typeof res.ExportLine>;

// --- billing ----------------------------------------------------------------------------------------

export type Usage = Out<typeof res.Usage>;
export type LineItem = Usage["line_items"][number];
export type InvoiceList = Out<typeof res.InvoiceList>;
export type Invoice = InvoiceList["items"][number];

// --- dashboard --------------------------------------------------------------------------------------

export type DashboardOverview = Out<typeof res.Overview>;
export type DashboardTasksQuery = Partial<Out<typeof req.tasksQuery>>;
export type DashboardQuality = Out<typeof res.Quality>;
/** `GET /v1/dashboard/labelers`: one row per labeler and label space of the customer. */
export type LabelerQualityList = Out<typeof res.LabelerQualityList>;
export type LabelerQuality = LabelerQualityList["items"][number];
export type DashboardUsage = Out<typeof res.UsageDays>;

// --- labeling (labeler key) -------------------------------------------------------------------------

/** `POST /v1/labeling/claims` 201. */
export type Claim = Out<typeof res.Claim>;
/** `POST /v1/labeling/claims/{claim_id}/label` 201. */
export type RecordedLabel = Out<typeof res.LabelRecorded>;

// --- admin (ADMIN_TOKEN) ----------------------------------------------------------------------------

/** `POST /v1/admin/labelers` 201: the `lk_` key is shown only here. */
export type LabelerCreated = Out<typeof res.LabelerCreated>;
export type AdminCustomersQuery = Partial<Out<typeof req.customersQuery>>;
/** `POST /v1/admin/customers/{id}/upgrade` 200: the `sk_live_` key is shown only here. */
export type UpgradedCustomer = Out<typeof res.CustomerUpgraded>;
