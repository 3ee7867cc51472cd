/**
 * Errors to responses: the express error middleware (the only place an error becomes a response), body
 * validation, and the answer to requests Node's HTTP parser refuses. The table of kinds, statuses and
 * messages is `ERRORS` of @labelgate/api.
 */

import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { ApiError, ERRORS, type ErrorDetail, type ErrorKind } from "@labelgate/api";
import type { Logger } from "@labelgate/core";
import { QueueUnavailableError } from "@labelgate/queue";
import { isDatabaseUnavailable, StoreError, type StoreErrorKind } from "@labelgate/store";
import type { ErrorRequestHandler } from "express";
import { ZodError, type z } from "zod";

type Issue = z.core.$ZodIssue;

/**
 * The branch of a failed union (a task body by `type`, an answer by its key) the input was meant for, or
 * undefined when that is not clear (the union's own message is the detail then):
 * 1. the one branch with no issue on its `type`;
 * 2. else, of the branches with no such issue, the one that knows every top-level key of the input;
 * 3. else, when every branch refused the `type`, the one that refused it for another reason than not being its
 *    literal (a single-choice `type` that is not lowercase).
 */
function meantBranch(branches: Issue[][]): Issue[] | undefined {
  const typeIssue = (issues: Issue[]) => issues.find((i) => i.path.length === 1 && i.path[0] === "type");
  const typed = branches.filter((issues) => !typeIssue(issues));
  if (typed.length === 1) return typed[0];
  if (typed.length > 1) {
    const known = typed.filter((issues) => !issues.some((i) => i.path.length === 0 && i.code === "unrecognized_keys"));
    return known.length === 1 ? known[0] : undefined;
  }
  const format = branches.filter((issues) => typeIssue(issues)?.code !== "invalid_value");
  return format.length === 1 ? format[0] : undefined;
}

/** The issues of a union's meant branch in place of the union's issue, paths prefixed, nested unions too. */
function flatIssues(issues: readonly Issue[], prefix: PropertyKey[] = []): { path: PropertyKey[]; message: string }[] {
  return issues.flatMap((i) => {
    const path = [...prefix, ...i.path];
    const branch = i.code === "invalid_union" ? meantBranch(i.errors) : undefined;
    return branch ? flatIssues(branch, path) : [{ path, message: i.message }];
  });
}

/** zod issues → contract §wire `details` (`path` dotted, array indexes included). */
export function zodDetails(err: ZodError): ErrorDetail[] {
  return flatIssues(err.issues).map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
}

/** NUL, or a UTF-16 surrogate without its pair: text Postgres cannot store (in `text` or `jsonb`). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what this looks for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The dotted path of the first string (object key or value, at any depth) that Postgres cannot store,
 * or undefined. Walks iteratively, so arbitrarily deep JSON cannot overflow the stack.
 */
export function unstorableStringPath(value: unknown): string | undefined {
  // each entry keeps its parent and key; the dotted path is spelled out only for the one string found
  interface Entry {
    value: unknown;
    parent: Entry | undefined;
    key: string | number;
  }
  const pathOf = (entry: Entry | undefined, last?: string): string => {
    const keys: (string | number)[] = last === undefined ? [] : [last];
    for (let e = entry; e?.parent !== undefined; e = e.parent) keys.push(e.key);
    return keys.reverse().join(".");
  };
  const stack: Entry[] = [{ value, parent: undefined, key: "" }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const v = item.value;
    if (typeof v === "string") {
      if (UNSTORABLE.test(v)) return pathOf(item);
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ value: v[i], parent: item, key: i });
    } else if (v !== null && typeof v === "object") {
      for (const [k, e] of Object.entries(v)) {
        if (UNSTORABLE.test(k)) return pathOf(item, k.replace(UNSTORABLE, "?"));
        stack.push({ value: e, parent: item, key: k });
      }
    }
  }
  return undefined;
}

/**
 * Validates a body or query with its zod schema (a missing body counts as `{}`). Strings with NUL or an
 * unpaired surrogate are refused first, wherever they are (Postgres would fail on them: a 500 otherwise).
 * @throws ApiError validation (400 `validation failed` with `details`).
 */
export function parse<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const unstorable = unstorableStringPath(value);
  if (unstorable !== undefined)
    throw new ApiError("validation", [{ path: unstorable, message: "must not contain NUL characters or unpaired UTF-16 surrogates" }]);
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw new ApiError("validation", zodDetails(result.error));
  return result.data;
}

