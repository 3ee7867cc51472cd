import type { Server } from "node:http";
import type { Logger } from "pino";

/** Signals that ask a process to stop: SIGHUP too (the terminal of `pnpm start` closed). */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** The same signal again within this many ms is one request delivered twice (a group signal and a relay of it). */
const REPEAT_MS = 1000;

/**
 * Runs `close` once on SIGINT, SIGTERM or SIGHUP, then exits 0 (1 when `close` throws). A second signal
 * (not the first one repeated within a second: a signal sent to a process group and relayed too, pnpm
 * issue 7374), or `close` not done within `timeoutMs` (SHUTDOWN_TIMEOUT_MS, default 10 s), forces exit
 * code 1: `close` should itself finish within `drainBudgetMs(timeoutMs)` so that the hard limit is never
 * reached.
 */
export function onShutdown(logger: Logger, close: () => Promise<void>, timeoutMs = 10_000): void {
  let first: { signal: string; at: number } | undefined;
  const handler = (signal: string) => {
    if (first) {
      if (signal === first.signal && Date.now() - first.at < REPEAT_MS) return;
      logger.warn({ signal }, "second stop signal: exiting at once");
      process.exit(1);
    }
    first = { signal, at: Date.now() };
    const started = Date.now();
    logger.info({ signal, timeout_ms: timeoutMs }, "shutting down");
    const timer = setTimeout(() => {
      logger.error({ timeout_ms: timeoutMs }, "shutdown timed out");
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    close().then(
      () => {
        logger.info({ duration_ms: Date.now() - started }, "shutdown complete");
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  for (const signal of STOP_SIGNALS) process.on(signal, handler);
}

/**
 * The part of a shutdown bound given to in-flight work (requests, jobs): the bound less 2 s for closing
 * connections and pools (at least half of it), ms.
 */
export function drainBudgetMs(timeoutMs: number): number {
  return Math.max(timeoutMs - 2000, Math.floor(timeoutMs / 2));
}

/**
 * Closes an HTTP server gracefully within `boundMs`: stops accepting connections, closes idle keep-alive
 * connections at once and each one as soon as its in-flight request is answered (polled every 50 ms), and at
 * the bound closes whatever is still open. Resolves when the server is closed.
 */
export async function closeHttpServer(server: Server, boundMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const idle = setInterval(() => server.closeIdleConnections(), 50);
  const force = setTimeout(() => server.closeAllConnections(), boundMs);
  try {
    await closed;
  } finally {
    clearInterval(idle);
    clearTimeout(force);
  }
}

/**
 * Waits for `promise` at most `ms`. @returns true when it settled in time (its rejection is rethrown),
 * false when the time ran out (the promise is left running).
 */
export async function settleWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise.then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), Math.max(0, ms));
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
