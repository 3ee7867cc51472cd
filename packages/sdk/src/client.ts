/**
 * `LabelgateClient`: one method per operation of the route catalog (@labelgate/api/routes), grouped by
 * resource (customers, tasks, batches, webhooks, jobs, billing, dashboard, labeling, admin) plus `health()`
 * and `openapi()`. A method names its operation by id: the method, path and credential come from the
 * catalog, the body and answer types from its schemas (`RequestBody`, `SuccessBody`), so no path is written
 * here and a method whose declared type drifts from the catalog does not compile. Customer routes use `apiKey`
 * (`sk_sandbox_…`/`sk_live_…`), labeling routes `labelerKey` (`lk_…`), admin routes `adminToken`.
 * Every method takes optional {@link RequestOptions} last and throws a {@link LabelgateError} subclass on
 * a non-2xx answer (see errors.ts), a TypeError when the route's credential was not given.
 *
 * This module runs in browsers and in Node (fetch and web streams only). The Node-only helpers (the export
 * as a Node stream, parsed line by line, or written to a file) are in node.ts: `@labelgate/sdk` is the Node
 * entry (its `LabelgateClient` has them), `@labelgate/sdk/browser` the browser entry (this module's client).
 */

import type { ExportFormat } from "@labelgate/api/exports";
import {
  OPERATIONS,
  type OperationDecl,
  type OperationId,
  type PathParams,
  type RequestBody,
  type SuccessBody,
} from "@labelgate/api/operations";
import { type CallSpec, newIdempotencyKey, type RequestOptions, Transport, type TransportOptions } from "./transport";
import type {
  AdminCustomersQuery,
  AnswerBody,
  AuditPage,
  AuditsQuery,
  Batch,
  BatchAccepted,
  BatchRequest,
  Claim,
  CustomerProfile,
  DashboardOverview,
  DashboardQuality,
  DashboardTasksQuery,
  DashboardUsage,
  DeliveriesQuery,
  Delivery,
  FollowUpsRetried,
  Health,
  Instructions,
  InvoiceList,
  Job,
  JobAccepted,
  JobCreateRequest,
  LabelerCreated,
  LabelerQualityList,
  OpenApiDocument,
  Page,
  PageQuery,
  ParkedFollowUps,
  RecordedLabel,
  RedeliveryQueued,
  RegisterCustomerRequest,
  RegisteredCustomer,
  ReviewOutcome,
  ReviewRequest,
  Settings,
  SettingsPatchRequest,
  SettledResult,
  Task,
  TaskAccepted,
  TaskRequest,
  TaskResult,
  UpgradedCustomer,
  Usage,
  Webhook,
  WebhookCreated,
  WebhookCreateRequest,
  WebhookUpdateRequest,
} from "./types";

/** Credentials of a client; each route needs one of them (or none: registration, health). */
export interface Credentials {
  /** customer key `sk_sandbox_…` / `sk_live_…` */
  apiKey?: string;
  /** labeler key `lk_…` */
  labelerKey?: string;
  /** the deployment's ADMIN_TOKEN */
  adminToken?: string;
}

export interface ClientOptions extends TransportOptions, Credentials {}

type Call = Omit<CallSpec, "token">;

/** What the namespaces share: the transport and the credentials. @internal (node.ts extends the namespaces) */
export class Context {
  constructor(
    readonly transport: Transport,
    readonly credentials: Credentials,
  ) {}

  private token(spec: Call): string | undefined {
    switch (spec.auth) {
      case "customer":
        return this.credentials.apiKey;
      case "labeler":
        return this.credentials.labelerKey;
      case "admin":
        return this.credentials.adminToken;
      default:
        return undefined;
    }
  }

  async json<T>(spec: Call): Promise<T> {
    return (await this.transport.json<T>({ ...spec, token: this.token(spec) })).data;
  }

  async withStatus<T>(spec: Call): Promise<{ status: number; data: T; headers: Headers }> {
    const r = await this.transport.json<T>({ ...spec, token: this.token(spec) });
    return { status: r.status, data: r.data, headers: r.headers };
  }

  async stream(spec: Call): Promise<Response> {
    return (await this.transport.stream({ ...spec, token: this.token(spec) })).data;
  }

