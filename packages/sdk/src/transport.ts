/**
 * The HTTP layer of the SDK: the global fetch (Node 20's undici, or a browser's), JSON in and out, typed
 * errors, and retries. No Node module is imported: this file also runs in browsers.
 *
 * Retries (contract §wire, §errors):
 * - 429 is retried for every request: the gateway answers it before any handler runs, so the request had
 *   no effect.
 * - 503 and connection failures (refused, reset, per-attempt timeout) are retried only for requests that
 *   are safe to repeat: GET/HEAD/PUT/DELETE, routes marked idempotent, and requests carrying an
 *   `Idempotency-Key` (the client gives POST /v1/tasks, /v1/tasks/batch and /v1/labeling/claims one when
 *   retries are on).
 *   A call may override this with `retry: true` (the caller accepts a possible duplicate) or `retry: false`.
 * - The wait honors `Retry-After` (delta seconds or an HTTP date) when sent; a Retry-After longer than
 *   `maxRetryAfterMs` is not waited for (the error is thrown at once). Otherwise capped exponential
 *   backoff with jitter: half of min(maxBackoffMs, initialBackoffMs * 2^(retry-1)) plus a random half.
 */
import { ConnectionError, errorForStatus, type LabelgateError, ResponseError } from "./errors";
import type { ErrorBody, ErrorDetail } from "./types";

/** Which credential a route takes. */
export type AuthKind = "none" | "customer" | "labeler" | "admin";

/** Emitted before every attempt (the first and each retry). */
export interface AttemptEvent {
  method: string;
  /** route template, e.g. `/v1/tasks/{id}` */
  route: string;
  /** the path sent, ids filled in, query included */
  path: string;
  /** 1 for the first attempt */
  attempt: number;
}

/** Emitted once per call when it ends, answered or failed. */
export interface ResponseEvent {
  method: string;
  route: string;
  path: string;
  /** the final HTTP status; 0 when no answer arrived */
  status: number;
  attempts: number;
  /** wall time of the whole call, retries and waits included */
  durationMs: number;
  requestId: string | undefined;
}

export interface ClientHooks {
  /** called before each attempt (count requests and retries here) */
  onAttempt?: (event: AttemptEvent) => void;
  /** called once per call when it ends (latency, status) */
  onResponse?: (event: ResponseEvent) => void;
}

/** Options of the transport, shared by every call of a client. */
export interface TransportOptions {
  /** e.g. `http://127.0.0.1:3000` (a trailing `/` is ignored) */
  baseUrl: string;
  /** attempts per call, first included (default 3; 1 disables retries) */
  maxAttempts?: number;
  /** first backoff without Retry-After, ms (default 250) */
  initialBackoffMs?: number;
  /** longest backoff without Retry-After, ms (default 8000) */
  maxBackoffMs?: number;
  /** longest Retry-After the client waits for, ms (default 60000); a longer one is thrown at once */
  maxRetryAfterMs?: number;
  /** per-attempt timeout, ms (default 60000; the whole body of a streamed export is not bounded by it) */
  timeoutMs?: number;
  /** `fetch` to use (default: the global one) */
  fetch?: typeof fetch;
  /** `User-Agent` header (default `labelgate-sdk/0.1.0`) */
  userAgent?: string;
  hooks?: ClientHooks;
}

/** Per-call options, the last argument of every client method. */
export interface RequestOptions {
  /** cancels the call, retries and waits included */
  signal?: AbortSignal;
  /** per-attempt timeout of this call, ms */
  timeoutMs?: number;
  /** attempts of this call, first included */
  maxAttempts?: number;
  /**
   * `true`: retry 503 and connection failures even if the request is not known to be safe to repeat
   * (the caller accepts a possible duplicate); `false`: never retry. Default: retry only safe requests.
   */
  retry?: boolean;
  /** sent as `Idempotency-Key` (POST /v1/tasks, /v1/tasks/batch, where the header wins over the body field, and /v1/labeling/claims) */
  idempotencyKey?: string;
  /** extra headers (e.g. `X-Request-Id`) */
  headers?: Record<string, string>;
  /** called once when this call ends, like {@link ClientHooks.onResponse} */
  onResponse?: (event: ResponseEvent) => void;
}

export interface CallSpec {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** template with `{name}` placeholders */
  route: string;
  params?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  token: string | undefined;
  auth: AuthKind;
  /** repeating the request has no further effect (retried on 503 and connection failures) */
  idempotent?: boolean;
  options?: RequestOptions;
}

