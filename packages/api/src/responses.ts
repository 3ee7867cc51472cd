/**
 * Response bodies of every gateway route as zod schemas, each with a description and one example
 * (`.meta({description, examples})`): the source of the response half of the OpenAPI document
 * (services/gateway/src/openapi.ts) and of the SDK's response types: each schema's output type is declared
 * right after it (`export type Task = z.output<typeof Task>`) and gathered by types.ts. Objects are strict,
 * so a field a handler adds without documenting it makes test/openapi.test.ts fail. Shapes follow views.ts and the routers; times are ISO 8601 UTC strings
 * (`Date.toISOString()`), except the customer's `created_at` (Unix seconds, contract §routes).
 */
import { z } from "zod";
import { BATCH_STATUSES, DELIVERY_STATUSES, INVOICE_STATUSES, JOB_STATUSES, RESOLUTIONS, TASK_STATUSES, TIERS } from "./enums";
import { ERRORS } from "./errors";
import { WEBHOOK_EVENTS } from "./events";
import { EXPORT_FORMATS } from "./exports";
import { AUDIT_STATUSES, confidenceTarget, minGain, pathId, REVIEW_VERDICTS } from "./requests";
import { RESERVED_WIRE_TASK_TYPES, unionMembers, WIRE_TASK_TYPE_LIST } from "./task-types";

/** `schema` with its description and example (typed: the example must be an output of the schema). */
function documented<S extends z.ZodType>(schema: S, description: string, example: z.output<S>): S {
  return schema.meta({ description, examples: [example] });
}

// --- building blocks --------------------------------------------------------------------------------

const time = z.iso.datetime().describe("ISO 8601 UTC time");
const count = z.int().nonnegative();
const id = (prefix: string, what: string) => pathId(prefix).describe(`${what} id (\`${prefix}\` + base62)`);
const taskStatus = z.enum(TASK_STATUSES).describe("pending → labeling → settling → settled; canceled from pending/labeling");
const tier = z.enum(TIERS);
const ledgerTxid = z
  .string()
  .regex(/^0x[0-9a-f]{64}$/)
  .describe(
    "the settlement's transaction id: with an EVM chain (ledger `evm`) the hash of the anchor transaction on it; with the local ledger, `0x` + SHA-256 (hex) of the ledger record",
  );
/** A type's label_spec field besides the question: its choices field, else its other fields (pairwise: allow_tie). */
const specFieldOf = (m: (typeof WIRE_TASK_TYPE_LIST)[number]): string =>
  m.choicesField ??
  Object.keys(m.labelSpec.shape)
    .filter((k) => k !== "question")
    .join(", ");
/** The label_spec shapes of the registry's types (task-types/<type>: `responseSpec`), each shape once, in registry order. */
const labelSpec = z.union(unionMembers([...new Set(WIRE_TASK_TYPE_LIST.map((m) => m.responseSpec))])).describe(
  `as submitted: ${[...new Set(WIRE_TASK_TYPE_LIST.map(specFieldOf))]
    .map(
      (field) =>
        `{question, ${field}} (${WIRE_TASK_TYPE_LIST.filter((m) => specFieldOf(m) === field)
          .map((m) => m.title)
          .join(", ")})`,
    )
    .join(", ")}`,
);
const posterior = z.record(z.string(), z.number().min(0).max(1));
const probability = z.number().min(0).max(1);
/** An answer of any type, as recorded (task-types/<type>: `answer`). */
const answer = z.union(unionMembers(WIRE_TASK_TYPE_LIST.map((m) => m.answer)));
/**
 * The consensus of a task of a reserved type (contract §task-types): the answer's shape, each part with its `confidence`
 * (a box also with its `support`: the labelers who drew it); task-types/<type>: `consensus`.
 */
const consensus = z
  .union(unionMembers(RESERVED_WIRE_TASK_TYPES.map((m) => m.consensus as NonNullable<typeof m.consensus>)))
  .describe(
    "reserved types only: the consensus answer, each part with its confidence; `consensus_label` is its canonical JSON without the confidences",
  );
/** (a | b | ...) as a & b & ... */
type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/** The fields the registry's types add to an export line after `consensus` (task-types/<type>: `exportLine`), in registry order. */
const exportLineFields = Object.assign({}, ...WIRE_TASK_TYPE_LIST.map((m) => m.exportLine)) as Intersection<
  (typeof WIRE_TASK_TYPE_LIST)[number]["exportLine"]
>;
const page = { page: z.int().min(1), per_page: z.int().min(1).max(100), total: count };

/** A page of `item`s (`{page, per_page, total, items}`), documented with a first page of `examples`. */
function pageOf<S extends z.ZodType>(item: S, description: string, examples: z.output<S>[]) {
  const schema = z.strictObject({ ...page, items: z.array(item) });
  return documented(schema, description, { page: 1, per_page: 20, total: examples.length, items: examples } as z.output<typeof schema>);
}
const taskCounts = z.strictObject({ pending: count, labeling: count, settling: count, settled: count, canceled: count });
const share = z.number().min(0).max(1).nullable();

/** Example values shared by the examples below. */
export const EXAMPLE = {
  customerId: "cust_4fJ8kQ2mZx9LrT1vB7nC0d",
  taskId: "tsk_7Hq2Lx9VbN4sKd1Pz8WmYt",
  taskId2: "tsk_2Rk8Fn5TzQ1wXc7VbL0pJs",
  batchId: "bat_9Tn3Vw6YqB2mLc8Xr1KzPd",
  claimId: "clm_5Wc8Nq1ZrT7kLb3Vx9MhGs",
  labelId: "lab_3Gd7Jm2QwX8rNc5Tz1KbVp",
  labelerId: "lbl_8Kp1Xr6TzW3nQm9Lb2VcYd",
  webhookId: "whk_6Zt4Bm9QcN1xKr7Lw3VpHs",
  deliveryId: "dlv_1Vq7Xm3NzK9rTc5Lb8WdPf",
  attemptId: "att_4Lr9Tz2KcQ7mXn1Vb6WsJd",
  eventId: "evt_7Nc3Vx8KzQ2mLt5Rb9WpGd",
  jobId: "job_2Xm8Kq5TzV1nLc9Rb3WdHs",
  invoiceId: "inv_9Qz1Lm6TcX4nKr8Vb2WsPd",
  requestId: "6f1c2a9e-3b7d-4e25-9a41-0c8d5e7f2b13",
  createdAt: "2026-03-14T09:26:53.589Z",
  settledAt: "2026-03-14T09:41:07.120Z",
  txid: "0x9f2c4e1a7b3d5f60812c3e4a5b6d7f8091a2b3c4d5e6f708192a3b4c5d6e7f80",
  prevHash: "1b3d5f7091a2c4e6f8102a4c6e8f0b1d3f5a7c9e0b2d4f6a8c1e3a5c7e9f0b2d",
  dataUrl: "https://images.example/cats/0001.jpg",
  callbackUrl: "https://hooks.example.com/labelgate",
  labelSpec: { question: "What animal is this?", options: ["cat", "dog", "bird"] },
  labelSpaceId: "lsp_3f9a1c0e7b2d4a6f8e1c3b5d7f9a0b2c",
} as const;

const E = EXAMPLE;

// --- errors (contract §errors) -------------------------------------------------------------------------------

const errorMessages = Object.values(ERRORS).map((e) => e.message);

