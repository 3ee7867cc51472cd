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
import { type Anvil, fundOnAnvil, minedTransactionCount, signerAddress, startAnvil, waitForStateDump } from "@labelgate/chain/node";
import { assertSupportedNode, parseEnv, standaloneOnlyEnv } from "@labelgate/config";
import { consensusRole } from "@labelgate/consensus-worker";
import { createLogger, STOP_SIGNALS, settleWithin } from "@labelgate/core";
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
  /** resolves with the helper's exit code once it exited (stopped, or died) */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** Restarts of the local chain allowed within RESTART_WINDOW_MS before labelgate stops (exit 1). */
const MAX_CHAIN_RESTARTS = 5;
const RESTART_WINDOW_MS = 10 * 60_000;
/** How long the stop after a fatal child exit may take before the process exits anyway, ms. */
const FAIL_STOP_MS = 15_000;

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
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const code = await exited;
      if (code !== 0) log(`embedded Postgres stopped with exit code ${code}: ${output}`);
      // its wrapper killed (SIGKILL) leaves the server running in its own process group
      await stopOrphanedServer(databaseDir, log);
    },
  };
}

/**
 * Stops a Postgres server still running on `databaseDir` (its pid is the first line of postmaster.pid) with a
 * fast shutdown (SIGINT), then SIGKILL after 10 s. Nothing when no server runs there.
 */
