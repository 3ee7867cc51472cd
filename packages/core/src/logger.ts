import pino, { type Logger } from "pino";

export type { Logger };

/** Paths redacted from every log line: keys, tokens, secrets and credentials never reach the logs. */
export const REDACT_PATHS = [
  // request and response headers (pino-http's req/res serializers)
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["x-api-key"]',
  'req.headers["x-svc-signature"]',
  'res.headers["set-cookie"]',
  "headers.authorization",
  'headers["x-svc-signature"]',
  "authorization",
  // keys, tokens, secrets and storage credentials, at the top level or one level down
  "api_key",
  "*.api_key",
  "secret",
  "*.secret",
  "token",
  "*.token",
  "password",
  "*.password",
  "credentials",
  "*.credentials",
  "s3_credentials",
  "*.s3_credentials",
  "secret_access_key",
  "*.secret_access_key",
  "service_account_json",
  "*.service_account_json",
  // a database client attached to a driver error (pg's errors from BullMQ's Postgres backend carry their
  // whole client: connection parameters and state, never useful in a log line)
  "err.client",
];

/**
 * A structured JSON logger (pino) for one service.
 * @param service name put on every line (`service`)
 * @param level pino level, or "silent"
 */
export function createLogger(service: string, level: string, destination?: pino.DestinationStream): Logger {
  return pino({ name: service, level, base: { service }, redact: { paths: REDACT_PATHS, censor: "[redacted]" } }, destination);
}
