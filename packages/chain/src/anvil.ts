/**
 * Starts a local EVM chain: the `anvil` binary of Foundry, shipped by the `@foundry-rs/anvil` npm package
 * (its platform package, e.g. `@foundry-rs/anvil-linux-amd64/bin/anvil`; nothing is downloaded), as a
 * child process. Node only.
 * anvil's stdout lists its development accounts' private keys: it is read only for the
 * "Listening on host:port" line and otherwise discarded, never logged.
 * Reference: https://getfoundry.sh/anvil/reference/anvil
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { privateKeyToAddress } from "viem/accounts";

export interface AnvilOptions {
  /** TCP port; default 0 (a free port chosen by the OS) */
  port?: number;
  /** address to listen on; default 127.0.0.1 (a container: 0.0.0.0) */
  host?: string;
  /** directory of the chain's state file (`anvil-state.json`, `--state`): loaded at start, written at exit and every `stateIntervalS` */
  stateDir?: string;
  /** seconds between state dumps with `stateDir` (crash safety); default 1 */
  stateIntervalS?: number;
  /** seconds per block (interval mining); default: a block per transaction (auto-mining) */
  blockTime?: number;
  /** mine only on `evm_mine` (to hold transactions in the pool, e.g. to drop one) */
  noMining?: boolean;
  /** chain id; default anvil's 31337 */
  chainId?: number;
  /** the anvil binary; default: the one of the `@foundry-rs/anvil` package */
  binary?: string;
  /** give up when the RPC does not answer within this many ms; default 15,000 */
  startTimeoutMs?: number;
}

export interface Anvil {
  /** `http://127.0.0.1:<port>` */
  rpcUrl: string;
  port: number;
  /** the state file, with `stateDir` */
  statePath?: string;
  /** the child process */
  process: ChildProcess;
  /** SIGTERM (anvil writes its state file), SIGKILL after `graceMs` (default 5,000); resolves once it exited */
  stop(graceMs?: number): Promise<void>;
}

const PLATFORM_PACKAGES: Record<string, string> = {
  "linux-x64": "@foundry-rs/anvil-linux-amd64",
  "linux-arm64": "@foundry-rs/anvil-linux-arm64",
  "darwin-x64": "@foundry-rs/anvil-darwin-amd64",
  "darwin-arm64": "@foundry-rs/anvil-darwin-arm64",
  "win32-x64": "@foundry-rs/anvil-win32-amd64",
};

/**
 * Path of the anvil binary installed by the `@foundry-rs/anvil` package for this platform.
 * @throws Error when this platform has no anvil package or it is not installed.
 */
export function anvilBinary(): string {
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORM_PACKAGES[key];
  if (!pkg) throw new Error(`@foundry-rs/anvil ships no binary for ${key}`);
  const fromAnvil = createRequire(require.resolve("@foundry-rs/anvil/package.json"));
  return fromAnvil.resolve(`${pkg}/bin/${process.platform === "win32" ? "anvil.exe" : "anvil"}`);
}

async function rpcAnswers(rpcUrl: string): Promise<boolean> {
  try {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(1000),
    });
    return res.ok && typeof ((await res.json()) as { result?: unknown }).result === "string";
  } catch {
    return false; // not listening yet: the caller polls until its deadline
  }
}

/**
 * Starts anvil and resolves once its JSON-RPC answers `eth_chainId`.
 * @throws Error when anvil exits early or does not answer within `startTimeoutMs` (the process is killed).
 */
