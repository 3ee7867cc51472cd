/**
 * Request schemas (zod) of every gateway route: bodies and queries. The single source of validation, of the
 * request half of the OpenAPI document (services/gateway/src/openapi.ts) and of the SDK's request types
 * (each declared right after its schema: a body's `z.input`, a query's `z.output`; gathered by types.ts).
 * Wire names follow docs/contract.md (SPEC §4, DESIGN §2). Unknown fields are rejected so typos surface as 400s.
 */
import { z } from "zod";
import { DELIVERY_STATUSES, TASK_SORTS, TASK_STATUSES, TIERS, WEBHOOK_EVENTS } from "./enums";
import { CONFIDENCE_TARGET_MAX, CONFIDENCE_TARGET_MIN } from "./policy";
import {
  type AnswerBody,
  type AnyLabelSpec,
  answerIssues,
  boundingBoxSpec,
  boxAnswer,
  codePointLength,
  isReservedTaskType,
  labelSpec,
  labelSpecSchemaOf,
  MAX_ANSWER_BYTES,
  MAX_TEXT_CODE_POINTS,
  multiLabelAnswer,
  multiLabelSpec,
  singleChoiceAnswer,
  spanAnswer,
  textSpanSpec,
} from "./task-types";

const DATA_URL_SCHEMES = new Set(["http:", "https:", "s3:", "gs:"]);

/**
 * The bucket and key an `s3://` or `gs://` URL names, or undefined when it lacks either (`s3://`, `gs://b`,
 * `s3://b/`, `s3:///k`): a bucket is the host, a key the path without its leading `/` (percent-decoded as
 * stored objects are named). Not a storage URL: undefined.
 */
export function storageObjectOf(url: URL): { bucket: string; key: string } | undefined {
  if (url.protocol !== "s3:" && url.protocol !== "gs:") return undefined;
  let key: string;
  try {
    key = decodeURIComponent(url.pathname.replace(/^\//, ""));
  } catch {
    return undefined;
  }
  return url.hostname && key ? { bucket: url.hostname, key } : undefined;
}

/**
 * What is wrong with an item's URL (a task's `data_url`, a manifest line's `data_url` or `source-ref`), or
 * undefined when it is fine: an http(s) URL, or `s3://bucket/key` / `gs://bucket/key` naming both a bucket
 * and a key (as manifest URLs must). The message is fit for a 400's `details` (and a manifest line's error).
 */
export function dataUrlProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an http(s), s3:// or gs:// URL";
  }
  if (!DATA_URL_SCHEMES.has(url.protocol)) return "must be an http(s), s3:// or gs:// URL";
  if ((url.protocol === "s3:" || url.protocol === "gs:") && !storageObjectOf(url)) {
    return `must name a bucket and a key: ${url.protocol}//bucket/key`;
  }
  return undefined;
}

const dataUrl = z
  .string()
  .max(2048)
  .superRefine((v, ctx) => {
    const problem = dataUrlProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

export const callbackUrl = z
  .string()
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === "https:" || u.protocol === "http:") && !u.username && !u.password;
    } catch {
      return false;
    }
  }, "must be an http(s) URL without credentials");

export const idempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces");

/** How deep `metadata` may nest: deeper JSON is refused (serialising it would exhaust the stack). */
export const MAX_METADATA_DEPTH = 32;

/** Nesting depth of a JSON value, walked iteratively: 0 for a scalar, 1 for a flat object or array. */
export function jsonDepth(value: unknown): number {
  let max = 0;
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (item.value === null || typeof item.value !== "object") continue;
    const depth = item.depth + 1;
    if (depth > max) max = depth;
    for (const child of Object.values(item.value)) stack.push({ value: child, depth });
  }
  return max;
}

/** The policy fields (docs/contract.md, DESIGN §10): absent = from a less specific layer (policy.ts `resolvePolicy`). */
export const consensusThreshold = z.number().int().min(1).max(25);
export const maxLabels = z.number().int().min(1).max(50);
export const confidenceTarget = z.number().min(CONFIDENCE_TARGET_MIN).max(CONFIDENCE_TARGET_MAX);
export const minLabels = z.number().int().min(1).max(50);

/** `confidence_target`, `min_labels` and `max_labels` of a batch's top level or a task (null target = threshold policy). */
const confidencePolicyFields = {
  max_labels: maxLabels.optional(),
  confidence_target: confidenceTarget.nullable().optional(),
  min_labels: minLabels.optional(),
};

/** A gold label is one of the label spec's options (checked with the spec in the single-choice branch). */
const goldLabel = z.string().min(1).max(200);

