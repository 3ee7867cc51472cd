/**
 * The Prometheus metrics of a labelgate process, on one registry per process (never prom-client's global
 * default registry): services create it once in `src/main.ts` and pass it to whatever records into it.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** Job states reported by `labelgate_queue_jobs` (BullMQ job counts). */
export const QUEUE_DEPTH_STATES = ["waiting", "active", "delayed", "failed"] as const;

/** Where the queue depth of one queue is read at scrape time: `counts` are BullMQ job counts by state. */
export interface QueueDepthSource {
  /** queue name as in the catalog (label `queue`) */
  name: string;
  counts(): Promise<Record<string, number>>;
}

/** Outcomes of a webhook delivery job (`labelgate_webhook_deliveries_total{outcome}`). */
export type DeliveryOutcome = "delivered" | "retried" | "failed" | "skipped" | "deferred" | "error";

export interface Metrics {
  registry: Registry;
  /** gateway: requests by method, route pattern and status */
  httpRequests: Counter<"method" | "route" | "status">;
  /** gateway: request latency, seconds */
  httpDuration: Histogram<"method" | "route" | "status">;
  /** handler run time per queue and outcome (completed, failed, deferred), seconds */
  jobDuration: Histogram<"queue" | "outcome">;
  /** webhook worker: delivery jobs by outcome */
  deliveries: Counter<"outcome">;
  /** consensus worker: tasks settled by this process */
  tasksSettled: Counter;
  /** consensus worker: deciding label recorded → task settled, seconds */
  consensusLag: Histogram;
  /** consensus worker, LEDGER=evm: anchor transactions signed and broadcast (re-sends included), by kind (first, resend, resign) */
  anchorsSent: Counter<"kind">;
  /** consensus worker, LEDGER=evm: anchors confirmed (EVM_CONFIRMATIONS reached) */
  anchorsConfirmed: Counter;
  /** consensus worker, LEDGER=evm: confirmed anchors whose block left the canonical chain (re-sent) */
  anchorsReorged: Counter;
  /** consensus worker, LEDGER=evm: ledger records per anchor */
  anchorLeaves: Histogram;
  /** consensus worker, LEDGER=evm: gas used per anchor transaction */
  anchorGas: Histogram;
  /** consensus worker, LEDGER=evm: ledger record appended (settling) → anchor confirmed (settled), seconds */
  settlementLag: Histogram;
  /** consensus worker, LEDGER=evm: 1 while this process is the anchorer's leader, else 0 */
  anchorerLeader: Gauge;
  /** LEDGER=evm processes that settle: 1 while the chain's RPC answers (the readiness probe), else 0 */
  chainAvailable: Gauge;
  /** consensus worker, LEDGER=evm: seconds the anchorer's leader has failed to reach the chain (0 while it does) */
  anchoringStalled: Gauge;
  /** consensus worker: label space refits by outcome (written, stale: another refit wrote first, empty) */
  modelRefits: Counter<"outcome">;
  /** consensus worker: time of a refit's fit (EM and calibration, in the fit thread), seconds */
  modelRefitDuration: Histogram;
  /** queue depth reads that failed (the backend did not answer), by queue */
  queueDepthErrors: Counter<"queue">;
  /**
   * the settings of this process's workers, by queue: `lock_duration_seconds` (QUEUE_LOCK_DURATION_MS, also
   * the stalled-job interval) and `concurrency` (jobs at once), set when the runtime starts them
   */
  workerSettings: Gauge<"queue" | "setting">;
  /**
   * Reports the depth of these queues (`labelgate_queue_jobs{queue,state}`), read from the backend at each
   * scrape. Call once per process; a later call replaces the sources.
   */
  trackQueueDepth(sources: QueueDepthSource[]): void;
  /**
   * Reports the `follow_up` rows due and not yet relayed (`labelgate_follow_up_backlog_rows`) and how long the
   * oldest has waited (`labelgate_follow_up_backlog_age_seconds`), read at each scrape (docs/decisions/0300),
   * and the rows the relay parked (`labelgate_follow_up_parked_rows`: work that will not run until an operator
   * retries it, docs/decisions/0331). A failed read leaves the series absent. Call once per process; a later
   * call replaces the source.
   */
  trackFollowUpBacklog(source: () => Promise<FollowUpBacklog>): void;
}

/** The follow_up table's state at a scrape: rows due, the oldest's wait (s), rows parked. */
export interface FollowUpBacklog {
  due: number;
  oldestSeconds: number;
  parked: number;
}