export async function startAnvil(options: AnvilOptions = {}): Promise<Anvil> {
  const args = ["--host", options.host ?? "127.0.0.1", "--port", String(options.port ?? 0)];
  let statePath: string | undefined;
  if (options.stateDir) {
    mkdirSync(options.stateDir, { recursive: true });
    statePath = path.join(options.stateDir, "anvil-state.json");
    args.push("--state", statePath, "--state-interval", String(options.stateIntervalS ?? 1));
  }
  if (options.blockTime !== undefined) args.push("--block-time", String(options.blockTime));
  if (options.noMining) args.push("--no-mining");
  if (options.chainId !== undefined) args.push("--chain-id", String(options.chainId));

  const child = spawn(options.binary ?? anvilBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderrTail = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString("utf8")).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let exitedEarly = false;
  void exited.then(() => {
    exitedEarly = true;
  });

  const stop = async (graceMs = 5000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  };

  // the port anvil bound, from its "Listening on 127.0.0.1:<port>" line; the rest of stdout is dropped
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = "";
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`anvil printed no listening address within ${options.startTimeoutMs ?? 15_000} ms`));
    }, options.startTimeoutMs ?? 15_000);
    const onData = (chunk: Buffer) => {
      buffered = (buffered + chunk.toString("utf8")).slice(-4000);
      const m = /Listening on [^\s:]+:(\d+)/.exec(buffered);
      if (m) {
        cleanup();
        resolve(Number(m[1]));
      }
    };
    const onExit = () => {
      cleanup();
      reject(new Error(`anvil exited before listening: ${stderrTail.trim() || `exit code ${child.exitCode}`}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.off("exit", onExit);
      child.stdout?.resume(); // keep draining (anvil logs every call), never read again
    };
    child.stdout?.on("data", onData);
    child.once("exit", onExit);
  }).catch(async (err: unknown) => {
    await stop(1000);
    throw err;
  });

  const rpcUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.startTimeoutMs ?? 15_000);
  while (!(await rpcAnswers(rpcUrl))) {
    if (exitedEarly) throw new Error(`anvil exited: ${stderrTail.trim() || `exit code ${child.exitCode}`}`);
    if (Date.now() > deadline) {
      await stop(1000);
      throw new Error(`anvil at ${rpcUrl} did not answer within ${options.startTimeoutMs ?? 15_000} ms`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { rpcUrl, port, statePath, process: child, stop };
}

/**
 * Sets the balance of `privateKey`'s account on an anvil chain (`anvil_setBalance`; default 100 ETH), so a
 * key of our own (not anvil's well-known development keys) can deploy and anchor. The key stays here: only
 * its address is sent. @throws Error when the RPC answers an error (not an anvil node)
 */
export async function fundOnAnvil(rpcUrl: string, privateKey: string, wei = 100n * 10n ** 18n): Promise<void> {
  const res = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "anvil_setBalance",
      params: [privateKeyToAddress(privateKey as `0x${string}`), `0x${wei.toString(16)}`],
    }),
  });
  const body = (await res.json()) as { error?: { message?: string } };
  if (body.error) throw new Error(`anvil_setBalance: ${body.error.message ?? "error"}`);
}

/**
 * Resolves once anvil's state file (`statePath`, written every `--state-interval`) has been written after
 * `sinceMs` (epoch ms), so that what the chain holds at `sinceMs` survives a SIGKILL of anvil.
 * @throws Error when no such write is seen within `timeoutMs` (default 10,000 ms)
 */
export async function waitForStateDump(statePath: string, sinceMs: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let mtimeMs = 0;
    try {
      mtimeMs = statSync(statePath).mtimeMs;
    } catch {
      // not written yet: the first dump comes within the interval
    }
    if (mtimeMs > sinceMs) return;
    if (Date.now() > deadline) throw new Error(`anvil wrote no state to ${statePath} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The number of transactions mined from `address` on the chain at `rpcUrl` (`eth_getTransactionCount`,
 * "latest"). @throws Error when the RPC answers an error or does not answer within 2,000 ms
 */
export async function minedTransactionCount(rpcUrl: string, address: string): Promise<number> {
  const res = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getTransactionCount", params: [address, "latest"] }),
    signal: AbortSignal.timeout(2000),
  });
  const body = (await res.json()) as { result?: string; error?: { message?: string } };
  if (body.error || typeof body.result !== "string") throw new Error(`eth_getTransactionCount: ${body.error?.message ?? "no result"}`);
  return Number(BigInt(body.result));
}

/** The address of a hex private key (`0x` + 64 hex digits). @throws Error when the key is malformed */
export function signerAddress(privateKey: string): string {
  return privateKeyToAddress(privateKey as `0x${string}`);
}
