/**
 * An in-process labelgate for tests: the real runtime (@labelgate/runtime, the one every entry point uses)
 * with the gateway on an ephemeral port and (optionally) the real consensus, webhook and manifest workers,
 * against this run's Postgres database and Redis under a unique prefix. Settings go in as environment
 * variables, parsed by the runtime like any service's.
 */
import { randomBytes } from "node:crypto";
import { consensusRole } from "@labelgate/consensus-worker";
import { createLogger, type Logger, parseEncryptionKey, SecretBox } from "@labelgate/core";
import { gatewayRole } from "@labelgate/gateway";
import { manifestRole } from "@labelgate/manifest-worker";
import { deleteKeysWithPrefix, type FollowUpRelay, type QueueBackendConfig, QueueClient } from "@labelgate/queue";
import { createRuntime, type RuntimeOptions } from "@labelgate/runtime";
import { copyDatabase, createStore, type Db, dropDatabase, type Store, withDatabase } from "@labelgate/store";
import { webhookRole } from "@labelgate/webhook-worker";
import type express from "express";
import { REDIS_URL, runId, runPrefix, scaled, templateDatabase, testDatabaseUrl } from "./env";

export const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";
/** ENCRYPTION_KEY of the tests (64 hex characters) and the box it opens */
export const TEST_ENCRYPTION_KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
export const TEST_SECRET_BOX = new SecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY));

export interface SystemOptions {
  /** run the consensus, webhook and manifest workers in-process (default true) */
  workers?: boolean;
  /**
   * the database (e.g. another system's, for a second replica, or a dead port to test outages); default: one
   * of its own (`isolatedDatabaseUrl`), dropped on close, so that no other system's relay and workers take
   * this system's work, nor this system theirs
   */
  databaseUrl?: string;
  /** override Redis (e.g. a dead port) */
  redisUrl?: string;
  claimTtlSeconds?: number;
  /** ALLOW_PRIVATE_URLS (default true: receivers in tests are local) */
  allowPrivateUrls?: boolean;
  /** Redis key prefix to share with another system (a second gateway replica); default: a fresh one */
  prefix?: string;
  /** rate limits (default: effectively unlimited); counters in Redis under this system's prefix */
  rateLimits?: { perKey?: { sandbox: number; production: number }; windowSeconds?: number; registrationsPerHour?: number };
  /** GCS JSON API endpoint of the manifest worker (a local fake server in tests) */
  gcsApiEndpoint?: string;
  /** manifest lines per ingestion transaction (default 1000) */
  manifestChunkSize?: number;
  /** WEBHOOK_TIMEOUT_MS (default 10 s) */
  webhookTimeoutMs?: number;
  /** WEBHOOK_RETRY_MAX (default 3) */
  webhookRetryMax?: number;
  sandboxLabelQuota?: number;
  /** billing prices and currency (default: sandbox 0, production 8 cents per label, usd) */
  billing?: { currency: string; pricePerLabelCents: { sandbox: number; production: number } };
  /** more environment variables (e.g. TRUST_PROXY) */
  env?: Record<string, string>;
  /** DNS resolver of outbound URL checks */
  resolve?: RuntimeOptions["resolve"];
  logger?: Logger;
}

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