  /** The request's options with an idempotency key added when retries are on and none was given. */
  keyed(options: RequestOptions | undefined, bodyKey: string | undefined): RequestOptions {
    const o = options ?? {};
    if (o.idempotencyKey || bodyKey) return o;
    const attempts = o.maxAttempts ?? (this.transport.retries ? 2 : 1);
    if (attempts <= 1 || o.retry === false) return o;
    return { ...o, idempotencyKey: newIdempotencyKey() };
  }
}

/** What an operation's request carries besides its id and options: path parameters, query, body. */
export interface OperationParts<K extends OperationId> {
  params?: PathParams<K>;
  query?: Record<string, string | number | undefined>;
  body?: RequestBody<K>;
  /** repeating the request has no further effect (retried on 503 and connection failures) */
  idempotent?: boolean;
}

/** The transport's call of one catalog operation: its method, path template and credential from the catalog. */
export function callOf<K extends OperationId>(id: K, parts: OperationParts<K>, options: RequestOptions | undefined): Call {
  const { method, path, auth } = OPERATIONS[id] as OperationDecl;
  const { params, ...rest } = parts;
  return {
    method: method.toUpperCase() as Call["method"],
    route: path,
    auth,
    ...(params ? { params: params as Record<string, string> } : {}),
    ...rest,
    options,
  };
}

/**
 * A namespace of the client: the operations of one resource, over the shared {@link Context}. Each method
 * calls one operation of the route catalog (@labelgate/api/routes) by id: its method, path and credential
 * come from there, its body and answer are typed by the catalog's schemas.
 */
export abstract class Namespace {
  constructor(protected readonly ctx: Context) {}

  /** One request of operation `id`: its JSON body (the operation's 2xx body types). */
  protected op<K extends OperationId>(id: K, parts: OperationParts<K>, options: RequestOptions | undefined): Promise<SuccessBody<K>> {
    return this.ctx.json(callOf(id, parts, options));
  }

  /** One page of a list operation, `page` from 1 and `per_page` 1..100. */
  protected page<K extends OperationId>(id: K, query: PageQuery, options: RequestOptions | undefined): Promise<SuccessBody<K>> {
    return this.op(id, { query: { page: query.page, per_page: query.per_page } }, options);
  }

  /** An operation on one resource, its path having an `{id}` parameter. */
  protected byId<K extends OperationId>(id: K, resourceId: string, options: RequestOptions | undefined): Promise<SuccessBody<K>> {
    return this.op(id, { params: { id: resourceId } as PathParams<K> }, options);
  }
}

/** `POST /v1/customers` and `GET /v1/customers/me`. */
export class CustomersApi extends Namespace {
  /** Registers a customer (no auth). The returned `api_key` is shown only once. @throws ConflictError `email already registered` */
  register(body: RegisterCustomerRequest, options?: RequestOptions): Promise<RegisteredCustomer> {
    return this.op("registerCustomer", { body }, options);
  }

  /** The calling customer's profile and remaining quota. @throws AuthenticationError */
  me(options?: RequestOptions): Promise<CustomerProfile> {
    return this.op("getCurrentCustomer", {}, options);
  }
}

/**
 * `GET` and `PATCH /v1/customers/me/settings`: task defaults (the least specific layer of a task's policy)
 * and quality settings (gold rate, labeler exclusion), contract §quality.
 */
export class SettingsApi extends Namespace {
  /** The calling customer's settings, every field present (unset: null). */
  get(options?: RequestOptions): Promise<Settings> {
    return this.op("getSettings", {}, options);
  }

  /**
   * Merges `patch` into the settings (`null` clears a field) and returns them whole.
   * @throws ValidationError (e.g. task defaults with `max_labels` below `consensus_threshold`)
   */
  update(patch: SettingsPatchRequest, options?: RequestOptions): Promise<Settings> {
    return this.op("updateSettings", { body: patch }, options);
  }
}

/** Waiting options of {@link TasksApi.waitForResult}. */
export interface WaitOptions extends RequestOptions {
  /** poll interval, ms (default 1000) */
  intervalMs?: number;
  /** give up after this long, ms (default: never) */
  timeoutMs?: number;
}

