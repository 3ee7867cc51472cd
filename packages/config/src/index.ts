/**
 * @labelgate/config: the zod schemas of every service's environment. Each service parses its env once,
 * in `src/main.ts`, with `parseEnv(schema, process.env)`; packages receive plain values, never `process.env`.
 */
import { isIP } from "node:net";
import { z } from "zod";

const bool = z
  .enum(["true", "false", "1", "0", "yes", "no", ""])
  .optional()
  .transform((v) => v === "true" || v === "1" || v === "yes");

const int = (def: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(def);

/** Settings shared by every service. */
export const commonEnv = z.object({
  /** postgres:// URL. Required in distributed mode; standalone starts an embedded Postgres instead. */
  DATABASE_URL: z.string().url().optional(),
  /** redis:// URL. Required in distributed mode; standalone uses BullMQ's Postgres backend instead. */
  REDIS_URL: z.string().url().optional(),
  /** key prefix of every BullMQ queue (Redis backend), so several deployments or test runs share a Redis */
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_:.-]+$/)
    .default("labelgate"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** allow loopback/private/link-local URLs for outbound calls (development and tests only) */
  ALLOW_PRIVATE_URLS: bool,
  /** total webhook delivery attempts, default 3 (contract §events) */
  WEBHOOK_RETRY_MAX: int(3, 1, 20),
  /**
   * a delivery attempt succeeds on a 2xx within this time, ms (contract §events: 10 s); the webhook
   * worker's timeout, and the consensus worker's measure of how long a delivery may stay pending untouched
   */
  WEBHOOK_TIMEOUT_MS: int(10_000, 100, 60_000),
  /** pg pool size per process */
  DB_POOL_MAX: int(10, 1, 200),
  /** 32 bytes (64 hex or base64): seals webhook secrets and storage credentials (AES-256-GCM) */
  ENCRYPTION_KEY: z.string().min(32).optional(),
  /**
   * SIGTERM: the whole shutdown (stop taking work, finish or return in-flight jobs and requests, close
   * pools) is bounded by this, ms (default 10 s, below Kubernetes' 30 s grace period)
   */
  SHUTDOWN_TIMEOUT_MS: int(10_000, 1000, 120_000),
  /**
   * workers: how long a job's lock lasts without renewal (renewed every half of it), and the interval of the
   * stalled-job check, ms (default 10 s; BullMQ's own is 30 s): the jobs of a killed worker process run again
   * within about twice this, so a worker killed and restarted has its work done again within 30 s
   */
  QUEUE_LOCK_DURATION_MS: int(10_000, 1000, 600_000),
});

/** Port of a service's ops server (/metrics, /healthz, /readyz); 0 = an ephemeral port (tests). */
const metricsPort = (def: number) => int(def, 0, 65535);

/** Default METRICS_PORT of each service (one ops port per process; standalone uses the gateway's). */
export const DEFAULT_METRICS_PORTS = {
  gateway: 9100,
  "consensus-worker": 9101,
  "webhook-worker": 9102,
  "manifest-worker": 9103,
} as const;

/** The names express's `trust proxy` accepts for address ranges (proxy-addr). */
const PROXY_RANGE_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** An IP address, an address/prefix CIDR, or a proxy-addr range name. */
function isProxyAddress(value: string): boolean {
  if (PROXY_RANGE_NAMES.has(value)) return true;
  const [address, prefix, extra] = value.split("/");
  if (extra !== undefined || !address) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * TRUST_PROXY, express's `trust proxy` (which decides `req.ip`, the client address the registration limit
 * counts by): unset or `false` = the socket's address (no proxy); a hop count (`1`: one load balancer in
 * front); or a comma-separated list of the proxies' addresses or CIDRs (`10.0.0.0/8,fd00::/8`, or the range
 * names `loopback`, `linklocal`, `uniquelocal`), whose `X-Forwarded-For` entries are believed.
 */
export const trustProxy = z
  .string()
  .optional()
  .transform((raw, ctx): false | number | string[] => {
    const value = raw?.trim() ?? "";
    if (value === "" || value === "false" || value === "0") return false;
    if (/^\d+$/.test(value)) {
      const hops = Number(value);
      if (hops > 32) ctx.addIssue({ code: "custom", message: "a hop count of at most 32" });
      return hops;
    }
    const list = value.split(",").map((v) => v.trim());
    const bad = list.filter((v) => !isProxyAddress(v));
    if (bad.length > 0) {
      ctx.addIssue({ code: "custom", message: `not an IP address, CIDR or range name: ${bad.join(", ")} (or give a hop count)` });
    }
    return list;
  });

