/** Entry point of a manifest-worker replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { manifestWorkerEnv, parseEnv, requireDistributed, requireEncryptionKey } from "@labelgate/config";
import { createLogger, drainBudgetMs, onShutdown, parseEncryptionKey, SecretBox, settleWithin } from "@labelgate/core";
import { createDb } from "@labelgate/db";
import { createMetrics, depthSources, instrumentHandlers, startOpsServer } from "@labelgate/metrics";
import { QueueClient, queueKeysOf, queueNames, startWorkers } from "@labelgate/queue";
import { manifestHandlers } from "./index";

async function main(): Promise<void> {
  const env = parseEnv(manifestWorkerEnv, process.env);
  const { databaseUrl, redisUrl } = requireDistributed(env);
  const logger = createLogger("manifest-worker", env.LOG_LEVEL);
  const secretBox = new SecretBox(parseEncryptionKey(requireEncryptionKey(env)));
  const db = createDb({ url: databaseUrl, poolMax: env.DB_POOL_MAX });
  const backend = { kind: "redis", url: redisUrl, prefix: env.QUEUE_PREFIX } as const;
  const queue = new QueueClient(backend);
  const metrics = createMetrics({
    service: "manifest-worker",
    onQueueDepthError: (q, err) => logger.warn({ err, queue: q }, "queue depth unavailable"),
  });
  metrics.trackQueueDepth(depthSources(queueKeysOf("manifest-worker"), queueNames, (key) => queue.counts(key)));
  const ops = await startOpsServer({
    port: env.METRICS_PORT,
    registry: metrics.registry,
    checks: { database: () => db.prisma.$queryRaw`SELECT 1`.then(() => true), queue: () => queue.ping() },
  });
  const storage = { allowPrivateUrls: env.ALLOW_PRIVATE_URLS, gcsApiEndpoint: env.GCS_API_ENDPOINT };
  const handlers = manifestHandlers({ prisma: db.prisma, queue, secretBox, logger, storage });
  const workers = startWorkers(backend, instrumentHandlers(metrics, handlers, queueNames), {
    concurrency: { manifestIngest: env.MANIFEST_CONCURRENCY, manifestExport: env.MANIFEST_CONCURRENCY },
    onFailed: (q, jobId, err) => logger.error({ err, queue: q, job_id: jobId }, "job failed"),
  });
  logger.info({ concurrency: env.MANIFEST_CONCURRENCY, metrics_port: ops.port }, "manifest-worker started");
  onShutdown(
    logger,
    async () => {
      const deadline = Date.now() + env.SHUTDOWN_TIMEOUT_MS;
      ops.setShuttingDown();
      // an ingestion past the bound is returned to the queue and resumes from jobs.lines_ingested
      const { returned } = await workers.closeWithin(drainBudgetMs(env.SHUTDOWN_TIMEOUT_MS));
      if (returned > 0) logger.warn({ returned }, "manifest jobs still running at the shutdown bound returned to the queue");
      await queue.close();
      if (!(await settleWithin(db.close(), deadline - Date.now() - 500))) logger.warn("database pool closed with queries in flight");
      await ops.close();
    },
    env.SHUTDOWN_TIMEOUT_MS,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