async function stopOrphanedServer(databaseDir: string, log: (m: string) => void): Promise<void> {
  const pid = serverPidOf(databaseDir);
  if (pid === undefined) return;
  log(`stopping the embedded Postgres server left running (pid ${pid})`);
  process.kill(pid, "SIGINT");
  const deadline = Date.now() + 10_000;
  while (serverPidOf(databaseDir) === pid && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (serverPidOf(databaseDir) === pid) process.kill(pid, "SIGKILL");
}

/**
 * The pid of the Postgres server running on `databaseDir` (the first line of its postmaster.pid), or undefined
 * when none runs there. A pid file a killed server left behind may name a pid reused since: only a process
 * whose command line names the directory counts (Linux /proc).
 */
function serverPidOf(databaseDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(databaseDir, "postmaster.pid"), "utf8").split("\n")[0]);
    return pid > 0 && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(databaseDir) ? pid : undefined;
  } catch {
    return undefined; // no pid file (the server removes it when it stops), or no such process
  }
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

  // A stop asked while the stack starts is kept and carried out once it runs (the runtime's handlers are
  // installed then); `stopping` also tells the supervision below that a child's exit was asked for.
  let stopping = false;
  let stopAsked: NodeJS.Signals | undefined;
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      stopping = true;
      stopAsked ??= signal;
    });
  }
  // Started by `pnpm start` (scripts/start.ts): its pipe on our stdin ends when it dies, even by SIGKILL
  // (pnpm killed, a supervisor gone): a stop like SIGTERM (decision 0201)
  if (process.env.LABELGATE_LIFELINE === "stdin") {
    const lost = () => {
      if (stopping) return;
      bootLogger.warn("the process that started labelgate is gone: stopping");
      process.kill(process.pid, "SIGTERM");
    };
    process.stdin.once("end", lost);
    process.stdin.once("error", lost);
    process.stdin.resume();
  }
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
  // A connection of a pool without an error listener, ended because the embedded Postgres server died, is
  // that death: it stops the stack as the wrapper's exit would (`failStack`, naming the embedded Postgres),
  // whichever of the two is seen first.
  const embeddedGone = () => embedded !== undefined && serverPidOf(path.resolve(own.DATA_DIR, "pg")) === undefined;
  let failStack: ((reason: Record<string, unknown>) => Promise<void>) | undefined;
  process.on("uncaughtException", (err: Error & { code?: string }) => {
    if (stopping && (err.code === "57P01" || embeddedGone())) {
      bootLogger.warn({ code: err.code, err: err.message }, "embedded Postgres closed a connection while shutting down");
      return;
    }
    if (failStack && embeddedGone()) {
      void failStack({ process: "embedded Postgres", err: err.message });
      return;
    }
    bootLogger.fatal({ err }, "uncaught exception");
    process.exit(1);
  });

  // the local chain: LEDGER=evm on anvil unless a chain is configured or the local ledger is asked for
  let anvil: Anvil | undefined;
  let chainKey: string | undefined;
  const env: Record<string, string | undefined> = { ...process.env };
  if (!env.EVM_RPC_URL && env.LEDGER !== "local") {
    // stopped last, by the shutdown; restarted with backoff when it dies (`superviseChildren`). It stays in
    // this process group, which `pnpm start` runs apart from pnpm's (scripts/start.ts)
    anvil = await startAnvil({ port: own.ANVIL_PORT, stateDir: path.resolve(own.DATA_DIR, "anvil") });
    bootLogger.info({ pid: anvil.process.pid, rpc_url: anvil.rpcUrl }, "local chain started");
    started.push(anvil);
    const key = persistentSecret(own.DATA_DIR, "evm-key", env.EVM_PRIVATE_KEY, () => `0x${randomBytes(32).toString("hex")}`);
    await fundOnAnvil(anvil.rpcUrl, key);
    chainKey = key;
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
  if (stopAsked) {
    bootLogger.info({ signal: stopAsked }, "stop asked while starting: stopping now");
    process.kill(process.pid, stopAsked);
    return;
  }
  failStack = async (reason) => {
    if (stopping) return; // a requested stop, or a failure already being handled
    stopping = true;
    bootLogger.fatal(reason, "a process labelgate needs is gone: stopping (exit 1)");
    // bounded: a queue or pool on a dead Postgres may not close
    const done = await settleWithin(runtime.shutdown(), FAIL_STOP_MS).catch((err: unknown) => {
      bootLogger.error({ err }, "shutdown failed");
      return true;
    });
    if (!done) bootLogger.error({ bound_ms: FAIL_STOP_MS }, "shutdown not done within its bound");
    process.exit(1);
  };
  superviseChildren({
    embedded,
    anvil,
    stateDir: path.resolve(own.DATA_DIR, "anvil"),
    logger: bootLogger,
    stopping: () => stopping,
    replaced: async (next) => {
      anvil = next;
      // a state file older than the funding (killed within its write interval) restarts the key unfunded
      if (chainKey) await fundOnAnvil(next.rpcUrl, chainKey);
    },
    fail: (reason) => (failStack as (r: Record<string, unknown>) => Promise<void>)(reason),
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
      `  admin token  ${adminToken}   (${process.env.ADMIN_TOKEN ? "from ADMIN_TOKEN" : `kept in ${path.resolve(own.DATA_DIR, "admin-token")}`})`,
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
  if (anvil?.statePath && chainKey) await awaitDurableChain(anvil.statePath, anvil.rpcUrl, signerAddress(chainKey), bootLogger);
}

/**
 * Waits until the anchor contract is deployed (the signer's first transaction, sent by the anchorer when it
 * connects) and anvil's state file holds it, so that a local chain killed from then on restarts with the
 * contract and the funds (a state file older than the deployment restarts a chain on which anchoring cannot
 * go on). Then it logs "local chain state saved". Bounded: after 30 s it logs a warning instead.
 */
async function awaitDurableChain(
  statePath: string,
  rpcUrl: string,
  signer: string,
  logger: ReturnType<typeof createLogger>,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  try {
    while ((await minedTransactionCount(rpcUrl, signer)) < 1) {
      if (Date.now() > deadline) throw new Error("the anchor contract was not deployed within 30 s");
      await new Promise((r) => setTimeout(r, 100));
    }
    await waitForStateDump(statePath, Date.now());
    logger.info({ state: statePath }, "local chain state saved");
  } catch (err) {
    logger.warn(
      { err: err instanceof Error ? err.message : String(err) },
      "local chain state not yet saved: a chain killed now may restart without the anchor contract",
    );
  }
}

/**
 * Never half alive (decision 0201): the embedded Postgres dying is fatal (`fail`: the stack stops, exit 1);
 * the local chain dying is restarted on its port and state with backoff (1 s, 2 s, 4 s...), and more than
 * MAX_CHAIN_RESTARTS exits within RESTART_WINDOW_MS is fatal. Anchoring resumes on the restarted chain
 * (its state file is written every second; a transaction it lost is broadcast again by the anchorer).
 * A child's exit during a requested stop (`stopping()`) is expected and ignored.
 */
function superviseChildren(o: {
  embedded: Embedded | undefined;
  anvil: Anvil | undefined;
  stateDir: string;
  logger: ReturnType<typeof createLogger>;
  stopping: () => boolean;
  /** the restarted chain, before it is announced; a throw counts as a failed restart */
  replaced: (anvil: Anvil) => Promise<void>;
  fail: (reason: Record<string, unknown>) => Promise<void>;
}): void {
  void o.embedded?.exited.then((code) => {
    if (!o.stopping()) void o.fail({ process: "embedded Postgres", pid: o.embedded?.pid, code });
  });
  const restarts: number[] = [];
  const watch = (chain: Anvil) => {
    chain.process.once("exit", (code, signal) => {
      if (!o.stopping()) void restart(chain.port, { code, signal });
    });
  };
  const restart = async (port: number, exit: Record<string, unknown>): Promise<void> => {
    const now = Date.now();
    while (restarts.length > 0 && now - (restarts[0] as number) > RESTART_WINDOW_MS) restarts.shift();
    if (restarts.length >= MAX_CHAIN_RESTARTS) {
      await o.fail({ process: "local chain (anvil)", ...exit, restarts: restarts.length, window_ms: RESTART_WINDOW_MS });
      return;
    }
    const delayMs = 1000 * 2 ** restarts.length;
    restarts.push(now);
    o.logger.warn({ ...exit, restart_in_ms: delayMs }, "local chain (anvil) exited: restarting it");
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (o.stopping()) return;
    try {
      const chain = await startAnvil({ port, stateDir: o.stateDir });
      if (o.stopping()) {
        await chain.stop();
        return;
      }
      watch(chain);
      await o.replaced(chain);
      o.logger.info({ pid: chain.process.pid, rpc_url: chain.rpcUrl, restarts: restarts.length }, "local chain restarted");
    } catch (err) {
      await restart(port, { err: err instanceof Error ? err.message : String(err) });
    }
  };
  if (o.anvil) watch(o.anvil);
}

main().catch(async (err: unknown) => {
  console.error(err);
  for (const child of started.reverse()) await child.stop().catch(() => undefined);
  process.exit(1);
});