/** The fields every task body has, whatever its type. */
const taskFields = {
  data_url: dataUrl,
  callback_url: callbackUrl.optional(),
  consensus_threshold: consensusThreshold.optional(),
  ...confidencePolicyFields,
  metadata: z
    .record(z.string(), z.unknown())
    .refine((m) => jsonDepth(m) <= MAX_METADATA_DEPTH, `must not nest deeper than ${MAX_METADATA_DEPTH} levels`)
    .optional(),
  idempotency_key: idempotencyKey.optional(),
};

const taskTypeName = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "lowercase letters, digits and _ (e.g. image_classification)");

/** Adds each problem of a gold answer (task-types.ts `answerIssues`) at `gold_answer.<path>`. */
function checkGoldAnswer(
  t: { type: string; label_spec: AnyLabelSpec; gold_answer?: AnswerBody; data_text?: string },
  ctx: z.RefinementCtx,
): void {
  if (t.gold_answer === undefined) return;
  for (const issue of answerIssues(t.type, t.label_spec, t.gold_answer, { text: t.data_text })) {
    ctx.addIssue({ code: "custom", path: ["gold_answer", ...issue.path], message: issue.message });
  }
}

/** A single-choice task: any `type` but the reserved ones (DESIGN §12). */
export const singleChoiceTaskBody = z
  .object({
    type: taskTypeName.refine((t) => !isReservedTaskType(t), "a reserved type has its own label_spec"),
    label_spec: labelSpec,
    ...taskFields,
    gold_label: goldLabel.optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.gold_label !== undefined && !t.label_spec.options.includes(t.gold_label)) {
      ctx.addIssue({ code: "custom", path: ["gold_label"], message: "must be one of label_spec.options" });
    }
  })
  .meta({ description: "A single-choice task: `type` is any value but the reserved ones (e.g. `image_classification`)." });

/** A `multi_label_classification` task. */
export const multiLabelTaskBody = z
  .object({
    type: z.literal("multi_label_classification"),
    label_spec: multiLabelSpec,
    ...taskFields,
    gold_answer: multiLabelAnswer.optional().describe("a gold task's true answer: the options that apply"),
  })
  .strict()
  .superRefine(checkGoldAnswer)
  .meta({ description: "A multi-label task: the labeler ticks every option that applies (possibly none)." });

/** A `bounding_box` task. */
export const boundingBoxTaskBody = z
  .object({
    type: z.literal("bounding_box"),
    label_spec: boundingBoxSpec,
    ...taskFields,
    gold_answer: boxAnswer.optional().describe("a gold task's true boxes"),
  })
  .strict()
  .superRefine(checkGoldAnswer)
  .meta({ description: "A bounding-box task: the labeler draws a box around every object of the classes (possibly none)." });

/** A `text_span` task. */
export const textSpanTaskBody = z
  .object({
    type: z.literal("text_span"),
    label_spec: textSpanSpec,
    data_text: z
      .string()
      .min(1)
      .max(4 * MAX_TEXT_CODE_POINTS)
      .refine((text) => codePointLength(text) <= MAX_TEXT_CODE_POINTS, `must be at most ${MAX_TEXT_CODE_POINTS} code points`)
      .optional()
      .describe("the text to label; without it, the body of an http(s) `data_url` (UTF-8, fetched once; the task is claimable after)"),
    ...taskFields,
    gold_answer: spanAnswer.optional().describe("a gold task's true spans"),
  })
  .strict()
  .superRefine(checkGoldAnswer)
  .superRefine((t, ctx) => {
    // the text of an object URL is read only with a manifest job's credentials (docs/decisions/0194)
    if (t.data_text === undefined && /^(s3|gs):/i.test(t.data_url))
      ctx.addIssue({ code: "custom", path: ["data_text"], message: "required when data_url is s3:// or gs:// (no credentials read it)" });
  })
  .meta({ description: "A text-span task: the labeler marks every entity of the types in the text (possibly none)." });

export const taskBody = z.xor([singleChoiceTaskBody, multiLabelTaskBody, boundingBoxTaskBody, textSpanTaskBody], {
  error:
    "must be a task body of its `type`: label_spec {question, options} (single choice, multi_label_classification), {question, classes} (bounding_box) or {question, entity_types} (text_span)",
});
/** Body of `POST /v1/tasks`, and each element of a batch's `tasks`. Unknown fields are rejected (400). */
export type TaskRequest = z.input<typeof taskBody>;

export type TaskInput = z.infer<typeof taskBody>;

export const MAX_BATCH_TASKS = 10_000;

