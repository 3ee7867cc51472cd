/** Entry point of a webhook-worker replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { parseEnv, requireDistributed, requireEncryptionKey, webhookWorkerEnv } from "@labelgate/config";
import { createLogger, onShutdown, parseEncryptionKey, SecretBox } from "@labelgate/core";
import { createDb } from "@labelgate/store";
import { instrumentHandlers, shutDownWorker, startWorkerOps } from "@labelgate/metrics";
import { QueueClient, queueKeysOf, queueNames, startWorkers } from "@labelgate/queue";
import { Agent } from "undici";
import { webhookHandlers, webhookJobBackoffMs } from "./index";

async function main(): Promise<void> {
  const env = parseEnv(webhookWorkerEnv, process.env);
  const { databaseUrl, redisUrl } = requireDistributed(env);
  const logger = createLogger("webhook-worker", env.LOG_LEVEL);
  const db = createDb({
    url: databaseUrl,
    poolMax: env.DB_POOL_MAX,
    onPoolError: (err) => logger.warn({ err }, "idle database connection failed"),
  });
  const secretBox = new SecretBox(parseEncryptionKey(requireEncryptionKey(env)));
  const backend = { kind: "redis", url: redisUrl, prefix: env.QUEUE_PREFIX } as const;
  const queue = new QueueClient(backend);
  const { metrics, ops } = await startWorkerOps({
    service: "webhook-worker",
    port: env.METRICS_PORT,
    logger,
    queues: { keys: queueKeysOf("webhook-worker"), names: queueNames, counts: (key) => queue.counts(key) },
    ready: { database: () => db.prisma.$queryRaw`SELECT 1`.then(() => true), queue: () => queue.ping() },
  });
  // One connection pool for all receivers; a slow receiver only holds its own sockets.
  const dispatcher = new Agent({ connections: 64, keepAliveTimeout: 10_000, connect: { timeout: env.WEBHOOK_TIMEOUT_MS } });
  const handlers = webhookHandlers({
    prisma: db.prisma,
    pool: db.pool,
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
    lockDurationMs: env.QUEUE_LOCK_DURATION_MS,
  });
  logger.info({ metrics_port: ops.port }, "webhook-worker started");
  onShutdown(
    logger,
    () =>
      shutDownWorker({
        logger,
        ops,
        timeoutMs: env.SHUTDOWN_TIMEOUT_MS,
        closeWorkers: (budgetMs) => workers.closeWithin(budgetMs),
        returnedMessage: "deliveries still running at the shutdown bound returned to the queue",
        closeQueue: async (returned) => {
          await queue.close();
          // returned deliveries may still wait on their receivers: abort their requests rather than wait
          await (returned > 0 ? dispatcher.destroy() : dispatcher.close());
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
