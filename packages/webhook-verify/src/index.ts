/**
 * @labelgate/webhook-verify: verifies labelgate webhook deliveries of every event of the event catalog (contract §events):
 * the list of events and their bodies are generated from the catalog (events.ts, `pnpm gen:events`).
 *
 * Signature: `X-SVC-Signature: sha256=<hex>`, the HMAC-SHA256 (RFC 2104, SHA-256 per FIPS 180-4) of the
 * raw request body bytes, keyed with the webhook secret. Replay protection: the signed body carries
 * `timestamp` (ISO 8601 UTC of the delivery attempt), accepted within a tolerance of 300 s either way,
 * as in Stripe's webhook signatures. No dependencies besides node:crypto; this file and events.ts can be copied as they are.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { EVENT_FIELDS, type FieldCheck, WEBHOOK_EVENT_TYPES, type WebhookEvent } from "./events";

export type {
  FieldCheck,
  JobCompletedEvent,
  JobFailedEvent,
  TaskCanceledEvent,
  TaskRevisedEvent,
  TaskSettledEvent,
  WebhookEvent,
} from "./events";
export { EVENT_FIELDS, WEBHOOK_EVENT_TYPES } from "./events";

export interface VerifyOptions {
  /** Largest accepted distance between `timestamp` and `now`, in seconds, past or future. Default 300; `Infinity` disables the check. */
  toleranceSeconds?: number;
  /** Clock to compare `timestamp` against. Default: the current time. */
  now?: Date;
}

export type WebhookVerificationReason =
  | "missing_signature"
  | "malformed_signature"
  | "signature_mismatch"
  | "malformed_body"
  | "timestamp_outside_tolerance";

/** Thrown by {@link constructEvent} when a delivery is not authentic, not fresh or not a body of a known event. */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookVerificationReason;

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

/** Default timestamp tolerance in seconds (Stripe's default). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const SIGNATURE_PREFIX = "sha256=";
const SIGNATURE_PATTERN = /^sha256=[0-9a-fA-F]{64}$/;
// ISO 8601 date-time with a zone designator; labelgate sends `Z` (Date#toISOString).
const ISO_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/;

/**
 * Header value for `rawBody`: `sha256=` + lowercase hex HMAC-SHA256 (RFC 2104) of the body bytes
 * (strings are encoded as UTF-8), keyed with `secret`. Sign exactly the bytes you send.
 */
export function signPayload(rawBody: string | Uint8Array, secret: string): string {
  return SIGNATURE_PREFIX + hmacSha256(toBytes(rawBody), checkSecret(secret)).toString("hex");
}

/**
 * True only if `header` is `sha256=<64 hex>`, it matches the HMAC-SHA256 of `rawBody` under `secret`
 * (constant-time comparison), and the body is JSON whose `timestamp` is a valid ISO 8601 date within
 * `toleranceSeconds` (default 300 s) of `now`, past or future. Never throws: any bad input gives false.
 * Pass the raw body exactly as received, before any JSON parsing.
 */
export function verifyWebhookSignature(
  rawBody: string | Uint8Array,
  header: string | undefined | null,
  secret: string,
  options?: VerifyOptions,
): boolean {
  try {
    return verify(rawBody, header, secret, options).ok;
  } catch {
    return false;
  }
}

/**
 * Verifies like {@link verifyWebhookSignature} and returns the parsed event (any event of the catalog: narrow on
 * `event`); also checks the body's fields and their types against the catalog's (`EVENT_FIELDS`). Throws {@link WebhookVerificationError} (see `reason`) on a failed
 * check, and TypeError/RangeError on a misuse (empty secret, negative tolerance, invalid `now`).
 */
export function constructEvent(
  rawBody: string | Uint8Array,
  header: string | undefined | null,
  secret: string,
  options?: VerifyOptions,
): WebhookEvent {
  const result = verify(rawBody, header, secret, options);
  if (!result.ok) throw new WebhookVerificationError(result.reason, result.message);
  const event = result.body;
  const problem = eventProblem(event);
  if (problem) throw new WebhookVerificationError("malformed_body", problem);
  return event as unknown as WebhookEvent;
}

type VerifyResult = { ok: true; body: Record<string, unknown> } | { ok: false; reason: WebhookVerificationReason; message: string };

