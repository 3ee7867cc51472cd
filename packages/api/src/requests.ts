/**
 * Request schemas (zod) of every gateway route: bodies and queries. The single source of validation, of the
 * request half of the OpenAPI document (services/gateway/src/openapi.ts) and of the SDK's request types
 * (each declared right after its schema: a body's `z.input`, a query's `z.output`; gathered by types.ts).
 * Wire names follow contract §routes, §wire. Unknown fields are rejected so typos surface as 400s.
 */
import { z } from "zod";
import { DELIVERY_STATUSES, TASK_SORTS, TASK_STATUSES, TIERS } from "./enums";
import { DEFAULT_WEBHOOK_EVENTS, WEBHOOK_EVENTS } from "./events";
import { EXPORT_FORMATS } from "./exports";
import { guidedSpecSchemaOf, guideFields, guideIssues } from "./instructions";
import { POLICY_BOUNDS } from "./policy";
import { type Prelabel, prelabelIssues, prelabelTaskFields } from "./prelabels";
import {
  type AnswerBody,
  type AnyLabelSpec,
  answerIssues,
  isReservedTaskType,
  labelSpec,
  MAX_ANSWER_BYTES,
  RESERVED_WIRE_TASK_TYPES,
  type ReservedWireList,
  unionMembers,
  WIRE_TASK_TYPE_LIST,
  type WireTaskType,
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

/** The policy fields (contract §quality): absent = from a less specific layer (@labelgate/quality `resolvePolicy`). */
const { consensus_threshold: CT, max_labels: ML, confidence_target: TG, min_labels: MN, min_gain: MG } = POLICY_BOUNDS;
export const consensusThreshold = z.number().int().min(CT.min).max(CT.max);
export const maxLabels = z.number().int().min(ML.min).max(ML.max);
export const confidenceTarget = z.number().min(TG.min).max(TG.max);
export const minLabels = z.number().int().min(MN.min).max(MN.max);
/** `min_gain` (contract §quality): the confidence policy settles (`no_gain`) when one more label cannot raise the confidence by this much. */
export const minGain = z.number().min(MG.min).max(MG.max);

/**
 * `confidence_target`, `min_labels`, `min_gain` and `max_labels` of a batch's top level or a task (null target =
 * threshold policy; null `min_gain` = off, overriding a less specific layer's).
 */
const confidencePolicyFields = {
  max_labels: maxLabels.optional(),
  confidence_target: confidenceTarget.nullable().optional(),
  min_labels: minLabels.optional(),
  min_gain: minGain.nullable().optional(),
};

/** A gold label is one of the label spec's options (checked with the spec in the single-choice branch). */
const goldLabel = z.string().min(1).max(200);

/** The fields every task body has, whatever its type. */
const taskFields = {
  /** shown with the right answer after a qualification training answer (contract §qualification); gold tasks only */
  gold_explanation: z.string().min(1).max(2000).optional(),
  data_url: dataUrl,
  callback_url: callbackUrl.optional(),
  consensus_threshold: consensusThreshold.optional(),
  ...confidencePolicyFields,
  metadata: z
    .record(z.string(), z.unknown())
    .refine((m) => jsonDepth(m) <= MAX_METADATA_DEPTH, `must not nest deeper than ${MAX_METADATA_DEPTH} levels`)
    .optional(),
  idempotency_key: idempotencyKey.optional(),
  ...prelabelTaskFields,
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

/** Adds each problem of the label spec's examples (instructions.ts `guideIssues`) at `label_spec.examples.<i>.answer...`. */
function checkExamples(t: { type: string; label_spec: AnyLabelSpec }, ctx: z.RefinementCtx): void {
  for (const issue of guideIssues(t.type, t.label_spec))
    ctx.addIssue({ code: "custom", path: ["label_spec", ...issue.path], message: issue.message });
}

/** Adds each problem of the pre-label (prelabels.ts `prelabelIssues`) at `prelabel.answer...`. */
function checkPrelabel(t: { type: string; label_spec: AnyLabelSpec; prelabel?: Prelabel; data_text?: string }, ctx: z.RefinementCtx): void {
  for (const issue of prelabelIssues(t.type, t.label_spec, t.prelabel, t.data_text))
    ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
}

/** A gold explanation belongs to a gold task: refused on a task without its gold answer. */
function checkExplanation(t: { gold_explanation?: string; gold_label?: string; gold_answer?: unknown }, ctx: z.RefinementCtx): void {
  if (t.gold_explanation !== undefined && t.gold_label === undefined && t.gold_answer === undefined)
    ctx.addIssue({ code: "custom", path: ["gold_explanation"], message: "only a gold task (with its gold answer) has an explanation" });
}

/** A single-choice task: any `type` but the reserved ones (contract §task-types). */
export const singleChoiceTaskBody = z
  .object({
    type: taskTypeName.refine((t) => !isReservedTaskType(t), "a reserved type has its own label_spec"),
    label_spec: labelSpec.extend(guideFields),
    ...taskFields,
    gold_label: goldLabel.optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.gold_label !== undefined && !t.label_spec.options.includes(t.gold_label)) {
      ctx.addIssue({ code: "custom", path: ["gold_label"], message: "must be one of label_spec.options" });
    }
  })
  .superRefine(checkExamples)
  .superRefine(checkPrelabel)
  .superRefine(checkExplanation)
  .meta({ description: "A single-choice task: `type` is any value but the reserved ones (e.g. `image_classification`)." });

/**
 * The task body of a reserved type from its wire module (task-types/<type>): `type` (the module's name),
 * `label_spec` (its spec with the guide fields), its own fields, the common ones and `gold_answer` (its answer),
 * checked against the spec (`answerIssues`), the examples against the spec, and the module's own `issues`.
 */
function typedTaskBody<Name extends string, S extends z.ZodRawShape, A extends z.ZodRawShape, X extends z.ZodRawShape>(
  m: WireTaskType<Name, S, A, X>,
) {
  const parts = m.task;
  if (parts === undefined) throw new Error(`task type ${m.name} has no task body parts`);
  return z
    .object({
      type: z.literal(m.name),
      label_spec: m.labelSpec.extend(guideFields),
      ...parts.fields,
      ...taskFields,
      gold_answer: m.answer.optional().describe(parts.goldDescription),
    })
    .strict()
    .superRefine((t, ctx) => checkGoldAnswer(t as unknown as Parameters<typeof checkGoldAnswer>[0], ctx))
    .superRefine((t, ctx) => checkExamples(t as unknown as Parameters<typeof checkExamples>[0], ctx))
    .superRefine((t, ctx) => checkPrelabel(t as unknown as Parameters<typeof checkPrelabel>[0], ctx))
    .superRefine((t, ctx) => checkExplanation(t as unknown as Parameters<typeof checkExplanation>[0], ctx))
    .superRefine((t, ctx) => {
      for (const issue of parts.issues?.(t as never) ?? []) ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
    })
    .meta({ description: parts.description });
}

/** The task body of one reserved type's module. */
type TypedTaskBody<M> = M extends WireTaskType<infer N, infer S, infer A, infer X> ? ReturnType<typeof typedTaskBody<N, S, A, X>> : never;

/** Each reserved type's task body, in registry order (`typedTaskBody` of each wire module). */
const typedTaskBodies = RESERVED_WIRE_TASK_TYPES.map((m) =>
  typedTaskBody(m as WireTaskType<string, z.ZodRawShape, z.ZodRawShape, z.ZodRawShape>),
) as unknown as TypedTaskBody<ReservedWireList[number]>[];

/** "a, b or c" */
function either(items: readonly string[]): string {
  return items.length < 2 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

/** The label_spec shapes, each with the types that use it, in registry order: for the task body's message. */
function specShapes(): string {
  const byField = new Map<string, string[]>();
  for (const m of WIRE_TASK_TYPE_LIST) {
    // a spec without a choices field is named by its other fields (pairwise: allow_tie)
    const field =
      m.choicesField ??
      Object.keys(m.labelSpec.shape)
        .filter((k) => k !== "question")
        .join(", ");
    byField.set(field, [...(byField.get(field) ?? []), m.title]);
  }
  return either([...byField].map(([field, titles]) => `{question, ${field}} (${titles.join(", ")})`));
}

export const taskBody = z.xor([singleChoiceTaskBody, ...typedTaskBodies], {
  error: `must be a task body of its \`type\`: label_spec ${specShapes()}`,
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
export const labelBody = z.xor(unionMembers(WIRE_TASK_TYPE_LIST.map((m) => m.answer)), {
  error: `must be one answer: ${either(WIRE_TASK_TYPE_LIST.map((m) => `{${m.answerKey}} (${m.title})`))}`,
});
export { MAX_ANSWER_BYTES };

export const labelerBody = z.object({ name: z.string().trim().min(1).max(200) }).strict();

// --- review and audits (docs/decisions/0260, 0262) ------------------------------------------------------

/** The verdicts of a review. */
export const REVIEW_VERDICTS = ["accept", "reject"] as const;
export type ReviewVerdict = (typeof REVIEW_VERDICTS)[number];

/**
 * Body of `POST /v1/tasks/{id}/review`: `accept`; `reject` with `answer` (an answer body of the task's type,
 * checked against the task by the handler); or `reject` alone (single choice only: the task reopens).
 */
export const reviewBody = z
  .object({
    verdict: z.enum(REVIEW_VERDICTS, { message: `one of ${REVIEW_VERDICTS.join(", ")}` }),
    answer: labelBody.optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    if (b.verdict === "accept" && b.answer !== undefined)
      ctx.addIssue({ code: "custom", path: ["answer"], message: "an accepted result takes no answer (reject with the right answer)" });
  });
export type ReviewRequest = z.input<typeof reviewBody>;

/** The states of an audit. */
export const AUDIT_STATUSES = ["open", "done"] as const;
export type AuditStatus = (typeof AUDIT_STATUSES)[number];

/** `GET /v1/audits`: `status` (default `open`), `page` from 1, `per_page` 1..100 (default 20). */
export const auditsQuery = z
  .object({
    status: z.enum(AUDIT_STATUSES, { message: `one of ${AUDIT_STATUSES.join(", ")}` }).default("open"),
    page: z.coerce.number().int().min(1).max(1_000_000).default(1),
    per_page: z.coerce.number().int().min(1).max(100).default(20),
  })
  .strict();
export type AuditsQuery = Partial<z.output<typeof auditsQuery>>;

export const customerPatchBody = z.object({ label_quota: z.number().int().min(0).max(1_000_000_000) }).strict();

/**
 * `PATCH /v1/customers/me/settings` (contract §quality): merges what it is given; `null` clears a field.
 * The merged task defaults must make a consistent policy (@labelgate/quality `resolvePolicy`).
 */
export const settingsPatchBody = z
  .object({
    task_defaults: z
      .object({
        consensus_threshold: consensusThreshold.nullable().optional(),
        confidence_target: confidenceTarget.nullable().optional(),
        min_labels: minLabels.nullable().optional(),
        min_gain: minGain.nullable().optional(),
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
        /** share of settled tasks drawn at random into the audit queue (default 0: none) */
        audit_rate: z.number().min(0).max(1).nullable().optional(),
        /** the qualification exam of a labeler new to a label space (contract §qualification); null: none */
        qualification: z
          .strictObject({
            gold_tasks: z.number().int().min(1).max(100).describe("gold answers the exam takes (1 to 100)"),
            min_accuracy: z.number().min(0).max(1).describe("the least Beta(1, 1) posterior mean of gold accuracy that passes"),
          })
          .nullable()
          .optional(),
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

/** `GET /v1/admin/follow-ups`: the oldest `limit` parked follow-ups (docs/decisions/0331). */
export const followUpsQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(1000).default(100),
  })
  .strict();

/** `POST /v1/admin/follow-ups/retry`: the parked follow-ups to try again, by id (every one when `ids` is absent). */
export const followUpsRetryBody = z
  .object({
    ids: z
      .array(z.string().regex(/^[1-9][0-9]{0,18}$/, "a follow-up id (a whole number)"))
      .min(1)
      .max(1000)
      .optional(),
  })
  .strict();

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
    const spec = guidedSpecSchemaOf(job.type).safeParse(job.label_spec);
    if (!spec.success) {
      for (const issue of spec.error.issues)
        ctx.addIssue({ code: "custom", path: ["label_spec", ...issue.path.map(String)], message: issue.message });
      return z.NEVER;
    }
    const label_spec = spec.data;
    const examples = guideIssues(job.type, label_spec);
    for (const issue of examples) ctx.addIssue({ code: "custom", path: ["label_spec", ...issue.path], message: issue.message });
    if (examples.length > 0) return z.NEVER;
    return { ...job, label_spec };
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

/** `format` of a job's or a batch's export (contract §exports): jsonl (the default), label-studio, coco, conll or hf. */
export const exportQuery = z
  .object({
    format: z
      .enum(EXPORT_FORMATS, { message: `one of ${EXPORT_FORMATS.join(", ")}` })
      .default("jsonl")
      .describe("jsonl (default), label-studio, coco (bounding_box), conll (text_span) or hf"),
  })
  .strict();
export type ExportQuery = Partial<z.output<typeof exportQuery>>;

// --- webhooks ----------------------------------------------------------------------------------------

/** A webhook's `events`: names of the event catalog (events.ts), at least one, duplicates dropped. */
const webhookEvents = z
  .array(z.enum(WEBHOOK_EVENTS, { message: `unknown event; known events: ${WEBHOOK_EVENTS.join(", ")}` }))
  .min(1)
  .transform((e) => [...new Set(e)]);

export const webhookBody = z
  .object({
    callback_url: z.string().max(2048),
    secret: z.string().min(16, "must be at least 16 characters").max(512),
    events: webhookEvents.default(DEFAULT_WEBHOOK_EVENTS),
  })
  .strict();
export type WebhookCreateRequest = z.input<typeof webhookBody>;

/** `PATCH /v1/webhooks/{id}`: the events it subscribes to, replaced as a whole (docs/decisions/0231). */
export const webhookPatchBody = z.object({ events: webhookEvents }).strict();
export type WebhookUpdateRequest = z.input<typeof webhookPatchBody>;

export const deliveriesQuery = z
  .object({
    status: z.enum([...DELIVERY_STATUSES, ""]).optional(),
    page: z.coerce.number().int().min(1).default(1),
    per_page: z.coerce.number().int().min(1).max(100).default(20),
  })
  .strict();
export type DeliveriesQuery = Partial<z.output<typeof deliveriesQuery>>;
