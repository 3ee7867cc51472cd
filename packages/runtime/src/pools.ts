/**
 * How many Postgres connections a process's pools may open, planned from the server's `max_connections`
 * (issue 28 item 6: `pnpm start` ran out of connections under load, "sorry, too many clients already").
 *
 * A process opens: its store's pg pool (DB_POOL_MAX); and on BullMQ's Postgres backend (standalone) one pg
 * pool per producer queue (@labelgate/queue PRODUCER_POOL_MAX) and one per worker, plus one LISTEN connection for each of
 * those (bullmq's PostgresConnection: a pool for queries and a dedicated LISTEN client). A worker's pool
 * would be its concurrency + 2 (258 for task-settled at WEBHOOK_CONCURRENCY 256): the plan caps it so that
 * everything fits within the server's limit, less the superuser-reserved slots, the connections others hold
 * at start and a headroom (a tenth of the limit, at least 5) for psql, migrations and a second process.
 * Pools that cannot fit the limit whatever others hold fail the start; pools that do not fit what others
 * leave free at start only log a warning (they may leave before the pools grow).
 */
import { ConfigError } from "@labelgate/config";
import { PRODUCER_POOL_MAX } from "@labelgate/queue";

/** the smallest pool a BullMQ worker runs with (a fetch and a completion at once) */
export const MIN_WORKER_POOL = 2;

/** What the server allows, read at start. */
export interface ServerLimits {
  /** `max_connections` */
  maxConnections: number;
  /** `superuser_reserved_connections` + `reserved_connections` */
  reserved: number;
  /** client connections open when the process starts (not this process's) */
  inUse: number;
}

/** The connection counts a process needs. */
export interface PoolDemand {
  /** the store's pool size (DB_POOL_MAX) */
  storePool: number;
  /** producer queues (0 on Redis) */
  producerQueues: number;
  /** BullMQ workers on the Postgres backend (0 on Redis) */
  workers: number;
}

export interface PoolPlan {
  /** the connections this process's pools may ever open: limit - reserved - headroom */
  budget: number;
  /** what is free now: budget - the connections others hold */
  available: number;
  headroom: number;
  /** the pool of each BullMQ worker is min(its concurrency + 2, workerPoolMax); undefined: no cap (Redis) */
  workerPoolMax: number | undefined;
  /** the most connections the process opens with this plan */
  planned: number;
  /** whether `planned` fits what is free now (when not, the process starts and logs a warning) */
  fitsNow: boolean;
}

/** Headroom left to other clients: a tenth of `max_connections`, at least 5. */
export function headroomOf(maxConnections: number): number {
  return Math.max(5, Math.ceil(maxConnections / 10));
}

/**
 * Plans the pools of a process. The worker pools share what the store and the producer queues leave of what
 * is free now, each capped at `floor(left / workers) - 1` (the 1: its LISTEN connection), never below
 * MIN_WORKER_POOL.
 * @throws ConfigError when even the smallest pools exceed the budget (whatever others hold: a setting to
 *   change), naming the figures and what to change
 */
export function planPools(limits: ServerLimits, demand: PoolDemand): PoolPlan {
  const headroom = headroomOf(limits.maxConnections);
  const budget = limits.maxConnections - limits.reserved - headroom;
  const available = budget - limits.inUse;
  const fixed = demand.storePool + demand.producerQueues * (PRODUCER_POOL_MAX + 1);
  const minimum = fixed + demand.workers * (MIN_WORKER_POOL + 1);
  if (minimum > budget) {
    throw new ConfigError(
      `the database pools of this process need at least ${minimum} connections (DB_POOL_MAX ${demand.storePool}` +
        (demand.workers > 0 ? `, ${demand.producerQueues} queues and ${demand.workers} workers on the Postgres backend` : "") +
        `), but the server allows ${budget}: max_connections ${limits.maxConnections} less ${limits.reserved} reserved ` +
        `and a headroom of ${headroom}. Raise max_connections or lower DB_POOL_MAX.`,
    );
  }
  const workerPoolMax = demand.workers > 0 ? Math.max(MIN_WORKER_POOL, Math.floor((available - fixed) / demand.workers) - 1) : undefined;
  const planned = fixed + (workerPoolMax === undefined ? 0 : demand.workers * (workerPoolMax + 1));
  return { budget, available, headroom, workerPoolMax, planned, fitsNow: planned <= available };
}

/** Reads the server's limits over `query` (one connection of the caller's pool: not counted as in use). */
export async function readServerLimits(query: (sql: string) => Promise<{ rows: Record<string, unknown>[] }>): Promise<ServerLimits> {
  const { rows } = await query(
    `SELECT current_setting('max_connections')::int AS max,
            current_setting('superuser_reserved_connections')::int
              + coalesce(current_setting('reserved_connections', true)::int, 0) AS reserved,
            (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int - 1 AS in_use`,
  );
  const row = rows[0] ?? {};
  return { maxConnections: Number(row.max), reserved: Number(row.reserved), inUse: Math.max(0, Number(row.in_use)) };
}