export interface System {
  /** the gateway's express app this system serves (route tables are read from it) */
  app: express.Express;
  baseUrl: string;
  databaseUrl: string;
  store: Store;
  /** the store's Prisma client and pool, for tests that inspect rows */
  db: Db;
  queue: QueueClient;
  /** the runtime's follow-up relay (docs/decisions/0300) */
  relay: FollowUpRelay;
  backend: QueueBackendConfig;
  prefix: string;
  logger: Logger;
  /** JSON request; `token` becomes `Authorization: Bearer <token>` */
  api<T = Record<string, unknown>>(
    method: string,
    path: string,
    options?: { body?: unknown; token?: string; headers?: Record<string, string>; raw?: string },
  ): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

/**
 * A database of its own (`lgtest_<run>_<hex>`, a copy of the run's migrated template), for a system or a test
 * file whose rows no other file may see or work on: every system's relay moves the follow_up rows of its
 * database to its own queues, and its workers sweep its database (refits, reconciliation, generic claims).
 * The caller drops it (`dropDatabase`; the global teardown drops what a failed test left). Returns its URL.
 */
export async function isolatedDatabaseUrl(): Promise<string> {
  const url = withDatabase(testDatabaseUrl(), `lgtest_${runId()}_${randomBytes(3).toString("hex")}`);
  await copyDatabase(url, templateDatabase());
  return url;
}

/** The environment of a test system (every value a string, as a service would get it). */
function systemEnv(options: SystemOptions, databaseUrl: string, prefix: string): Record<string, string> {
  const billing = options.billing ?? { currency: "usd", pricePerLabelCents: { sandbox: 0, production: 8 } };
  const perKey = options.rateLimits?.perKey ?? { sandbox: 1_000_000_000, production: 1_000_000_000 };
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: options.redisUrl ?? REDIS_URL,
    QUEUE_PREFIX: prefix,
    PORT: "0",
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    DB_POOL_MAX: "20",
    ADMIN_TOKEN,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    ALLOW_PRIVATE_URLS: String(options.allowPrivateUrls ?? true),
    WEBHOOK_RETRY_MAX: String(options.webhookRetryMax ?? 3),
    WEBHOOK_TIMEOUT_MS: String(options.webhookTimeoutMs ?? 10_000),
    CLAIM_TTL_SECONDS: String(options.claimTtlSeconds ?? 600),
    SANDBOX_LABEL_QUOTA: String(options.sandboxLabelQuota ?? 500),
    PRODUCTION_LABEL_QUOTA: "100000",
    BILLING_CURRENCY: billing.currency,
    PRICE_PER_LABEL_CENTS_SANDBOX: String(billing.pricePerLabelCents.sandbox),
    PRICE_PER_LABEL_CENTS_PRODUCTION: String(billing.pricePerLabelCents.production),
    RATE_LIMIT_SANDBOX: String(perKey.sandbox),
    RATE_LIMIT_PRODUCTION: String(perKey.production),
    RATE_LIMIT_WINDOW_SECONDS: String(options.rateLimits?.windowSeconds ?? 60),
    RATE_LIMIT_REGISTRATIONS_PER_HOUR: String(options.rateLimits?.registrationsPerHour ?? 1_000_000_000),
    RECONCILE_GRACE_MS: "1000",
    CONSENSUS_CONCURRENCY: "8",
    WEBHOOK_CONCURRENCY: "32",
    MANIFEST_CONCURRENCY: "2",
    ...(options.gcsApiEndpoint ? { GCS_API_ENDPOINT: options.gcsApiEndpoint } : {}),
    ...options.env,
  };
}

export async function startSystem(options: SystemOptions = {}): Promise<System> {
  const logger = options.logger ?? createLogger("test", process.env.TEST_LOG_LEVEL ?? "silent");
  const ownDatabase = options.databaseUrl === undefined;
  const databaseUrl = options.databaseUrl ?? (await isolatedDatabaseUrl());
  const prefix = options.prefix ?? `${runPrefix()}:${randomBytes(4).toString("hex")}`;
  const roles = options.workers === false ? ([gatewayRole] as const) : ([gatewayRole, consensusRole, webhookRole, manifestRole] as const);
  const runtime = await createRuntime(systemEnv(options, databaseUrl, prefix), roles, {
    logger,
    queueTimeoutMs: 1000,
    resolve: options.resolve,
    manifestChunkSize: options.manifestChunkSize,
  });
  const [gateway] = runtime.instances;
  const baseUrl = `http://127.0.0.1:${gateway.port}`;
  const { store, queue, relay, backend } = runtime.ctx;

  const api: System["api"] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    } else if (opts.raw !== undefined) {
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed as never, headers: res.headers };
  };

  return {
    app: gateway.app,
    baseUrl,
    databaseUrl,
    store,
    db: store.db,
    queue,
    relay,
    backend,
    prefix,
    logger,
    api,
    close: async () => {
      gateway.server.closeAllConnections();
      await runtime.shutdown();
      if (ownDatabase) await dropDatabase(databaseUrl);
    },
  };
}

