/** Entry point of a gateway replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { gatewayEnv, parseEnv, requireDistributed, requireEncryptionKey } from "@labelgate/config";
import { createLogger, onShutdown, parseEncryptionKey, SecretBox } from "@labelgate/core";
import { createDb } from "@labelgate/db";
import { QueueClient } from "@labelgate/queue";
import { createApp } from "./app";
import { gatewayConfigFromEnv } from "./config";
import { createRateLimitRedis } from "./ratelimit";

async function main(): Promise<void> {
  const env = parseEnv(gatewayEnv, process.env);
  const { databaseUrl, redisUrl } = requireDistributed(env);
  const secretBox = new SecretBox(parseEncryptionKey(requireEncryptionKey(env)));
  const logger = createLogger("gateway", env.LOG_LEVEL);
  if (!env.ADMIN_TOKEN) logger.warn("ADMIN_TOKEN is not set: admin routes answer 401");
  const db = createDb({ url: databaseUrl, poolMax: env.DB_POOL_MAX });
  const queue = new QueueClient({ kind: "redis", url: redisUrl, prefix: env.QUEUE_PREFIX });
  // Rate-limit counters shared by every replica; commands fail fast so the in-memory insurance limiter takes over.
  const rateLimitRedis = createRateLimitRedis(redisUrl, (err) => logger.warn({ err }, "rate-limit Redis unavailable"));
  const app = createApp({
    prisma: db.prisma,
    queue,
    logger,
    secretBox,
    rateLimitRedis,
    config: gatewayConfigFromEnv(env, env.ADMIN_TOKEN),
  });
  const server = app.listen(env.PORT, env.HOST, () => logger.info({ port: env.PORT }, "gateway listening"));
  onShutdown(logger, async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await queue.close();
    rateLimitRedis.disconnect();
    await db.close();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