/** `{"error": message}`: the only error body (contract §errors), messages from the error table (errors.ts). */
export const ErrorBody = documented(
  z.strictObject({
    error: z.enum(errorMessages as [string, ...string[]]).describe("the message of the error kind (services/gateway/src/errors.ts)"),
    details: z
      .array(
        z.strictObject({ path: z.string().describe("dotted path of the offending field, e.g. `tasks.3.data_url`"), message: z.string() }),
      )
      .optional()
      .describe("400 validation failures (and a 422 batch idempotency mismatch): one entry per problem"),
    request_id: z.string().optional().describe("5xx only: the request's X-Request-Id, to quote to support"),
    task_id: z.string().optional().describe("409 `task canceled`: the task"),
    status: z.string().optional().describe("409 task/job state conflicts: the current status"),
    webhook_id: z.string().optional().describe("409 `an active webhook already uses this callback_url`: that webhook"),
    formats: z
      .array(z.enum(EXPORT_FORMATS))
      .optional()
      .describe("400 on an export whose `format` does not fit the task types: the formats that fit (contract §exports)"),
  }),
  "Error body (contract §errors): `error` is a fixed message per error kind; validation failures add `details`, 5xx add `request_id`.",
  { error: "validation failed", details: [{ path: "label_spec.options", message: "Too small: expected array to have >=2 items" }] },
);

// --- system -----------------------------------------------------------------------------------------

const check = z.enum(["ok", "unavailable"]);

export const Health = documented(
  z.strictObject({
    ok: z.literal(true),
    service: z.string(),
    checks: z.strictObject({
      database: z.literal("ok"),
      queue: z.literal("ok"),
      chain: z.literal("ok").optional().describe("present when the process settles on an EVM chain (LEDGER=evm): its JSON-RPC answers"),
      workers: z.literal("ok").optional().describe("present when the process runs queue workers (`pnpm start`): every one runs"),
    }),
  }),
  "The gateway reaches Postgres and its queue, and, where the process has them, the chain it settles on and its workers.",
  { ok: true, service: "labelgate-gateway", checks: { database: "ok", queue: "ok", chain: "ok", workers: "ok" } },
);
export type Health = z.output<typeof Health>;

export const HealthUnavailable = documented(
  z.strictObject({
    error: z.literal(ERRORS.unavailable.message),
    ok: z.literal(false),
    service: z.string(),
    checks: z.strictObject({ database: check, queue: check, chain: check.optional(), workers: check.optional() }),
  }),
  "A dependency is unreachable (`Retry-After: 5`): Postgres, the queue, the chain (LEDGER=evm; its last probe is at most 4 s old) or a worker.",
  {
    error: "service unavailable",
    ok: false,
    service: "labelgate-gateway",
    checks: { database: "ok", queue: "ok", chain: "unavailable", workers: "ok" },
  },
);

export const OpenApiDocument = documented(
  z.looseObject({
    openapi: z.string(),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.unknown()),
  }),
  "This document (OpenAPI 3.1).",
  { openapi: "3.1.0", info: { title: "labelgate API", version: "1" }, paths: {} },
);
export type OpenApiDocument = z.output<typeof OpenApiDocument>;

// --- customers --------------------------------------------------------------------------------------

export const CustomerCreated = documented(
  z.strictObject({
    customer_id: id("cust_", "customer"),
    name: z.string(),
    email: z.email(),
    api_key: z
      .string()
      .regex(/^sk_sandbox_[A-Za-z0-9]+$/)
      .describe("the sandbox key, shown once: only its SHA-256 is stored"),
    tier: z.literal("sandbox"),
    label_quota: count,
    created_at: z.int().describe("Unix seconds"),
    message: z.string(),
  }),
  "The new customer and its sandbox API key (shown once).",
  {
    customer_id: E.customerId,
    name: "Acme Vision",
    email: "ml@acme.example",
    api_key: "sk_sandbox_Q4tX9mL2vB7nK1zR8cW3pJ6hD0sF5gY2aE9uT4iO7kM",
    tier: "sandbox",
    label_quota: 500,
    created_at: 1773480413,
    message: "Store this API key now: it is shown only once and cannot be retrieved again.",
  },
);
/** `POST /v1/customers` 201: the API key is shown only here. `created_at` is Unix seconds. */
export type RegisteredCustomer = z.output<typeof CustomerCreated>;

const customerFields = {
  customer_id: id("cust_", "customer"),
  name: z.string(),
  email: z.email(),
  tier,
  label_quota: count.describe("labels the customer may use in all"),
  label_quota_used: count.describe("labels reserved by open tasks plus labels charged"),
  label_quota_remaining: count,
  created_at: z.int().describe("Unix seconds"),
  api_key_hint: z.string().nullable().describe("prefix and first 4 characters of the newest active key, e.g. `sk_sandbox_Q4tX…`"),
};

const customerExample = {
  customer_id: E.customerId,
  name: "Acme Vision",
  email: "ml@acme.example",
  tier: "sandbox" as const,
  label_quota: 500,
  label_quota_used: 42,
  label_quota_remaining: 458,
  created_at: 1773480413,
  api_key_hint: "sk_sandbox_Q4tX…",
};

export const Customer = documented(z.strictObject(customerFields), "A customer's profile (never the full key).", customerExample);
/** `GET /v1/customers/me` (and the admin customer views). `created_at` is Unix seconds. */
export type CustomerProfile = z.output<typeof Customer>;

export const CustomerPage = pageOf(Customer, "A page of customers, newest first.", [customerExample]);

export const CustomerUpgraded = documented(
  z.strictObject({
    ...customerFields,
    api_key: z
      .string()
      .regex(/^sk_live_[A-Za-z0-9]+$/)
      .describe("the production key, shown once"),
    sandbox_keys_revoked: count,
    message: z.string(),
  }),
  "The customer on the production tier and its new live key (shown once).",
  {
    ...customerExample,
    tier: "production",
    label_quota: 100000,
    label_quota_remaining: 99958,
    api_key_hint: "sk_live_H7kP…",
    api_key: "sk_live_H7kP2xQ9mV4bN8cL1zT6rW3sD5fG0jY7aK2uE9iO4",
    sandbox_keys_revoked: 1,
    message: "Store this live API key now: it is shown only once and cannot be retrieved again.",
  },
);
/** `POST /v1/admin/customers/{id}/upgrade` 200: the `sk_live_` key is shown only here. */
export type UpgradedCustomer = z.output<typeof CustomerUpgraded>;

export const LabelerCreated = documented(
  z.strictObject({
    labeler_id: id("lbl_", "labeler"),
    name: z.string(),
    api_key: z
      .string()
      .regex(/^lk_[A-Za-z0-9]+$/)
      .describe("the labeler's key, shown once"),
    created_at: time,
  }),
  "The new labeler and its key (shown once).",
  { labeler_id: E.labelerId, name: "annotator-17", api_key: "lk_T5rW8kQ2zX7mN1vB4cL9pJ3hD6sF0gY2aE8uK5iO1", created_at: E.createdAt },
);
/** `POST /v1/admin/labelers` 201: the `lk_` key is shown only here. */
export type LabelerCreated = z.output<typeof LabelerCreated>;

const parkedFollowUpExample = {
  id: "4711",
  queue: "routeEvent",
  payload: { eventId: 12 },
  error: "payload does not fit queue routeEvent: eventId: Invalid input: expected string, received number",
  relay_attempts: 1,
  created_at: E.createdAt,
  parked_at: E.createdAt,
};

export const ParkedFollowUp = documented(
  z.strictObject({
    id: z.string().describe("the follow_up row's id (a whole number, as a string)"),
    queue: z.string().describe("the queue catalog's key of its work"),
    payload: z.unknown().describe("its job's payload, as written"),
    error: z.string().describe("why the relay gave up on it"),
    relay_attempts: count.describe("claims of it by a relay before it was parked"),
    created_at: time,
    parked_at: time,
  }),
  "Work the follow-up relay gave up on (its payload fails its queue's schema, the queue rejects it, or no relay knows its queue): it does not run until retried.",
  parkedFollowUpExample,
);

