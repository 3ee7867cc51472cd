/**
 * Canonical JSON: object keys sorted recursively by UTF-16 code units, no whitespace, numbers and strings
 * as `JSON.stringify` prints them. Two equal values always give the same string, so hashes of it (ledger
 * records, Merkle leaves, idempotency fingerprints) are stable. For the values labelgate hashes (strings,
 * finite numbers, booleans, null, arrays, plain objects) the output is that of RFC 8785 (JCS), whose key
 * order is also by UTF-16 code units (RFC 8785 §3.2.3). Browser-safe: no Node imports.
 * Array holes and `undefined` array items become `null`; object members whose value is `undefined` are
 * left out (as `JSON.stringify` does).
 * @throws TypeError on values JSON cannot represent (functions, bigint, symbols, non-finite numbers).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError("non-finite number in canonical JSON");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  throw new TypeError(`cannot encode ${typeof value} in canonical JSON`);
}