/**
 * In-process consensus workers (the consensus and reconcile queues, reconciliation grace 1 s) over a
 * system's database and queue prefix, built by the runtime like any worker; `concurrency` = consensus jobs
 * at once. Close them with `close()`.
 */
export async function startConsensusWorkers(
  s: Pick<System, "databaseUrl" | "prefix" | "logger">,
  concurrency: number,
  env: Record<string, string> = {},
): Promise<{ close(): Promise<void> }> {
  const runtime = await createRuntime(
    {
      DATABASE_URL: s.databaseUrl,
      REDIS_URL,
      QUEUE_PREFIX: s.prefix,
      METRICS_PORT: "0",
      RECONCILE_GRACE_MS: "1000",
      CONSENSUS_CONCURRENCY: String(concurrency),
      ...env,
    },
    [consensusRole],
    { logger: s.logger, queueTimeoutMs: 1000 },
  );
  return { close: () => runtime.shutdown() };
}

let emailCounter = 0;

/** Registers a customer and (optionally) grants it quota. Returns its id and key. */
export async function registerCustomer(sys: System, quota?: number): Promise<{ id: string; key: string; email: string }> {
  const email = `c${Date.now()}-${++emailCounter}-${randomBytes(3).toString("hex")}@example.com`;
  const res = await sys.api<{ customer_id: string; api_key: string }>("POST", "/v1/customers", { body: { name: "Test Co", email } });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  if (quota !== undefined) {
    const patch = await sys.api("PATCH", `/v1/admin/customers/${res.body.customer_id}`, {
      token: ADMIN_TOKEN,
      body: { label_quota: quota },
    });
    if (patch.status !== 200) throw new Error(`quota grant failed: ${patch.status}`);
  }
  return { id: res.body.customer_id, key: res.body.api_key, email };
}

/** Creates a labeler (admin API). @returns its id and API key */
export async function createLabeler(sys: System, name = "labeler"): Promise<Labeler> {
  const res = await sys.api<{ labeler_id: string; api_key: string }>("POST", "/v1/admin/labelers", { token: ADMIN_TOKEN, body: { name } });
  if (res.status !== 201) throw new Error(`labeler creation failed: ${res.status}`);
  return { id: res.body.labeler_id, key: res.body.api_key };
}

/** Creates `n` labelers named `<prefix>-0` … `<prefix>-<n-1>` (at once). */
export async function createLabelers(sys: System, n: number, prefix = "labeler"): Promise<Labeler[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => createLabeler(sys, `${prefix}-${i}`)));
}

/** A labeler's id and API key. */
export interface Labeler {
  id: string;
  key: string;
}

/**
 * An object standing for a value that a hook sets later: every property read forwards to the value, so it can
 * be declared at module level and used in tests and hooks. Read before `set`, it throws naming `what`.
 */
function settable<T extends object>(what: string): { stand: T; set(value: T): void } {
  let value: T | undefined;
  const stand = new Proxy({} as T, {
    get(_, prop) {
      if (value) return Reflect.get(value, prop, value);
      // not a thenable (`await`, jest's matchers probe it)
      if (prop === "then") return undefined;
      throw new Error(`${what} is not started yet: read it in tests and hooks (useSystem starts it in a beforeAll)`);
    },
  });
  return {
    stand,
    set: (v) => {
      value = v;
    },
  };
}

/**
 * A store and a queue client of their own for the tests of the calling scope, with no system running (tests of
 * store, relay and worker code): a beforeAll opens the store (`poolMax` connections) on a database of its own
 * (`isolatedDatabaseUrl`) and the client under a Redis prefix of its own (`<run prefix>:<tag>:<hex>`); an
 * afterAll closes both and drops the database and the keys. Use them in tests and hooks, not at module level.
 */