function verify(rawBody: string | Uint8Array, header: string | undefined | null, secret: string, options?: VerifyOptions): VerifyResult {
  const key = checkSecret(secret);
  const toleranceMs = checkTolerance(options?.toleranceSeconds) * 1000;
  const nowMs = checkNow(options?.now);
  const body = toBytes(rawBody);

  if (header === undefined || header === null || header === "") {
    return fail("missing_signature", "X-SVC-Signature header is missing");
  }
  if (typeof header !== "string" || !SIGNATURE_PATTERN.test(header)) {
    return fail("malformed_signature", "X-SVC-Signature is not of the form sha256=<64 hex digits>");
  }
  // Both buffers are 32 bytes: the pattern above fixes the length, never the content.
  const received = Buffer.from(header.slice(SIGNATURE_PREFIX.length), "hex");
  const expected = hmacSha256(body, key);
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) {
    return fail("signature_mismatch", "X-SVC-Signature does not match the body and secret");
  }

  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    return fail("malformed_body", "body is not UTF-8 JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return fail("malformed_body", "body is not a JSON object");
  }
  const fields = parsed as Record<string, unknown>;
  const timestamp = fields["timestamp"];
  if (typeof timestamp !== "string") return fail("malformed_body", "body has no string timestamp");
  const sentMs = parseIsoTimestamp(timestamp);
  if (sentMs === undefined) return fail("malformed_body", "timestamp is not a valid ISO 8601 date-time");
  if (Math.abs(nowMs - sentMs) > toleranceMs) {
    return fail("timestamp_outside_tolerance", `timestamp ${timestamp} is more than ${toleranceMs / 1000} s from now`);
  }
  return { ok: true, body: fields };
}

function fail(reason: WebhookVerificationReason, message: string): VerifyResult {
  return { ok: false, reason, message };
}

function hmacSha256(body: Uint8Array, key: string): Buffer {
  return createHmac("sha256", key).update(body).digest();
}

function toBytes(rawBody: string | Uint8Array): Uint8Array {
  if (typeof rawBody === "string") return Buffer.from(rawBody, "utf8");
  if (rawBody instanceof Uint8Array) return rawBody;
  throw new TypeError("rawBody must be a string or a Uint8Array/Buffer (the raw request body)");
}

function checkSecret(secret: string): string {
  if (typeof secret !== "string" || secret.length === 0) throw new TypeError("secret must be a non-empty string");
  return secret;
}

function checkTolerance(toleranceSeconds: number | undefined): number {
  if (toleranceSeconds === undefined) return DEFAULT_TOLERANCE_SECONDS;
  if (typeof toleranceSeconds !== "number" || Number.isNaN(toleranceSeconds) || toleranceSeconds < 0) {
    throw new RangeError("toleranceSeconds must be a number >= 0 (seconds)");
  }
  return toleranceSeconds;
}

function checkNow(now: Date | undefined): number {
  if (now === undefined) return Date.now();
  const ms = now instanceof Date ? now.getTime() : Number.NaN;
  if (Number.isNaN(ms)) throw new RangeError("now must be a valid Date");
  return ms;
}

/** Milliseconds since the epoch of an ISO 8601 date-time with zone, or undefined if invalid (e.g. Feb 30). */
function parseIsoTimestamp(value: string): number | undefined {
  const m = ISO_TIMESTAMP.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return undefined;
  if (m[7] !== undefined && (Number(m[7]) > 23 || Number(m[8]) > 59)) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** Why a verified body is not an event of the catalog (its `event` unknown, a field missing or of the wrong type), or undefined. */
function eventProblem(body: Record<string, unknown>): string | undefined {
  const event = body["event"];
  if (typeof event !== "string" || !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(event)) {
    return `event is not one of ${WEBHOOK_EVENT_TYPES.join(", ")}`;
  }
  for (const field of ["event_id", "created_at"]) {
    if (field in body && typeof body[field] !== "string") return `${field} is not a string`;
  }
  return fieldsProblem(body, EVENT_FIELDS[event as keyof typeof EVENT_FIELDS], "");
}

function fieldsProblem(body: Record<string, unknown>, fields: Record<string, FieldCheck>, prefix: string): string | undefined {
  for (const [name, check] of Object.entries(fields)) {
    const path = prefix + name;
    const value = body[name];
    if (value === undefined) {
      if (check.required) return `${path} is missing`;
      continue;
    }
    const problem = valueProblem(value, check, path);
    if (problem) return problem;
  }
  return undefined;
}

function valueProblem(value: unknown, check: FieldCheck, path: string): string | undefined {
  switch (check.type) {
    case "string":
      if (typeof value !== "string") return `${path} is not a string`;
      if (check.enum && !check.enum.includes(value)) return `${path} is not one of ${check.enum.join(", ")}`;
      return undefined;
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? undefined : `${path} is not a number`;
    case "integer":
      if (typeof value !== "number" || !Number.isInteger(value)) return `${path} is not a whole number`;
      return check.minimum !== undefined && value < check.minimum ? `${path} is not a whole number >= ${check.minimum}` : undefined;
    case "boolean":
      return typeof value === "boolean" ? undefined : `${path} is not a boolean`;
    case "array":
      return Array.isArray(value) ? undefined : `${path} is not an array`;
    case "object":
      if (typeof value !== "object" || value === null || Array.isArray(value)) return `${path} is not an object`;
      return fieldsProblem(value as Record<string, unknown>, check.fields ?? {}, `${path}.`);
    default:
      return undefined;
  }
}
