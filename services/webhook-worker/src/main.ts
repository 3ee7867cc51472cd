/** Entry point of a webhook-worker replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { parseEnv, requireDistributed, webhookWorkerEnv } from "@labelgate/config";
import { createLogger, onShutdown } from "@labelgate/core";
import { createDb } from "@labelgate/db";
import { startWorkers } from "@labelgate/queue";
import { webhookHandlers } from "./index";

async function main(): Promise<void> {
  const env = parseEnv(webhookWorkerEnv, process.env);
  const { databaseUrl, redisUrl } = requireDistributed(env);
  const logger = createLogger("webhook-worker", env.LOG_LEVEL);
  const db = createDb({ url: databaseUrl, poolMax: env.DB_POOL_MAX });
  const workers = startWorkers({ kind: "redis", url: redisUrl, prefix: env.QUEUE_PREFIX }, webhookHandlers({ prisma: db.prisma, logger }), {
    concurrency: { taskSettled: env.WEBHOOK_CONCURRENCY },
    onFailed: (q, jobId, err) => logger.error({ err, queue: q, job_id: jobId }, "job failed"),
  });
  logger.info("webhook-worker started");
  onShutdown(logger, async () => {
    await workers.close();
    await db.close();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
