/**
 * @labelgate/runtime: the one wiring of every labelgate process. `createRuntime(env, roles, options?)`
 * parses the environment of the roles once (zod, @labelgate/config), then builds, once: the logger, the
 * store (pg pool + Prisma), the queue engine (Redis, or BullMQ's Postgres backend in standalone), the
 * metrics registry and the ops server (/metrics, /healthz, /readyz); then starts each role (the gateway's
 * HTTP server, each worker's BullMQ workers) through the role's module, and gives one bounded shutdown.
 *
 * Every entry point calls it: each service's `main.ts` with its own role, `pnpm start` (scripts/
 * standalone.ts) with all four, the test harness (test/system.ts) with the roles a test needs. So the
 * standalone process runs exactly what the distributed services run (test/runtime.test.ts).
 */
import { assertSupportedNode, ConfigError, type EnvOf, envSchemaFor, parseEnv, type Role } from "@labelgate/config";
import { createLogger, drainBudgetMs, type Logger, onShutdown, parseEncryptionKey, SecretBox, settleWithin } from "@labelgate/core";
import { createMetrics, depthSources, instrumentHandlers, type Metrics, type OpsServer, startOpsServer } from "@labelgate/metrics";
import {
  FollowUpRelay,
  type HandlersFor,
  type QueueBackendConfig,
  QueueClient,
  type QueueKey,
  queueKeysOf,
  queueNames,
  type RunningWorkers,
  type ServiceName,
  startWorkers,
  type WorkerOptions,
} from "@labelgate/queue";
import { createStore, type Store } from "@labelgate/store";
import { type ChainProbe, startChainProbe } from "./chain-probe";
import { type PoolPlan, planPools, readServerLimits } from "./pools";

export type { Role } from "@labelgate/config";
export { type ChainProbe, startChainProbe } from "./chain-probe";
export { headroomOf, MIN_WORKER_POOL, type PoolPlan, planPools, readServerLimits, type ServerLimits } from "./pools";

/** Jobs at once per queue when a role sets none (the engine's default). */
const DEFAULT_CONCURRENCY = 8;

/** What the runtime built, handed to every role's `start`. */
export interface RuntimeContext {
  roles: readonly Role[];
  logger: Logger;
  store: Store;
  queue: QueueClient;
  /**
   * The process's follow-up relay (docs/decisions/0300): moves the `follow_up` rows to the queue; a role
   * that committed follow-ups nudges it (`relay.nudge()`), and it polls for the rest (FOLLOW_UP_POLL_MS).
   */
  relay: FollowUpRelay;
  backend: QueueBackendConfig;
  /** the process's registry (every role records into it) */
  metrics: Metrics;
  /**
   * What this process needs to take and settle work, by name, each resolving true while it is there: the
   * database and the queue always, `chain` when the process settles on an EVM chain, `workers` once a role
   * started its workers. /readyz and the gateway's /v1/health answer from these (decision 0202).
   */
  checks: Record<string, () => Promise<boolean>>;
  /** the chain's readiness probe, when this process settles on an EVM chain (LEDGER=evm with a consensus worker) */
  chain: ChainProbe | undefined;
  /** the ENCRYPTION_KEY's box. @throws ConfigError when the variable is unset */
  secretBox(): SecretBox;
  /**
   * Starts a service's BullMQ workers the one way every role does: handlers timed into the registry
   * (`labelgate_job_duration_seconds`), failures logged, QUEUE_LOCK_DURATION_MS as the lock duration and
   * stalled-job interval.
   */
  startWorkers<S extends ServiceName>(
    handlers: HandlersFor<S>,
    options: Pick<WorkerOptions, "concurrency" | "backoffStrategy">,
  ): RunningWorkers;
  options: RuntimeOptions;
}

/** A started role: how the shutdown stops it. */
export interface RoleInstance {
  /**
   * Stops taking work and waits for the work in flight, at most `budgetMs`; work still running then goes
   * back to its queue. @returns how many jobs went back.
   */
  drain(budgetMs: number): Promise<{ returned: number }>;
  /** Closes what the role owns (an HTTP connection pool...), after the queue client closed. */
  close(returned: number): Promise<void>;
}

/** A role's module, defined in its service: its name and how it starts on a runtime. */
export interface RoleModule<R extends Role = Role, I extends RoleInstance = RoleInstance> {
  role: R;
  /** the queues this role's process reports the depth of (`labelgate_queue_jobs`) */
  queues: readonly QueueKey[];
  start(ctx: RuntimeContext, env: EnvOf<R>): Promise<I>;
}

