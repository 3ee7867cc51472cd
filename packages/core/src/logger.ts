import pino, { type Logger } from "pino";

export type { Logger };

/** Paths redacted from every log line: keys, tokens, secrets and credentials never reach the logs. */
export const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  "headers.authorization",
  "authorization",
  "api_key",
  "*.api_key",
  "secret",
  "*.secret",
  "token",
  "*.token",
  "credentials",
  "*.credentials",
  "s3_credentials",
  "*.s3_credentials",
];

/**
 * A structured JSON logger (pino) for one service.
 * @param service name put on every line (`service`)
 * @param level pino level, or "silent"
 */
export function createLogger(service: string, level: string, destination?: pino.DestinationStream): Logger {
  return pino({ name: service, level, base: { service }, redact: { paths: REDACT_PATHS, censor: "[redacted]" } }, destination);
}
