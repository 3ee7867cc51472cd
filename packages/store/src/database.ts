/**
 * The database handles of a process: one pg pool and the Prisma client over it (pg driver adapter, no Rust
 * engine). `createDb({ url, poolMax?, connectTimeoutMs?, statementTimeoutMs? })` returns `{ prisma, pool, close }`.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import { Pool } from "pg";
import { PrismaClient } from "./generated/client";
import { pgConfigFromUrl } from "./url";

export interface DbOptions {
  /** postgres:// URL of the system-of-record database */
  url: string;
  /** pool size per process (default 10) */
  poolMax?: number;
  /** how long to wait for a connection before failing, ms (default 2000): a dead server fails fast */
  connectTimeoutMs?: number;
  /** server-side statement timeout, ms (default 15000) */
  statementTimeoutMs?: number;
  /** errors of idle pooled connections (a restarted or stopped server); the pool drops the broken client */
  onPoolError?: (err: Error) => void;
}

export interface Db {
  prisma: PrismaClient;
  /**
   * The pg pool under `prisma`, for the few statements of the request hot path (key lookups, group commit of
   * submissions): a raw pg query costs a fraction of the CPU of a Prisma `$queryRaw` (query compiler and
   * parameter serialisation), see docs/decisions.md "Hot path on the pg pool". Same connections and limits.
   */
  pool: Pool;
  close(): Promise<void>;
}

/**
 * Creates a Prisma client over a pg pool (shared with `pool`). The pool connects lazily; nothing is awaited
 * here. `onPoolError` receives errors of idle connections (a restarted server); they are never thrown.
 */
export function createDb(options: DbOptions): Db {
  const pool = new Pool({
    ...pgConfigFromUrl(options.url),
    // No JIT: it compiles for the planner's cost estimate, not the work done (a generic claim over
    // 100,000 open tasks took 2.3 s with it, 0.12 s without); OLTP statements never gain from it.
    options: "-c jit=off",
    max: options.poolMax ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    statement_timeout: options.statementTimeoutMs ?? 15000,
    query_timeout: (options.statementTimeoutMs ?? 15000) + 1000,
  });
  // The adapter listens for idle-client errors only while Prisma is connected; this listener always does, so
  // a server restart never surfaces as an unhandled 'error' event. A broken idle client is dropped by the pool.
  pool.on("error", (err) => options.onPoolError?.(err));
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  return {
    prisma,
    pool,
    close: async () => {
      await prisma.$disconnect();
      // Prisma ends the pool when it had connected; a pool Prisma never used is ended here
      if (!pool.ended) await pool.end();
    },
  };
}