/** `/v1/tasks`: submit, read, result, cancel. */
export class TasksApi extends Namespace {
  /**
   * Submits one task (202). With retries on and no key given, an `Idempotency-Key` is generated so a
   * retried submission cannot create a second task. `task.type` picks the body's shape (contract §task-types):
   * `multi_label_classification` (`label_spec: {question, options}`), `bounding_box` (`{question, classes}`),
   * `text_span` (`{question, entity_types}`, optional `data_text`), each with an optional `gold_answer` (an answer
   * body); any other type is single choice (`{question, options}`, optional `gold_label`).
   * @throws ValidationError (400, `details`), ForbiddenError `quota exhausted`, PayloadTooLargeError, UnprocessableError (key reuse)
   */
  create(task: TaskRequest, options?: RequestOptions): Promise<TaskAccepted> {
    return this.op("createTask", { body: task }, this.ctx.keyed(options, task.idempotency_key));
  }

  /**
   * Submits up to 10,000 tasks at once (all or none); `task_ids` follow the order of `tasks`. With retries
   * on and no key given, an `Idempotency-Key` is generated (a retry answers the original batch).
   * @throws ValidationError (details `tasks.<i>.<field>`), ForbiddenError, PayloadTooLargeError (> 10 MB), UnprocessableError
   */
  createBatch(batch: BatchRequest, options?: RequestOptions): Promise<BatchAccepted> {
    return this.op("createTaskBatch", { body: batch }, this.ctx.keyed(options, batch.idempotency_key));
  }

  /** A task with its status and, once settled, its consensus. @throws NotFoundError `task not found` */
  get(taskId: string, options?: RequestOptions): Promise<Task> {
    return this.byId("getTask", taskId, options);
  }

  /**
   * The task's result: `status: "settled"` with the consensus and its ledger record (HTTP 200), or the
   * labeling progress (HTTP 202) while open. A reserved type's result also carries `consensus` (the answer's
   * shape with a confidence per part: `isMultiLabelConsensus`, `isBoxConsensus`, `isSpanConsensus` tell them apart). @throws NotFoundError, ConflictError `task canceled`
   */
  result(taskId: string, options?: RequestOptions): Promise<TaskResult> {
    return this.byId("getTaskResult", taskId, options);
  }

  /**
   * Polls {@link result} until the task is settled and returns the settled result.
   * @throws ConflictError `task canceled`, Error on timeout
   */
  async waitForResult(taskId: string, options: WaitOptions = {}): Promise<SettledResult> {
    const { intervalMs = 1000, timeoutMs, ...request } = options;
    const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
    for (;;) {
      const r = await this.result(taskId, request);
      if (r.status === "settled") return r;
      if (Date.now() + intervalMs > deadline) throw new Error(`task ${taskId} not settled after ${timeoutMs} ms (status ${r.status})`);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }

  /** Cancels an open task; its unused reserved quota is returned. @throws NotFoundError, ConflictError `task cannot be canceled` */
  cancel(taskId: string, options?: RequestOptions): Promise<Task> {
    return this.op("cancelTask", { params: { id: taskId }, idempotent: true }, options);
  }

  /**
   * Reviews a settled result (docs/decisions/0260): `{verdict: "accept"}`; `{verdict: "reject", answer}` (an answer
   * body of the task's type: a different answer becomes the next revision, announced by `task.revised`); or
   * `{verdict: "reject"}` alone (single choice: the task reopens for more labels, never on the rejected option).
   * Returns the review and the task's result after it (settled, or the progress of the next revision). Not
   * retried: a review is a new record each time.
   * @throws NotFoundError `task not found`, ConflictError `task not settled`, ValidationError (an answer not right for the task)
   */
  review(taskId: string, body: ReviewRequest, options?: RequestOptions): Promise<ReviewOutcome> {
    return this.op("reviewTask", { params: { id: taskId }, body }, options);
  }
}

/** `GET /v1/audits`: settled tasks drawn for review at the customer's `quality.audit_rate` (docs/decisions/0262). */
export class AuditsApi extends Namespace {
  /**
   * A page of the audit queue, oldest first: `status` `open` (default) or `done` (closed by a review).
   * @throws ValidationError for an unknown status, a `page` below 1 or a `per_page` outside 1..100
   */
  list(query: AuditsQuery = {}, options?: RequestOptions): Promise<AuditPage> {
    return this.op("listAudits", { query: { status: query.status, page: query.page, per_page: query.per_page } }, options);
  }
}

/** `GET /v1/batches`, `GET /v1/batches/{id}` and the batch's export. */
export class BatchesApi extends Namespace {
  /**
   * A page of the customer's batches, newest first, each with its tasks' counts by status (the item shape
   * of {@link get}). @throws ValidationError for a `page` below 1 or a `per_page` outside 1..100
   */
  list(query: PageQuery = {}, options?: RequestOptions): Promise<Page<Batch>> {
    return this.page("listBatches", query, options);
  }

