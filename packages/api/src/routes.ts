/**
 * The route catalog joined with its schemas: the zod request and query schemas by name (REQUEST_SCHEMAS,
 * QUERY_SCHEMAS), the request descriptions and examples, the path parameters derived from each path, and
 * `ROUTES`: every operation of operations.ts (the declarations, re-exported here) as a {@link RouteDoc}, in
 * the document's order. The gateway, the OpenAPI document and docs/api.md read it; the SDK reads only
 * operations.ts.
 */
import type { z } from "zod";
import { type BodyDecl, OPERATIONS, type OperationDecl, type OperationId, type RequestSchemaName } from "./operations";
import { EXAMPLE } from "./responses";
import { QUERY_SCHEMAS, REQUEST_SCHEMAS } from "./schemas-by-name";

export { QUERY_SCHEMAS, REQUEST_SCHEMAS };

export const REQUEST_DESCRIPTIONS: Record<keyof typeof REQUEST_SCHEMAS, string> = {
  RegistrationInput: "A new customer account.",
  TaskInput:
    "A labeling task. `data_url`: an http(s) URL, or `s3://bucket/key` / `gs://bucket/key` (both a bucket and a key); `label_spec.options`: unique; `callback_url` needs an active webhook of the same URL; unknown fields are rejected. Policy (contract §quality; each field absent here comes from the batch's top level, the manifest job, then the customer's task defaults): `consensus_threshold` 1..25 (default 3); `max_labels` ≤ 50 (default 2t+1; at least the threshold under the threshold policy, at least `min_labels` under the confidence policy); `confidence_target` 0.5..0.999 selects the confidence policy (null: the threshold policy, overriding a default target); `min_labels` (default 1); `min_gain` 0.001..0.5 (confidence policy; null: off): also settle, resolution `no_gain`, when the best outcome of one more label cannot raise the calibrated confidence by that much. `gold_label` (one of the options) makes a gold task: served to labelers to measure them, never settled, delivered or exported.",
  BatchInput:
    "Up to 10,000 tasks accepted together or not at all; `callback_url` applies to every task without one; `confidence_target`, `min_labels`, `min_gain` and `max_labels` to every task that does not set its own.",
  WebhookInput:
    'A webhook endpoint: a public http(s) URL, checked now (DNS included) and before every attempt; one active webhook per URL. The signing secret (at least 16 characters) is stored sealed (AES-256-GCM) and never returned. `events`: names of the event catalog (contract §events), default `["task.settled"]`.',
  WebhookPatchInput:
    "The events the webhook subscribes to, replacing its list: names of the event catalog (contract §events), at least one.",
  JobInput:
    "A manifest job: `manifest_url` is `s3://bucket/key` (with S3 credentials), `gs://bucket/key` (with `service_account_json`) or `https://...` (none). `credentials` and `s3_credentials` are synonyms.",
  ClaimInput: "`{}` for the next open task, or a specific `task_id`.",
  LabelInput: "One of the task's options.",
  LabelerInput: "A new labeler.",
  CustomerPatchInput: "The customer's new label quota.",
  FollowUpsRetryInput: "The parked follow-ups to try again, by id; every parked one when `ids` is absent.",
  SettingsPatchInput:
    "Fields to change in the settings: a value replaces, `null` clears, an absent field is kept. The merged task defaults must make a consistent policy.",
  UpgradeInput: "Upgrade options.",
  ReviewInput:
    "A review of a settled result: `accept`; `reject` with `answer`, an answer body of the task's type ({label}, {labels}, {boxes} or {spans}), checked against the task like a label; or `reject` alone (single choice only).",
};

export interface PathParamDoc {
  name: string;
  /** id prefix of the resource (`tsk_`, ...) */
  prefix: string;
  description: string;
  example: string;
}

export interface BodyDoc extends BodyDecl {
  examples: Record<string, { summary: string; value: unknown }>;
}

/** One operation with what derives from its declaration: its id, path parameters and body examples. */
export interface RouteDoc extends Omit<OperationDecl, "body" | "query"> {
  operationId: string;
  /** the zod schema the handler parses `req.query` with */
  query?: z.ZodObject;
  pathParams?: PathParamDoc[];
  body?: BodyDoc;
}

const E = EXAMPLE;

/** Path parameters: `{id}` by the resource before it (`/v1/<resource>/{id}`), any other by its name. */
export const PATH_PARAMS: Record<string, Omit<PathParamDoc, "name">> = {
  tasks: { prefix: "tsk_", description: "task id", example: E.taskId },
  batches: { prefix: "bat_", description: "batch id", example: E.batchId },
  webhooks: { prefix: "whk_", description: "webhook id", example: E.webhookId },
  jobs: { prefix: "job_", description: "job id", example: E.jobId },
  customers: { prefix: "cust_", description: "customer id", example: E.customerId },
  deliveryId: { prefix: "dlv_", description: "delivery id", example: E.deliveryId },
  claimId: { prefix: "clm_", description: "claim id", example: E.claimId },
  spaces: { prefix: "lsp_", description: "label space id (a claim's `label_space`)", example: E.labelSpaceId },
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
export const REQUEST_EXAMPLES: Record<RequestSchemaName, BodyDoc["examples"]> = {
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
    min_gain: {
      summary: "the confidence policy that also stops when one more label cannot raise the confidence by 0.05",
      value: { ...taskExample, confidence_target: 0.95, min_gain: 0.05, max_labels: 10 },
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
    jobs: {
      summary: "results and the end of every manifest job",
      value: { callback_url: E.callbackUrl, secret: "whsec_3f9a1c7e5b2d8f40", events: ["task.settled", "job.completed", "job.failed"] },
    },
  },
  WebhookPatchInput: {
    default: { summary: "add cancellations", value: { events: ["task.settled", "task.canceled"] } },
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
  FollowUpsRetryInput: {
    every: { summary: "every parked follow-up", value: {} },
    some: { summary: "two of them", value: { ids: ["4711", "4712"] } },
  },
  ReviewInput: {
    accept: { summary: "the result is right", value: { verdict: "accept" } },
    correct: { summary: "the result is wrong: the right answer", value: { verdict: "reject", answer: { label: "dog" } } },
    reopen: { summary: "the result is wrong (single choice): more labels, never this option", value: { verdict: "reject" } },
  },
  UpgradeInput: {
    default: { summary: "revoke the sandbox key", value: {} },
    keep: { summary: "keep the sandbox key", value: { keep_sandbox_key: true } },
  },
};

/** The {@link RouteDoc} of one declaration: path parameters from its path, body examples from REQUEST_EXAMPLES. */
function routeOf(operationId: string, decl: OperationDecl): RouteDoc {
  const { body, query, ...fields } = decl;
  const pathParams = pathParamsOf(decl.path);
  return {
    operationId,
    ...fields,
    ...(query ? { query: QUERY_SCHEMAS[query] } : {}),
    ...(pathParams.length > 0 ? { pathParams } : {}),
    ...(body ? { body: { ...body, examples: REQUEST_EXAMPLES[body.schema] } } : {}),
  };
}

/** Every operation of the HTTP API, in the document's order. */
export const ROUTES: RouteDoc[] = Object.entries(OPERATIONS).map(([id, decl]) => routeOf(id, decl));

/** The route of one operation id. */
export function routeFor(id: OperationId): RouteDoc {
  const route = ROUTES.find((r) => r.operationId === id);
  if (!route) throw new Error(`no operation ${id}`);
  return route;
}

export * from "./operations";
