/**
 * Rate limits (docs/decisions.md "Billing and dashboard"; contract §errors 429; contract §wire) with rate-limiter-flexible: per API key with
 * the key's tier's budget, and registrations per client address. With Redis the counters are shared by
 * every gateway replica (an in-memory insurance limiter takes over while Redis is unreachable); without
 * Redis (standalone) they live in the process.
 * Every limited response carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds,
 * IETF draft "RateLimit header fields for HTTP"); a 429 adds `Retry-After` (seconds).
 */

import { ApiError } from "@labelgate/api";
import type { NextFunction, Request, Response } from "express";
import { Redis } from "ioredis";
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { customerOf } from "./auth";

export interface RateLimitConfig {
  /** requests per window and API key, by tier */
  perKey: { sandbox: number; production: number };
  /** the window of the per-key budgets, seconds */
  windowSeconds: number;
  /** registrations per hour and client address */
  registrationsPerHour: number;
  /** shared counters (distributed mode); undefined = in-process counters */
  redis?: Redis;
  /** Redis key prefix (per deployment, per test run) */
  keyPrefix: string;
}

/**
 * The Redis client of the rate limiter: commands wait for the connection while it is being made (so the
 * first requests after start count in Redis), but never more than 500 ms; then the in-memory insurance
 * limiter answers. `onError` receives connection errors (log them).
 */
export function createRateLimitRedis(url: string, onError: (err: Error) => void): Redis {
  const redis = new Redis(url, { commandTimeout: 500, maxRetriesPerRequest: 1, connectTimeout: 2000 });
  redis.on("error", onError);
  return redis;
}

function limiter(config: RateLimitConfig, name: string, points: number, duration: number): RateLimiterAbstract {
  const keyPrefix = `${config.keyPrefix}:rl:${name}`;
  if (!config.redis) return new RateLimiterMemory({ keyPrefix, points, duration });
  return new RateLimiterRedis({
    storeClient: config.redis,
    keyPrefix,
    points,
    duration,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: `${keyPrefix}:insurance`, points, duration }),
  });
}

function setHeaders(res: Response, limit: number, r: RateLimiterRes): void {
  res.setHeader("RateLimit-Limit", String(limit));
  res.setHeader("RateLimit-Remaining", String(Math.max(0, r.remainingPoints)));
  res.setHeader("RateLimit-Reset", String(Math.max(0, Math.ceil(r.msBeforeNext / 1000))));
}

async function consume(res: Response, l: RateLimiterAbstract, key: string, limit: number): Promise<void> {
  try {
    setHeaders(res, limit, await l.consume(key));
  } catch (rejected) {
    if (!(rejected instanceof RateLimiterRes)) throw rejected;
    setHeaders(res, limit, rejected);
    res.setHeader("Retry-After", String(Math.max(1, Math.ceil(rejected.msBeforeNext / 1000))));
    throw new ApiError("rateLimited");
  }
}

type Middleware = (req: Request, res: Response, next: NextFunction) => Promise<void>;

export interface RateLimits {
  /** after customer authentication: one point of the key's budget */
  perKey: Middleware;
  /** before registration: one point of the client address's budget */
  registration: Middleware;
}

export function createRateLimits(config: RateLimitConfig): RateLimits {
  const byTier = {
    sandbox: limiter(config, "key:sandbox", config.perKey.sandbox, config.windowSeconds),
    production: limiter(config, "key:production", config.perKey.production, config.windowSeconds),
  };
  const registrations = limiter(config, "registration", config.registrationsPerHour, 3600);
  return {
    perKey: async (_req, res, next) => {
      const { keyId, tier } = customerOf(res);
      await consume(res, byTier[tier], keyId, config.perKey[tier]);
      next();
    },
    registration: async (req, res, next) => {
      await consume(res, registrations, req.ip ?? req.socket.remoteAddress ?? "unknown", config.registrationsPerHour);
      next();
    },
  };
}