export const ParkedFollowUps = documented(
  z.strictObject({
    parked: count.describe("parked follow-ups in all"),
    items: z.array(ParkedFollowUp).describe("the oldest of them, at most `limit`"),
  }),
  "The parked follow-ups, oldest first.",
  { parked: 1, items: [parkedFollowUpExample] },
);
export type ParkedFollowUps = z.output<typeof ParkedFollowUps>;

export const FollowUpsRetried = documented(
  z.strictObject({ retried: count.describe("parked follow-ups made due again") }),
  "The parked follow-ups made due again: the relay tries them at once.",
  { retried: 1 },
);
export type FollowUpsRetried = z.output<typeof FollowUpsRetried>;

// --- tasks ------------------------------------------------------------------------------------------

export const TaskAccepted = documented(
  z.strictObject({ task_id: id("tsk_", "task"), status: taskStatus, created_at: time }),
  "The task is accepted (`pending`). An idempotent replay returns the original task with its current status.",
  { task_id: E.taskId, status: "pending", created_at: E.createdAt },
);
export type TaskAccepted = z.output<typeof TaskAccepted>;

export const BatchAccepted = documented(
  z.strictObject({
    batch_id: id("bat_", "batch"),
    task_count: z.int().min(1),
    status: z.literal("accepted"),
    created_at: time,
    task_ids: z.array(id("tsk_", "task")).describe("in the order of `tasks`"),
  }),
  "Every task of the batch is accepted (all or none).",
  { batch_id: E.batchId, task_count: 2, status: "accepted", created_at: E.createdAt, task_ids: [E.taskId, E.taskId2] },
);
/** `POST /v1/tasks/batch` 202: all tasks were created (in order of `tasks`) or none. */
export type BatchAccepted = z.output<typeof BatchAccepted>;

const taskExample = {
  task_id: E.taskId,
  status: "settled" as const,
  task_type: "image_classification",
  data_url: E.dataUrl,
  label_spec: { ...E.labelSpec, options: [...E.labelSpec.options] },
  created_at: E.createdAt,
  callback_url: E.callbackUrl,
  consensus_threshold: 3,
  max_labels: 7,
  confidence_target: null,
  min_labels: null,
  min_gain: null,
  gold: false,
  gold_label: null,
  gold_answers: null,
  gold_agreement: null,
  metadata: { sku: "A-1001" },
  idempotency_key: "order-1001",
  batch_id: null,
  labels_collected: 3,
  consensus_label: "cat",
  confidence: 0.9846,
  resolution: "consensus" as const,
  posterior: { cat: 0.9846, dog: 0.0102, bird: 0.0052 },
  ledger_txid: E.txid,
  settled_at: E.settledAt,
  canceled_at: null,
  webhook_status: "delivered" as const,
  revision: 1,
};

const reviewExample = {
  review_id: "rvw_5Tb2Kq8ZxN1mLc7Vr3WdPs",
  task_id: E.taskId,
  verdict: "reject" as const,
  answer: { label: "dog" },
  revision: 1,
  consensus_label: "cat",
  confidence: 0.9846,
  revised: true,
  created_at: E.settledAt,
};

export const Review = documented(
  z.strictObject({
    review_id: id("rvw_", "review"),
    task_id: id("tsk_", "task"),
    verdict: z.enum(REVIEW_VERDICTS),
    answer: answer.nullable().describe("the reviewer's answer (a rejection with an answer), as sent; null otherwise"),
    revision: z.int().min(1).describe("the revision reviewed"),
    consensus_label: z.string().describe("the consensus reviewed"),
    confidence: probability.describe("its confidence when reviewed"),
    revised: z.boolean().describe("the review changed the result: a new revision follows (at once, or after the reopened task settles)"),
    created_at: time,
  }),
  "A customer's review of a settled result (every review is kept; the latest counts).",
  reviewExample,
);
/** One review of a task. */
export type Review = z.output<typeof Review>;
/** Why a `settling` task is not settled yet (decision 0202). */
export const WAITING_REASONS = ["settlement", "anchor_confirmation", "chain_unavailable"] as const;

const waitingFor = z
  .strictObject({
    reason: z
      .enum(WAITING_REASONS)
      .describe(
        "`settlement`: the consensus worker's ledger write (local ledger); `anchor_confirmation`: its record's anchor on the chain (LEDGER=evm), normally seconds; `chain_unavailable`: the chain's RPC does not answer, settlement resumes when it does",
      ),
    since: time.describe("when the task began waiting for this"),
  })
  .describe("what a settling task waits for");

export const Task = documented(
  z.strictObject({
    task_id: id("tsk_", "task"),
    status: taskStatus,
    task_type: z.string(),
    data_url: z.string(),
    label_spec: labelSpec,
    created_at: time,
    callback_url: z.string().nullable(),
    consensus_threshold: z
      .int()
      .min(1)
      .describe("the threshold policy's quorum; under the confidence policy it only sizes the quota reservation"),
    max_labels: z.int().min(1),
    confidence_target: confidenceTarget
      .nullable()
      .describe("the confidence policy's target (null: the threshold policy); the effective value, wherever it was set"),
    min_labels: z.int().min(1).nullable().describe("labels before the confidence target may decide the task (null: threshold policy)"),
    min_gain: minGain
      .nullable()
      .describe(
        "the confidence policy settles (resolution `no_gain`) when the best outcome of one more label cannot raise the confidence by this much (null: off)",
      ),
    gold: z.boolean().describe("a gold (control) task: never settled, delivered or exported"),
    gold_label: z
      .string()
      .nullable()
      .describe("a gold task's true option (null for other tasks); for a reserved type, the canonical JSON of `gold_answer`"),
    gold_answer: answer.optional().describe("a gold task of a reserved type: its true answer"),
    data_text: z
      .string()
      .optional()
      .describe("a `text_span` task's text (absent while the body of `data_url` is being fetched); a pairwise task's item a as text"),
    data_url_b: z.string().optional().describe("a `pairwise_comparison` task's item b (URL)"),
    data_text_b: z.string().optional().describe("a `pairwise_comparison` task's item b as text"),
    item_error: z
      .string()
      .optional()
      .describe("a `text_span` task whose text could not be fetched from `data_url`: why (the task was canceled)"),
    gold_answers: count.nullable().describe("a gold task's labels so far (null for other tasks)"),
    gold_agreement: share.describe("a gold task's share of labels equal to `gold_label` (null without labels or for other tasks)"),
    metadata: z.record(z.string(), z.unknown()).nullable().describe("as submitted"),
    idempotency_key: z.string().nullable(),
    batch_id: z.string().nullable(),
    labels_collected: count,
    consensus_label: z.string().nullable(),
    confidence: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .describe("calibrated posterior of the consensus label under the label space's Dawid-Skene model"),
    resolution: z.enum(RESOLUTIONS).nullable(),
    posterior: posterior
      .nullable()
      .describe(
        "option → probability at the decision (multi_label_classification: P(option applies); bounding_box, text_span: empty); null until decided",
      ),
    consensus: consensus.nullable().optional(),
    ledger_txid: ledgerTxid.nullable(),
    settled_at: time.nullable(),
    canceled_at: time.nullable(),
    webhook_status: z
      .enum(DELIVERY_STATUSES)
      .nullable()
      .describe(
        "delivery of the task's events (task.settled, task.revised, task.canceled): `failed` = the specification's `webhook_fail`; null when no webhook targets the task",
      ),
    revision: z
      .int()
      .min(1)
      .describe("the result's revision: 1 for the first settlement, + 1 for each review that changed it (the fields above are its)"),
    reviews: z.array(Review).optional().describe("`GET /v1/tasks/{id}`: every review of the task, oldest first (the latest counts)"),
    waiting_for: waitingFor
      .nullable()
      .optional()
      .describe("`GET /v1/tasks/{id}` of a `settling` task: what its settlement waits for, and since when (null otherwise)"),
  }),
  "A task and, once settled, its outcome.",
  taskExample,
);
/** `GET /v1/tasks/{id}`, `POST /v1/tasks/{id}/cancel` and the items of `GET /v1/dashboard/tasks`. */
export type Task = z.output<typeof Task>;

