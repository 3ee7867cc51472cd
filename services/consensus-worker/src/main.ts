/** Entry point of a consensus-worker replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { consensusWorkerEnv, parseEnv, requireDistributed } from "@labelgate/config";
import { createLogger, onShutdown } from "@labelgate/core";
import { createDb } from "@labelgate/store";
import { instrumentHandlers, shutDownWorker, startWorkerOps } from "@labelgate/metrics";
import { QueueClient, queueKeysOf, queueNames, startWorkers } from "@labelgate/queue";
import { consensusHandlers } from "./index";

async function main(): Promise<void> {
  const env = parseEnv(consensusWorkerEnv, process.env);
  const { databaseUrl, redisUrl } = requireDistributed(env);
  const logger = createLogger("consensus-worker", env.LOG_LEVEL);
  const db = createDb({
    url: databaseUrl,
    poolMax: env.DB_POOL_MAX,
    onPoolError: (err) => logger.warn({ err }, "idle database connection failed"),
  });
  const backend = { kind: "redis", url: redisUrl, prefix: env.QUEUE_PREFIX } as const;
  const queue = new QueueClient(backend);
  const { metrics, ops } = await startWorkerOps({
    service: "consensus-worker",
    port: env.METRICS_PORT,
    logger,
    queues: { keys: queueKeysOf("consensus-worker"), names: queueNames, counts: (key) => queue.counts(key) },
    ready: { database: () => db.prisma.$queryRaw`SELECT 1`.then(() => true), queue: () => queue.ping() },
  });
  const prior = { correct: env.LABELER_PRIOR_CORRECT, wrong: env.LABELER_PRIOR_WRONG };
  const handlers = consensusHandlers({
    prisma: db.prisma,
    pool: db.pool,
    queue,
    logger,
    prior,
    metrics,
    reconcileGraceMs: env.RECONCILE_GRACE_MS,
    webhookRetryMax: env.WEBHOOK_RETRY_MAX,
  });
  const workers = startWorkers(backend, instrumentHandlers(metrics, handlers, queueNames), {
    concurrency: { consensus: env.CONSENSUS_CONCURRENCY, reconcile: 1 },
    onFailed: (q, jobId, err) => logger.error({ err, queue: q, job_id: jobId }, "job failed"),
    lockDurationMs: env.QUEUE_LOCK_DURATION_MS,
  });
  await queue.schedule("reconcile", env.RECONCILE_INTERVAL_MS, {});
  // A Redis restarted without its data has lost the scheduler, and with it all reconciliation: re-register it.
  const stopScheduling = queue.keepScheduled("reconcile", env.RECONCILE_INTERVAL_MS, {}, (err) =>
    logger.warn({ err }, "reconcile scheduler check failed"),
  );
  logger.info({ concurrency: env.CONSENSUS_CONCURRENCY, metrics_port: ops.port }, "consensus-worker started");
  onShutdown(
    logger,
    () =>
      shutDownWorker({
        logger,
        ops,
        timeoutMs: env.SHUTDOWN_TIMEOUT_MS,
        closeWorkers: (budgetMs) => workers.closeWithin(budgetMs),
        returnedMessage: "jobs still running at the shutdown bound returned to the queue",
        closeQueue: async () => {
          stopScheduling();
          await queue.close();
        },
        closeDatabase: () => db.close(),
      }),
    env.SHUTDOWN_TIMEOUT_MS,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
