/** Entry point of a gateway replica (distributed mode: DATABASE_URL and REDIS_URL set). */
import { gatewayEnv, parseEnv, requireDistributed, requireEncryptionKey } from "@labelgate/config";
import { closeHttpServer, createLogger, drainBudgetMs, onShutdown, parseEncryptionKey, SecretBox, settleWithin } from "@labelgate/core";
import { createDb } from "@labelgate/store";
import { createMetrics, depthSources, startOpsServer } from "@labelgate/metrics";
import { QueueClient, queueKeysOf, queueNames } from "@labelgate/queue";
import { createApp } from "./app";
import { gatewayConfigFromEnv } from "./config";
import { createRateLimitRedis } from "./ratelimit";
import { listenGateway } from "./server";

async function main(): Promise<void> {
  const env = parseEnv(gatewayEnv, process.env);
  const { databaseUrl, redisUrl } = requireDistributed(env);
  const secretBox = new SecretBox(parseEncryptionKey(requireEncryptionKey(env)));
  const logger = createLogger("gateway", env.LOG_LEVEL);
  if (!env.ADMIN_TOKEN) logger.warn("ADMIN_TOKEN is not set: admin routes answer 401");
  const db = createDb({
    url: databaseUrl,
    poolMax: env.DB_POOL_MAX,
    onPoolError: (err) => logger.warn({ err }, "idle database connection failed"),
  });
  const queue = new QueueClient({ kind: "redis", url: redisUrl, prefix: env.QUEUE_PREFIX });
  const metrics = createMetrics({
    service: "gateway",
    onQueueDepthError: (q, err) => logger.warn({ err, queue: q }, "queue depth unavailable"),
  });
  // every queue: the gateway produces into all of them
  metrics.trackQueueDepth(depthSources(queueKeysOf(), queueNames, (key) => queue.counts(key)));
  const ops = await startOpsServer({
    port: env.METRICS_PORT,
    registry: metrics.registry,
    checks: { database: () => db.prisma.$queryRaw`SELECT 1`.then(() => true), queue: () => queue.ping() },
  });
  // Rate-limit counters shared by every replica; commands fail fast so the in-memory insurance limiter takes over.
  const rateLimitRedis = createRateLimitRedis(redisUrl, (err) => logger.warn({ err }, "rate-limit Redis unavailable"));
  const app = createApp({
    prisma: db.prisma,
    pool: db.pool,
    queue,
    logger,
    secretBox,
    rateLimitRedis,
    metrics,
    config: gatewayConfigFromEnv(env, env.ADMIN_TOKEN),
  });
  const server = await listenGateway(app, env.PORT, env.HOST, logger);
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : env.PORT;
  logger.info({ port, metrics_port: ops.port }, "gateway listening");
  onShutdown(
    logger,
    async () => {
      const deadline = Date.now() + env.SHUTDOWN_TIMEOUT_MS;
      ops.setShuttingDown();
      // no new connections; in-flight requests are answered, then their keep-alive connections closed
      await closeHttpServer(server, drainBudgetMs(env.SHUTDOWN_TIMEOUT_MS));
      await queue.close();
      rateLimitRedis.disconnect();
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
