import { createHash } from "node:crypto";
import type {
  JobCompletedEvent as WireJobCompletedEvent,
  JobFailedEvent as WireJobFailedEvent,
  TaskCanceledEvent as WireTaskCanceledEvent,
  TaskRevisedEvent as WireTaskRevisedEvent,
  TaskSettledEvent as WireTaskSettledEvent,
  WebhookEvent as WireWebhookEvent,
} from "@labelgate/api";
import {
  constructEvent,
  DEFAULT_TOLERANCE_SECONDS,
  type JobCompletedEvent,
  type JobFailedEvent,
  signPayload,
  type TaskCanceledEvent,
  type TaskRevisedEvent,
  type TaskSettledEvent,
  verifyWebhookSignature,
  type WebhookEvent,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from "../src";

/** The verifier's event is the wire contract's (@labelgate/api), field for field: this fails to compile otherwise. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameEvent: Same<TaskSettledEvent, WireTaskSettledEvent> = true;
const sameRevised: Same<TaskRevisedEvent, WireTaskRevisedEvent> = true;
const sameCanceled: Same<TaskCanceledEvent, WireTaskCanceledEvent> = true;
const sameJobCompleted: Same<JobCompletedEvent, WireJobCompletedEvent> = true;
const sameJobFailed: Same<JobFailedEvent, WireJobFailedEvent> = true;
const sameAny: Same<WebhookEvent, WireWebhookEvent> = true;

/**
 * Independent HMAC-SHA256 per RFC 2104, from SHA-256 alone (no createHmac):
 * H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ m)), block size B = 64 bytes, keys longer than B hashed first.
 */
function referenceHmacSha256(key: Uint8Array, message: Uint8Array): Buffer {
  const blockSize = 64;
  const k = Buffer.alloc(blockSize);
  (key.length > blockSize ? createHash("sha256").update(key).digest() : Buffer.from(key)).copy(k);
  const ipad = Buffer.alloc(blockSize);
  const opad = Buffer.alloc(blockSize);
  for (let i = 0; i < blockSize; i++) {
    ipad[i] = (k[i] ?? 0) ^ 0x36;
    opad[i] = (k[i] ?? 0) ^ 0x5c;
  }
  const inner = createHash("sha256").update(ipad).update(message).digest();
  return createHash("sha256").update(opad).update(inner).digest();
}

function referenceHeader(body: string | Uint8Array, secret: string): string {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  return "sha256=" + referenceHmacSha256(Buffer.from(secret, "utf8"), bytes).toString("hex");
}

const SECRET = "whsec_0123456789abcdef";
const NOW = new Date("2025-06-01T12:00:00.000Z");

function event(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event: "task.settled",
    task_id: "task_01HZX",
    consensus_label: "cat",
    confidence: 0.92,
    ledger_txid: "0xabc123",
    settled_at: "2025-06-01T11:59:58.000Z",
    timestamp: NOW.toISOString(),
    ...overrides,
  };
}

function body(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify(event(overrides));
}

function at(offsetSeconds: number): string {
  return new Date(NOW.getTime() + offsetSeconds * 1000).toISOString();
}

function reasonOf(fn: () => unknown): WebhookVerificationReason | "no error" | "other error" {
  try {
    fn();
    return "no error";
  } catch (err) {
    return err instanceof WebhookVerificationError ? err.reason : "other error";
  }
}