export const TaskProgress = documented(
  z.strictObject({
    task_id: id("tsk_", "task"),
    status: z.enum(TASK_STATUSES).exclude(["settled", "canceled"]),
    labels_collected: count,
    consensus_threshold: z.int().min(1),
  }),
  "Labeling is still in progress.",
  { task_id: E.taskId, status: "labeling", labels_collected: 1, consensus_threshold: 3 },
);
/** `GET /v1/tasks/{id}/result` 202: still being labeled. */
export type PendingResult = z.output<typeof TaskProgress>;

const hex32 = z.string().regex(/^0x[0-9a-f]{64}$/);
const prevHash = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .describe("hash (hex SHA-256) of the previous ledger record; 64 zeros for the first");

/** LEDGER=local: the hash-chained ledger table only. */
const localSettlement = z.strictObject({
  ledger_txid: ledgerTxid,
  ledger: z.literal("local").describe("the hash-chained ledger table"),
  sequence: count.describe("position of the record in the chain"),
  prev_hash: prevHash,
  recorded_at: time,
});

/** LEDGER=evm (contract §settlement): the record is a leaf of a Merkle tree whose root is anchored on an EVM chain. */
const evmSettlement = z.strictObject({
  ledger: z.literal("evm").describe("anchored on an EVM chain"),
  ledger_txid: hex32.describe("hash of the anchor transaction"),
  chain_id: z.int().min(1),
  block_number: count.describe("block holding the anchor transaction"),
  contract: z
    .string()
    .regex(/^0x[0-9a-f]{40}$/)
    .describe("the anchor contract (emits `Anchored(bytes32 indexed root, uint64 firstSequence, uint64 lastSequence)`)"),
  merkle_root: hex32.describe("root of the batch's RFC 9162 tree over keccak-256 (the `root` of the Anchored event)"),
  leaf: z
    .string()
    .regex(/^0x(?:[0-9a-f]{2})+$/)
    .describe("the leaf data: UTF-8 bytes of the canonical JSON of the ledger record, hex"),
  leaf_index: count,
  tree_size: z.int().min(1),
  proof: z.array(hex32).describe("RFC 9162 inclusion proof: sibling hashes from the leaf's level up"),
  sequence: count.describe("position of the record in the ledger chain"),
  prev_hash: prevHash,
});

/** The example of a settled result (`GET /v1/tasks/{id}/result`, and a review's `result`). */
const settledResultExample = {
  task_id: E.taskId,
  status: "settled" as const,
  revision: 1,
  revisions: [],
  consensus_label: "cat",
  confidence: 0.9846,
  resolution: "consensus" as const,
  label_counts: { cat: 3, dog: 0, bird: 0 },
  posterior: { cat: 0.9846, dog: 0.0102, bird: 0.0052 },
  labels_collected: 3,
  settled_at: E.settledAt,
  settlement: { ledger_txid: E.txid, ledger: "local" as const, sequence: 1042, prev_hash: E.prevHash, recorded_at: E.settledAt },
};
/** A revision a later one replaced: its result's fields as settled, and its own settlement (verifiable like a result). */
const Revision = z.strictObject({
  task_id: id("tsk_", "task"),
  revision: z.int().min(1),
  consensus_label: z.string(),
  confidence: z.number().min(0).max(1),
  resolution: z.enum(RESOLUTIONS),
  label_counts: z.record(z.string(), count),
  posterior,
  consensus: consensus.optional(),
  labels_collected: count,
  settled_at: time,
  settlement: z.union([evmSettlement, localSettlement]),
});

export const TaskResult = documented(
  z.strictObject({
    task_id: id("tsk_", "task"),
    status: z.literal("settled"),
    revision: z
      .int()
      .min(1)
      .describe("1 for the first settlement; a review that changed the result made each later one (with its own ledger record)"),
    revisions: z
      .array(Revision)
      .describe(
        "the earlier revisions, oldest first, each as it was settled with its settlement (each verifies on its own, like the result)",
      ),
    consensus_label: z.string(),
    confidence: z.number().min(0).max(1),
    resolution: z.enum(RESOLUTIONS),
    label_counts: z.record(z.string(), count).describe("labels per option"),
    posterior: posterior.describe(
      "option → probability of being the true label under the labeler model; `confidence` is the chosen label's (multi_label_classification: P(option applies); bounding_box, text_span: empty, see `consensus`)",
    ),
    consensus: consensus.optional(),
    labels_collected: count,
    settled_at: time,
    settlement: z
      .union([evmSettlement, localSettlement])
      .describe("how the result was settled: anchored on an EVM chain (`evm`, verifiable with the chain alone) or in the local ledger"),
  }),
  "The settled result and its ledger record.",
  settledResultExample,
);
/** `GET /v1/tasks/{id}/result` 200: settled, with its settlement record. */
export type SettledResult = z.output<typeof TaskResult>;
/** An earlier revision of a result (`revisions` of a result). */
export type ResultRevision = z.output<typeof Revision>;

export const ReviewOutcome = documented(
  z.strictObject({
    review: Review,
    result: z
      .union([TaskResult, TaskProgress])
      .describe(
        "the task's result now: settled (an accepted result, or an answer equal to it), else its progress: `settling` while the reviewer's answer is recorded as the next revision, `labeling` when a rejection reopened it",
      ),
  }),
  "The review, and the task's result after it.",
  {
    review: { ...reviewExample, verdict: "accept", answer: null, revised: false },
    result: settledResultExample,
  },
);
/** `POST /v1/tasks/{id}/review` 200. */
export type ReviewOutcome = z.output<typeof ReviewOutcome>;

const auditExample = {
  task_id: E.taskId,
  status: "open" as const,
  label_space_id: "spc_3f1c9a7e2b4d6f80",
  task_type: "image_classification",
  data_url: E.dataUrl,
  label_spec: { ...E.labelSpec, options: [...E.labelSpec.options] },
  consensus_label: "cat",
  confidence: 0.9846,
  resolution: "confidence" as const,
  revision: 1,
  settled_at: E.settledAt,
  created_at: E.settledAt,
  closed_at: null,
  review_id: null,
};

export const Audit = documented(
  z.strictObject({
    task_id: id("tsk_", "task"),
    status: z.enum(AUDIT_STATUSES).describe("open until the task is reviewed"),
    label_space_id: z.string().describe("the task's label space (customer, question and options)"),
    task_type: z.string(),
    data_url: z.string(),
    label_spec: labelSpec,
    data_text: z.string().optional().describe("a `text_span` task's text"),
    consensus_label: z.string().nullable().describe("the consensus to review (null while a rejection reopened the task)"),
    consensus: consensus.nullable().optional(),
    confidence: probability.nullable(),
    resolution: z.enum(RESOLUTIONS).nullable(),
    revision: z.int().min(1),
    settled_at: time.nullable(),
    created_at: time.describe("when the task was drawn into the audit queue"),
    closed_at: time.nullable(),
    review_id: id("rvw_", "review").nullable().describe("the review that closed the audit"),
  }),
  "A settled task drawn for review at the customer's `quality.audit_rate`.",
  auditExample,
);
export type Audit = z.output<typeof Audit>;
export const AuditPage = pageOf(Audit, "A page of audits, oldest first.", [auditExample]);
export type AuditPage = z.output<typeof AuditPage>;