export interface CallResult<T> {
  status: number;
  data: T;
  headers: Headers;
  attempts: number;
  requestId: string | undefined;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);
const RETRY_STATUSES = new Set([429, 503]);
const AUTH_NAMES: Record<AuthKind, string> = { none: "", customer: "apiKey", labeler: "labelerKey", admin: "adminToken" };

/**
 * Parses `Retry-After` (RFC 9110 §10.2.3): delta seconds or an HTTP date. Returns milliseconds (>= 0),
 * or undefined when absent or malformed. `now` is the clock for dates.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * A random UUID v4 (RFC 9562 §5.4) from the Web Crypto API: `crypto.randomUUID` where it exists (Node,
 * secure browser contexts), else built from `crypto.getRandomValues` (a browser page over plain http).
 */
function uuidV4(): string {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === "function") return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = ((b[6] as number) & 0x0f) | 0x40;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A fresh idempotency key for a call that did not bring one (`sdk_` + UUID v4). */
export function newIdempotencyKey(): string {
  return `sdk_${uuidV4()}`;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === "TimeoutError") return "timed out";
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
    return `${err.message}${cause}`;
  }
  return String(err);
}

/** The HTTP client every namespace of {@link LabelgateClient} calls. */
export class Transport {
  readonly baseUrl: string;
  private readonly maxAttempts: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly userAgent: string;
  private readonly hooks: ClientHooks;

