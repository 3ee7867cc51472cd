/**
 * The one table that maps error kinds to HTTP status and message (contract §errors, §wire), and the
 * error every layer throws: the store and the handlers throw `new ApiError(kind)`; the gateway's error
 * middleware (services/gateway/src/errors.ts) renders `{"error": message, ...}` with the kind's status.
 */
export const ERRORS = {
  validation: { status: 400, message: "validation failed" },
  invalidJson: { status: 400, message: "invalid JSON" },
  malformedRequest: { status: 400, message: "malformed HTTP request" },
  unauthorized: { status: 401, message: "invalid API key" },
  quotaExhausted: { status: 403, message: "quota exhausted" },
  taskNotFound: { status: 404, message: "task not found" },
  batchNotFound: { status: 404, message: "batch not found" },
  claimNotFound: { status: 404, message: "claim not found" },
  customerNotFound: { status: 404, message: "customer not found" },
  webhookNotFound: { status: 404, message: "webhook not found" },
  deliveryNotFound: { status: 404, message: "delivery not found" },
  jobNotFound: { status: 404, message: "job not found" },
  instructionsNotFound: { status: 404, message: "instructions not found" },
  routeNotFound: { status: 404, message: "not found" },
  methodNotAllowed: { status: 405, message: "method not allowed" },
  requestTimeout: { status: 408, message: "request timeout" },
  emailTaken: { status: 409, message: "email already registered" },
  claimAlreadyLabeled: { status: 409, message: "claim already labeled" },
  claimExpired: { status: 409, message: "claim expired" },
  taskNotOpen: { status: 409, message: "task no longer accepts labels" },
  taskNotCancelable: { status: 409, message: "task cannot be canceled" },
  taskCanceled: { status: 409, message: "task canceled" },
  webhookExists: { status: 409, message: "an active webhook already uses this callback_url" },
  webhookInactive: { status: 409, message: "webhook is not active" },
  jobNotCompleted: { status: 409, message: "job not completed" },
  batchNotCompleted: { status: 409, message: "batch not completed" },
  goldHasNoResult: { status: 409, message: "gold tasks have no result" },
  taskNotSettled: { status: 409, message: "task not settled" },
  alreadyProduction: { status: 409, message: "customer is already on the production tier" },
  payloadTooLarge: { status: 413, message: "payload too large" },
  unsupportedMediaType: { status: 415, message: "content-type must be application/json" },
  idempotencyMismatch: { status: 422, message: "idempotency key reused with a different request" },
  rateLimited: { status: 429, message: "rate limit exceeded" },
  headersTooLarge: { status: 431, message: "request header fields too large" },
  internal: { status: 500, message: "internal error" },
  unavailable: { status: 503, message: "service unavailable" },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorKind = keyof typeof ERRORS;

export interface ErrorDetail {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly details?: ErrorDetail[],
    /** extra fields merged into the body, e.g. the task status on a 409 */
    readonly extra?: Record<string, unknown>,
  ) {
    super(ERRORS[kind].message);
    this.name = "ApiError";
  }
  get status(): number {
    return ERRORS[this.kind].status;
  }
}
