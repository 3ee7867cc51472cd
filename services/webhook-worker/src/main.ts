/** Entry point of a webhook-worker replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { parseEnv, requireDistributed, requireEncryptionKey, webhookWorkerEnv } from "@labelgate/config";
import { createLogger, onShutdown, parseEncryptionKey, SecretBox } from "@labelgate/core";
import { createDb } from "@labelgate/db";
import { QueueClient, startWorkers } from "@labelgate/queue";
import { Agent } from "undici";
import { webhookBackoffMs, webhookHandlers } from "./index";

async function main(): Promise<void> {
  const env = parseEnv(webhookWorkerEnv, process.env);
  const { databaseUrl, redisUrl } = requireDistributed(env);
  const logger = createLogger("webhook-worker", env.LOG_LEVEL);
  const db = createDb({ url: databaseUrl, poolMax: env.DB_POOL_MAX });
  const secretBox = new SecretBox(parseEncryptionKey(requireEncryptionKey(env)));
  const backend = { kind: "redis", url: redisUrl, prefix: env.QUEUE_PREFIX } as const;
  const queue = new QueueClient(backend);
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
  });
  const workers = startWorkers(backend, handlers, {
    concurrency: { taskSettled: 64, webhookDelivery: env.WEBHOOK_CONCURRENCY },
    backoffStrategy: { webhookDelivery: webhookBackoffMs },
    onFailed: (q, jobId, err) => logger.error({ err, queue: q, job_id: jobId }, "job failed"),
  });
  logger.info("webhook-worker started");
  onShutdown(logger, async () => {
    await workers.close();
    await queue.close();
    await dispatcher.close();
    await db.close();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
