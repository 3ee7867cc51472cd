/**
 * `pnpm start`: the whole system in one process, built by the same runtime as the distributed services
 * (@labelgate/runtime) with all four roles. With no DATABASE_URL it starts an embedded Postgres (files under
 * DATA_DIR, default `.data/`); with no REDIS_URL it runs BullMQ on its Postgres backend. It migrates on
 * start, and prints the URL and admin token. Unless EVM_RPC_URL is set or LEDGER=local, it starts a local EVM
 * chain (anvil, from the @foundry-rs/anvil package) on ANVIL_PORT (default 8545) with its state under
 * DATA_DIR/anvil, with a signing key of its own kept in DATA_DIR/evm-key and funded on that chain, and
 * settles on it (LEDGER=evm): the anchor contract is deployed on the first start.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type Anvil, fundOnAnvil, startAnvil } from "@labelgate/chain/node";
import { assertSupportedNode, parseEnv, standaloneOnlyEnv } from "@labelgate/config";
import { consensusRole } from "@labelgate/consensus-worker";
import { createLogger } from "@labelgate/core";
import { gatewayRole } from "@labelgate/gateway";
import { manifestRole } from "@labelgate/manifest-worker";
import { createRuntime } from "@labelgate/runtime";
import { migrateDatabase } from "@labelgate/store";
import { ensureWebBuild } from "@labelgate/web";
import { webhookRole } from "@labelgate/webhook-worker";

interface Embedded {
  url: string;
  /** the helper process's pid (Postgres runs as its child) */
  pid: number;
  stop(): Promise<void>;
}

/**
 * max_connections of the embedded Postgres: Postgres' default of 100 left the pools of every role short
 * under load ("sorry, too many clients already", issue 28 item 6); the runtime plans the pools within it.
 */
const EMBEDDED_MAX_CONNECTIONS = 300;

/**
 * Starts the embedded Postgres as a process of its own (scripts/embedded-postgres.ts) in a process group of
 * its own: a Ctrl-C in the terminal reaches this process only, which stops Postgres last, after the drain.
 * The helper also stops Postgres when this process dies (its stdin ends). Resolves once Postgres is ready.
 * @throws Error with the helper's output when it exits first or is not ready within 120 s
 */