export const gatewayEnv = commonEnv.extend({
  /** the proxies in front of the gateway (see `trustProxy`) */
  TRUST_PROXY: trustProxy,
  PORT: int(3000, 0, 65535),
  METRICS_PORT: metricsPort(DEFAULT_METRICS_PORTS.gateway),
  HOST: z.string().default("0.0.0.0"),
  /**
   * how long the gateway keeps an idle kept-alive connection open, ms (default 65 s). Clients are told 5 s
   * (`Keep-Alive: timeout=5`); the gap is what a stalled client or a proxy's 60 s idle pool may take to
   * reuse a connection without meeting a reset (decision 0200)
   */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(65_000, 5000, 600_000),
  /** bearer token of the admin routes; when unset, admin routes answer 401 */
  ADMIN_TOKEN: z.string().min(16).optional(),
  /** how long a labeler's claim holds a slot, seconds (default 600 = 10 min, contract §labelers) */
  CLAIM_TTL_SECONDS: int(600, 1, 86400),
  /** label quota of a newly registered sandbox customer (contract §limits) */
  SANDBOX_LABEL_QUOTA: int(500, 0, 1_000_000_000),
  /** label quota a customer is raised to on upgrade to production (if below) */
  PRODUCTION_LABEL_QUOTA: int(100_000, 0, 1_000_000_000),
  /** requests per RATE_LIMIT_WINDOW_SECONDS and API key, by tier */
  RATE_LIMIT_SANDBOX: int(1200, 1, 1_000_000_000),
  RATE_LIMIT_PRODUCTION: int(12_000, 1, 1_000_000_000),
  RATE_LIMIT_WINDOW_SECONDS: int(60, 1, 86_400),
  /** registrations per hour and client address */
  RATE_LIMIT_REGISTRATIONS_PER_HOUR: int(20, 1, 1_000_000_000),
  /** billing (contract §accounts): price of one collected label by the tier the customer had when it was recorded, integer cents */
  PRICE_PER_LABEL_CENTS_SANDBOX: int(0, 0, 1_000_000),
  PRICE_PER_LABEL_CENTS_PRODUCTION: int(8, 0, 1_000_000),
  /** ISO 4217 code of invoices and usage, lower case */
  BILLING_CURRENCY: z
    .string()
    .regex(/^[a-z]{3}$/, "a 3-letter lower-case currency code, e.g. usd")
    .default("usd"),
  /**
   * the EVM chain's JSON-RPC URL (contract §settlement): the console's "verify" button reads settlement proofs from it
   * in the browser, so its origin is allowed in the apps' connect-src; unset = no chain to verify against
   */
  EVM_RPC_URL: z.string().url().optional(),
});

export const consensusWorkerEnv = commonEnv.extend({
  METRICS_PORT: metricsPort(DEFAULT_METRICS_PORTS["consensus-worker"]),
  CONSENSUS_CONCURRENCY: int(16, 1, 256),
  /** how often the reconciliation re-enqueues decidable tasks and unrecorded events, ms */
  RECONCILE_INTERVAL_MS: int(5000, 200, 3_600_000),
  /** a task or event untouched this long is considered lost by the queue, ms */
  RECONCILE_GRACE_MS: int(3000, 0, 3_600_000),
  /** how often the label spaces due for a refit of their model are looked for, ms (contract §quality) */
  REFIT_INTERVAL_MS: int(1000, 100, 3_600_000),
  /** label space refits at once per consensus-worker process (each fit runs in a worker thread of its own) */
  REFIT_CONCURRENCY: int(1, 1, 16),
  /** which ledger settles (contract §settlement): `evm` (default when EVM_RPC_URL is set) or `local`; see `ledgerMode` */
  LEDGER: z.enum(["local", "evm"]).optional(),
  /** JSON-RPC (http) endpoint of the EVM chain the anchors go to */
  EVM_RPC_URL: z.string().url().optional(),
  /** the anchorer's signing key, 0x + 64 hex digits (a Secret; never logged) */
  EVM_PRIVATE_KEY: z.string().min(1).optional(),
  /** blocks an anchor needs (1 = mined in the latest block) before its tasks are settled */
  EVM_CONFIRMATIONS: int(1, 1, 1000),
  /** a batch of ledger records closes when its oldest record is this old, ms */
  ANCHOR_INTERVAL_MS: int(2000, 10, 3_600_000),
  /** ... or when this many records wait */
  ANCHOR_MAX_LEAVES: int(1024, 1, 65_536),
  /** the anchor contract; unset: deployed on first start, its address stored in the database */
  ANCHOR_CONTRACT_ADDRESS: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, "0x followed by 40 hex digits")
    .optional(),
  /** confirmed anchors in the latest this many blocks are re-checked for reorgs */
  ANCHOR_REORG_DEPTH: int(12, 0, 10_000),
});

/**
 * The ledger of a consensus worker's environment: LEDGER when set, else `evm` when EVM_RPC_URL is set, else
 * `local`. @throws ConfigError when `evm` lacks EVM_RPC_URL or EVM_PRIVATE_KEY (the key is never printed)
 */
