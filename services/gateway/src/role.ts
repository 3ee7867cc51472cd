/**
 * The gateway's role on the runtime: the express app over the runtime's store and queue, served on
 * PORT/HOST, with rate-limit counters in Redis (shared by replicas) or, without Redis (standalone), in the
 * process. It stops first on shutdown: no new connections, in-flight requests answered, keep-alive
 * connections closed as soon as they are idle.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { closeHttpServer } from "@labelgate/core";
import { queueKeysOf } from "@labelgate/queue";
import { defineRole, startChainProbe } from "@labelgate/runtime";
import type express from "express";
import { createApp } from "./app";
import { gatewayConfigFromEnv } from "./config";
import { createRateLimitRedis } from "./ratelimit";
import { listenGateway } from "./server";

export const gatewayRole = defineRole({
  role: "gateway",
  // the gateway produces into every queue: it reports the depth of all of them
  queues: queueKeysOf(),
  async start(ctx, env) {
    const { logger } = ctx;
    const adminToken = env.ADMIN_TOKEN ?? ctx.options.adminToken;
    if (!adminToken) logger.warn("ADMIN_TOKEN is not set: admin routes answer 401");
    // Rate-limit counters shared by every replica; commands fail fast so the in-memory insurance limiter takes over.
    const rateLimitRedis = env.REDIS_URL
      ? createRateLimitRedis(env.REDIS_URL, (err) => logger.warn({ err }, "rate-limit Redis unavailable"))
      : undefined;
    // the chain the deployment settles on: this process's probe (it settles: standalone), else one of its own
    // when EVM_RPC_URL names it, for a settling task's `waiting_for` (not for readiness: the gateway does not settle)
    const ownProbe = !ctx.chain && env.EVM_RPC_URL ? startChainProbe({ rpcUrl: env.EVM_RPC_URL }) : undefined;
    const chain = ctx.chain ?? ownProbe;
    const app: express.Express = createApp({
      store: ctx.store,
      queue: ctx.queue,
      relay: ctx.relay,
      logger,
      secretBox: ctx.secretBox(),
      rateLimitRedis,
      metrics: ctx.metrics,
      resolve: ctx.options.resolve,
      checks: ctx.checks,
      chain,
      config: gatewayConfigFromEnv(env, adminToken),
    });
    const server: Server = await listenGateway(app, env.PORT, env.HOST, logger, env.HTTP_KEEP_ALIVE_TIMEOUT_MS);
    const { port } = server.address() as AddressInfo;
    logger.info({ port }, "gateway listening");
    return {
      app,
      server,
      /** the port the gateway listens on (the ephemeral one when PORT=0) */
      port,
      drain: async (budgetMs: number) => {
        await closeHttpServer(server, budgetMs);
        return { returned: 0 };
      },
      close: async () => {
        ownProbe?.stop();
        rateLimitRedis?.disconnect();
      },
    };
  },
});