/** The example of a batch (GET /v1/batches/{id}, and each item of GET /v1/batches). */
const batchExample = {
  batch_id: E.batchId,
  task_count: 2,
  status: "in_progress" as const,
  callback_url: null,
  created_at: E.createdAt,
  counts: { pending: 0, labeling: 1, settling: 0, settled: 1, canceled: 0 },
  gold_tasks: 0,
};
export const Batch = documented(
  z.strictObject({
    batch_id: id("bat_", "batch"),
    task_count: z.int().min(1),
    status: z.enum(BATCH_STATUSES),
    callback_url: z.string().nullable(),
    created_at: time,
    counts: taskCounts.describe("the batch's tasks other than gold tasks, by status"),
    gold_tasks: count.describe("gold tasks of the batch (never settled: not in `counts` nor in `status`)"),
  }),
  "A batch and its tasks by status: `accepted` until a task gets a label, `completed` when every task is settled or canceled.",
  batchExample,
);
/** `GET /v1/batches/{id}`. */
export type Batch = z.output<typeof Batch>;

/** `GET /v1/batches/{id}/ranking` (contract §task-types): the compared items, best first. */
export const Ranking = documented(
  z.strictObject({
    items: z.array(
      z.strictObject({
        item: z.string().describe("the item: its URL, or `text:` + 16 hex digits of the SHA-256 of its text"),
        score: z.number().describe("Bradley-Terry strength, natural-log scale, relative to the average ranked item (0)"),
        rank: z.int().min(1).describe("1 + the number of items with a higher score"),
        ci_low: z.number().describe("95% interval of `score`: low end"),
        ci_high: z.number().describe("95% interval of `score`: high end"),
        comparisons: count.describe("labels that compared this item"),
      }),
    ),
    labels: count.describe("labels the fit used (every label of the batch's pairwise_comparison tasks)"),
    tie_parameter: z.number().min(0).describe("Davidson's tie parameter (0 without ties)"),
  }),
  "The Bradley-Terry ranking of every item compared in the batch: fitted on every label, each weighted by the labeler model, with 95% intervals (best first).",
  {
    items: [
      { item: "https://example.com/a.jpg", score: 0.81, rank: 1, ci_low: 0.12, ci_high: 1.5, comparisons: 6 },
      { item: "https://example.com/b.jpg", score: -0.81, rank: 2, ci_low: -1.5, ci_high: -0.12, comparisons: 6 },
    ],
    labels: 6,
    tie_parameter: 0,
  },
);
export type Ranking = z.output<typeof Ranking>;

export const BatchPage = pageOf(Batch, "A page of batches, newest first (each item as `GET /v1/batches/{id}`).", [batchExample]);
/** `GET /v1/batches`: a page of batches, newest first. */
export type BatchPage = z.output<typeof BatchPage>;

// --- labeling ---------------------------------------------------------------------------------------

export const Claim = documented(
  z.strictObject({
    claim_id: id("clm_", "claim"),
    task_id: id("tsk_", "task"),
    task_type: z.string().describe("the task's `type` (e.g. `image_classification`): what kind of item to show"),
    data_url: z.string(),
    view_url: z
      .string()
      .optional()
      .describe(
        "for an `s3://` or `gs://` item of a manifest job that stored credentials: a presigned GET of the object, valid at most 15 minutes (and never past the claim)",
      ),
    label_spec: labelSpec,
    data_text: z
      .string()
      .optional()
      .describe("a `text_span` task's text: mark spans in it (offsets in code points); a pairwise task's item a as text"),
    data_url_b: z.string().optional().describe("a `pairwise_comparison` task's item b (URL; item a is `data_url`)"),
    data_text_b: z.string().optional().describe("a `pairwise_comparison` task's item b as text (item a is `data_text`)"),
    expires_at: time,
    label_space: z.string().describe("the task's label space: its instructions are `GET /v1/labeling/spaces/{id}/instructions`"),
    instructions_version: z
      .int()
      .min(1)
      .nullable()
      .describe("the current version of the label space's instructions (from 1), null while it has none: show them again when it changes"),
    prelabel: z
      .strictObject({
        answer: z.record(z.string(), z.unknown()).describe("the model's answer, an answer body of the task's type"),
        model: z.string().describe("the model's name"),
        score: z.number().optional().describe("the model's own score of its answer (0..1), when given"),
      })
      .optional()
      .describe("the task's pre-label, a suggestion to confirm or change: present only when its label_spec had `show_prelabel: true`"),
  }),
  "A claim on a task: label it before `expires_at`, with the answer of its `task_type`.",
  {
    claim_id: E.claimId,
    task_id: E.taskId,
    task_type: "image_classification",
    data_url: E.dataUrl,
    label_spec: { ...E.labelSpec, options: [...E.labelSpec.options] },
    expires_at: E.settledAt,
    label_space: E.labelSpaceId,
    instructions_version: 2,
  },
);
/** `POST /v1/labeling/claims` 201. */
export type Claim = z.output<typeof Claim>;

export const Instructions = documented(
  z.strictObject({
    label_space: z.string().describe("the label space"),
    version: z.int().min(1).describe("the version (from 1): the latest given for the label space"),
    instructions: z.string().nullable().describe("Markdown (at most 20,000 characters); null when only examples were given"),
    examples: z
      .array(
        z.strictObject({
          data_url: z.string().optional(),
          data_text: z.string().optional(),
          answer: answer.describe("the right answer, an answer body of the space's task type"),
          explanation: z.string().optional().describe("why (Markdown)"),
        }),
      )
      .describe("worked examples: the item (`data_url` or `data_text`), its right answer and why"),
    created_at: time.describe("when this version was given"),
  }),
  "The current instructions of a label space: shown to a labeler before its first task of the space and whenever `version` changes.",
  {
    label_space: E.labelSpaceId,
    version: 2,
    instructions: "## Cats and dogs\n\nAnswer **cat** for any domestic cat, kittens included.",
    examples: [{ data_url: E.dataUrl, answer: { label: "cat" }, explanation: "A kitten is a cat." }],
    created_at: E.createdAt,
  },
);
/** `GET /v1/labeling/spaces/{id}/instructions`. */
export type Instructions = z.output<typeof Instructions>;