/**
 * The error kind (errors table of @labelgate/api) each refusal of the store answers with: the one place a
 * store outcome becomes an HTTP status and message.
 */
export const STORE_ERROR_KINDS: Record<StoreErrorKind, ErrorKind> = {
  emailTaken: "emailTaken",
  customerNotFound: "customerNotFound",
  // an authenticated customer whose row is gone: its key names no one any more
  customerGone: "unauthorized",
  alreadyProduction: "alreadyProduction",
  quotaExhausted: "quotaExhausted",
  idempotencyMismatch: "idempotencyMismatch",
  taskNotFound: "taskNotFound",
  taskNotCancelable: "taskNotCancelable",
  taskNotSettled: "taskNotSettled",
  taskNotOpen: "taskNotOpen",
  claimNotFound: "claimNotFound",
  claimAlreadyLabeled: "claimAlreadyLabeled",
  claimExpired: "claimExpired",
  webhookExists: "webhookExists",
  webhookInactive: "webhookInactive",
  invalid: "validation",
};

/**
 * Maps any thrown value to an ApiError: known kinds pass through, store refusals map through
 * STORE_ERROR_KINDS, the client errors of body-parser and the
 * router (a body that is not JSON or cut short, a path parameter that does not decode) become their 4xx,
 * outages become 503, the rest 500.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof StoreError) return new ApiError(STORE_ERROR_KINDS[err.kind], err.details, err.extra);
  if (err instanceof ZodError) return new ApiError("validation", zodDetails(err));
  const e = err as { type?: string; status?: number };
  if (e?.type === "entity.too.large") return new ApiError("payloadTooLarge");
  // a body cut short (the client stopped sending, or sent fewer bytes than its Content-Length) is not JSON
  if (e?.type === "entity.parse.failed" || e?.type === "request.aborted" || e?.type === "request.size.invalid")
    return new ApiError("invalidJson");
  // a path parameter that is not valid percent-encoding (`%zz`, `%ff`, a lone surrogate) names nothing
  if (err instanceof URIError && e.status === 400) return new ApiError("routeNotFound");
  if (e?.type === "encoding.unsupported" || e?.type === "charset.unsupported") return new ApiError("unsupportedMediaType");
  if (err instanceof QueueUnavailableError || isDatabaseUnavailable(err)) return new ApiError("unavailable");
  return new ApiError("internal");
}

/** Express error middleware: the only place an error becomes a response. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const apiError = toApiError(err);
    const requestId = String(res.getHeader("X-Request-Id") ?? "");
    if (apiError.status >= 500) {
      logger.error({ err, request_id: requestId, method: req.method, path: req.path }, apiError.message);
    }
    const body: Record<string, unknown> = { error: apiError.message, ...apiError.extra };
    if (apiError.details) body.details = apiError.details;
    if (apiError.status >= 500) body.request_id = requestId;
    if (apiError.kind === "unavailable") res.setHeader("Retry-After", "5");
    res.status(apiError.status).json(body);
  };
}

/** The error kind of a request Node's HTTP parser refused, by the parser's error code (Node's own mapping). */
function clientErrorKind(code: string | undefined): ErrorKind {
  if (code === "HPE_HEADER_OVERFLOW") return "headersTooLarge";
  if (code === "HPE_CHUNK_EXTENSIONS_OVERFLOW") return "payloadTooLarge";
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return "requestTimeout";
  return "malformedRequest";
}

/**
 * `clientError` listener of every HTTP server that serves the app: a request that Node's parser refuses
 * before express sees it (headers over `maxHeaderSize`, 16 KB; a malformed request line; a request that
 * timed out) is answered like any other error, with the table's status, the spec's `{"error": message}`
 * body and a new X-Request-Id, then the connection is closed. Node's default answer is a bare status line.
 * A connection already reset or no longer writable is only destroyed.
 * Use: `server.on("clientError", clientErrorHandler(logger))`.
 */
export function clientErrorHandler(logger: Logger): (err: NodeJS.ErrnoException, socket: Duplex) => void {
  return (err, socket) => {
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const kind = clientErrorKind(err.code);
    const { status, message } = ERRORS[kind];
    const requestId = randomUUID();
    logger.info({ request_id: requestId, code: err.code, status }, "request refused by the HTTP parser");
    const body = JSON.stringify({ error: message });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        "Content-Type: application/json; charset=utf-8\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        "Connection: close\r\n\r\n" +
        body,
    );
  };
}