  /** A batch's status and its tasks' counts by status. @throws NotFoundError `batch not found` */
  get(batchId: string, options?: RequestOptions): Promise<Batch> {
    return this.byId("getBatch", batchId, options);
  }

  /**
   * The ranking of the items the batch's `pairwise_comparison` tasks compared (contract §task-types): weighted
   * Bradley-Terry scores with 95% intervals, best first. @throws NotFoundError `batch not found`,
   * ValidationError past 2,000 items
   */
  ranking(batchId: string, options?: RequestOptions) {
    return this.byId("getBatchRanking", batchId, options);
  }

  /**
   * A completed batch's export as a web `ReadableStream` of bytes, `options.format` as for
   * {@link JobsApi.exportBody} (jsonl lines end with `metadata` where a job's have `source`; task id order).
   * @throws NotFoundError, ConflictError `batch not completed` (body `status`), ValidationError for a format that
   * does not fit the batch's task types
   */
  async exportBody(batchId: string, options?: ExportOptions): Promise<ReadableStream<Uint8Array>> {
    return exportBodyOf(this.ctx, "exportBatch", batchId, options);
  }
}

/** `/v1/webhooks`: register, list, delete, the delivery log, redelivery. */
export class WebhooksApi extends Namespace {
  /**
   * Registers a webhook (the secret is stored sealed and never returned).
   * @throws ValidationError (secret, event, URL not allowed), ConflictError (an active webhook already uses the URL)
   */
  create(body: WebhookCreateRequest, options?: RequestOptions): Promise<WebhookCreated> {
    return this.op("createWebhook", { body }, options);
  }

  /** Every webhook of the customer, newest first, deleted ones included. */
  list(options?: RequestOptions): Promise<Webhook[]> {
    return this.op("listWebhooks", {}, options);
  }

  /**
   * Replaces the events a webhook subscribes to (names of the event catalog, at least one).
   * @throws ValidationError (unknown event), NotFoundError `webhook not found`, ConflictError `webhook is not active`
   */
  update(webhookId: string, body: WebhookUpdateRequest, options?: RequestOptions): Promise<Webhook> {
    return this.op("updateWebhook", { params: { id: webhookId }, body }, options);
  }

  /** Soft-deletes a webhook (again: same answer). @throws NotFoundError `webhook not found` */
  delete(webhookId: string, options?: RequestOptions): Promise<Webhook> {
    return this.op("deleteWebhook", { params: { id: webhookId } }, options);
  }

  /** A page of the webhook's deliveries with every attempt, newest first. @throws NotFoundError, ValidationError */
  deliveries(webhookId: string, query: DeliveriesQuery = {}, options?: RequestOptions): Promise<Page<Delivery>> {
    return this.op(
      "listWebhookDeliveries",
      { params: { id: webhookId }, query: { status: query.status, page: query.page, per_page: query.per_page } },
      options,
    );
  }

  /**
   * Queues one more attempt of a delivery (same event id, fresh timestamp and signature).
   * @throws NotFoundError `webhook not found` / `delivery not found`, ConflictError `webhook is not active`
   */
  redeliver(webhookId: string, deliveryId: string, options?: RequestOptions): Promise<RedeliveryQueued> {
    return this.op("redeliverWebhookDelivery", { params: { id: webhookId, deliveryId } }, options);
  }
}

/** `/v1/jobs`: manifest jobs and their streamed export (contract §exports). */
export class JobsApi extends Namespace {
  /**
   * Creates a manifest job (202, `queued`); the credentials are sealed and never returned.
   * @throws ValidationError (URL scheme, missing or mismatched credentials, label_spec), ForbiddenError
   */
  create(body: JobCreateRequest, options?: RequestOptions): Promise<JobAccepted> {
    return this.op("createJob", { body }, options);
  }

  /** A page of the customer's jobs, newest first. */
  list(query: PageQuery = {}, options?: RequestOptions): Promise<Page<Job>> {
    return this.page("listJobs", query, options);
  }

