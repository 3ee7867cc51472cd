/** Entry point of a manifest-worker replica. The service is a shell in this release (no queue yet). */
import { manifestWorkerEnv, parseEnv, requireDistributed } from "@labelgate/config";
import { createLogger, onShutdown } from "@labelgate/core";
import { startWorkers } from "@labelgate/queue";
import { manifestHandlers } from "./index";

async function main(): Promise<void> {
  const env = parseEnv(manifestWorkerEnv, process.env);
  const { redisUrl } = requireDistributed(env);
  const logger = createLogger("manifest-worker", env.LOG_LEVEL);
  const workers = startWorkers({ kind: "redis", url: redisUrl, prefix: env.QUEUE_PREFIX }, manifestHandlers());
  logger.info("manifest-worker started (no queues yet)");
  onShutdown(logger, () => workers.close());
  // Keep the process alive until a signal arrives.
  setInterval(() => undefined, 1 << 30);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
