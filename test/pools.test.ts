/**
 * The pool plan of a process (packages/runtime/src/pools.ts, issue 28 item 6) on the real Postgres of the
 * machine: the limits are read from the server; a store pool that cannot fit fails the start with a
 * ConfigError naming the figures; on BullMQ's Postgres backend the worker pools are capped within the budget.
 */
import { ConfigError } from "@labelgate/config";
import { consensusRole } from "@labelgate/consensus-worker";
import { createLogger } from "@labelgate/core";
import { PRODUCER_POOL_MAX } from "@labelgate/queue";
import { createRuntime, headroomOf, MIN_WORKER_POOL, planPools, readServerLimits } from "@labelgate/runtime";
import { createStore } from "@labelgate/store";
import { webhookRole } from "@labelgate/webhook-worker";
import { REDIS_URL, runPrefix, testDatabaseUrl } from "./env";
import { TEST_ENCRYPTION_KEY } from "./system";

const logger = createLogger("test", "silent");
const env = (extra: Record<string, string>) => ({
  DATABASE_URL: testDatabaseUrl(),
  REDIS_URL,
  QUEUE_PREFIX: `${runPrefix()}:pools`,
  METRICS_PORT: "0",
  LOG_LEVEL: "silent",
  ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  ...extra,
});

it("reads max_connections, the reserved slots and the connections in use from the server", async () => {
  const store = createStore({ url: testDatabaseUrl(), poolMax: 2 });
  try {
    const limits = await readServerLimits((sql) => store.db.pool.query(sql));
    const { rows } = await store.db.pool.query("SHOW max_connections");
    expect(limits.maxConnections).toBe(Number(rows[0].max_connections));
    expect(limits.reserved).toBeGreaterThanOrEqual(0);
    expect(limits.inUse).toBeGreaterThanOrEqual(0);
  } finally {
    await store.close();
  }
});

it("plans the worker pools within the budget, and refuses pools that cannot fit", () => {
  // standalone's embedded Postgres: 300 connections, 3 reserved; store 10, 8 producer queues, 8 workers
  const plan = planPools({ maxConnections: 300, reserved: 3, inUse: 0 }, { storePool: 10, producerQueues: 8, workers: 8 });
  expect(plan.budget).toBe(300 - 3 - headroomOf(300));
  expect(plan.workerPoolMax).toBe(Math.floor((plan.budget - 10 - 8 * (PRODUCER_POOL_MAX + 1)) / 8) - 1);
  expect(plan.planned).toBeLessThanOrEqual(plan.budget);
  expect(plan.fitsNow).toBe(true);
  // Postgres' default of 100 with 20 taken by others: the worker pools shrink to what is left
  const tight = planPools({ maxConnections: 100, reserved: 3, inUse: 20 }, { storePool: 10, producerQueues: 8, workers: 8 });
  expect(tight.workerPoolMax).toBe(Math.floor((100 - 3 - 10 - 20 - 10 - 24) / 8) - 1);
  expect(tight.fitsNow).toBe(true);
  // others hold nearly everything: the smallest pools, and a warning (not a failure) at start
  const crowded = planPools({ maxConnections: 100, reserved: 3, inUse: 80 }, { storePool: 10, producerQueues: 8, workers: 8 });
  expect(crowded.workerPoolMax).toBe(MIN_WORKER_POOL);
  expect(crowded.fitsNow).toBe(false);
  // pools that can never fit: the start fails
  expect(() => planPools({ maxConnections: 50, reserved: 3, inUse: 0 }, { storePool: 10, producerQueues: 8, workers: 8 })).toThrow(
    /need at least 58 connections .* the server allows 42: max_connections 50/,
  );
});

it("a process whose store pool cannot fit the server's max_connections fails at start, naming the figures", async () => {
  const store = createStore({ url: testDatabaseUrl(), poolMax: 1 });
  const limits = await readServerLimits((sql) => store.db.pool.query(sql)).finally(() => store.close());
  // more than the server allows less its reserved slots and the headroom: never fits, whoever else is connected
  const tooMany = limits.maxConnections - limits.reserved - headroomOf(limits.maxConnections) + 1;
  const start = createRuntime(env({ DB_POOL_MAX: String(Math.min(200, tooMany)) }), [consensusRole], { logger });
  if (tooMany > 200) throw new Error(`this server allows ${limits.maxConnections} connections: the test needs at most 203`);
  await expect(start).rejects.toThrow(ConfigError);
  await expect(start).rejects.toThrow(new RegExp(`max_connections ${limits.maxConnections}`));
});

it("on BullMQ's Postgres backend the worker pools are capped so that every pool fits", async () => {
  const { REDIS_URL: _redis, ...withoutRedis } = env({ DB_POOL_MAX: "2" });
  const runtime = await createRuntime(withoutRedis, [webhookRole], {
    logger,
    queueBackend: { kind: "postgres", url: testDatabaseUrl(), schema: "bullmq_pools" },
  });
  try {
    const backend = runtime.ctx.backend;
    expect(backend.kind).toBe("postgres");
    const cap = backend.kind === "postgres" ? backend.workerPoolMax : undefined;
    // WEBHOOK_CONCURRENCY 256 would be a pool of 258 per webhook queue
    expect(cap).toBeGreaterThanOrEqual(2);
    expect(cap).toBeLessThan(100);
  } finally {
    await runtime.shutdown();
  }
});