  /** A job's status and progress. @throws NotFoundError `job not found` */
  get(jobId: string, options?: RequestOptions): Promise<Job> {
    return this.byId("getJob", jobId, options);
  }

  /**
   * The ranking of the items a `pairwise_comparison` job's tasks compared (contract §task-types), as
   * {@link BatchesApi.ranking} for a batch: weighted Bradley-Terry scores with 95% intervals, best first.
   * @throws NotFoundError `job not found`, ValidationError for a job of another type or past 2,000 items
   */
  ranking(jobId: string, options?: RequestOptions) {
    return this.byId("getJobRanking", jobId, options);
  }

  /**
   * The export's body as a web `ReadableStream` of bytes, in browsers and in Node: `options.format` (contract
   * §exports) `jsonl` (the default: one line per manifest line, manifest order), `label-studio`, `coco`
   * (bounding_box), `conll` (text_span) or `hf`. The request (and its retries) completes before this resolves;
   * the body is then streamed as it arrives and is the caller's to read or cancel.
   * @throws NotFoundError, ConflictError `job not completed` (body `status` = the job's status), ValidationError
   * for a format that does not fit the job's type (body `formats`: those that fit)
   */
  async exportBody(jobId: string, options?: ExportOptions): Promise<ReadableStream<Uint8Array>> {
    return exportBodyOf(this.ctx, "exportJob", jobId, options);
  }
}

/** The format of an export (contract §exports), beside the request's options. */
export interface ExportOptions extends RequestOptions {
  /** `jsonl` (default), `label-studio`, `coco`, `conll` or `hf` */
  format?: ExportFormat;
}

/** The body of an export operation (a job's or a batch's) in `options.format`. */
export async function exportBodyOf(
  ctx: Context,
  id: "exportJob" | "exportBatch",
  resourceId: string,
  options: ExportOptions | undefined,
): Promise<ReadableStream<Uint8Array>> {
  const { format, ...request } = options ?? {};
  const res = await ctx.stream(callOf(id, { params: { id: resourceId }, ...(format ? { query: { format } } : {}) }, request));
  return res.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
}

/** `/v1/billing`: monthly usage and invoices. */
export class BillingApi extends Namespace {
  /** Usage of a UTC month (`YYYY-MM`), priced per tier. @throws ValidationError (details path `month`) */
  usage(month: string, options?: RequestOptions): Promise<Usage> {
    return this.op("getUsage", { query: { month } }, options);
  }

  /** Invoices, newest month first; the current month is `open`. */
  invoices(options?: RequestOptions): Promise<InvoiceList> {
    return this.op("listInvoices", {}, options);
  }
}

/** `/v1/dashboard`: overview, task list, quality, daily usage. */
export class DashboardApi extends Namespace {
  /** Tasks by status, labels this month, quota, median time to settle, webhook success rate. */
  overview(options?: RequestOptions): Promise<DashboardOverview> {
    return this.op("getDashboardOverview", {}, options);
  }

  /** A page of the customer's tasks, filtered by status and sorted. @throws ValidationError */
  tasks(query: DashboardTasksQuery = {}, options?: RequestOptions): Promise<Page<Task>> {
    return this.op(
      "listDashboardTasks",
      { query: { page: query.page, per_page: query.per_page, status: query.status, sort: query.sort } },
      options,
    );
  }

  /** Quality of the tasks settled in the last 90 days, and the calibration of `confidence` measured on gold tasks. */
  quality(options?: RequestOptions): Promise<DashboardQuality> {
    return this.op("getDashboardQuality", {}, options);
  }

  /** The labelers of the customer's label spaces: labels, gold record, estimated accuracy, excluded or active. */
  labelers(options?: RequestOptions): Promise<LabelerQualityList> {
    return this.op("getDashboardLabelers", {}, options);
  }

  /** Labels per UTC day over the last 30 days, oldest first. */
  usage(options?: RequestOptions): Promise<DashboardUsage> {
    return this.op("getDashboardUsage", {}, options);
  }
}

/** `/v1/labeling` (labeler key): claims and labels. */
export class LabelingApi extends Namespace {
  /**
   * Claims a task: the named one, or the oldest open task this labeler may label. Resolves to null when
   * nothing is open for this labeler (HTTP 204). Retry-safe: `options.idempotencyKey` is sent as
   * `Idempotency-Key` (the same labeler and key get the same claim back while it is live); with retries on
   * and no key given, one is generated, so a retried claim never takes a second slot. Naming a task this
   * labeler already holds a live claim on returns that claim.
   * @throws NotFoundError `task not found`, ValidationError, UnprocessableError (the key's live claim is of another task)
   */
  async claim(taskId?: string, options?: RequestOptions): Promise<Claim | null> {
    return (await this.claimOrIdle(taskId, options)).claim;
  }