export const batchBody = z
  .object({
    tasks: z.array(taskBody).min(1).max(MAX_BATCH_TASKS),
    callback_url: callbackUrl.optional(),
    ...confidencePolicyFields,
    idempotency_key: idempotencyKey.optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    const seen = new Map<string, number>();
    b.tasks.forEach((t, i) => {
      if (!t.idempotency_key) return;
      if (seen.has(t.idempotency_key)) {
        ctx.addIssue({ code: "custom", path: ["tasks", i, "idempotency_key"], message: "duplicate idempotency_key in batch" });
      }
      seen.set(t.idempotency_key, i);
    });
  });
/** Body of `POST /v1/tasks/batch` (1..10,000 tasks, 10 MB). */
export type BatchRequest = z.input<typeof batchBody>;

export type BatchInput = z.infer<typeof batchBody>;

export const registrationBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    email: z.string().trim().toLowerCase().pipe(z.email().max(320)),
  })
  .strict();
export type RegisterCustomerRequest = z.input<typeof registrationBody>;

export const claimBody = z.object({ task_id: z.string().startsWith("tsk_").max(64).optional() }).strict();

/** Body of `POST /v1/labeling/claims/{id}/label`: the answer of the claimed task's type (task-types.ts), at most MAX_ANSWER_BYTES. */
export const labelBody = z.xor([singleChoiceAnswer, multiLabelAnswer, boxAnswer, spanAnswer], {
  error:
    "must be one answer: {label} (single choice), {labels} (multi_label_classification), {boxes} (bounding_box) or {spans} (text_span)",
});
export { MAX_ANSWER_BYTES };

export const labelerBody = z.object({ name: z.string().trim().min(1).max(200) }).strict();

export const customerPatchBody = z.object({ label_quota: z.number().int().min(0).max(1_000_000_000) }).strict();

/**
 * `PATCH /v1/customers/me/settings` (docs/contract.md, DESIGN §10): merges what it is given; `null` clears a field.
 * The merged task defaults must make a consistent policy (policy.ts `resolvePolicy`).
 */
