/** Entry point of a webhook-worker replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { parseEnv, requireDistributed, requireEncryptionKey, webhookWorkerEnv } from "@labelgate/config";
import { createLogger, drainBudgetMs, onShutdown, parseEncryptionKey, SecretBox, settleWithin } from "@labelgate/core";
import { createDb } from "@labelgate/db";
import { createMetrics, depthSources, instrumentHandlers, startOpsServer } from "@labelgate/metrics";
import { QueueClient, queueKeysOf, queueNames, startWorkers } from "@labelgate/queue";
import { Agent } from "undici";
import { webhookHandlers, webhookJobBackoffMs } from "./index";

async function main(): Promise<void> {
  const env = parseEnv(webhookWorkerEnv, process.env);
  const { databaseUrl, redisUrl } = requireDistributed(env);
  const logger = createLogger("webhook-worker", env.LOG_LEVEL);
  const db = createDb({ url: databaseUrl, poolMax: env.DB_POOL_MAX });
  const secretBox = new SecretBox(parseEncryptionKey(requireEncryptionKey(env)));
  const backend = { kind: "redis", url: redisUrl, prefix: env.QUEUE_PREFIX } as const;
  const queue = new QueueClient(backend);
  const metrics = createMetrics({
    service: "webhook-worker",
    onQueueDepthError: (q, err) => logger.warn({ err, queue: q }, "queue depth unavailable"),
  });
  metrics.trackQueueDepth(depthSources(queueKeysOf("webhook-worker"), queueNames, (key) => queue.counts(key)));
  const ops = await startOpsServer({
    port: env.METRICS_PORT,
    registry: metrics.registry,
    checks: { database: () => db.prisma.$queryRaw`SELECT 1`.then(() => true), queue: () => queue.ping() },
  });
  // One connection pool for all receivers; a slow receiver only holds its own sockets.
  const dispatcher = new Agent({ connections: 64, keepAliveTimeout: 10_000, connect: { timeout: env.WEBHOOK_TIMEOUT_MS } });
  const handlers = webhookHandlers({
    prisma: db.prisma,
    queue,
    logger,
    secretBox,
    dispatcher,
    allowPrivateUrls: env.ALLOW_PRIVATE_URLS,
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    webhookRetryMax: env.WEBHOOK_RETRY_MAX,
    maxInFlightPerWebhook: env.WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK,
    metrics,
  });
  const workers = startWorkers(backend, instrumentHandlers(metrics, handlers, queueNames), {
    concurrency: { taskSettled: env.WEBHOOK_CONCURRENCY, webhookDelivery: env.WEBHOOK_CONCURRENCY },
    backoffStrategy: { webhookDelivery: webhookJobBackoffMs },
    onFailed: (q, jobId, err) => logger.error({ err, queue: q, job_id: jobId }, "job failed"),
  });
  logger.info({ metrics_port: ops.port }, "webhook-worker started");
  onShutdown(
    logger,
    async () => {
      const deadline = Date.now() + env.SHUTDOWN_TIMEOUT_MS;
      ops.setShuttingDown();
      const { returned } = await workers.closeWithin(drainBudgetMs(env.SHUTDOWN_TIMEOUT_MS));
      if (returned > 0) logger.warn({ returned }, "deliveries still running at the shutdown bound returned to the queue");
      await queue.close();
      // returned deliveries may still wait on their receivers: abort their requests rather than wait
      await (returned > 0 ? dispatcher.destroy() : dispatcher.close());
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