export const LabelRecorded = documented(
  z.strictObject({
    label_id: id("lab_", "label"),
    claim_id: id("clm_", "claim"),
    task_id: id("tsk_", "task"),
    label: z.string().describe("the option chosen; for a reserved type, the canonical JSON of `answer`"),
    answer: answer.optional().describe("a reserved type's answer as recorded (its parts in canonical order)"),
    created_at: time,
    labels_needed: count.describe(
      "0 exactly when this label decided the task (it is settling now); otherwise the most labels the task may still take (at least 1)",
    ),
    training: z
      .strictObject({
        correct: z.boolean().describe("whether this answer matched the gold answer"),
        right_answer: answer.describe("the gold answer (single choice: `{label}`)"),
        explanation: z.string().nullable().describe("the gold task's `gold_explanation` (null: none given)"),
        gold_answers: count.describe("the labeler's gold answers in the label space, this one included"),
        gold_correct: count,
        gold_tasks: z.int().min(1).describe("the exam's length (`quality.qualification.gold_tasks`)"),
        min_accuracy: z.number().min(0).max(1),
        status: z
          .enum(["training", "qualified", "failed_qualification"])
          .describe("`training`: more exam questions follow; `qualified`: passed; `failed_qualification`: excluded from the space"),
      })
      .optional()
      .describe("only on a qualification training answer (contract §qualification): the right answer and the explanation"),
  }),
  "The label is recorded, with the decision of the task taken in the same transaction.",
  { label_id: E.labelId, claim_id: E.claimId, task_id: E.taskId, label: "cat", created_at: E.createdAt, labels_needed: 6 },
);
/** `POST /v1/labeling/claims/{claim_id}/label` 201. */
export type RecordedLabel = z.output<typeof LabelRecorded>;

// --- webhooks ---------------------------------------------------------------------------------------

const webhookFields = {
  webhook_id: id("whk_", "webhook"),
  callback_url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  active: z.boolean(),
  created_at: time,
};
const webhookExample = {
  webhook_id: E.webhookId,
  callback_url: E.callbackUrl,
  events: ["task.settled" as const],
  active: true,
  created_at: E.createdAt,
};

export const WebhookCreated = documented(
  z.strictObject(webhookFields),
  "The registered webhook (its secret is stored sealed and never returned).",
  webhookExample,
);
/** `POST /v1/webhooks` 201 (no `deleted_at`). */
export type WebhookCreated = z.output<typeof WebhookCreated>;

export const Webhook = documented(
  z.strictObject({ ...webhookFields, deleted_at: time.nullable() }),
  "A webhook; a deleted one is inactive with `deleted_at`.",
  { ...webhookExample, deleted_at: null },
);
/** `GET /v1/webhooks` items and `DELETE /v1/webhooks/{id}`. */
export type Webhook = z.output<typeof Webhook>;

export const WebhookList = documented(z.array(Webhook), "The customer's webhooks, newest first, deleted ones included.", [
  { ...webhookExample, deleted_at: null },
]);

const deliveryStatus = z.enum(DELIVERY_STATUSES);

export const Delivery = documented(
  z.strictObject({
    delivery_id: id("dlv_", "delivery"),
    event_id: z.string().describe("`X-SVC-Event-Id`: the same across retries and redeliveries"),
    event: z.enum(WEBHOOK_EVENTS),
    task_id: id("tsk_", "task").nullable().describe("the task of a task event; null for a job event"),
    job_id: id("job_", "manifest job").nullable().describe("the manifest job of a job event; null for a task event"),
    status: deliveryStatus,
    attempts: count,
    last_status_code: z.int().nullable(),
    last_error: z.string().nullable(),
    created_at: time,
    updated_at: time,
    delivered_at: time.nullable(),
    attempt_log: z
      .array(
        z.strictObject({
          attempt_id: z.string(),
          attempt: z.int().min(1),
          manual: z.boolean().describe("a redelivery asked for by the customer"),
          success: z.boolean(),
          status_code: z.int().nullable(),
          error: z.string().nullable(),
          latency_ms: count,
          started_at: time,
          finished_at: time,
        }),
      )
      .describe("every attempt, newest first"),
  }),
  "One event (contract §events) for one webhook, with every attempt.",
  {
    delivery_id: E.deliveryId,
    event_id: E.eventId,
    event: "task.settled",
    task_id: E.taskId,
    job_id: null,
    status: "delivered",
    attempts: 2,
    last_status_code: 200,
    last_error: null,
    created_at: E.settledAt,
    updated_at: E.settledAt,
    delivered_at: E.settledAt,
    attempt_log: [
      {
        attempt_id: E.attemptId,
        attempt: 2,
        manual: false,
        success: true,
        status_code: 200,
        error: null,
        latency_ms: 38,
        started_at: E.settledAt,
        finished_at: E.settledAt,
      },
      {
        attempt_id: "att_8Tq3Nz7KcW1mXr5Vb9LsJd",
        attempt: 1,
        manual: false,
        success: false,
        status_code: 503,
        error: "HTTP 503",
        latency_ms: 12,
        started_at: E.settledAt,
        finished_at: E.settledAt,
      },
    ],
  },
);
export type Delivery = z.output<typeof Delivery>;

export const DeliveryPage = pageOf(Delivery, "A page of deliveries, newest first.", []);

export const Redelivery = documented(
  z.strictObject({ delivery_id: id("dlv_", "delivery"), attempt_id: id("att_", "attempt"), status: z.literal("queued") }),
  "One new attempt is queued (same event id, fresh timestamp and signature).",
  { delivery_id: E.deliveryId, attempt_id: E.attemptId, status: "queued" },
);
/** `POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver` 202. */
export type RedeliveryQueued = z.output<typeof Redelivery>;

// --- manifest jobs ----------------------------------------------------------------------------------

const jobStatus = z.enum(JOB_STATUSES);

export const JobAccepted = documented(
  z.strictObject({ job_id: id("job_", "job"), status: jobStatus, created_at: time }),
  "The job is queued for ingestion.",
  { job_id: E.jobId, status: "queued", created_at: E.createdAt },
);
export type JobAccepted = z.output<typeof JobAccepted>;

const jobExample = {
  job_id: E.jobId,
  status: "labeling" as const,
  manifest_url: "s3://acme-datasets/pets/manifest.jsonl",
  label_spec: { ...E.labelSpec, options: [...E.labelSpec.options] },
  type: "image_classification",
  consensus_threshold: 3,
  max_labels: 7,
  confidence_target: null,
  min_labels: null,
  min_gain: null,
  callback_url: null,
  output_url: "s3://acme-datasets/pets/labels.jsonl",
  task_count: 1000,
  gold_tasks: 20,
  lines_ingested: 1000,
  tasks_settled: 250,
  progress: 0.2551,
  error: null,
  created_at: E.createdAt,
  started_at: E.createdAt,
  ingested_at: E.createdAt,
  completed_at: null,
  export_written_at: null,
};

export const Job = documented(
  z.strictObject({
    job_id: id("job_", "job"),
    status: jobStatus,
    manifest_url: z.string(),
    label_spec: labelSpec,
    type: z.string(),
    consensus_threshold: z.int().min(1),
    max_labels: z.int().min(1),
    confidence_target: confidenceTarget.nullable().describe("the confidence policy's target of the job's tasks (null: threshold policy)"),
    min_labels: z.int().min(1).nullable(),
    min_gain: minGain.nullable().describe("the min_gain of the job's tasks (null: off)"),
    callback_url: z.string().nullable(),
    output_url: z.string().nullable(),
    task_count: count.describe("tasks created from the manifest, gold tasks included"),
    gold_tasks: count.describe("of those, gold tasks (lines with `gold_label`): never settled nor exported"),
    lines_ingested: count,
    tasks_settled: count,
    progress: z.number().min(0).max(1).describe("settled share of the tasks other than gold tasks"),
    error: z.string().nullable().describe("why the job failed, e.g. `line 17: not valid JSON`"),
    created_at: time,
    started_at: time.nullable(),
    ingested_at: time.nullable(),
    completed_at: time.nullable(),
    export_written_at: time.nullable().describe("when the export was written to `output_url`"),
  }),
  "A manifest job (credentials are never returned).",
  jobExample,
);
/** `GET /v1/jobs/{id}` and the items of `GET /v1/jobs`. Credentials never appear. */
export type Job = z.output<typeof Job>;

export const JobPage = pageOf(Job, "A page of jobs, newest first.", [jobExample]);

