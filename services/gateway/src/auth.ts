/**
 * Authentication (contract §authentication, §labelers): customer keys, labeler keys and the admin token, all as
 * `Authorization: Bearer <secret>`. Keys are looked up by SHA-256; every failure is 401 `invalid API key`.
 */

import { ApiError, type Tier } from "@labelgate/api";
import { hashKey, KEY_PREFIX, secretsEqual } from "@labelgate/core";
import { type Store, type StoredSettings, storedSettingsOf } from "@labelgate/store";
import type { NextFunction, Request, Response } from "express";

export interface CustomerPrincipal {
  customerId: string;
  /** the API key used (rate limits are per key) and its tier */
  keyId: string;
  tier: Tier;
  /** the customer's settings as of this request (its task defaults are a layer of a task's policy) */
  settings: StoredSettings;
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

/** Requires a customer key (`sk_sandbox_` or `sk_live_`); the principal is read with `customerOf(res)`. */
export function requireCustomer(store: Store): Middleware {
  return async (req, res, next) => {
    const token = bearerToken(req);
    if (!token || !(token.startsWith(KEY_PREFIX.sandbox) || token.startsWith(KEY_PREFIX.production))) {
      throw new ApiError("unauthorized");
    }
    // this runs on every customer request: one batched lookup on the unique key_hash index
    const key = await store.accounts.customerKey(hashKey(token));
    if (!key) throw new ApiError("unauthorized");
    customers.set(res, { customerId: key.customer_id, keyId: key.id, tier: key.tier, settings: storedSettingsOf(key.settings) });
    next();
  };
}

/** Requires a labeler key (`lk_`); read with `labelerOf(res)`. */
export function requireLabeler(store: Store): Middleware {
  return async (req, res, next) => {
    const token = bearerToken(req);
    if (!token?.startsWith(KEY_PREFIX.labeler)) throw new ApiError("unauthorized");
    // this runs on every claim and label
    const labeler = await store.accounts.labelerKey(hashKey(token));
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
