/**
 * The queue catalog: every queue, its payload schema, its job id (so retries and reconciliation dedupe),
 * its retry policy and the service that consumes it. Queue names never change once shipped.
 * A service's handler map is typed `HandlersFor<"service">`: a queue without a handler does not compile.
 */
import type { JobsOptions } from "bullmq";
import { z } from "zod";

export type ServiceName = "consensus-worker" | "webhook-worker" | "manifest-worker";

/**
 * How the work of a queue is found again when its job is lost (Redis lost it, a process died before its
 * follow-up row was written): the reconciliation walks the catalog (services/consensus-worker/src/reconcile.ts).
 * - `reconciliation`: the store's scan of the rows that are the truth (packages/store reconcile.ts `lostWork`,
 *   one list of payloads per such queue key) finds it; it is requeued with the catalog's attempts, or
 *   WEBHOOK_RETRY_MAX when `attempts` says so.
 * - `scheduler`: a periodic queue; its BullMQ job scheduler is registered again when missing (`keepScheduled`).
 * - `sweep`: the next run of the named periodic queue finds it again (a refit's space is still due).
 */
export type LostWorkFinder =
  | { by: "reconciliation"; attempts?: "webhookRetryMax" }
  | { by: "scheduler" }
  | { by: "sweep"; sweep: "refitSweep" };

export interface QueueSpec<S extends z.ZodType, C extends ServiceName = ServiceName> {
  /** BullMQ queue name: never renamed once shipped */
  name: string;
  consumer: C;
  payload: S;
  /** the queue job's id, derived from the payload: a second enqueue of the same work is a no-op (BullMQ dedupes by job id) */
  jobId: (payload: z.infer<S>) => string;
  jobOptions: JobsOptions;
  /** how its lost work is found (the reconciliation walks the catalog) */
  lostWork: LostWorkFinder;
}

function defineQueue<S extends z.ZodType, C extends ServiceName>(spec: QueueSpec<S, C>): QueueSpec<S, C> {
  return spec;
}

/**
 * The payload of the manifest job queues: the manifest job's id. Jobs enqueued before the field was renamed
 * (`jobId`, which read as the queue job's id) are still accepted, so an upgrade loses none in flight.
 */
const manifestJobPayload = z.preprocess(
  (v) => (v !== null && typeof v === "object" && "jobId" in v && !("manifestJobId" in v) ? { manifestJobId: v.jobId } : v),
  z.object({ manifestJobId: z.string().startsWith("job_") }),
);