export const ExportLine = documented(
  z.strictObject({
    task_id: id("tsk_", "task"),
    data_url: z.string(),
    consensus_label: z.string().nullable(),
    confidence: z.number().nullable(),
    consensus: consensus.nullable().optional(),
    ...exportLineFields,
    item_error: z.string().optional().describe("text_span only: why the text at `data_url` could not be fetched (the task was canceled)"),
    ledger_txid: z.string().nullable(),
    settled_at: time.nullable(),
    source: z.record(z.string(), z.unknown()).optional().describe("a job's line: the manifest line as it was"),
    metadata: z
      .record(z.string(), z.unknown())
      .nullable()
      .optional()
      .describe("a batch's line (in place of `source`): the task's metadata"),
  }),
  "One line of a job's or a batch's JSONL export (`format=jsonl`; manifest order, or task id order for a batch; null fields for a canceled task).",
  {
    task_id: E.taskId,
    data_url: "s3://acme-datasets/pets/0001.jpg",
    consensus_label: "cat",
    confidence: 0.9846,
    ledger_txid: E.txid,
    settled_at: E.settledAt,
    source: { "source-ref": "s3://acme-datasets/pets/0001.jpg" },
  },
);
/** One line of `GET /v1/jobs/{id}/export`, in manifest order; `source` is the manifest line as sent. */
export type ExportLine = z.output<typeof ExportLine>;

// --- billing ----------------------------------------------------------------------------------------

const lineItem = z.strictObject({ tier, labels: count, unit_price_cents: count, amount_cents: count });
const month = z
  .string()
  .regex(/^\d{4}-(0[1-9]|1[0-2])$/)
  .describe("YYYY-MM (UTC)");
const currency = z
  .string()
  .regex(/^[a-z]{3}$/)
  .describe("ISO 4217, lower case");

export const Usage = documented(
  z.strictObject({
    month,
    currency,
    tier: tier.describe("the current tier"),
    price_per_label_cents: count.describe("the current tier's price"),
    labels_collected: count,
    tasks_settled: count,
    amount_cents: count,
    line_items: z.array(lineItem).describe("one per tier with labels in the month"),
  }),
  "Usage of one UTC month, each label priced at the tier the customer had when it was recorded.",
  {
    month: "2026-03",
    currency: "usd",
    tier: "production",
    price_per_label_cents: 8,
    labels_collected: 1500,
    tasks_settled: 480,
    amount_cents: 8000,
    line_items: [
      { tier: "sandbox", labels: 500, unit_price_cents: 0, amount_cents: 0 },
      { tier: "production", labels: 1000, unit_price_cents: 8, amount_cents: 8000 },
    ],
  },
);
export type Usage = z.output<typeof Usage>;

const invoiceExample = {
  invoice_id: E.invoiceId,
  month: "2026-03",
  status: "open" as const,
  currency: "usd",
  labels_collected: 1000,
  tasks_settled: 320,
  amount_cents: 8000,
  line_items: [{ tier: "production" as const, labels: 1000, unit_price_cents: 8, amount_cents: 8000 }],
  created_at: E.createdAt,
  finalized_at: null,
};

export const InvoiceList = documented(
  z.strictObject({
    items: z.array(
      z.strictObject({
        invoice_id: id("inv_", "invoice"),
        month,
        status: z.enum(INVOICE_STATUSES).describe("the current month is `open` (recomputed on read); past months are `finalized` once"),
        currency,
        labels_collected: count,
        tasks_settled: count,
        amount_cents: count,
        line_items: z.array(lineItem),
        created_at: time,
        finalized_at: time.nullable(),
      }),
    ),
  }),
  "Invoices, newest month first: one per month with usage, always the current one.",
  { items: [invoiceExample] },
);
export type InvoiceList = z.output<typeof InvoiceList>;

// --- dashboard --------------------------------------------------------------------------------------

export const Overview = documented(
  z.strictObject({
    tasks_by_status: taskCounts,
    labels_this_month: count,
    label_quota: count,
    label_quota_remaining: count,
    median_seconds_to_settle: z.number().nonnegative().nullable().describe("tasks settled in the last 30 days; null if none"),
    webhook_delivery_success_rate: share.describe("delivered / (delivered + failed) over the last 30 days; null if none"),
  }),
  "The customer's tasks, quota and delivery health at a glance.",
  {
    tasks_by_status: { pending: 12, labeling: 5, settling: 0, settled: 480, canceled: 3 },
    labels_this_month: 1500,
    label_quota: 100000,
    label_quota_remaining: 98464,
    median_seconds_to_settle: 842.5,
    webhook_delivery_success_rate: 0.9958,
  },
);
export type DashboardOverview = z.output<typeof Overview>;

export const TaskPage = pageOf(Task, "A page of the customer's tasks.", [taskExample]);

const resolutionShare = z.strictObject({ tasks: count, share });

const calibrationBin = z.strictObject({
  lower: z.number().min(0).max(1),
  upper: z.number().min(0).max(1),
  tasks: count,
  mean_confidence: share.describe("mean reported confidence in the bin (null when empty)"),
  accuracy: share.describe("share of the bin's decisions equal to the gold label (null when empty)"),
});

const reviewedBin = z.strictObject({
  lower: z.number().min(0).max(1),
  upper: z.number().min(0).max(1),
  tasks: count.describe("reviewed results whose confidence when reviewed is in the bin"),
  mean_confidence: share.describe("their mean confidence (null when empty)"),
  accuracy: share.describe("share of them the latest review found right (null when empty)"),
});

/** The reviewed-results figures of a set of results (all the customer's, or one label space's). */
const reviewedFigures = {
  reviews: count.describe(
    "reviewed results: settled results decided by labels with at least one review (the latest counts; a review of a result an earlier review made is not counted)",
  ),
  reviewed_accuracy: share.describe(
    "share of the reviewed results the latest review found right: accepted, or rejected with an answer equal to the result (null without reviews)",
  ),
  mean_confidence_reviewed: share.describe("mean confidence of the reviewed results when reviewed (null without reviews)"),
  bins: z
    .array(reviewedBin)
    .length(10)
    .describe("reliability table: 10 equal-width bins of the reported confidence, [lower, upper) (1 in the last)"),
  ece: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .describe("expected calibration error over the bins: sum of tasks/total × |accuracy − mean_confidence| (null without reviews)"),
};

const reviewedExampleFigures = {
  reviews: 25,
  reviewed_accuracy: 0.92,
  mean_confidence_reviewed: 0.9468,
  bins: Array.from({ length: 10 }, (_, i) => ({
    lower: i / 10,
    upper: (i + 1) / 10,
    tasks: i === 9 ? 21 : i === 8 ? 4 : 0,
    mean_confidence: i === 9 ? 0.9631 : i === 8 ? 0.8613 : null,
    accuracy: i === 9 ? 0.9524 : i === 8 ? 0.75 : null,
  })),
  ece: 0.0268,
};
const reviewedExample = {
  ...reviewedExampleFigures,
  label_spaces: [{ label_space_id: E.labelSpaceId, question: E.labelSpec.question, task_type: null, ...reviewedExampleFigures }],
};