export interface MetricsOptions {
  /** `service` label on every series (gateway, consensus-worker, ... or labelgate in standalone) */
  service: string;
  /** process metrics (CPU, memory, event loop lag, GC), default true */
  defaultMetrics?: boolean;
  /** told about each failed queue depth read (e.g. to log it); the failure is also counted */
  onQueueDepthError?: (queue: string, err: unknown) => void;
}

/** Creates the registry of one process and every labelgate metric on it. */
export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: options.service });
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: "labelgate_" });

  const queueDepthErrors = new Counter({
    name: "labelgate_queue_depth_errors_total",
    help: "Queue depth reads that failed at scrape time (backend unavailable or too slow)",
    labelNames: ["queue"] as const,
    registers: [registry],
  });
  let sources: QueueDepthSource[] = [];
  new Gauge({
    name: "labelgate_queue_jobs",
    help: "Jobs in a queue by state (waiting, active, delayed, failed), read from the queue backend at scrape time",
    labelNames: ["queue", "state"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      await Promise.all(
        sources.map(async (source) => {
          try {
            const counts = await source.counts();
            for (const state of QUEUE_DEPTH_STATES) this.set({ queue: source.name, state }, counts[state] ?? 0);
          } catch (err) {
            // The scrape still answers; the failure is counted per queue (and the series are absent).
            queueDepthErrors.inc({ queue: source.name });
            options.onQueueDepthError?.(source.name, err);
          }
        }),
      );
    },
  });

  let backlogSource: (() => Promise<FollowUpBacklog>) | undefined;
  let backlogRead: Promise<FollowUpBacklog | undefined> | undefined;
  // one read per scrape for both gauges
  const readBacklog = () => {
    backlogRead ??= (backlogSource?.() ?? Promise.resolve(undefined))
      .catch(() => undefined)
      .finally(() => setImmediate(() => (backlogRead = undefined)));
    return backlogRead;
  };
  // one gauge per field of the follow_up table's state, all from one read per scrape
  const backlogGauges: [string, string, keyof FollowUpBacklog][] = [
    [
      "labelgate_follow_up_backlog_rows",
      "follow_up rows due and not yet relayed to their queue (docs/decisions/0300), read at scrape time",
      "due",
    ],
    [
      "labelgate_follow_up_backlog_age_seconds",
      "How long the oldest follow_up row due has waited for its queue, seconds (0 when none waits)",
      "oldestSeconds",
    ],
    [
      "labelgate_follow_up_parked_rows",
      "follow_up rows the relay gave up on (their work cannot be enqueued; docs/decisions/0331): not run until retried",
      "parked",
    ],
  ];
  for (const [name, help, field] of backlogGauges)
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.reset();
        const backlog = await readBacklog();
        if (backlog) this.set(backlog[field]);
      },
    });

  return {
    registry,
    httpRequests: new Counter({
      name: "labelgate_http_requests_total",
      help: "HTTP requests by method, route pattern (never the raw URL) and status",
      labelNames: ["method", "route", "status"] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: "labelgate_http_request_duration_seconds",
      help: "HTTP request latency by method, route pattern and status, seconds",
      labelNames: ["method", "route", "status"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    jobDuration: new Histogram({
      name: "labelgate_job_duration_seconds",
      help: "Job handler run time by queue and outcome (completed, failed, deferred), seconds",
      labelNames: ["queue", "outcome"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    deliveries: new Counter({
      name: "labelgate_webhook_deliveries_total",
      help: "Webhook delivery jobs by outcome: delivered, retried (attempt failed, another scheduled), failed (no attempt left), skipped, deferred (in-flight cap), error",
      labelNames: ["outcome"] as const,
      registers: [registry],
    }),
    tasksSettled: new Counter({
      name: "labelgate_tasks_settled_total",
      help: "Tasks settled (consensus reached or max labels collected) by this process",
      registers: [registry],
    }),
    consensusLag: new Histogram({
      name: "labelgate_consensus_lag_seconds",
      help: "Time from the deciding label being recorded to the task being settled, seconds",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    anchorsSent: new Counter({
      name: "labelgate_anchors_sent_total",
      help: "Anchor transactions signed and broadcast by this process, by kind: first, resend (same transaction again), resign (a new transaction for the same root)",
      labelNames: ["kind"],
      registers: [registry],
    }),
    anchorsConfirmed: new Counter({
      name: "labelgate_anchors_confirmed_total",
      help: "Anchors confirmed with EVM_CONFIRMATIONS by this process",
      registers: [registry],
    }),
    anchorsReorged: new Counter({
      name: "labelgate_anchors_reorged_total",
      help: "Confirmed anchors whose block left the canonical chain (sent again)",
      registers: [registry],
    }),
    anchorLeaves: new Histogram({
      name: "labelgate_anchor_leaves",
      help: "Ledger records (Merkle leaves) per anchor",
      buckets: [1, 4, 16, 64, 128, 256, 512, 1024, 4096],
      registers: [registry],
    }),
    anchorGas: new Histogram({
      name: "labelgate_anchor_gas",
      help: "Gas used per anchor transaction",
      buckets: [25_000, 30_000, 35_000, 40_000, 50_000, 75_000, 100_000],
      registers: [registry],
    }),
    settlementLag: new Histogram({
      name: "labelgate_settlement_lag_seconds",
      help: "LEDGER=evm: time from a ledger record being appended (task settling) to its anchor being confirmed (task settled), seconds",
      buckets: [0.1, 0.25, 0.5, 1, 2, 2.5, 3, 4, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    anchorerLeader: new Gauge({
      name: "labelgate_anchorer_leader",
      help: "1 while this process holds the anchorer's leadership lock, else 0",
      registers: [registry],
    }),
    chainAvailable: new Gauge({
      name: "labelgate_chain_available",
      help: "LEDGER=evm: 1 while the chain's JSON-RPC answers the readiness probe, else 0",
      registers: [registry],
    }),
    anchoringStalled: new Gauge({
      name: "labelgate_anchoring_stalled_seconds",
      help: "LEDGER=evm: seconds the anchorer has failed to reach the chain (0 while it reaches it); settled tasks wait meanwhile",
      registers: [registry],
    }),
    modelRefits: new Counter({
      name: "labelgate_model_refits_total",
      help: "Label space model refits by outcome: written, stale (another refit of the same version wrote first), empty (no label)",
      labelNames: ["outcome"] as const,
      registers: [registry],
    }),
    modelRefitDuration: new Histogram({
      name: "labelgate_model_refit_seconds",
      help: "Time of a label space refit's fit (Dawid-Skene EM and calibration, in the fit thread), seconds",
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers: [registry],
    }),
    queueDepthErrors,
    workerSettings: new Gauge({
      name: "labelgate_worker_setting",
      help: "Settings of this process's queue workers by queue: lock_duration_seconds (also the stalled-job interval) and concurrency",
      labelNames: ["queue", "setting"] as const,
      registers: [registry],
    }),
    trackQueueDepth(next) {
      sources = next;
    },
    trackFollowUpBacklog(source) {
      backlogSource = source;
    },
  };
}

type AnyHandler = (...args: never[]) => Promise<void>;

/**
 * Wraps queue handlers (a `HandlersFor<...>` map) so each run is timed into `labelgate_job_duration_seconds`
 * with `queue` = `names[key]` (the catalog's queue name) and `outcome` completed, failed or deferred
 * (a `DeferJob`, recognised by its name). Errors are rethrown unchanged.
 */
export function instrumentHandlers<H extends { [K in keyof H]: AnyHandler }>(
  metrics: Pick<Metrics, "jobDuration"> | undefined,
  handlers: H,
  names: { [K in keyof H]?: string } = {},
): H {
  if (!metrics) return handlers;
  const wrapped: Record<string, AnyHandler> = {};
  for (const [key, handler] of Object.entries(handlers) as [keyof H & string, AnyHandler][]) {
    const queue = names[key] ?? key;
    wrapped[key] = (async (...args: never[]) => {
      const end = metrics.jobDuration.startTimer({ queue });
      try {
        await handler(...args);
        end({ outcome: "completed" });
      } catch (err) {
        end({ outcome: err instanceof Error && err.name === "DeferJob" ? "deferred" : "failed" });
        throw err;
      }
    }) as AnyHandler;
  }
  return wrapped as H;
}

/** Queue depth sources for `trackQueueDepth`: one per key, named `names[key]`, read with `counts(key)`. */
export function depthSources<K extends string>(
  keys: readonly K[],
  names: Record<K, string>,
  counts: (key: K) => Promise<Record<string, number>>,
): QueueDepthSource[] {
  return keys.map((key) => ({ name: names[key], counts: () => counts(key) }));
}
