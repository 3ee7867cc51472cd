/**
 * The event catalog (contract §events; docs/architecture.md "Adding an event type"): every event type a webhook
 * can subscribe to, each ONE entry: its name, the zod schema of its payload (the fields beyond the envelope every
 * delivery carries: `event`, `event_id`, `created_at`, `timestamp`), its subject (which rows it is about, which
 * decides its routing) and the transaction that emits it. Everything else is derived from this table: the
 * `events` a webhook may subscribe to (`WEBHOOK_EVENTS`), the body types below, the verifiers' event lists
 * (`pnpm gen:events` writes packages/webhook-verify/src/events.ts and clients/python/labelgate/events.py) and the
 * contract's table. Routing, retries, signature, attempt log and redelivery are the same for every event: an
 * event is a row of the `events` outbox (unique per cause), routed by the one `routeEvent` queue to one
 * `deliveries` row per subscribed webhook.
 */
import { z } from "zod";

/**
 * What an event is about, which fixes its routing:
 * - `task`: a task's event goes to the task's `callback_url` when it has one (the customer's active webhook of
 *   that URL, if it subscribed to the event), else to every active webhook of the customer subscribed to it;
 *   its deliveries count in the task's `webhook_status`;
 * - `job`: a manifest job's event goes to every active webhook of the customer subscribed to it.
 */
export type EventSubject = "task" | "job";

/** One catalog entry. */
export interface EventSpec<S extends z.ZodObject = z.ZodObject> {
  subject: EventSubject;
  /** the fields beyond the envelope (`event`, `event_id`, `created_at`, `timestamp`) */
  payload: S;
  /** when it happens, for the customer (the contract's table and the generated verifiers' docs) */
  description: string;
  /** where it is written: the transaction and rows that emit it, and its unique key (one event per cause) */
  emittedBy: string;
}

function defineEvent<S extends z.ZodObject>(spec: EventSpec<S>): EventSpec<S> {
  return spec;
}

const iso = z.string().describe("ISO 8601 UTC");
const unit = z.number().min(0).max(1);

/** A reserved task type's consensus, each part with its confidence (contract §task-types). */
const consensus = z
  .union([
    z.object({ labels: z.array(z.string()), confidence: z.record(z.string(), z.number()) }),
    z.object({
      boxes: z.array(
        z.object({
          label: z.string(),
          x: z.number(),
          y: z.number(),
          w: z.number(),
          h: z.number(),
          confidence: z.number(),
          support: z.number(),
        }),
      ),
    }),
    z.object({ spans: z.array(z.object({ start: z.number(), end: z.number(), label: z.string(), confidence: z.number() })) }),
  ])
  .describe(
    "reserved task types only (multi_label_classification, bounding_box, text_span): the consensus answer, each part with its confidence; consensus_label is its canonical JSON without the confidences",
  );

const settledFields = {
  task_id: z.string(),
  consensus_label: z.string(),
  confidence: unit.describe("calibrated probability of consensus_label"),
  consensus: consensus.optional(),
  ledger_txid: z.string().describe("transaction id of the settlement's ledger record"),
  settled_at: iso,
};

