/**
 * Authentication (SPEC §5, DESIGN §4): customer keys, labeler keys and the admin token, all as
 * `Authorization: Bearer <secret>`. Keys are looked up by SHA-256; every failure is 401 `invalid API key`.
 */

import { ApiError } from "@labelgate/api";
import { Batcher, hashKey, KEY_PREFIX, secretsEqual } from "@labelgate/core";
import { type Pool, Prisma, queryRows } from "@labelgate/store";
import type { NextFunction, Request, Response } from "express";

export interface CustomerPrincipal {
  customerId: string;
  /** the API key used (rate limits are per key) and its tier */
  keyId: string;
  tier: "sandbox" | "production";
}

export interface LabelerPrincipal {
  labelerId: string;
}

// The authenticated principal of each in-flight response (typed, unlike res.locals).
const customers = new WeakMap<Response, CustomerPrincipal>();
const labelers = new WeakMap<Response, LabelerPrincipal>();

/** The bearer secret of a request, or undefined when the header is missing or not `Bearer <token>`. */
export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

type Middleware = (req: Request, res: Response, next: NextFunction) => Promise<void>;

/**
 * Key lookups by SHA-256, shared by the concurrent requests of this process: one statement on the unique
 * key_hash index per batch (core's `Batcher`; an idle gateway looks each key up alone, at once). Every
 * request still reads the key's current row, so a revoked key is refused from the next request on.
 * `sql` is the statement with one `text[]` parameter of hashes and returns rows with `key_hash`.
 */
function keyLookup<R extends { key_hash: string }>(
  pool: Pool,
  sql: (hashes: string[]) => Prisma.Sql,
): (hash: string) => Promise<R | undefined> {
  const batcher = new Batcher<string, R | undefined>(
    async (hashes) => {
      const rows = await queryRows<R>(pool, sql([...new Set(hashes)]));
      const byHash = new Map(rows.map((r) => [r.key_hash, r]));
      return hashes.map((h) => byHash.get(h));
    },
    { maxInFlight: 2 },
  );
  return (hash) => batcher.call(hash);
}

/** Requires a customer key (`sk_sandbox_` or `sk_live_`); the principal is read with `customerOf(res)`. */
export function requireCustomer(pool: Pool): Middleware {
  const lookup = keyLookup<{ key_hash: string; id: string; customer_id: string; tier: CustomerPrincipal["tier"] }>(
    pool,
    (hashes) => Prisma.sql`
      SELECT key_hash, id, customer_id, tier::text AS tier FROM api_keys WHERE key_hash = ANY(${hashes}::text[]) AND revoked_at IS NULL`,
  );
  return async (req, res, next) => {
    const token = bearerToken(req);
    if (!token || !(token.startsWith(KEY_PREFIX.sandbox) || token.startsWith(KEY_PREFIX.production))) {
      throw new ApiError("unauthorized");
    }
    // this runs on every customer request
    const key = await lookup(hashKey(token));
    if (!key) throw new ApiError("unauthorized");
    customers.set(res, { customerId: key.customer_id, keyId: key.id, tier: key.tier });
    next();
  };
}

/** Requires a labeler key (`lk_`); read with `labelerOf(res)`. */
export function requireLabeler(pool: Pool): Middleware {
  const lookup = keyLookup<{ key_hash: string; id: string }>(
    pool,
    (hashes) => Prisma.sql`SELECT key_hash, id FROM labelers WHERE key_hash = ANY(${hashes}::text[]) AND disabled_at IS NULL`,
  );
  return async (req, res, next) => {
    const token = bearerToken(req);
    if (!token?.startsWith(KEY_PREFIX.labeler)) throw new ApiError("unauthorized");
    // this runs on every claim and label
    const labeler = await lookup(hashKey(token));
    if (!labeler) throw new ApiError("unauthorized");
    labelers.set(res, { labelerId: labeler.id });
    next();
  };
}

/** Requires the operator token `ADMIN_TOKEN` (compared in constant time). Unset token: every call is 401. */
export function requireAdmin(adminToken: string | undefined): Middleware {
  return async (req, _res, next) => {
    const token = bearerToken(req);
    if (!adminToken || !token || !secretsEqual(token, adminToken)) throw new ApiError("unauthorized");
    next();
  };
}

export function customerOf(res: Response): CustomerPrincipal {
  const principal = customers.get(res);
  if (!principal) throw new ApiError("unauthorized");
  return principal;
}

export function labelerOf(res: Response): LabelerPrincipal {
  const principal = labelers.get(res);
  if (!principal) throw new ApiError("unauthorized");
  return principal;
}
