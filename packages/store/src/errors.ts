/**
 * Classifies an error thrown by Prisma (pg adapter) or pg as "the database cannot be reached".
 * Used to answer 503 `service unavailable` instead of 500. Returns false for query errors.
 */
const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH", "EPIPE"]);
const UNAVAILABLE_PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
const UNAVAILABLE_MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /connection terminated/i,
  /can't reach database server/i,
  /DatabaseNotReachable/i,
  /Connection (?:refused|closed)/i,
  /the database system is (?:starting up|shutting down)/i,
  /terminating connection due to administrator command/i,
];

export function isDatabaseUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const e = current as { code?: unknown; message?: unknown; cause?: unknown; kind?: unknown };
    if (typeof e.code === "string" && (UNAVAILABLE_CODES.has(e.code) || UNAVAILABLE_PRISMA_CODES.has(e.code))) return true;
    if (e.kind === "DatabaseNotReachable" || e.kind === "ConnectionClosed") return true;
    if (typeof e.message === "string" && UNAVAILABLE_MESSAGES.some((re) => re.test(e.message as string))) return true;
    current = e.cause;
  }
  return false;
}

/**
 * A unique violation (SQLSTATE 23505): from a Prisma model query (P2002), a Prisma raw statement (P2010,
 * whose driver adapter error carries Postgres's code) or a statement run on the pg pool (`code`).
 */
export function isUniqueViolation(err: unknown): boolean {
  if (!err || typeof err !== "object") return false;
  const e = err as { code?: unknown; meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } } };
  if (e.code === "P2002" || e.code === "23505") return true;
  return e.code === "P2010" && e.meta?.driverAdapterError?.cause?.originalCode === "23505";
}

/**
 * Why the store refused an operation: a domain outcome, not an HTTP answer. The gateway maps each kind to
 * an error kind of the API's error table once (services/gateway/src/errors.ts `STORE_ERROR_KINDS`).
 * - `customerGone`: an authenticated customer's row is gone (customers are never deleted);
 * - `invalid`: a value the store cannot accept (a label that is not an option, task defaults that make no
 *   consistent policy), with `details` naming the fields.
 */
export const STORE_ERROR_KINDS = [
  "emailTaken",
  "customerNotFound",
  "customerGone",
  "alreadyProduction",
  "quotaExhausted",
  "idempotencyMismatch",
  "taskNotFound",
  "taskNotCancelable",
  "taskNotSettled",
  "taskNotOpen",
  "claimNotFound",
  "claimAlreadyLabeled",
  "claimExpired",
  "webhookExists",
  "webhookInactive",
  "invalid",
] as const;
export type StoreErrorKind = (typeof STORE_ERROR_KINDS)[number];

/** A field a refusal names: its path in the request (`label`, `task_defaults.max_labels`) and why. */
export interface StoreErrorDetail {
  path: string;
  message: string;
}

/** A refusal of the store (see {@link StoreErrorKind}); `extra` are facts for the answer (e.g. the task's status). */
export class StoreError extends Error {
  constructor(
    readonly kind: StoreErrorKind,
    readonly details?: StoreErrorDetail[],
    readonly extra?: Record<string, unknown>,
  ) {
    super(details?.length ? `${kind}: ${details.map((d) => `${d.path} ${d.message}`).join("; ")}` : kind);
    this.name = "StoreError";
  }
}
