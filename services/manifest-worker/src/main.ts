/** Entry point of a manifest-worker replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { manifestWorkerEnv, parseEnv, requireDistributed, requireEncryptionKey } from "@labelgate/config";
import { createLogger, onShutdown, parseEncryptionKey, SecretBox } from "@labelgate/core";
import { createDb } from "@labelgate/db";
import { QueueClient, startWorkers } from "@labelgate/queue";
import { manifestHandlers } from "./index";

async function main(): Promise<void> {
  const env = parseEnv(manifestWorkerEnv, process.env);
  const { databaseUrl, redisUrl } = requireDistributed(env);
  const logger = createLogger("manifest-worker", env.LOG_LEVEL);
  const secretBox = new SecretBox(parseEncryptionKey(requireEncryptionKey(env)));
  const db = createDb({ url: databaseUrl, poolMax: env.DB_POOL_MAX });
  const backend = { kind: "redis", url: redisUrl, prefix: env.QUEUE_PREFIX } as const;
  const queue = new QueueClient(backend);
  const storage = { allowPrivateUrls: env.ALLOW_PRIVATE_URLS, gcsApiEndpoint: env.GCS_API_ENDPOINT };
  const workers = startWorkers(backend, manifestHandlers({ prisma: db.prisma, queue, secretBox, logger, storage }), {
    concurrency: { manifestIngest: env.MANIFEST_CONCURRENCY, manifestExport: env.MANIFEST_CONCURRENCY },
    onFailed: (q, jobId, err) => logger.error({ err, queue: q, job_id: jobId }, "job failed"),
  });
  logger.info({ concurrency: env.MANIFEST_CONCURRENCY }, "manifest-worker started");
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
