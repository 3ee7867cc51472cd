/** Entry point of a consensus-worker replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { consensusWorkerEnv, parseEnv, requireDistributed } from "@labelgate/config";
import { createLogger, onShutdown } from "@labelgate/core";
import { createDb } from "@labelgate/db";
import { QueueClient, startWorkers } from "@labelgate/queue";
import { consensusHandlers } from "./index";

async function main(): Promise<void> {
  const env = parseEnv(consensusWorkerEnv, process.env);
  const { databaseUrl, redisUrl } = requireDistributed(env);
  const logger = createLogger("consensus-worker", env.LOG_LEVEL);
  const db = createDb({ url: databaseUrl, poolMax: env.DB_POOL_MAX });
  const backend = { kind: "redis", url: redisUrl, prefix: env.QUEUE_PREFIX } as const;
  const queue = new QueueClient(backend);
  const prior = { correct: env.LABELER_PRIOR_CORRECT, wrong: env.LABELER_PRIOR_WRONG };
  const workers = startWorkers(
    backend,
    consensusHandlers({
      prisma: db.prisma,
      queue,
      logger,
      prior,
      reconcileGraceMs: env.RECONCILE_GRACE_MS,
      webhookRetryMax: env.WEBHOOK_RETRY_MAX,
    }),
    {
      concurrency: { consensus: env.CONSENSUS_CONCURRENCY, reconcile: 1 },
      onFailed: (q, jobId, err) => logger.error({ err, queue: q, job_id: jobId }, "job failed"),
    },
  );
  await queue.schedule("reconcile", env.RECONCILE_INTERVAL_MS, {});
  logger.info({ concurrency: env.CONSENSUS_CONCURRENCY }, "consensus-worker started");
  onShutdown(logger, async () => {
    await workers.close();
    await queue.close();
    await db.close();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