  /**
   * `claim`, with the reason the gateway gives when nothing is served (the 204's `Labelgate-Idle-Reason`):
   * `failed_qualification` when this labeler failed the qualification exam of a label space that still has
   * open tasks (contract §qualification); absent otherwise. @throws as `claim`
   */
  async claimOrIdle(taskId?: string, options?: RequestOptions): Promise<{ claim: Claim | null; idleReason?: "failed_qualification" }> {
    const body = taskId === undefined ? {} : { task_id: taskId };
    const r = await this.ctx.withStatus<SuccessBody<"claimTask">>(callOf("claimTask", { body }, this.ctx.keyed(options, undefined)));
    if (r.status !== 204 && r.data !== undefined) return { claim: r.data };
    const reason = r.headers.get("labelgate-idle-reason");
    return reason === "failed_qualification" ? { claim: null, idleReason: reason } : { claim: null };
  }

  /**
   * Releases a claim without labeling it (skip): its slot returns at once. Releasing again, or an expired
   * claim, succeeds too. @throws NotFoundError (not this labeler's claim) | ConflictError (already labeled)
   */
  async release(claimId: string, options?: RequestOptions): Promise<void> {
    await this.ctx.withStatus<SuccessBody<"releaseClaim">>(callOf("releaseClaim", { params: { claimId } }, options));
  }

  /**
   * Labels a claimed task: a single-choice task with one of its options (a string: `{label}`), a task of a
   * reserved type (contract §task-types) with its answer body (`{labels}`, `{boxes}` or `{spans}`).
   * @throws ValidationError (not an option, an invalid answer), NotFoundError `claim not found`,
   *   ConflictError `claim already labeled` / `claim expired` / `task no longer accepts labels`
   */
  label(claimId: string, answer: string | AnswerBody, options?: RequestOptions): Promise<RecordedLabel> {
    return this.op("labelClaim", { params: { claimId }, body: typeof answer === "string" ? { label: answer } : answer }, options);
  }

  /**
   * The current instructions of a label space (a claim's `label_space`): Markdown, worked examples and their
   * `version` (a claim's `instructions_version`). @throws NotFoundError `instructions not found` (the space has none)
   */
  instructions(labelSpaceId: string, options?: RequestOptions): Promise<Instructions> {
    return this.op("getInstructions", { params: { id: labelSpaceId } }, options);
  }
}

/** `/v1/admin` (ADMIN_TOKEN): labelers, customers, quota, upgrades. */
export class AdminApi extends Namespace {
  /** Creates a labeler; the returned `lk_` key is shown only once. @throws AuthenticationError, ValidationError */
  createLabeler(name: string, options?: RequestOptions): Promise<LabelerCreated> {
    return this.op("createLabeler", { body: { name } }, options);
  }

  /** A page of customers, newest first, optionally of one tier. */
  listCustomers(query: AdminCustomersQuery = {}, options?: RequestOptions): Promise<Page<CustomerProfile>> {
    return this.op("listCustomers", { query: { page: query.page, per_page: query.per_page, tier: query.tier } }, options);
  }

  /** Sets a customer's label quota (an absolute value: safe to retry). @throws NotFoundError `customer not found` */
  updateCustomer(customerId: string, body: { label_quota: number }, options?: RequestOptions): Promise<CustomerProfile> {
    return this.op("setCustomerQuota", { params: { id: customerId }, body, idempotent: true }, options);
  }

  /**
   * The follow-ups the relay parked, oldest first, at most `limit` (default 100, at most 1,000): queue work it
   * could not enqueue for a reason other than an outage, each with its `error`; none runs until retried.
   */
  listParkedFollowUps(query: { limit?: number } = {}, options?: RequestOptions): Promise<ParkedFollowUps> {
    return this.op("listParkedFollowUps", { query: { limit: query.limit } }, options);
  }