/** Defines a role module (typing helper). */
export function defineRole<R extends Role, I extends RoleInstance>(module: RoleModule<R, I>): RoleModule<R, I> {
  return module;
}

/** What a worker role builds on the runtime: its handlers, how its workers run, and what it owns. */
export interface WorkerRoleSetup<S extends ServiceName> {
  /** the handlers of every queue of the service (the catalog's `QueuesOf<S>`) */
  handlers: HandlersFor<S>;
  /** jobs at once per queue and retry backoffs (lock duration and failure logging are the runtime's) */
  workers: Pick<WorkerOptions, "concurrency" | "backoffStrategy">;
  /** Closes what the role owns, after the queue client closed; `returned` = jobs that went back to their queue. */
  close(returned: number): Promise<void>;
}

/**
 * Defines the role module of a worker service whose whole work is its BullMQ workers: it reports the depth
 * of its own queues (`queueKeysOf(role)`), `setup` builds its handlers from the runtime and its environment,
 * the runtime starts them (`ctx.startWorkers`), and the drain closes them within the budget (jobs still
 * running then go back to their queue; handlers are idempotent). Errors thrown by `setup` fail the start.
 */
export function defineWorkerRole<S extends ServiceName>(
  role: S,
  setup: (ctx: RuntimeContext, env: EnvOf<S>) => WorkerRoleSetup<S>,
): RoleModule<S, RoleInstance> {
  return defineRole({
    role,
    queues: queueKeysOf(role),
    async start(ctx, env) {
      const { handlers, workers: options, close } = setup(ctx, env);
      const workers = ctx.startWorkers(handlers, options);
      return { drain: (budgetMs: number) => workers.closeWithin(budgetMs), close };
    },
  });
}

/** What an entry point may set beyond the environment. */
export interface RuntimeOptions {
  /** the logger (default: pino on stdout at LOG_LEVEL, named after the role or `labelgate`) */
  logger?: Logger;
  /** the database when DATABASE_URL is unset (standalone's embedded Postgres) */
  databaseUrl?: string;
  /** the queue backend when REDIS_URL is unset (standalone: BullMQ's Postgres backend) */
  queueBackend?: QueueBackendConfig;
  /** how long a queue call may take before it fails as unavailable, ms (default 2000; Postgres backend 5000) */
  queueTimeoutMs?: number;
  /** how often the follow-up relay looks for rows nobody nudged it about, ms (default 250) */
  followUpPollMs?: number;
  /** pg pool size (default DB_POOL_MAX) */
  poolMax?: number;
  /** the ENCRYPTION_KEY when the environment has none (standalone keeps a generated one under DATA_DIR) */
  encryptionKey?: string;
  /** the ADMIN_TOKEN when the environment has none (standalone) */
  adminToken?: string;
  /** DNS resolver of outbound URL checks (tests inject one) */
  resolve?: (host: string) => Promise<string[]>;
  /** manifest lines per ingestion transaction (tests use small chunks; default 1000) */
  manifestChunkSize?: number;
  /** install SIGTERM/SIGINT handlers that run `shutdown` (services and standalone: true; tests: false) */
  handleSignals?: boolean;
  /** runs after everything else closed (standalone stops its embedded Postgres here) */
  afterShutdown?: () => Promise<void>;
}

export interface Runtime<I extends readonly RoleInstance[]> {
  ctx: RuntimeContext;
  ops: OpsServer;
  /** the started roles, in the order given */
  instances: I;
  /** The bounded shutdown (SHUTDOWN_TIMEOUT_MS): readiness 503, drain, close queue, roles, store, ops. */
  shutdown(): Promise<void>;
}

type Instances<M extends readonly RoleModule<Role, RoleInstance>[]> = { -readonly [K in keyof M]: Awaited<ReturnType<M[K]["start"]>> };

/**
 * Builds the process's dependencies once and starts `roles` on them.
 * @param env the raw environment (process.env, or a record in tests), parsed here once
 * @throws ConfigError naming every invalid variable, or when DATABASE_URL / REDIS_URL are missing and no
 *   option replaces them
 */
