import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** A readiness check: resolves true when the dependency answers (false or a rejection = not ready). */
export type ReadinessCheck = () => Promise<boolean>;

export interface OpsServerOptions {
  /** METRICS_PORT; 0 = an ephemeral port (tests) */
  port: number;
  host?: string;
  registry: Registry;
  /** readiness checks by name (e.g. database: `SELECT 1`, queue: ping), each bounded by `checkTimeoutMs` */
  checks: Record<string, ReadinessCheck>;
  /** default 2000 ms */
  checkTimeoutMs?: number;
}

export interface OpsServer {
  /** the port it listens on (the ephemeral one when started with 0) */
  port: number;
  /** readiness answers 503 from now on (called first thing on SIGTERM) */
  setShuttingDown(): void;
  readonly shuttingDown: boolean;
  close(): Promise<void>;
}

async function runCheck(check: ReadinessCheck, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([check().catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { "content-type": contentType, "cache-control": "no-store" });
  res.end(body);
}

/**
 * The ops HTTP server of a process, on its own port (never the public API's):
 * `GET /metrics` (Prometheus text format of `registry`), `GET /healthz` (liveness: 200 while the event loop
 * answers), `GET /readyz` (readiness: 200 `{ok:true,checks}` when every check passes; 503 when one fails or
 * once shutdown started, `{ok:false, shutting_down, checks}`). Anything else is 404.
 * @throws when the port cannot be bound.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  let shuttingDown = false;
  const checkTimeoutMs = options.checkTimeoutMs ?? 2000;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "text/plain", "method not allowed\n");
    if (path === "/metrics") {
      return send(res, 200, options.registry.contentType, await options.registry.metrics());
    }
    if (path === "/healthz") return send(res, 200, "application/json", JSON.stringify({ ok: true }));
    if (path === "/readyz") {
      if (shuttingDown) return send(res, 503, "application/json", JSON.stringify({ ok: false, shutting_down: true, checks: {} }));
      const names = Object.keys(options.checks);
      const results = await Promise.all(names.map((n) => runCheck(options.checks[n] as ReadinessCheck, checkTimeoutMs)));
      const checks = Object.fromEntries(names.map((n, i) => [n, results[i] ? "ok" : "unavailable"]));
      const ok = results.every(Boolean) && !shuttingDown;
      return send(res, ok ? 200 : 503, "application/json", JSON.stringify({ ok, shutting_down: shuttingDown, checks }));
    }
    return send(res, 404, "text/plain", "not found\n");
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, "text/plain", `${(err as Error).message}\n`);
      else res.destroy(err as Error);
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "0.0.0.0", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    setShuttingDown() {
      shuttingDown = true;
    },
    get shuttingDown() {
      return shuttingDown;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