  /**
   * Makes parked follow-ups due again (those of `ids`, or every one), after their cause was fixed; the relay
   * parks again any that still cannot be enqueued. @returns how many were made due. @throws ValidationError
   */
  retryFollowUps(ids?: string[], options?: RequestOptions): Promise<FollowUpsRetried> {
    return this.op("retryFollowUps", { body: ids === undefined ? {} : { ids } }, options);
  }

  /**
   * Upgrades a customer to production: a new `sk_live_` key (shown once), quota raised to the production
   * default, sandbox keys revoked unless `keep_sandbox_key`. @throws NotFoundError, ConflictError (already production)
   */
  upgradeCustomer(customerId: string, body: { keep_sandbox_key?: boolean } = {}, options?: RequestOptions): Promise<UpgradedCustomer> {
    return this.op("upgradeCustomer", { params: { id: customerId }, body }, options);
  }
}

/**
 * The labelgate API client, without the Node-only export helpers (`@labelgate/sdk/browser` exports it as
 * `LabelgateClient`; the Node entry's `LabelgateClient` extends it).
 *
 * ```ts
 * const lg = new LabelgateClient({ baseUrl: "http://127.0.0.1:3000", apiKey: process.env.LABELGATE_API_KEY });
 * const { task_id } = await lg.tasks.create({ type: "image_classification", data_url, label_spec });
 * const result = await lg.tasks.waitForResult(task_id);
 * ```
 */
export class LabelgateClientBase {
  readonly customers: CustomersApi;
  readonly settings: SettingsApi;
  readonly tasks: TasksApi;
  readonly batches: BatchesApi;
  /** the audit queue (`GET /v1/audits`) */
  readonly audits: AuditsApi;
  readonly webhooks: WebhooksApi;
  readonly jobs: JobsApi;
  readonly billing: BillingApi;
  readonly dashboard: DashboardApi;
  readonly labeling: LabelingApi;
  readonly admin: AdminApi;
  protected readonly ctx: Context;

  constructor(options: ClientOptions);
  /** @internal shares a transport (see {@link withCredentials}) */
  constructor(options: ClientOptions, transport: Transport);
  constructor(options: ClientOptions, transport?: Transport) {
    const { apiKey, labelerKey, adminToken } = options;
    this.ctx = new Context(transport ?? new Transport(options), { apiKey, labelerKey, adminToken });
    this.customers = new CustomersApi(this.ctx);
    this.settings = new SettingsApi(this.ctx);
    this.tasks = new TasksApi(this.ctx);
    this.batches = this.createBatches(this.ctx);
    this.audits = new AuditsApi(this.ctx);
    this.webhooks = new WebhooksApi(this.ctx);
    this.jobs = this.createJobs(this.ctx);
    this.billing = new BillingApi(this.ctx);
    this.dashboard = new DashboardApi(this.ctx);
    this.labeling = new LabelingApi(this.ctx);
    this.admin = new AdminApi(this.ctx);
  }

  /** The jobs namespace (node.ts returns one with the Node-only export helpers). */
  protected createJobs(ctx: Context): JobsApi {
    return new JobsApi(ctx);
  }

  /** The batches namespace (node.ts returns one with the Node-only export helpers). */
  protected createBatches(ctx: Context): BatchesApi {
    return new BatchesApi(ctx);
  }

  /** The base URL the client talks to (no trailing `/`). */
  get baseUrl(): string {
    return this.ctx.transport.baseUrl;
  }

  /**
   * A client with other credentials (those not given are kept) sharing this one's options and hooks:
   * e.g. one client per labeler key.
   */
  withCredentials(credentials: Credentials): LabelgateClientBase {
    const merged = { ...this.ctx.credentials, ...credentials };
    return new LabelgateClientBase({ baseUrl: this.ctx.transport.baseUrl, ...merged }, this.ctx.transport);
  }

  /**
   * `GET /v1/health` (no auth): `{ok: true, checks}`. When Postgres or the queue is down the gateway
   * answers 503: ServiceUnavailableError, whose `body.checks` names the failing dependency.
   */
  health(options?: RequestOptions): Promise<Health> {
    return this.ctx.json(callOf("getHealth", {}, options));
  }

  /** `GET /v1/openapi.json` (no auth): the gateway's OpenAPI 3.1 document. */
  openapi(options?: RequestOptions): Promise<OpenApiDocument> {
    return this.ctx.json(callOf("getOpenApiDocument", {}, options));
  }
}
