/**
 * What every worker process wires the same way around its handlers: its metrics (queue depth of the queues
 * it consumes, read at scrape time) and ops server (`/metrics`, `/healthz`, `/readyz` over Postgres and the
 * queue), and the bounded graceful shutdown that ends it (DESIGN §1, README "Operations").
 */
import { drainBudgetMs, settleWithin } from "@labelgate/core";
import { createMetrics, depthSources, type Metrics } from "./metrics";
import { type OpsServer, startOpsServer } from "./ops-server";

/** The logger calls used here (a pino logger fits). */
export interface WorkerLogger {
  warn(obj: object, msg: string): void;
}

export interface WorkerOpsOptions<K extends string> {
  /** `service` label of every series */
  service: string;
  /** METRICS_PORT (0 = ephemeral) */
  port: number;
  logger: WorkerLogger;
  /** the queues this process consumes, their BullMQ names, and how to count their jobs */
  queues: { keys: readonly K[]; names: Record<K, string>; counts: (key: K) => Promise<Record<string, number>> };
  /** readiness: Postgres answers `SELECT 1`, the queue backend answers a ping */
  ready: { database: () => Promise<boolean>; queue: () => Promise<boolean> };
}

/** Creates the process's metrics registry and starts its ops server. @throws when the port cannot be bound. */
export async function startWorkerOps<K extends string>(options: WorkerOpsOptions<K>): Promise<{ metrics: Metrics; ops: OpsServer }> {
  const metrics = createMetrics({
    service: options.service,
    onQueueDepthError: (queue, err) => options.logger.warn({ err, queue }, "queue depth unavailable"),
  });
  metrics.trackQueueDepth(depthSources(options.queues.keys, options.queues.names, options.queues.counts));
  const ops = await startOpsServer({ port: options.port, registry: metrics.registry, checks: options.ready });
  return { metrics, ops };
}

export interface WorkerShutdown {
  logger: WorkerLogger;
  ops: OpsServer;
  /** SHUTDOWN_TIMEOUT_MS: the whole shutdown's bound */
  timeoutMs: number;
  /** stops taking jobs and waits for the active ones up to `budgetMs`; returns how many went back to the queue */
  closeWorkers: (budgetMs: number) => Promise<{ returned: number }>;
  /** what a returned job means for this worker (logged when some were returned) */
  returnedMessage: string;
  /** closes the queue client, then anything else that waits on it (e.g. an HTTP pool; `returned` > 0 means aborting) */
  closeQueue: (returned: number) => Promise<void>;
  /** closes the database pool (not awaited past the bound: a returned job may still hold a connection) */
  closeDatabase: () => Promise<void>;
}

/**
 * The shutdown of a worker process, within `timeoutMs`: readiness 503 at once; workers drain until the budget
 * of `drainBudgetMs` (jobs still active then go back to the queue: their handlers are idempotent); the queue
 * client and the database pool close (the pool waited for until 500 ms before the bound); the ops server last.
 */
export async function shutDownWorker(s: WorkerShutdown): Promise<void> {
  const deadline = Date.now() + s.timeoutMs;
  s.ops.setShuttingDown();
  const { returned } = await s.closeWorkers(drainBudgetMs(s.timeoutMs));
  if (returned > 0) s.logger.warn({ returned }, s.returnedMessage);
  await s.closeQueue(returned);
  if (!(await settleWithin(s.closeDatabase(), deadline - Date.now() - 500)))
    s.logger.warn({}, "database pool closed with queries in flight");
  await s.ops.close();
}