export function useOwnStore(tag: string, poolMax = 4): { store: Store; queue: QueueClient } {
  const store = settable<Store>("the store");
  const queue = settable<QueueClient>("the queue client");
  const prefix = `${runPrefix()}:${tag}:${randomBytes(4).toString("hex")}`;
  let opened: { store: Store; queue: QueueClient; databaseUrl: string } | undefined;
  beforeAll(async () => {
    const databaseUrl = await isolatedDatabaseUrl();
    opened = {
      databaseUrl,
      store: createStore({ url: databaseUrl, poolMax }),
      queue: new QueueClient({ kind: "redis", url: REDIS_URL, prefix }, 2000),
    };
    store.set(opened.store);
    queue.set(opened.queue);
  });
  afterAll(async () => {
    if (!opened) return;
    await opened.queue.close();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
    await opened.store.close();
    await dropDatabase(opened.databaseUrl);
  });
  return { store: store.stand, queue: queue.stand };
}

/**
 * One system for the tests of the calling scope (a test file, or a describe): a beforeAll starts it
 * (`startSystem(options)`) and creates the labelers named in `labelers` (default: one, `labeler`); an afterAll
 * runs `beforeClose` (e.g. closing the file's receivers, so hanging requests end and the workers close at
 * once), then closes the system. `sys`, `labeler` (the first) and `labelers` stand for what the beforeAll
 * started: use them in tests and hooks, not at module level.
 */
export function useSystem<const N extends readonly string[] = readonly ["labeler"]>(
  options: SystemOptions = {},
  extras: { labelers?: N; beforeClose?: () => Promise<void> } = {},
): { sys: System; labeler: Labeler; labelers: { [K in keyof N]: Labeler } } {
  const names: readonly string[] = extras.labelers ?? ["labeler"];
  const sys = settable<System>("the test system");
  const labelers = names.map((name) => ({ name, ...settable<Labeler>(`labeler ${name}`) }));
  let started: System | undefined;
  beforeAll(async () => {
    started = await startSystem(options);
    sys.set(started);
    for (const l of labelers) l.set(await createLabeler(started, l.name));
  });
  afterAll(async () => {
    await extras.beforeClose?.();
    await started?.close();
  });
  return {
    sys: sys.stand,
    labeler: labelers[0]?.stand ?? settable<Labeler>("a labeler (none asked for)").stand,
    labelers: labelers.map((l) => l.stand) as { [K in keyof N]: Labeler },
  };
}

export const OPTIONS = ["cat", "dog", "bird"];

export function taskBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: "image_classification",
    data_url: "https://images.example/1.jpg",
    label_spec: { question: "What animal is this?", options: OPTIONS },
    ...overrides,
  };
}

export async function createTask(sys: System, key: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await sys.api<{ task_id: string }>("POST", "/v1/tasks", { token: key, body: taskBody(overrides) });
  if (res.status !== 202) throw new Error(`task creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.task_id;
}

/** Claims `taskId` for a labeler and labels it. Returns the label response. */
export async function label(sys: System, labelerKey: string, taskId: string, value: string): Promise<ApiResponse> {
  const claim = await sys.api<{ claim_id: string }>("POST", "/v1/labeling/claims", { token: labelerKey, body: { task_id: taskId } });
  if (claim.status !== 201) throw new Error(`claim failed: ${claim.status} ${JSON.stringify(claim.body)}`);
  return sys.api("POST", `/v1/labeling/claims/${claim.body.claim_id}/label`, { token: labelerKey, body: { label: value } });
}

/**
 * Polls `check` until it returns a value other than undefined, or fails after `timeoutMs` (default 30 s: in
 * full runs on 2 cores beside the chain chaos clusters, manifest ingestion waits passed 15 s).
 */
export async function eventually<T>(check: () => Promise<T | undefined>, baseTimeoutMs = 30_000, what = "condition"): Promise<T> {
  // TEST_TIME_SCALE raises every deadline at once (test/env.ts)
  const timeoutMs = scaled(baseTimeoutMs);
  const deadline = Date.now() + timeoutMs;
  let delay = 20;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 200);
  }
}

/** Waits until the task's result is 200 and returns it. */
export async function settledResult(sys: System, key: string, taskId: string): Promise<Record<string, unknown>> {
  return eventually(
    async () => {
      const res = await sys.api("GET", `/v1/tasks/${taskId}/result`, { token: key });
      return res.status === 200 ? res.body : undefined;
    },
    20000,
    `task ${taskId} to settle`,
  );
}