describe("reference HMAC (RFC 2104) used for cross-checks", () => {
  it("matches RFC 4231 test case 2", () => {
    const mac = referenceHmacSha256(Buffer.from("Jefe"), Buffer.from("what do ya want for nothing?"));
    expect(mac.toString("hex")).toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  });

  it("matches RFC 4231 test case 6 (key longer than the block size)", () => {
    const mac = referenceHmacSha256(Buffer.alloc(131, 0xaa), Buffer.from("Test Using Larger Than Block-Size Key - Hash Key First"));
    expect(mac.toString("hex")).toBe("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  });
});

describe("signPayload", () => {
  it("gives the RFC 4231 test case 2 value", () => {
    expect(signPayload("what do ya want for nothing?", "Jefe")).toBe(
      "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
  });

  it("agrees with the independent implementation for strings, Buffers, non-ASCII and long secrets", () => {
    const payload = body({ consensus_label: "chat — “ünïcödé” 🐈" });
    for (const secret of [SECRET, "x", "k".repeat(64), "k".repeat(65), "clé-secrète-ünïcödé-🔑".repeat(5)]) {
      expect(signPayload(payload, secret)).toBe(referenceHeader(payload, secret));
      expect(signPayload(Buffer.from(payload, "utf8"), secret)).toBe(referenceHeader(payload, secret));
      expect(signPayload(new Uint8Array(Buffer.from(payload, "utf8")), secret)).toBe(referenceHeader(payload, secret));
    }
  });

  it("is lowercase hex with the sha256= prefix", () => {
    expect(signPayload(body(), SECRET)).toMatch(/^sha256=[0-9a-f]{64}$/);
  });

  it("rejects an empty secret", () => {
    expect(() => signPayload(body(), "")).toThrow(TypeError);
  });
});

describe("verifyWebhookSignature", () => {
  const opts = { now: NOW };

  it("accepts a valid signature (computed independently)", () => {
    const raw = body();
    expect(verifyWebhookSignature(raw, referenceHeader(raw, SECRET), SECRET, opts)).toBe(true);
  });

  it("accepts an uppercase hex digest", () => {
    const raw = body();
    const header = referenceHeader(raw, SECRET);
    expect(verifyWebhookSignature(raw, "sha256=" + header.slice(7).toUpperCase(), SECRET, opts)).toBe(true);
  });

  it("accepts the body as Buffer, Uint8Array or string, with identical results", () => {
    const raw = body({ consensus_label: "ünïcödé" });
    const header = referenceHeader(raw, SECRET);
    expect(verifyWebhookSignature(Buffer.from(raw, "utf8"), header, SECRET, opts)).toBe(true);
    expect(verifyWebhookSignature(new Uint8Array(Buffer.from(raw, "utf8")), header, SECRET, opts)).toBe(true);
    expect(verifyWebhookSignature(raw, header, SECRET, opts)).toBe(true);
  });

  it("uses the current time when no clock is given", () => {
    const raw = body({ timestamp: new Date().toISOString() });
    expect(verifyWebhookSignature(raw, signPayload(raw, SECRET), SECRET)).toBe(true);
  });

  it("rejects a body changed by one byte", () => {
    const raw = Buffer.from(body(), "utf8");
    const header = referenceHeader(raw, SECRET);
    for (const index of [0, Math.floor(raw.length / 2), raw.length - 1]) {
      const tampered = Buffer.from(raw);
      tampered[index] = (tampered[index] ?? 0) ^ 0x01;
      expect(verifyWebhookSignature(tampered, header, SECRET, opts)).toBe(false);
    }
    // A semantically equivalent but re-serialised body is different bytes, hence invalid.
    expect(verifyWebhookSignature(JSON.stringify(JSON.parse(body()), null, 2), header, SECRET, opts)).toBe(false);
  });

  it("rejects a signature made with another secret", () => {
    const raw = body();
    expect(verifyWebhookSignature(raw, referenceHeader(raw, SECRET + "x"), SECRET, opts)).toBe(false);
    expect(verifyWebhookSignature(raw, referenceHeader(raw, SECRET), SECRET.slice(1), opts)).toBe(false);
  });

  it("rejects missing, empty and malformed headers without throwing", () => {
    const raw = body();
    const hex = referenceHeader(raw, SECRET).slice("sha256=".length);
    const bad: Array<string | undefined | null> = [
      undefined,
      null,
      "",
      hex, // no prefix
      "sha1=" + hex, // wrong algorithm
      "sha512=" + hex,
      "SHA256=" + hex,
      "sha256:" + hex,
      "sha256=",
      "sha256=" + hex.slice(0, 63), // too short
      "sha256=" + hex + "0", // too long
      "sha256=" + hex.slice(0, 62) + "zz", // non-hex
      "sha256=" + hex.slice(0, 63) + "g",
      " sha256=" + hex,
      "sha256=" + hex + " ",
      "sha256=" + hex + ",sha256=" + hex,
      "t=1,v1=" + hex,
    ];
    for (const header of bad) {
      expect(verifyWebhookSignature(raw, header, SECRET, opts)).toBe(false);
    }
  });

  it("never throws on nonsense arguments", () => {
    const raw = body();
    const header = signPayload(raw, SECRET);
    const call = (...args: unknown[]) => (verifyWebhookSignature as (...a: unknown[]) => boolean)(...args);
    expect(call(raw, header, "", opts)).toBe(false);
    expect(call(raw, header, undefined, opts)).toBe(false);
    expect(call(undefined, header, SECRET, opts)).toBe(false);
    expect(call({}, header, SECRET, opts)).toBe(false);
    expect(call(raw, [header], SECRET, opts)).toBe(false);
    expect(call(raw, 42, SECRET, opts)).toBe(false);
    expect(call(raw, header, SECRET, { now: new Date("garbage") })).toBe(false);
    expect(call(raw, header, SECRET, { now: NOW, toleranceSeconds: -1 })).toBe(false);
    expect(call(raw, header, SECRET, { now: NOW, toleranceSeconds: Number.NaN })).toBe(false);
  });

  describe("timestamp tolerance", () => {
    const signedWith = (timestamp: unknown) => {
      const raw = body({ timestamp });
      return (options: { toleranceSeconds?: number; now?: Date }) =>
        verifyWebhookSignature(raw, referenceHeader(raw, SECRET), SECRET, options);
    };

    it("defaults to 300 s", () => {
      expect(DEFAULT_TOLERANCE_SECONDS).toBe(300);
    });

    it("rejects a timestamp 301 s old with the default tolerance", () => {
      expect(signedWith(at(-301))(opts)).toBe(false);
    });

    it("accepts a timestamp exactly 300 s old or 300 s ahead (boundary inclusive)", () => {
      expect(signedWith(at(-300))(opts)).toBe(true);
      expect(signedWith(at(300))(opts)).toBe(true);
      expect(signedWith(at(-299.999))(opts)).toBe(true);
      expect(signedWith(at(-300.001))(opts)).toBe(false);
    });

    it("rejects a timestamp more than the tolerance in the future", () => {
      expect(signedWith(at(301))(opts)).toBe(false);
      expect(signedWith(at(3600))(opts)).toBe(false);
    });

    it("honours a custom tolerance in seconds", () => {
      expect(signedWith(at(-30))({ now: NOW, toleranceSeconds: 30 })).toBe(true);
      expect(signedWith(at(-31))({ now: NOW, toleranceSeconds: 30 })).toBe(false);
      expect(signedWith(at(31))({ now: NOW, toleranceSeconds: 30 })).toBe(false);
      expect(signedWith(at(-600))({ now: NOW, toleranceSeconds: 900 })).toBe(true);
      expect(signedWith(at(0))({ now: NOW, toleranceSeconds: 0 })).toBe(true);
      expect(signedWith(at(-1))({ now: NOW, toleranceSeconds: 0 })).toBe(false);
      expect(signedWith(at(-86400 * 365))({ now: NOW, toleranceSeconds: Number.POSITIVE_INFINITY })).toBe(true);
    });

    it("accepts ISO 8601 with an explicit offset", () => {
      expect(signedWith("2025-06-01T14:00:00+02:00")(opts)).toBe(true);
      expect(signedWith("2025-06-01T12:00:00.123456Z")(opts)).toBe(true);
    });

    it("rejects a missing or invalid timestamp", () => {
      for (const ts of [undefined, null, 1748779200, 1748779200000, "", "yesterday", "2025-06-01", "2025-06-01 12:00:00Z"]) {
        expect(signedWith(ts)(opts)).toBe(false);
      }
      // Invalid even with the time check disabled: no zone, impossible calendar dates (V8's Date.parse takes Feb 30).
      const noTimeCheck = { now: NOW, toleranceSeconds: Number.POSITIVE_INFINITY };
      for (const ts of [
        "2025-06-01T12:00:00",
        "2025-06-31T12:00:00Z",
        "2025-02-29T12:00:00Z",
        "2025-13-01T12:00:00Z",
        "2025-06-01T24:00:00Z",
        "2025-06-01T12:00:00+24:00",
      ]) {
        expect(signedWith(ts)(noTimeCheck)).toBe(false);
      }
      expect(signedWith("2024-02-29T12:00:00Z")(noTimeCheck)).toBe(true);
      const raw = JSON.stringify({ event: "task.settled", task_id: "t" });
      expect(verifyWebhookSignature(raw, signPayload(raw, SECRET), SECRET, opts)).toBe(false);
    });
  });

  it("rejects a correctly signed body that is not a JSON object", () => {
    for (const raw of ["not json", "", "[1,2]", "null", '"2025-06-01T12:00:00.000Z"', body().slice(0, -1)]) {
      expect(verifyWebhookSignature(raw, referenceHeader(raw, SECRET), SECRET, opts)).toBe(false);
    }
    const invalidUtf8 = Buffer.concat([Buffer.from(body().slice(0, -2), "utf8"), Buffer.from([0xff, 0x22, 0x7d])]);
    expect(verifyWebhookSignature(invalidUtf8, referenceHeader(invalidUtf8, SECRET), SECRET, opts)).toBe(false);
  });
});

describe("constructEvent", () => {
  const opts = { now: NOW };

  it("returns the typed event", () => {
    const raw = body();
    const parsed = constructEvent(Buffer.from(raw), referenceHeader(raw, SECRET), SECRET, opts);
    expect(parsed).toEqual(event());
    if (parsed.event !== "task.settled") throw new Error("expected task.settled");
    expect(parsed.confidence).toBe(0.92);
  });

  it("returns a task.canceled, job.completed and job.failed event, each checked against the catalog's fields", () => {
    const envelope = { event_id: "evt_1", created_at: "2025-06-01T11:59:58.000Z", timestamp: NOW.toISOString() };
    const cases: [Record<string, unknown>, Record<string, unknown>[]][] = [
      [
        { event: "task.canceled", task_id: "tsk_1", reason: "item_unreadable", item_error: "HTTP 404" },
        [{ reason: "bored" }, { task_id: 7 }, { item_error: 1 }, { task_id: undefined }],
      ],
      [
        { event: "job.completed", job_id: "job_1", task_count: 3, tasks_settled: 2 },
        [{ task_count: 1.5 }, { tasks_settled: -1 }, { job_id: undefined }, { event_id: 5 }],
      ],
      [
        { event: "job.failed", job_id: "job_1", task_count: 0, tasks_settled: 0, error: "no such key" },
        [{ error: undefined }, { error: 3 }],
      ],
    ];
    for (const [fields, bads] of cases) {
      const raw = JSON.stringify({ ...fields, ...envelope });
      const parsed = constructEvent(raw, signPayload(raw, SECRET), SECRET, opts);
      expect(parsed).toEqual({ ...fields, ...envelope });
      for (const overrides of bads) {
        const bad = JSON.stringify({ ...fields, ...envelope, ...overrides });
        expect(reasonOf(() => constructEvent(bad, signPayload(bad, SECRET), SECRET, opts))).toBe("malformed_body");
      }
    }
    const unknown = JSON.stringify({ event: "task.expired", task_id: "tsk_1", ...envelope });
    expect(() => constructEvent(unknown, signPayload(unknown, SECRET), SECRET, opts)).toThrow(
      /event is not one of task.settled, task.revised/,
    );
  });

  it("returns a task.revised event, narrowed on `event`", () => {
    const raw = body({
      event: "task.revised",
      revision: 2,
      consensus_label: "dog",
      confidence: 1,
      previous: { consensus_label: "cat", confidence: 0.92 },
    });
    const parsed = constructEvent(raw, signPayload(raw, SECRET), SECRET, opts);
    if (parsed.event !== "task.revised") throw new Error("expected task.revised");
    const revised: TaskRevisedEvent = parsed;
    expect(revised).toMatchObject({ revision: 2, consensus_label: "dog", previous: { consensus_label: "cat", confidence: 0.92 } });
    for (const overrides of [{ revision: 1 }, { revision: "2" }, { previous: null }, { previous: { consensus_label: "cat" } }]) {
      const bad = body({ event: "task.revised", revision: 2, previous: { consensus_label: "cat", confidence: 0.9 }, ...overrides });
      expect(reasonOf(() => constructEvent(bad, signPayload(bad, SECRET), SECRET, opts))).toBe("malformed_body");
    }
  });

  it("keeps unknown extra fields", () => {
    const raw = body({ extra: { a: 1 } });
    expect(constructEvent(raw, signPayload(raw, SECRET), SECRET, opts)).toMatchObject({ extra: { a: 1 } });
  });

  it("throws WebhookVerificationError with the right reason", () => {
    const raw = body();
    const header = referenceHeader(raw, SECRET);
    const reason = (b: string | Uint8Array, h: string | undefined | null, o: { toleranceSeconds?: number; now?: Date } = opts) =>
      reasonOf(() => constructEvent(b, h, SECRET, o));

    expect(reason(raw, header)).toBe("no error");
    expect(reason(raw, undefined)).toBe("missing_signature");
    expect(reason(raw, null)).toBe("missing_signature");
    expect(reason(raw, "")).toBe("missing_signature");
    expect(reason(raw, header.slice(7))).toBe("malformed_signature");
    expect(reason(raw, "sha1=" + header.slice(7))).toBe("malformed_signature");
    expect(reason(raw, header.slice(0, -1))).toBe("malformed_signature");
    expect(reason(raw, header.slice(0, -1) + "x")).toBe("malformed_signature");
    expect(reason(raw + " ", header)).toBe("signature_mismatch");
    expect(reason(raw, referenceHeader(raw, "other-secret-0123"))).toBe("signature_mismatch");

    const notJson = "not json";
    expect(reason(notJson, signPayload(notJson, SECRET))).toBe("malformed_body");
    const noTimestamp = JSON.stringify({ ...event(), timestamp: undefined });
    expect(reason(noTimestamp, signPayload(noTimestamp, SECRET))).toBe("malformed_body");
    const badTimestamp = body({ timestamp: "not a date" });
    expect(reason(badTimestamp, signPayload(badTimestamp, SECRET))).toBe("malformed_body");

    const old = body({ timestamp: at(-301) });
    expect(reason(old, signPayload(old, SECRET))).toBe("timestamp_outside_tolerance");
    const future = body({ timestamp: at(301) });
    expect(reason(future, signPayload(future, SECRET))).toBe("timestamp_outside_tolerance");
    expect(reason(old, signPayload(old, SECRET), { now: NOW, toleranceSeconds: 301 })).toBe("no error");
  });

  it("checks the signature before looking at the body", () => {
    // A stale, non-JSON body with a wrong signature is reported as a signature problem.
    expect(reasonOf(() => constructEvent("not json", signPayload("other", SECRET), SECRET, opts))).toBe("signature_mismatch");
    const old = body({ timestamp: at(-301) });
    expect(reasonOf(() => constructEvent(old, signPayload(old, "wrong-secret-0123"), SECRET, opts))).toBe("signature_mismatch");
  });

  it("rejects a signed, fresh body that is not an event it knows", () => {
    for (const overrides of [
      { event: "task.created" },
      { task_id: 42 },
      { consensus_label: null },
      { confidence: "0.9" },
      { ledger_txid: undefined },
      { settled_at: 1 },
    ]) {
      const raw = body(overrides);
      expect(reasonOf(() => constructEvent(raw, signPayload(raw, SECRET), SECRET, opts))).toBe("malformed_body");
    }
  });

  it("is an Error with name, message and reason", () => {
    try {
      constructEvent(body(), undefined, SECRET, opts);
      throw new Error("expected a throw");
    } catch (err) {
      expect(err).toBeInstanceOf(Error);
      expect(err).toBeInstanceOf(WebhookVerificationError);
      const e = err as WebhookVerificationError;
      expect(e.name).toBe("WebhookVerificationError");
      expect(e.reason).toBe("missing_signature");
      expect(e.message).toMatch(/X-SVC-Signature/);
    }
  });

  it("throws TypeError/RangeError on misuse rather than a verification reason", () => {
    const raw = body();
    const header = signPayload(raw, SECRET);
    expect(() => constructEvent(raw, header, "", opts)).toThrow(TypeError);
    expect(() => constructEvent(raw, header, SECRET, { now: NOW, toleranceSeconds: -5 })).toThrow(RangeError);
    expect(() => constructEvent(raw, header, SECRET, { now: new Date(Number.NaN) })).toThrow(RangeError);
  });
});

describe("TaskSettledEvent", () => {
  it("is the wire contract's task.settled body (checked at compile time)", () => {
    expect(sameEvent).toBe(true);
  });
  it("and TaskRevisedEvent the wire contract's task.revised body", () => {
    expect(sameRevised).toBe(true);
  });
  it("and every other event of the catalog the wire contract's body (generated from the catalog)", () => {
    expect([sameCanceled, sameJobCompleted, sameJobFailed, sameAny]).toEqual([true, true, true, true]);
  });
});