export const Quality = documented(
  z.strictObject({
    window_days: z.int().min(1),
    tasks_settled: count,
    mean_confidence: z.number().min(0).max(1).nullable(),
    resolution: z.strictObject({ consensus: resolutionShare, confidence: resolutionShare, max_labels: resolutionShare }),
    labels_per_task: z.array(z.strictObject({ labels: count, tasks: count })),
    agreement_rate: share.describe(
      "share of the labels of settled single-choice tasks with at least 2 labels that equal their task's consensus label; null when no such task settled (a lone label agrees with itself)",
    ),
    calibration: z
      .strictObject({
        gold_tasks: count.describe("gold tasks with labels the measure rests on"),
        bins: z.array(calibrationBin).length(10).describe("10 equal-width confidence bins, [lower, upper)"),
        ece: z.number().min(0).max(1).describe("expected calibration error: sum over bins of tasks/total × |accuracy − mean_confidence|"),
      })
      .nullable()
      .describe(
        "reliability of `confidence` measured on gold tasks: the decision the rule would have taken on each gold task's labels in recording order (its space's newest policy, the current model), against its gold label; null without gold answers",
      ),
    reviewed: z
      .strictObject({
        ...reviewedFigures,
        label_spaces: z
          .array(
            z.strictObject({
              label_space_id: z.string(),
              question: z.string(),
              task_type: z.string().nullable().describe("the space's reserved task type; null for single choice"),
              ...reviewedFigures,
            }),
          )
          .describe("the same figures per label space with reviewed results"),
      })
      .describe(
        "reliability of `confidence` measured on reviewed results (audits are a uniform sample of what settled, docs/decisions/0263): all label spaces together, then each",
      ),
  }),
  "Label quality over the tasks settled in the last 90 days, and the calibration of `confidence` on gold tasks.",
  {
    window_days: 90,
    tasks_settled: 480,
    mean_confidence: 0.9612,
    resolution: {
      consensus: { tasks: 400, share: 0.8333 },
      confidence: { tasks: 70, share: 0.1458 },
      max_labels: { tasks: 10, share: 0.0208 },
    },
    labels_per_task: [
      { labels: 3, tasks: 440 },
      { labels: 4, tasks: 30 },
      { labels: 7, tasks: 10 },
    ],
    agreement_rate: 0.9437,
    calibration: {
      gold_tasks: 40,
      bins: Array.from({ length: 10 }, (_, i) => ({
        lower: i / 10,
        upper: (i + 1) / 10,
        tasks: i === 9 ? 36 : i === 8 ? 4 : 0,
        mean_confidence: i === 9 ? 0.97 : i === 8 ? 0.86 : null,
        accuracy: i === 9 ? 0.9722 : i === 8 ? 0.75 : null,
      })),
      ece: 0.0137,
    },
    reviewed: reviewedExample,
  },
);
export type DashboardQuality = z.output<typeof Quality>;

const labelerRow = {
  labeler_id: "lbl_8Kp1Xr6TzW3nQm9Lb2VcYd",
  label_space: E.labelSpaceId,
  question: "What animal is this?",
  labels: 412,
  gold_answers: 24,
  gold_accuracy: 0.9167,
  estimated_accuracy: 0.9034,
  status: "active" as const,
  model: null,
};

export const LabelerQualityList = documented(
  z.strictObject({
    items: z.array(
      z.strictObject({
        labeler_id: id("lbl_", "labeler"),
        label_space: z.string().describe("the label space (`lsp_` + hash of the customer, question and options)"),
        question: z.string().describe("the label space's question"),
        labels: count.describe("answers of this labeler in the label space (one per task it answered), as of the space's last fit"),
        gold_answers: count,
        gold_accuracy: share.describe("correct / gold answers (null without gold answers)"),
        estimated_accuracy: share.describe(
          "probability that its label is right, from its Dawid-Skene confusion matrix (null before the first fit)",
        ),
        status: z
          .enum(["active", "excluded", "failed_qualification"])
          .describe(
            "`excluded`: gold accuracy below `min_labeler_accuracy` with 95% posterior probability; `failed_qualification`: failed the space's qualification exam (contract §qualification), excluded from it",
          ),
        model: z.string().nullable().describe("a model labeler's model name (its pre-labels' labeler `model:<model>`), null for a person"),
      }),
    ),
  }),
  "The labelers of the customer's label spaces (one row per labeler and label space), oldest space first.",
  { items: [labelerRow] },
);
/** `GET /v1/dashboard/labelers`: one row per labeler and label space of the customer. */
export type LabelerQualityList = z.output<typeof LabelerQualityList>;

const settingsExample = {
  task_defaults: { consensus_threshold: 3, confidence_target: 0.95, min_labels: 2, min_gain: null, max_labels: 10 },
  quality: {
    gold_rate: 0.1,
    min_labeler_accuracy: 0.7,
    min_gold_answers: 10,
    audit_rate: 0.05,
    qualification: { gold_tasks: 10, min_accuracy: 0.65 },
  },
};

export const Settings = documented(
  z.strictObject({
    task_defaults: z.strictObject({
      consensus_threshold: z.int().min(1).max(25).nullable(),
      confidence_target: confidenceTarget.nullable(),
      min_labels: z.int().min(1).max(50).nullable(),
      min_gain: minGain.nullable(),
      max_labels: z.int().min(1).max(50).nullable(),
    }),
    quality: z.strictObject({
      gold_rate: share.describe("share of a labeler's claims served from unanswered gold tasks (null: the default 0.1)"),
      min_labeler_accuracy: share.describe("exclusion floor of a labeler's gold accuracy (null: nobody is excluded)"),
      min_gold_answers: z.int().min(1).nullable().describe("gold answers before exclusion may apply (null: the default 10)"),
      audit_rate: share.describe(
        "share of settled tasks drawn uniformly at random, per label space, into the audit queue `GET /v1/audits` (null: the default 0, none)",
      ),
      qualification: z
        .strictObject({ gold_tasks: z.int().min(1).max(100), min_accuracy: z.number().min(0).max(1) })
        .nullable()
        .describe("the qualification exam of a labeler new to a label space (contract §qualification; null: none)"),
    }),
  }),
  "The customer's settings: task defaults (the least specific layer of a task's policy) and quality settings; unset fields are null.",
  settingsExample,
);
/** `GET` / `PATCH /v1/customers/me/settings`: every field present, unset ones null. */
export type Settings = z.output<typeof Settings>;

export const UsageDays = documented(
  z.strictObject({ days: z.array(z.strictObject({ date: z.iso.date(), labels: count })).describe("the last 30 UTC days, oldest first") }),
  "Labels collected per UTC day, zeros included.",
  {
    days: [
      { date: "2026-03-13", labels: 0 },
      { date: "2026-03-14", labels: 57 },
    ],
  },
);
export type DashboardUsage = z.output<typeof UsageDays>;

/**
 * Every named response schema, by its OpenAPI component name. `buildOpenApiDocument` registers these;
 * a schema nested in another becomes a `$ref`.
 */
export const RESPONSE_SCHEMAS = {
  Error: ErrorBody,
  Health,
  HealthUnavailable,
  OpenApiDocument,
  CustomerCreated,
  Customer,
  CustomerPage,
  CustomerUpgraded,
  LabelerCreated,
  ParkedFollowUps,
  FollowUpsRetried,
  TaskAccepted,
  BatchAccepted,
  Task,
  TaskProgress,
  TaskResult,
  Review,
  ReviewOutcome,
  Audit,
  AuditPage,
  Batch,
  Ranking,
  BatchPage,
  Claim,
  Instructions,
  LabelRecorded,
  WebhookCreated,
  Webhook,
  WebhookList,
  Delivery,
  DeliveryPage,
  Redelivery,
  JobAccepted,
  Job,
  JobPage,
  ExportLine,
  Usage,
  InvoiceList,
  Overview,
  TaskPage,
  Quality,
  LabelerQualityList,
  Settings,
  UsageDays,
} as const satisfies Record<string, z.ZodType>;