export async function createRuntime<const M extends readonly RoleModule<Role, RoleInstance>[]>(
  env: Record<string, string | undefined>,
  roles: M,
  options: RuntimeOptions = {},
): Promise<Runtime<Instances<M>>> {
  assertSupportedNode();
  const roleNames = roles.map((r) => r.role);
  const parsed = parseEnv(envSchemaFor(roleNames), env) as EnvOf<Role> & Record<string, unknown>;
  const common = parsed as EnvOf<"consensus-worker">;
  const databaseUrl = common.DATABASE_URL ?? options.databaseUrl;
  if (!databaseUrl) throw new ConfigError("DATABASE_URL is required (or run `pnpm start`, which starts an embedded Postgres)");
  const configured: QueueBackendConfig | undefined = common.REDIS_URL
    ? { kind: "redis", url: common.REDIS_URL, prefix: common.QUEUE_PREFIX }
    : options.queueBackend;
  if (!configured) throw new ConfigError("REDIS_URL is required (or run `pnpm start`, which uses BullMQ's Postgres backend)");

  const name = roleNames.length === 1 ? (roleNames[0] as string) : "labelgate";
  const logger = options.logger ?? createLogger(name, common.LOG_LEVEL);
  const storePool = options.poolMax ?? common.DB_POOL_MAX;
  const store = createStore({
    url: databaseUrl,
    poolMax: storePool,
    onPoolError: (err) => logger.warn({ err }, "idle database connection failed"),
  });
  let pools: PoolPlan | undefined;
  try {
    pools = await planProcessPools(store, configured, roles, storePool, logger);
  } catch (err) {
    await store.close();
    throw err;
  }
  const backend: QueueBackendConfig =
    configured.kind === "postgres" && pools ? { ...configured, workerPoolMax: pools.workerPoolMax } : configured;
  const queue = new QueueClient(backend, options.queueTimeoutMs ?? (backend.kind === "postgres" ? 5000 : 2000));
  const metrics = createMetrics({
    service: name,
    onQueueDepthError: (q, err) => logger.warn({ err, queue: q }, "queue depth unavailable"),
  });
  const depthKeys = queueKeysOf().filter((key) => roles.some((r) => r.queues.includes(key)));
  metrics.trackQueueDepth(depthSources(depthKeys, queueNames, (key) => queue.counts(key)));
  metrics.trackFollowUpBacklog(() => store.followUps.backlog());
  const relay = new FollowUpRelay(store.followUps, queue, logger, { pollMs: options.followUpPollMs ?? 250 });
  relay.start();
  const checks: RuntimeContext["checks"] = { database: () => store.ping(), queue: () => queue.ping() };
  // the chain, when this process settles on it: probed in the background, read by every health request
  const evm = parsed as { LEDGER?: string; EVM_RPC_URL?: string };
  const chain =
    roleNames.includes("consensus-worker") && evm.EVM_RPC_URL && (evm.LEDGER ?? "evm") === "evm"
      ? startChainProbe({
          rpcUrl: evm.EVM_RPC_URL,
          onChange: (available, err) => {
            metrics.chainAvailable.set(available ? 1 : 0);
            if (available) logger.info("chain RPC answers");
            else logger.warn({ err }, "chain RPC unavailable: settlement waits for it (readiness 503)");
          },
        })
      : undefined;
  if (chain) checks.chain = async () => chain.available();
  const workerSets: RunningWorkers[] = [];
  const ops = await startOpsServer({ port: common.METRICS_PORT, registry: metrics.registry, checks });
  let box: SecretBox | undefined;
  const ctx: RuntimeContext = {
    roles: roleNames,
    logger,
    store,
    queue,
    relay,
    backend,
    metrics,
    checks,
    chain,
    secretBox: () => {
      if (box) return box;
      const key = common.ENCRYPTION_KEY ?? options.encryptionKey;
      if (!key) throw new ConfigError("ENCRYPTION_KEY is required (32 bytes as 64 hex characters, e.g. `openssl rand -hex 32`)");
      box = new SecretBox(parseEncryptionKey(key));
      return box;
    },
    startWorkers: (handlers, workerOptions) => {
      for (const key of Object.keys(handlers) as QueueKey[]) {
        metrics.workerSettings.set({ queue: queueNames[key], setting: "lock_duration_seconds" }, common.QUEUE_LOCK_DURATION_MS / 1000);
        metrics.workerSettings.set(
          { queue: queueNames[key], setting: "concurrency" },
          workerOptions.concurrency?.[key] ?? DEFAULT_CONCURRENCY,
        );
      }
      const running = startWorkers(backend, instrumentHandlers(metrics, handlers, queueNames), {
        ...workerOptions,
        onFailed: (q, jobId, err) => logger.error({ err, queue: q, job_id: jobId }, "job failed"),
        lockDurationMs: common.QUEUE_LOCK_DURATION_MS,
      });
      workerSets.push(running);
      checks.workers ??= async () => workerSets.every((w) => w.running());
      return running;
    },
    options,
  };

  const started: RoleInstance[] = [];
  try {
    for (const role of roles) started.push(await role.start(ctx, parsed as never));
  } catch (err) {
    chain?.stop();
    await Promise.all(started.map((i) => i.drain(0).then((r) => i.close(r.returned))));
    await settleWithin(relay.stop(), 2000);
    await queue.close();
    await store.close();
    await ops.close();
    throw err;
  }

  let shutdownPromise: Promise<void> | undefined;
  const shutdown = () => {
    shutdownPromise ??= (async () => {
      const deadline = Date.now() + common.SHUTDOWN_TIMEOUT_MS;
      ops.setShuttingDown();
      const budget = drainBudgetMs(common.SHUTDOWN_TIMEOUT_MS);
      // the gateway (listed first by every entry point) stops taking requests first; workers drain together
      const drained = await Promise.all(started.map((i) => i.drain(Math.max(0, Math.min(budget, deadline - 2000 - Date.now())))));
      drained.forEach((d, i) => {
        // handlers are idempotent: another replica runs them again at once
        if (d.returned > 0)
          logger.warn({ role: roleNames[i], returned: d.returned }, "jobs still running at the shutdown bound returned to the queue");
      });
      // the follow-ups the drained work committed go to the queue before it closes (a row left waits for another relay)
      await settleWithin(relay.stop(), 2000);
      await settleWithin(relay.drain(), Math.max(0, deadline - 1500 - Date.now())).catch(() => undefined);
      await queue.close();
      await Promise.all(started.map((i, n) => i.close(drained[n]?.returned ?? 0)));
      if (!(await settleWithin(store.close(), deadline - Date.now() - 500))) logger.warn("database pool closed with queries in flight");
      await ops.close();
      chain?.stop();
      await options.afterShutdown?.();
    })();
    return shutdownPromise;
  };
  if (options.handleSignals) onShutdown(logger, shutdown, common.SHUTDOWN_TIMEOUT_MS);
  logger.info({ roles: roleNames, metrics_port: ops.port, pid: process.pid }, "labelgate started");
  return { ctx, ops, instances: started as Instances<M>, shutdown };
}

