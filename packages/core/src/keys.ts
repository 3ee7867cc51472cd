import { createHash, timingSafeEqual } from "node:crypto";
import { randomBase62 } from "./ids";

/** Key prefixes: customer keys by tier (contract §authentication), labeler keys (contract §labelers). */
export const KEY_PREFIX = { sandbox: "sk_sandbox_", production: "sk_live_", labeler: "lk_" } as const;

export interface IssuedKey {
  /** the raw key: returned to its holder once, never stored */
  key: string;
  /** lowercase hex SHA-256 of the raw key: what is stored */
  hash: string;
  /** prefix + first 4 random characters + "…" (contract §accounts) */
  hint: string;
}

/** Issues a key: prefix + 32 random bytes' worth of base62 (43 characters; contract §accounts). */
export function issueKey(prefix: string): IssuedKey {
  const secret = randomBase62(43);
  const key = prefix + secret;
  return { key, hash: hashKey(key), hint: `${prefix}${secret.slice(0, 4)}…` };
}

/** Lowercase hex SHA-256 of a key or token. */
export function hashKey(raw: string): string {
  return createHash("sha256").update(raw, "utf8").digest("hex");
}

/** Constant-time comparison of two secrets of any length (compares their SHA-256). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest());
}