const keepFinished = {
  // Kept for an hour so that a duplicate enqueue of the same job id is deduplicated by BullMQ.
  removeOnComplete: { age: 3600, count: 100_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
} satisfies JobsOptions;

/**
 * A periodic queue of the consensus worker, fed by a BullMQ job scheduler: no payload, one job id (its
 * name), the last runs kept for inspection.
 */
function scheduledQueue(name: string) {
  return defineQueue({
    name,
    consumer: "consensus-worker",
    payload: z.object({}),
    jobId: () => name,
    jobOptions: { attempts: 1, removeOnComplete: { count: 10 }, removeOnFail: { count: 100 } },
    lostWork: { by: "scheduler" },
  });
}

/** A queue of the manifest worker with one job per manifest job (id `<step>-<manifestJobId>`), retried up to 5 times. */
function manifestQueue(name: string, step: string) {
  return defineQueue({
    name,
    consumer: "manifest-worker",
    payload: manifestJobPayload,
    jobId: (p) => `${step}-${p.manifestJobId}`,
    jobOptions: { attempts: 5, backoff: { type: "exponential", delay: 2000 }, ...keepFinished },
    // ingestion: jobs still queued/ingesting after the grace; export: completed jobs whose export is not written
    lostWork: { by: "reconciliation" },
  });
}

export const catalog = {
  /**
   * one job per deciding label (a label whose decision made its task `settling`), or per review whose answer
   * made a new revision (`labelId` is then the review's id, `rvw_`): settle the task (ledger record, `settled`,
   * the task.settled or task.revised outbox row). The queue's name is its first meaning, kept once shipped.
   */
  consensus: defineQueue({
    name: "consensus",
    consumer: "consensus-worker",
    payload: z.object({ taskId: z.string().startsWith("tsk_"), labelId: z.string().regex(/^(lab|rvw)_/) }),
    jobId: (p) => `consensus-${p.labelId}`,
    jobOptions: { attempts: 10, backoff: { type: "exponential", delay: 250 }, ...keepFinished },
    // decided tasks still `settling` after the grace (not those waiting for their anchor)
    lostWork: { by: "reconciliation" },
  }),
  /** periodic reconciliation (a BullMQ job scheduler): re-enqueues work Redis may have lost */
  reconcile: scheduledQueue("reconcile"),
  /**
   * periodic (a BullMQ job scheduler, every REFIT_INTERVAL_MS): finds the label spaces whose model is due
   * for a refit (labels newer than their fit) and enqueues a `modelRefit` for each
   */
  refitSweep: scheduledQueue("refit-sweep"),
  /**
   * refit one label space's Dawid-Skene model (contract §quality), read at `version`: one job per
   * space and version (a sweep that sees the same version again adds nothing); the write is a compare-and-set
   * on the version, so a duplicate or concurrent run is dropped. Failed jobs are not kept: the next sweep
   * retries the space.
   */
  modelRefit: defineQueue({
    name: "model-refit",
    consumer: "consensus-worker",
    payload: z.object({ labelSpaceId: z.string().startsWith("lsp_"), version: z.number().int().min(0) }),
    jobId: (p) => `refit-${p.labelSpaceId}-${p.version}`,
    jobOptions: { attempts: 2, backoff: { type: "exponential", delay: 1000 }, removeOnComplete: { count: 1000 }, removeOnFail: true },
    lostWork: { by: "sweep", sweep: "refitSweep" },
  }),
  /**
   * the rest of a delivery's schedule (event × webhook) once its first attempt, made inline by the
   * `routeEvent` job, failed or was deferred: `attempts` is set per enqueue (WEBHOOK_RETRY_MAX minus
   * `after`, the attempts already made), the backoff is the webhook worker's custom strategy (4^(k−1) s). A manual redelivery is a separate job
   * (`redelivery` = its attempt id) with one attempt.
   */
  webhookDelivery: defineQueue({
    name: "webhook-delivery",
    consumer: "webhook-worker",
    payload: z.object({
      deliveryId: z.string().startsWith("dlv_"),
      redelivery: z.string().startsWith("att_").optional(),
      /** attempts made before this job existed (the first is made inline by the routing job) */
      after: z.number().int().min(0).max(100).optional(),
    }),
    jobId: (p) => (p.redelivery ? `redeliver-${p.redelivery}` : `delivery-${p.deliveryId}`),
    jobOptions: { attempts: 3, backoff: { type: "webhook" }, ...keepFinished },
    // deliveries still pending after the delivery grace, requeued with the whole schedule
    lostWork: { by: "reconciliation", attempts: "webhookRetryMax" },
  }),
  /**
   * one job per manifest job: stream the manifest and create its tasks (resumable from
   * `jobs.lines_ingested`). Permanent failures (bad credentials, missing object, malformed line) fail the
   * manifest job without a retry; transient ones are retried.
   */
  manifestIngest: manifestQueue("manifest-ingest", "ingest"),
  /** write a completed job's export to its `output_url` (s3:// or gs://) */
  manifestExport: manifestQueue("manifest-export", "export"),
  /**
   * one job per task created without its item (`tasks.item_pending`: a `text_span` task without `data_text`):
   * fetch the body of its `data_url` as its text and make it claimable. A fetch that fails on every attempt,
   * or any attempt for a reason a retry cannot fix (404, too long, not UTF-8), cancels the task with the reason
   * (docs/decisions/0194). The reconciliation requeues tasks left `item_pending`.
   */
  itemFetch: defineQueue({
    name: "item-fetch",
    consumer: "manifest-worker",
    payload: z.object({ taskId: z.string().startsWith("tsk_") }),
    jobId: (p) => `item-${p.taskId}`,
    jobOptions: { attempts: 5, backoff: { type: "exponential", delay: 2000 }, ...keepFinished },
    // open tasks still `item_pending` after the grace
    lostWork: { by: "reconciliation" },
  }),
  /**
   * one job per event of the event catalog (@labelgate/api EVENT_CATALOG: an outbox row in `events`, whatever its
   * type): route it to the webhooks subscribed to it and make each delivery's first attempt. The queue's name is
   * its first meaning (it carried `task.settled` only), kept once shipped.
   */
  routeEvent: defineQueue({
    name: "task-settled",
    consumer: "webhook-worker",
    payload: z.object({ eventId: z.string().startsWith("evt_") }),
    jobId: (p) => `event-${p.eventId}`,
    jobOptions: { attempts: 10, backoff: { type: "exponential", delay: 500 }, ...keepFinished },
    // events not recorded by the webhook worker after the grace (and those of jobs the pass completes)
    lostWork: { by: "reconciliation" },
  }),
};

export type Catalog = typeof catalog;
export type QueueKey = keyof Catalog;
export type Payload<K extends QueueKey> = z.infer<Catalog[K]["payload"]>;
/** the queues a service consumes */
export type QueuesOf<S extends ServiceName> = { [K in QueueKey]: Catalog[K]["consumer"] extends S ? K : never }[QueueKey];

export interface JobContext {
  jobId: string;
  /** attempts already made before this one (0 on the first run) */
  attemptsMade: number;
  /** total attempts this job may make (its `attempts` option) */
  maxAttempts: number;
}

export type Handler<K extends QueueKey> = (payload: Payload<K>, ctx: JobContext) => Promise<void>;
export type HandlersFor<S extends ServiceName> = { [K in QueuesOf<S>]: Handler<K> };

/** The BullMQ queue name of every catalog key (metrics labels, dashboards). */
export const queueNames = Object.fromEntries(Object.entries(catalog).map(([key, spec]) => [key, spec.name])) as Record<QueueKey, string>;

/** The queues whose lost work the reconciliation's scan finds (`lostWork.by` "reconciliation"). */
export type ReconciledQueue = "consensus" | "webhookDelivery" | "manifestIngest" | "manifestExport" | "itemFetch" | "routeEvent";

/** The queue keys whose `lostWork` is found by the reconciliation, in catalog order. */
export function reconciledQueueKeys(): ReconciledQueue[] {
  return (Object.keys(catalog) as QueueKey[]).filter((key) => catalog[key].lostWork.by === "reconciliation") as ReconciledQueue[];
}

/** The queue keys a service consumes, in catalog order; every queue when `service` is undefined. */
export function queueKeysOf(service?: ServiceName): QueueKey[] {
  return (Object.keys(catalog) as QueueKey[]).filter((key) => service === undefined || catalog[key].consumer === service);
}