  constructor(options: TransportOptions) {
    if (!options.baseUrl) throw new TypeError("baseUrl is required, e.g. http://127.0.0.1:3000");
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? 3));
    this.initialBackoffMs = options.initialBackoffMs ?? 250;
    this.maxBackoffMs = options.maxBackoffMs ?? 8000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.fetchImpl = options.fetch ?? fetch;
    this.userAgent = options.userAgent ?? "labelgate-sdk/0.1.0";
    this.hooks = options.hooks ?? {};
  }

  /** True when calls may be retried at all (maxAttempts > 1). */
  get retries(): boolean {
    return this.maxAttempts > 1;
  }

  /** The path of a call: template filled with URL-encoded params, query string appended (undefined/"" skipped). */
  static path(route: string, params: Record<string, string> = {}, query: CallSpec["query"] = {}): string {
    const filled = route.replace(/\{(\w+)\}/g, (_m, name: string) => {
      const value = params[name];
      if (value === undefined || value === "") throw new TypeError(`${name} is required`);
      return encodeURIComponent(value);
    });
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") q.set(k, String(v));
    const qs = q.toString();
    return qs ? `${filled}?${qs}` : filled;
  }

  /** A JSON call: the parsed body of a 2xx (undefined for an empty body, e.g. 204). @throws LabelgateError */
  async json<T>(spec: CallSpec): Promise<CallResult<T>> {
    return this.call(spec, async (res, meta) => {
      let text: string;
      try {
        text = await res.text();
      } catch (err) {
        throw new ResponseError({
          status: res.status,
          error: `answer cut short: ${describe(err)}`,
          requestId: meta.requestId,
          attempts: meta.attempts,
          method: spec.method,
          path: Transport.path(spec.route, spec.params, spec.query),
          cause: err,
        });
      }
      if (text === "") return { ...meta, data: undefined as T };
      try {
        return { ...meta, data: JSON.parse(text) as T };
      } catch (err) {
        throw new ResponseError({
          status: res.status,
          error: `answer is not JSON: ${text.slice(0, 200)}`,
          requestId: meta.requestId,
          attempts: meta.attempts,
          method: spec.method,
          path: Transport.path(spec.route, spec.params, spec.query),
          cause: err,
        });
      }
    });
  }

  /** A streamed call: the 2xx Response with its body unread (the caller consumes it). @throws LabelgateError */
  async stream(spec: CallSpec): Promise<CallResult<Response>> {
    return this.call(spec, async (res, meta) => ({ ...meta, data: res }));
  }

  private async call<T>(
    spec: CallSpec,
    read: (res: Response, meta: Omit<CallResult<T>, "data">) => Promise<CallResult<T>>,
  ): Promise<CallResult<T>> {
    const path = Transport.path(spec.route, spec.params, spec.query);
    const opts = spec.options ?? {};
    if (spec.auth !== "none" && !spec.token) {
      throw new TypeError(`${spec.method} ${spec.route} needs ${AUTH_NAMES[spec.auth]}: pass it to new LabelgateClient({...})`);
    }
    const headers: Record<string, string> = { accept: "application/json", "user-agent": this.userAgent, ...opts.headers };
    if (spec.token && spec.auth !== "none") headers.authorization = `Bearer ${spec.token}`;
    if (opts.idempotencyKey) headers["idempotency-key"] = opts.idempotencyKey;
    const payload = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    if (payload !== undefined) headers["content-type"] = "application/json";
    const maxAttempts = Math.max(1, Math.floor(opts.maxAttempts ?? this.maxAttempts));
    const safe =
      opts.retry === true || SAFE_METHODS.has(spec.method) || spec.idempotent === true || headers["idempotency-key"] !== undefined;
    const started = performance.now();
    let status = 0;
    let requestId: string | undefined;
    let attempt = 0;
    const finish = () => {
      const event: ResponseEvent = {
        method: spec.method,
        route: spec.route,
        path,
        status,
        attempts: attempt,
        durationMs: performance.now() - started,
        requestId,
      };
      this.hooks.onResponse?.(event);
      opts.onResponse?.(event);
    };

    try {
      for (;;) {
        attempt++;
        this.hooks.onAttempt?.({ method: spec.method, route: spec.route, path, attempt });
        // The per-attempt timeout covers the answer's head and, for JSON, its body; a streamed body is the
        // caller's to read at its pace (the timer is cleared once `read` returns).
        const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
        const timer = new AbortController();
        const clock = setTimeout(() => timer.abort(new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError")), timeoutMs);
        const signal = opts.signal ? AbortSignal.any([opts.signal, timer.signal]) : timer.signal;
        let res: Response;
        try {
          res = await this.fetchImpl(this.baseUrl + path, { method: spec.method, headers, body: payload, signal });
        } catch (err) {
          clearTimeout(clock);
          if (opts.signal?.aborted) throw err;
          status = 0;
          const failure = new ConnectionError({
            status: 0,
            error: `no answer from ${this.baseUrl}: ${describe(err)}`,
            attempts: attempt,
            method: spec.method,
            path,
            cause: err,
          });
          if (opts.retry === false || !safe || attempt >= maxAttempts) throw failure;
          await sleep(this.backoff(attempt), opts.signal);
          continue;
        }
        status = res.status;
        requestId = res.headers.get("x-request-id") ?? undefined;
        let failure: LabelgateError;
        try {
          if (res.ok) return await read(res, { status: res.status, headers: res.headers, attempts: attempt, requestId });
          failure = await this.toError(res, spec.method, path, attempt);
        } finally {
          clearTimeout(clock);
        }
        requestId = failure.requestId;
        const retryable = RETRY_STATUSES.has(res.status) && opts.retry !== false && (res.status === 429 || safe);
        if (!retryable || attempt >= maxAttempts) throw failure;
        const hinted = failure.retryAfterMs;
        if (hinted !== undefined && hinted > this.maxRetryAfterMs) throw failure;
        await sleep(hinted !== undefined ? hinted + Math.random() * 100 : this.backoff(attempt), opts.signal);
      }
    } finally {
      finish();
    }
  }

  private backoff(attempt: number): number {
    const cap = Math.min(this.maxBackoffMs, this.initialBackoffMs * 2 ** (attempt - 1));
    return cap / 2 + Math.random() * (cap / 2);
  }

  private async toError(res: Response, method: string, path: string, attempts: number): Promise<LabelgateError> {
    let text = "";
    try {
      text = await res.text();
    } catch {
      // the body was cut: the status alone speaks
    }
    let body: ErrorBody | undefined;
    try {
      const parsed: unknown = text ? JSON.parse(text) : undefined;
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed) && typeof (parsed as ErrorBody).error === "string") {
        body = parsed as ErrorBody;
      }
    } catch {
      // not JSON (a proxy's HTML page, say): keep the text as the message
    }
    const details: ErrorDetail[] | undefined = Array.isArray(body?.details) ? body.details : undefined;
    return errorForStatus({
      status: res.status,
      error: body?.error ?? (text.trim().slice(0, 200) || res.statusText || "error"),
      details,
      requestId: (typeof body?.request_id === "string" ? body.request_id : undefined) ?? res.headers.get("x-request-id") ?? undefined,
      body,
      attempts,
      method,
      path,
      retryAfterMs: parseRetryAfter(res.headers.get("retry-after")),
    });
  }
}