export function ledgerMode(env: Pick<ConsensusWorkerEnv, "LEDGER" | "EVM_RPC_URL" | "EVM_PRIVATE_KEY">): "local" | "evm" {
  const mode = env.LEDGER ?? (env.EVM_RPC_URL ? "evm" : "local");
  if (mode === "evm") {
    const missing = [!env.EVM_RPC_URL && "EVM_RPC_URL", !env.EVM_PRIVATE_KEY && "EVM_PRIVATE_KEY"].filter(Boolean);
    if (missing.length > 0) throw new ConfigError(`LEDGER=evm needs ${missing.join(" and ")}`);
    // checked here rather than in the schema so that no parse error could ever quote it
    if (!/^0x[0-9a-fA-F]{64}$/.test(env.EVM_PRIVATE_KEY as string)) throw new ConfigError("EVM_PRIVATE_KEY: 0x followed by 64 hex digits");
  }
  return mode;
}

export const webhookWorkerEnv = commonEnv.extend({
  METRICS_PORT: metricsPort(DEFAULT_METRICS_PORTS["webhook-worker"]),
  /** deliveries in flight per process (they wait on the network, not the CPU) */
  WEBHOOK_CONCURRENCY: int(256, 1, 4096),
  /** requests in flight per webhook and process: one slow receiver never holds every slot */
  WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK: int(16, 1, 4096),
});

export const manifestWorkerEnv = commonEnv.extend({
  METRICS_PORT: metricsPort(DEFAULT_METRICS_PORTS["manifest-worker"]),
  MANIFEST_CONCURRENCY: int(2, 1, 64),
  /** item fetches (a text_span task's text from its data_url: one short GET each) in flight per process */
  ITEM_FETCH_CONCURRENCY: int(8, 1, 256),
  /** GCS JSON API endpoint override (emulators, tests); unset = Google's */
  GCS_API_ENDPOINT: z.string().url().optional(),
});

export type CommonEnv = z.infer<typeof commonEnv>;
export type GatewayEnv = z.infer<typeof gatewayEnv>;
export type ConsensusWorkerEnv = z.infer<typeof consensusWorkerEnv>;
export type WebhookWorkerEnv = z.infer<typeof webhookWorkerEnv>;
export type ManifestWorkerEnv = z.infer<typeof manifestWorkerEnv>;

/** Thrown by `parseEnv` with one line per invalid variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * Parses an environment with a schema. Empty strings count as unset.
 * @throws ConfigError listing every invalid variable.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): z.infer<S> {
  const cleaned: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== "") cleaned[k] = v;
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n  ${lines.join("\n  ")}`);
  }
  return result.data;
}

/** The roles a process can run (one per service; standalone runs them all). */
export const ROLES = ["gateway", "consensus-worker", "webhook-worker", "manifest-worker"] as const;
export type Role = (typeof ROLES)[number];

/** Each role's environment schema. */
export const ROLE_ENVS = {
  gateway: gatewayEnv,
  "consensus-worker": consensusWorkerEnv,
  "webhook-worker": webhookWorkerEnv,
  "manifest-worker": manifestWorkerEnv,
} as const;

export type EnvOf<R extends Role> = z.infer<(typeof ROLE_ENVS)[R]>;

/**
 * The environment schema of a process running `roles`: the union of their variables. `METRICS_PORT`
 * defaults to the port of the first role (one ops server per process: standalone uses the gateway's).
 */
export function envSchemaFor(roles: readonly Role[]): z.ZodObject {
  const first = roles[0];
  if (!first) throw new ConfigError("a process runs at least one role");
  let schema: z.ZodObject = commonEnv;
  for (const role of roles) {
    const { METRICS_PORT: _port, ...shape } = ROLE_ENVS[role].shape;
    schema = schema.extend(shape);
  }
  return schema.extend({ METRICS_PORT: metricsPort(DEFAULT_METRICS_PORTS[first]) });
}

/**
 * The variables only `pnpm start` (standalone) reads, besides those of every role.
 */
export const standaloneOnlyEnv = z.object({
  /** where the embedded Postgres and the local chain keep their files and the generated admin token is stored */
  DATA_DIR: z.string().default(".data"),
  EMBEDDED_PG_PORT: int(54329, 1, 65535),
  /** port of the local chain (anvil) standalone starts when EVM_RPC_URL is unset and LEDGER is not `local`; 0 = a free port */
  ANVIL_PORT: int(8545, 0, 65535),
});

/** `pnpm start`: gateway and every worker in one process, on an embedded Postgres unless DATABASE_URL is set. */
export const standaloneEnv = gatewayEnv
  .extend(consensusWorkerEnv.omit({ METRICS_PORT: true }).shape)
  .extend(webhookWorkerEnv.omit({ METRICS_PORT: true }).shape)
  .extend(manifestWorkerEnv.omit({ METRICS_PORT: true }).shape)
  .extend(standaloneOnlyEnv.shape);
export type StandaloneEnv = z.infer<typeof standaloneEnv>;

export { assertSupportedNode, isSupportedNode, SUPPORTED_NODE } from "./node-version";
