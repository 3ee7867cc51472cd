import type { Logger } from "pino";

/**
 * Runs `close` once on SIGINT/SIGTERM, then exits; a second signal or `timeoutMs` forces the exit.
 */
export function onShutdown(logger: Logger, close: () => Promise<void>, timeoutMs = 10_000): void {
  let closing = false;
  const handler = (signal: string) => {
    if (closing) process.exit(1);
    closing = true;
    logger.info({ signal }, "shutting down");
    const timer = setTimeout(() => {
      logger.error("shutdown timed out");
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
}