/**
 * Plans the process's pools from the server's limits (./pools.ts) and logs the plan: on BullMQ's Postgres
 * backend the worker pools share what the others leave; a warning when the plan exceeds what is free now.
 * @returns undefined when the limits cannot be read (the server is down: the pools connect lazily, as before)
 * @throws ConfigError when the pools cannot fit
 */
async function planProcessPools(
  store: Store,
  backend: QueueBackendConfig,
  roles: readonly RoleModule<Role, RoleInstance>[],
  storePool: number,
  logger: Logger,
): Promise<PoolPlan | undefined> {
  let limits: Awaited<ReturnType<typeof readServerLimits>>;
  try {
    limits = await readServerLimits((sql) => store.db.pool.query(sql));
  } catch (err) {
    logger.warn({ err }, "could not read the database's max_connections: pools not planned");
    return undefined;
  }
  const onPostgres = backend.kind === "postgres";
  const workers = onPostgres
    ? new Set(roles.filter((r) => r.role !== "gateway").flatMap((r) => queueKeysOf(r.role as ServiceName))).size
    : 0;
  const demand = { storePool, producerQueues: onPostgres ? queueKeysOf().length : 0, workers };
  const plan = planPools(limits, demand);
  if (!plan.fitsNow)
    logger.warn(
      { ...limits, planned: plan.planned, available: plan.available },
      "the database pools may not fit: other clients hold most of max_connections",
    );
  logger.info(
    {
      max_connections: limits.maxConnections,
      in_use: limits.inUse,
      budget: plan.budget,
      planned: plan.planned,
      worker_pool_max: plan.workerPoolMax,
    },
    "database pools planned",
  );
  return plan;
}