export const EVENT_CATALOG = {
  "task.settled": defineEvent({
    subject: "task",
    payload: z.object(settledFields),
    description: "A task settled: its consensus is decided and recorded on the ledger.",
    emittedBy:
      "the settlement transaction (store settlement.ts; under LEDGER=evm the anchor confirmation, anchors.ts): one per task and revision 1, unique (task_id, type, revision)",
  }),
  "task.revised": defineEvent({
    subject: "task",
    payload: z.object({
      task_id: z.string(),
      revision: z.int().min(2).describe("the new revision (the first settlement is revision 1)"),
      consensus_label: settledFields.consensus_label,
      confidence: settledFields.confidence,
      consensus: consensus.optional(),
      ledger_txid: settledFields.ledger_txid,
      settled_at: iso.describe("ISO 8601 UTC: when the new revision was settled"),
      previous: z.object({ consensus_label: z.string(), confidence: z.number() }).describe("the revision it replaced"),
    }),
    description: "A customer's review changed a settled result: a new revision is settled with its own ledger record.",
    emittedBy:
      "the settlement transaction of a review's revision (store settlement.ts, anchors.ts): one per task and revision, unique (task_id, type, revision)",
  }),
  "task.canceled": defineEvent({
    subject: "task",
    payload: z.object({
      task_id: z.string(),
      reason: z
        .enum(["customer", "item_unreadable"])
        .describe("customer: POST /v1/tasks/{id}/cancel; item_unreadable: the item of a text_span task could not be fetched"),
      item_error: z.string().optional().describe("item_unreadable only: why the item could not be fetched"),
    }),
    description: "A task was canceled, by the customer or because its item could not be read.",
    emittedBy:
      "the cancellation transaction (store tasks.ts cancel, items.ts fail): one per task, unique (task_id, type, revision); gold tasks emit none",
  }),
  "job.completed": defineEvent({
    subject: "job",
    payload: z.object({
      job_id: z.string(),
      task_count: z.int().min(0).describe("tasks the manifest made, gold tasks excluded"),
      tasks_settled: z.int().min(0).describe("of those, settled (the rest were canceled)"),
    }),
    description: "A manifest job ended: every task of it settled or was canceled.",
    emittedBy:
      "the transaction that completes the job (store jobs.ts completeJobSql: settlement, anchor confirmation, cancellation, opening, reconciliation): one per job, unique (job_id, type)",
  }),
  "job.failed": defineEvent({
    subject: "job",
    payload: z.object({
      job_id: z.string(),
      task_count: z.int().min(0),
      tasks_settled: z.int().min(0),
      error: z.string().describe("why the job failed"),
    }),
    description: "A manifest job failed (its manifest could not be read or ingested); its tasks are removed.",
    emittedBy: "the transaction that fails the job (store jobs.ts fail): one per job, unique (job_id, type)",
  }),
};

export type EventCatalog = typeof EVENT_CATALOG;
export type WebhookEventType = keyof EventCatalog;

/** Event kinds a webhook can subscribe to, in catalog order (a webhook's `events`; an unknown name is 400). */
export const WEBHOOK_EVENTS = Object.keys(EVENT_CATALOG) as [WebhookEventType, ...WebhookEventType[]];

/** A webhook's `events` when it names none (contract §events). */
export const DEFAULT_WEBHOOK_EVENTS: WebhookEventType[] = ["task.settled"];

/** An event's payload as its emit site writes it to the outbox: `event` and the catalog's fields. */
export type EventPayload<N extends WebhookEventType> = { event: N } & z.output<EventCatalog[N]["payload"]>;

/** The envelope every delivery's body adds to the payload. */
export interface EventEnvelope {
  /** `X-SVC-Event-Id`: the same on every retry and redelivery of one event */
  event_id: string;
  /** ISO 8601 UTC: when the event happened (its outbox row was written) */
  created_at: string;
  /** ISO 8601 UTC of this delivery attempt (differs between retries of one event) */
  timestamp: string;
}

/** The body of one delivery of an event of type `N`, as the webhook worker signs and sends it. */
export type WebhookEventBody<N extends WebhookEventType> = EventPayload<N> & EventEnvelope;

/** The body of a `task.settled` delivery (contract §events). */
export type TaskSettledEvent = WebhookEventBody<"task.settled">;
/** The body of a `task.revised` delivery (docs/decisions/0261). */
export type TaskRevisedEvent = WebhookEventBody<"task.revised">;
/** The body of a `task.canceled` delivery (docs/decisions/0230). */
export type TaskCanceledEvent = WebhookEventBody<"task.canceled">;
/** The body of a `job.completed` delivery (docs/decisions/0230). */
export type JobCompletedEvent = WebhookEventBody<"job.completed">;
/** The body of a `job.failed` delivery (docs/decisions/0230). */
export type JobFailedEvent = WebhookEventBody<"job.failed">;
/** Any delivery's body; `event` tells them apart. */
export type WebhookEvent = { [N in WebhookEventType]: WebhookEventBody<N> }[WebhookEventType];

/**
 * The full body schema of an event type (envelope included), for tests and receivers that validate with zod.
 * Unknown fields pass (the API grows).
 */
export function eventBodySchema<N extends WebhookEventType>(name: N) {
  return EVENT_CATALOG[name].payload.extend({
    event: z.literal(name),
    event_id: z.string().startsWith("evt_"),
    created_at: iso,
    timestamp: iso,
  });
}