async function startEmbeddedPostgres(dataDir: string, port: number, log: (m: string) => void): Promise<Embedded> {
  const databaseDir = path.resolve(dataDir, "pg");
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(__dirname, "embedded-postgres.ts"), databaseDir, String(port), String(EMBEDDED_MAX_CONNECTIONS)],
    { stdio: ["pipe", "pipe", "pipe"], detached: true },
  );
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`embedded Postgres not ready within 120 s: ${output}`)), 120_000);
    child.stderr?.on("data", (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n")) {
        if (line === "ready") {
          clearTimeout(timer);
          resolve();
        } else if (line) log(line);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`embedded Postgres exited (${code}) before it was ready: ${output}`));
    });
  });
  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${port}/labelgate`,
    pid: child.pid as number,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const code = await exited;
      if (code !== 0) log(`embedded Postgres stopped with exit code ${code}: ${output}`);
    },
  };
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

/** the embedded Postgres and the chain once started: a start that fails stops them (Postgres is detached) */
const started: { stop(): Promise<void> }[] = [];

async function main(): Promise<void> {
  assertSupportedNode();
  // the variables only standalone reads; the runtime parses those of the roles
  const own = parseEnv(standaloneOnlyEnv, process.env);
  const bootLogger = createLogger("labelgate", process.env.LOG_LEVEL === "silent" ? "silent" : "info");
  mkdirSync(own.DATA_DIR, { recursive: true });
  // the labeler app and the console, built on the first start (and after their sources change)
  ensureWebBuild((m) => bootLogger.info(m));

  const embedded = process.env.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres(own.DATA_DIR, own.EMBEDDED_PG_PORT, (m) => bootLogger.info(m));
  if (embedded) {
    bootLogger.info({ pid: embedded.pid, max_connections: EMBEDDED_MAX_CONNECTIONS }, "embedded Postgres started");
    started.push(embedded);
  }
  const databaseUrl = process.env.DATABASE_URL || (embedded as Embedded).url;
  await migrateDatabase(databaseUrl);
  const adminToken = persistentSecret(
    own.DATA_DIR,
    "admin-token",
    process.env.ADMIN_TOKEN,
    () => `adm_${randomBytes(24).toString("base64url")}`,
  );
  const encryptionKey = persistentSecret(own.DATA_DIR, "encryption-key", process.env.ENCRYPTION_KEY, () => randomBytes(32).toString("hex"));

  // Postgres runs in a process group of its own and is stopped after the drain, so a Ctrl-C no longer ends
  // its connections under the drain. Should one still end ("terminating connection due to
  // administrator command", 57P01: someone stopped the server), an idle pg client without an error listener
  // (BullMQ's Postgres backend) throws it as an uncaught exception; during shutdown it is only logged.
  // Anything else still ends the process.
  let stopping = false;
  process.on("uncaughtException", (err: Error & { code?: string }) => {
    if (stopping && err.code === "57P01") {
      bootLogger.warn({ code: err.code }, "embedded Postgres closed a connection while shutting down");
      return;
    }
    bootLogger.fatal({ err }, "uncaught exception");
    process.exit(1);
  });
  process.once("SIGINT", () => {
    stopping = true;
  });
  process.once("SIGTERM", () => {
    stopping = true;
  });

  // the local chain: LEDGER=evm on anvil unless a chain is configured or the local ledger is asked for
  let anvil: Anvil | undefined;
  const env: Record<string, string | undefined> = { ...process.env };
  if (!env.EVM_RPC_URL && env.LEDGER !== "local") {
    // stopped last, by the shutdown. It stays in this process group (unlike Postgres): started detached, it
    // made the Python client's suite crash this process on an undici assertion (docs/reliability.md, item 8)
    anvil = await startAnvil({ port: own.ANVIL_PORT, stateDir: path.resolve(own.DATA_DIR, "anvil") });
    bootLogger.info({ pid: anvil.process.pid, rpc_url: anvil.rpcUrl }, "local chain started");
    started.push(anvil);
    const key = persistentSecret(own.DATA_DIR, "evm-key", env.EVM_PRIVATE_KEY, () => `0x${randomBytes(32).toString("hex")}`);
    await fundOnAnvil(anvil.rpcUrl, key);
    env.EVM_RPC_URL = anvil.rpcUrl;
    env.EVM_PRIVATE_KEY = key;
    env.LEDGER ??= "evm";
  }
  const ledger = env.LEDGER ?? (env.EVM_RPC_URL ? "evm" : "local");

  const runtime = await createRuntime(env, [gatewayRole, consensusRole, webhookRole, manifestRole], {
    databaseUrl,
    queueBackend: { kind: "postgres", url: databaseUrl, schema: "bullmq" },
    adminToken,
    encryptionKey,
    handleSignals: true,
    afterShutdown: async () => {
      bootLogger.info("stopping the embedded Postgres and the local chain");
      await embedded?.stop();
      await anvil?.stop();
    },
  });
  const [gateway] = runtime.instances;
  const url = `http://127.0.0.1:${gateway.port}`;
  process.stdout.write(
    [
      "",
      "labelgate is running (standalone)",
      `  API          ${url}/v1   (health: ${url}/v1/health)`,
      `  console      ${url}/console/   (customer console: sign in with a customer key)`,
      `  labeler app  ${url}/label/   (sign in with a labeler key from POST /v1/admin/labelers)`,
      `  API docs     ${url}/docs/   (every route; the README's quick start uses curl)`,
      `  admin token  ${adminToken}`,
      `  queues UI    ${url}/admin/queues   (user: any, password: the admin token)`,
      `  ops          http://127.0.0.1:${runtime.ops.port}/metrics, /healthz, /readyz`,
      `  database     ${embedded ? `embedded Postgres, ${path.resolve(own.DATA_DIR, "pg")}` : "DATABASE_URL"}`,
      `  queues       ${runtime.ctx.backend.kind === "redis" ? "Redis (REDIS_URL)" : "BullMQ Postgres backend"}`,
      `  ledger       ${ledger === "evm" ? `evm, ${anvil ? `local chain (anvil) ${anvil.rpcUrl}, state ${path.resolve(own.DATA_DIR, "anvil")}` : "EVM_RPC_URL"}` : "local (hash-chained table, nothing anchored)"}`,
      ...(ledger === "evm" ? [`  verify       pnpm labelgate verify <task_id> --rpc-url ${anvil ? anvil.rpcUrl : "$EVM_RPC_URL"}`] : []),
      `  try          pnpm replay --limit 100 --base-url ${url}   (the first 100 items of data/crowd/dog)`,
      "",
    ].join("\n"),
  );
}

main().catch(async (err: unknown) => {
  console.error(err);
  for (const child of started.reverse()) await child.stop().catch(() => undefined);
  process.exit(1);
});
