/**
 * Typed errors of the SDK. Every non-2xx answer becomes a {@link LabelgateError} subclass chosen by its
 * status (contract §errors): `status`, the server's `error` message, validation `details`, the `requestId`
 * (`request_id` of the body, else the `X-Request-Id` header) and the whole parsed `body`.
 * A request that never got an answer (connection refused, reset, timeout) is a {@link ConnectionError}
 * (`status` 0).
 */
import type { ErrorBody, ErrorDetail } from "./types";

export interface LabelgateErrorInit {
  status: number;
  error: string;
  details?: ErrorDetail[];
  requestId?: string;
  body?: ErrorBody;
  /** attempts made (first included) */
  attempts?: number;
  method?: string;
  path?: string;
  retryAfterMs?: number;
  cause?: unknown;
}

/** Base class of every error the client throws for an HTTP answer or a failed request. */
export class LabelgateError extends Error {
  /** HTTP status; 0 when no answer arrived ({@link ConnectionError}) */
  readonly status: number;
  /** the server's `error` message, e.g. `task not found` */
  readonly error: string;
  /** validation problems of a 400 (`[]` otherwise) */
  readonly details: ErrorDetail[];
  /** the request id to quote to support (body `request_id` or the `X-Request-Id` header) */
  readonly requestId: string | undefined;
  /** the parsed error body (route-specific extra fields included, e.g. `status` of a 409) */
  readonly body: ErrorBody | undefined;
  /** attempts made, first included (> 1: earlier attempts may have reached the server) */
  readonly attempts: number;
  readonly method: string | undefined;
  readonly path: string | undefined;
  /** the server's `Retry-After` in milliseconds, when it sent one */
  readonly retryAfterMs: number | undefined;

  constructor(init: LabelgateErrorInit) {
    const where = init.method && init.path ? `${init.method} ${init.path}: ` : "";
    const status = init.status > 0 ? `HTTP ${init.status} ` : "";
    const details = init.details?.length ? ` (${init.details.map((d) => `${d.path || "body"}: ${d.message}`).join("; ")})` : "";
    super(`${where}${status}${init.error}${details}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.error = init.error;
    this.details = init.details ?? [];
    this.requestId = init.requestId;
    this.body = init.body;
    this.attempts = init.attempts ?? 1;
    this.method = init.method;
    this.path = init.path;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** 400: the body or query failed validation (`details` names each field) or is not JSON. */
export class ValidationError extends LabelgateError {}
/** 401: missing or wrong API key, labeler key or admin token. */
export class AuthenticationError extends LabelgateError {}
/** 403: e.g. `quota exhausted`. */
export class ForbiddenError extends LabelgateError {}
/** 404: unknown (or another customer's) resource. */
export class NotFoundError extends LabelgateError {}
/** 405: method not allowed. */
export class MethodNotAllowedError extends LabelgateError {}
/** 409: the resource's state forbids it (canceled task, expired claim, duplicate email, job not completed...). */
export class ConflictError extends LabelgateError {}
/** 413: body over 1 MB (10 MB for batches). */
export class PayloadTooLargeError extends LabelgateError {}
/** 415: the body is not JSON. */
export class UnsupportedMediaTypeError extends LabelgateError {}
/** 422: an idempotency key reused with a different request. */
export class UnprocessableError extends LabelgateError {}
/** 429: rate limited; `retryAfter` is the server's wait in seconds. */
export class RateLimitError extends LabelgateError {
  /** seconds to wait before the next request (`Retry-After`), when sent */
  get retryAfter(): number | undefined {
    return this.retryAfterMs === undefined ? undefined : this.retryAfterMs / 1000;
  }
}
/** 500: the server failed; quote `requestId`. */
export class InternalServerError extends LabelgateError {}
/** 503: Postgres or the queue is unavailable; `retryAfter` in seconds. */
export class ServiceUnavailableError extends LabelgateError {
  /** seconds to wait before the next request (`Retry-After`), when sent */
  get retryAfter(): number | undefined {
    return this.retryAfterMs === undefined ? undefined : this.retryAfterMs / 1000;
  }
}
/** No HTTP answer: connection refused or reset, DNS failure, per-attempt timeout. `status` is 0. */
export class ConnectionError extends LabelgateError {}
/** A 2xx answer whose body is not what the route returns (not JSON, cut short). */
export class ResponseError extends LabelgateError {}

const BY_STATUS: Record<number, new (init: LabelgateErrorInit) => LabelgateError> = {
  400: ValidationError,
  401: AuthenticationError,
  403: ForbiddenError,
  404: NotFoundError,
  405: MethodNotAllowedError,
  409: ConflictError,
  413: PayloadTooLargeError,
  415: UnsupportedMediaTypeError,
  422: UnprocessableError,
  429: RateLimitError,
  500: InternalServerError,
  503: ServiceUnavailableError,
};

/** The error class of an HTTP status: the table above, else the plain base class. */
export function errorForStatus(init: LabelgateErrorInit): LabelgateError {
  const Cls = BY_STATUS[init.status] ?? LabelgateError;
  return new Cls(init);
}