export const settingsPatchBody = z
  .object({
    task_defaults: z
      .object({
        consensus_threshold: consensusThreshold.nullable().optional(),
        confidence_target: confidenceTarget.nullable().optional(),
        min_labels: minLabels.nullable().optional(),
        max_labels: maxLabels.nullable().optional(),
      })
      .strict()
      .optional(),
    quality: z
      .object({
        /** share of a labeler's claims served from unanswered gold tasks (default 0.1) */
        gold_rate: z.number().min(0).max(1).nullable().optional(),
        /** exclusion floor of a labeler's gold accuracy; unset = nobody is excluded */
        min_labeler_accuracy: z.number().gt(0).lt(1).nullable().optional(),
        /** gold answers before exclusion may apply (default 10) */
        min_gold_answers: z.number().int().min(1).max(10_000).nullable().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
/** Body of `PATCH /v1/customers/me/settings`: merged into the settings; `null` clears a field. */
export type SettingsPatchRequest = z.input<typeof settingsPatchBody>;

export type SettingsPatch = z.infer<typeof settingsPatchBody>;

/** `/v1/tasks/{id}`-style path ids: prefix + base62 */
export const pathId = (prefix: string) => z.string().regex(new RegExp(`^${prefix}[A-Za-z0-9]{1,64}$`));

// --- admin -------------------------------------------------------------------------------------------

export const upgradeBody = z
  .object({
    /** keep the sandbox key(s) working after the upgrade (default: revoke them) */
    keep_sandbox_key: z.boolean().default(false),
  })
  .strict();

export const customersQuery = z
  .object({
    page: z.coerce.number().int().min(1).default(1),
    per_page: z.coerce.number().int().min(1).max(100).default(20),
    tier: z.enum([...TIERS, ""]).optional(),
  })
  .strict();
export type AdminCustomersQuery = Partial<z.output<typeof customersQuery>>;

// --- billing -----------------------------------------------------------------------------------------

/** `YYYY-MM`, month 01..12, year 1970..9999 */
const MONTH = /^(19[7-9]\d|[2-9]\d{3})-(0[1-9]|1[0-2])$/;

export const usageQuery = z
  .object({
    month: z.string({ message: "required: a month as YYYY-MM" }).regex(MONTH, "must be a month as YYYY-MM (1970-01 or later)"),
  })
  .strict();

export const invoicesQuery = z.object({}).strict();

// --- dashboard ---------------------------------------------------------------------------------------

export const noQuery = z.object({}).strict();

export const tasksQuery = z
  .object({
    page: z.coerce.number().int().min(1).max(1_000_000).default(1),
    per_page: z.coerce.number().int().min(1).max(100).default(20),
    status: z.enum([...TASK_STATUSES, ""], { message: `one of ${TASK_STATUSES.join(", ")} (empty: every status)` }).optional(),
    sort: z.enum(TASK_SORTS, { message: `one of ${TASK_SORTS.join(", ")}` }).default("created_at_desc"),
  })
  .strict();
export type DashboardTasksQuery = Partial<z.output<typeof tasksQuery>>;

// --- batches -----------------------------------------------------------------------------------------

/** `GET /v1/batches`: `page` from 1, `per_page` 1..100 (default 20). */
export const batchesQuery = z
  .object({
    page: z.coerce.number().int().min(1).max(1_000_000).default(1),
    per_page: z.coerce.number().int().min(1).max(100).default(20),
  })
  .strict();
/** `page` and `per_page` of `GET /v1/batches`. */
export type BatchesQuery = Partial<z.output<typeof batchesQuery>>;

// --- jobs --------------------------------------------------------------------------------------------

export const s3Credentials = z
  .object({
    access_key_id: z.string().min(1).max(256),
    secret_access_key: z.string().min(1).max(1024),
    region: z.string().min(1).max(64),
    /** S3-compatible stores (MinIO, R2, ...): an http(s) endpoint */
    endpoint: z.string().max(2048).optional(),
    session_token: z.string().max(4096).optional(),
  })
  .strict();
export type S3Credentials = z.input<typeof s3Credentials>;

export const gcsCredentials = z
  .object({
    service_account_json: z
      .string()
      .max(20_000)
      .refine((v) => {
        try {
          const parsed = JSON.parse(v) as { client_email?: unknown; private_key?: unknown };
          return typeof parsed.client_email === "string" && typeof parsed.private_key === "string";
        } catch {
          return false;
        }
      }, "must be a service account JSON with client_email and private_key"),
  })
  .strict();
export type GcsCredentials = z.input<typeof gcsCredentials>;

export type StorageCredentials = z.infer<typeof s3Credentials> | z.infer<typeof gcsCredentials>;

const storageUrl = z.string().max(2048);

export const jobBody = z
  .object({
    manifest_url: storageUrl,
    label_spec: z
      .record(z.string(), z.unknown())
      .describe("the label_spec of `type` (task-types.ts): {question, options}, {question, classes} or {question, entity_types}"),
    type: taskTypeName.default("image_classification"),
    consensus_threshold: consensusThreshold.optional(),
    ...confidencePolicyFields,
    callback_url: callbackUrl.optional(),
    s3_credentials: z.union([s3Credentials, gcsCredentials]).optional(),
    credentials: z.union([s3Credentials, gcsCredentials]).optional(),
    output_url: storageUrl.optional(),
  })
  .strict()
  .transform((job, ctx) => {
    const spec = labelSpecSchemaOf(job.type).safeParse(job.label_spec);
    if (!spec.success) {
      for (const issue of spec.error.issues)
        ctx.addIssue({ code: "custom", path: ["label_spec", ...issue.path.map(String)], message: issue.message });
      return z.NEVER;
    }
    return { ...job, label_spec: spec.data };
  });
export type JobCreateRequest = z.input<typeof jobBody>;

export const jobsQuery = z
  .object({
    page: z.coerce.number().int().min(1).default(1),
    per_page: z.coerce.number().int().min(1).max(100).default(20),
  })
  .strict();
/** `page` (from 1) and `per_page` (1..100, default 20) of a list route. */
export type PageQuery = Partial<z.output<typeof jobsQuery>>;

// --- webhooks ----------------------------------------------------------------------------------------

export const webhookBody = z
  .object({
    callback_url: z.string().max(2048),
    secret: z.string().min(16, "must be at least 16 characters").max(512),
    events: z
      .array(z.enum(WEBHOOK_EVENTS, { message: `unknown event; known events: ${WEBHOOK_EVENTS.join(", ")}` }))
      .min(1)
      .default(["task.settled"])
      .transform((e) => [...new Set(e)]),
  })
  .strict();
export type WebhookCreateRequest = z.input<typeof webhookBody>;

export const deliveriesQuery = z
  .object({
    status: z.enum([...DELIVERY_STATUSES, ""]).optional(),
    page: z.coerce.number().int().min(1).default(1),
    per_page: z.coerce.number().int().min(1).max(100).default(20),
  })
  .strict();
export type DeliveriesQuery = Partial<z.output<typeof deliveriesQuery>>;
