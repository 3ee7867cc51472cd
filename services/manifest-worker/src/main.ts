/** Entry point of a manifest-worker replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { manifestWorkerEnv, parseEnv, requireDistributed, requireEncryptionKey } from "@labelgate/config";
import { createLogger, onShutdown, parseEncryptionKey, SecretBox } from "@labelgate/core";
import { createDb } from "@labelgate/store";
import { instrumentHandlers, shutDownWorker, startWorkerOps } from "@labelgate/metrics";
import { QueueClient, queueKeysOf, queueNames, startWorkers } from "@labelgate/queue";
import { manifestHandlers } from "./index";

async function main(): Promise<void> {
  const env = parseEnv(manifestWorkerEnv, process.env);
  const { databaseUrl, redisUrl } = requireDistributed(env);
  const logger = createLogger("manifest-worker", env.LOG_LEVEL);
  const secretBox = new SecretBox(parseEncryptionKey(requireEncryptionKey(env)));
  const db = createDb({
    url: databaseUrl,
    poolMax: env.DB_POOL_MAX,
    onPoolError: (err) => logger.warn({ err }, "idle database connection failed"),
  });
  const backend = { kind: "redis", url: redisUrl, prefix: env.QUEUE_PREFIX } as const;
  const queue = new QueueClient(backend);
  const { metrics, ops } = await startWorkerOps({
    service: "manifest-worker",
    port: env.METRICS_PORT,
    logger,
    queues: { keys: queueKeysOf("manifest-worker"), names: queueNames, counts: (key) => queue.counts(key) },
    ready: { database: () => db.prisma.$queryRaw`SELECT 1`.then(() => true), queue: () => queue.ping() },
  });
  const storage = { allowPrivateUrls: env.ALLOW_PRIVATE_URLS, gcsApiEndpoint: env.GCS_API_ENDPOINT };
  const handlers = manifestHandlers({ prisma: db.prisma, queue, secretBox, logger, storage });
  const workers = startWorkers(backend, instrumentHandlers(metrics, handlers, queueNames), {
    concurrency: { manifestIngest: env.MANIFEST_CONCURRENCY, manifestExport: env.MANIFEST_CONCURRENCY },
    onFailed: (q, jobId, err) => logger.error({ err, queue: q, job_id: jobId }, "job failed"),
    lockDurationMs: env.QUEUE_LOCK_DURATION_MS,
  });
  logger.info({ concurrency: env.MANIFEST_CONCURRENCY, metrics_port: ops.port }, "manifest-worker started");
  onShutdown(
    logger,
    () =>
      shutDownWorker({
        logger,
        ops,
        timeoutMs: env.SHUTDOWN_TIMEOUT_MS,
        closeWorkers: (budgetMs) => workers.closeWithin(budgetMs),
        returnedMessage:
          "manifest jobs still running at the shutdown bound returned to the queue (an ingestion resumes from jobs.lines_ingested)",
        closeQueue: async () => {
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
