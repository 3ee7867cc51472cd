/**
 * The gateway's express app: `createApp(deps)` wires the middleware (request ids, access log, metrics, body
 * limits, authentication, rate limits) and registers one handler per operation of the route catalog
 * (operations.ts; handlers in routes/*.ts, plain functions over the store and the queue). No slow work happens inline: requests touch Postgres and
 * enqueue BullMQ jobs, nothing else (docs/contract.md, DESIGN §1).
 */
import { randomUUID } from "node:crypto";
import { ApiError, MAX_ANSWER_BYTES } from "@labelgate/api";
import { OPERATIONS } from "@labelgate/api/routes";
import type { Logger, SecretBox } from "@labelgate/core";
import { httpMetrics, type Metrics } from "@labelgate/metrics";
import type { QueueClient } from "@labelgate/queue";
import type { BillingConfig, Store } from "@labelgate/store";
import express, { type RequestHandler, Router } from "express";
import type { Redis } from "ioredis";
import { pinoHttp } from "pino-http";
import { requireAdmin, requireCustomer, requireLabeler } from "./auth";
import { errorHandler } from "./errors";
import { DOCS_PATH, docsRouter } from "./openapi";
import { type Handlers, registerOperations } from "./operations";
import { QUEUE_DASHBOARD_PATH, queueDashboard, requireAdminOrBasic } from "./queue-dashboard";
import { createRateLimits, type RateLimitConfig } from "./ratelimit";
import { adminHandlers } from "./routes/admin";
import { billingHandlers } from "./routes/billing";
import { customerHandlers } from "./routes/customers";
import { dashboardHandlers } from "./routes/dashboard";
import { jobHandlers } from "./routes/jobs";
import { labelingHandlers } from "./routes/labeling";
import { systemHandlers } from "./routes/system";
import { batchHandlers, taskHandlers } from "./routes/tasks";
import { webhookHandlers } from "./routes/webhooks";
import { VIEW_URL_MAX_TTL_SECONDS, viewUrlSigner } from "./view-url";
import { webRouter } from "./web";

export interface GatewayConfig {
  adminToken: string | undefined;
  /** ALLOW_PRIVATE_URLS */
  allowPrivateUrls: boolean;
  /** WEBHOOK_RETRY_MAX: total delivery attempts */
  webhookRetryMax: number;
  claimTtlSeconds: number;
  sandboxLabelQuota: number;
  /** `service` of the health body */
  serviceName: string;
  /** label quota set on upgrade to production (if the customer has less) */
  productionLabelQuota: number;
  rateLimit: Omit<RateLimitConfig, "redis">;
  /** prices per collected label by tier (integer cents) and the currency of usage and invoices */
  billing: BillingConfig;
  /**
   * express `trust proxy` (TRUST_PROXY): false (the default: the client address is the socket's), a hop
   * count, or a list of trusted proxy addresses/CIDRs. Decides `req.ip`, which the registration limit counts by.
   */
  trustProxy: boolean | number | string[];
  /** EVM_RPC_URL: the chain the console verifies settlement proofs against (connect-src of the apps); unset = none */
  evmRpcUrl?: string;
}

export interface GatewayDeps {
  store: Store;
  queue: QueueClient;
  logger: Logger;
  /** seals webhook secrets and storage credentials (AES-256-GCM under ENCRYPTION_KEY) */
  secretBox: SecretBox;
  /** Redis for rate-limit counters shared by replicas; undefined = in-process counters (standalone) */
  rateLimitRedis?: Redis;
  /** HTTP request counts and latency by route pattern and status; optional (tests build apps without it) */
  metrics?: Pick<Metrics, "httpRequests" | "httpDuration">;
  /** DNS resolver of outbound URL checks (default: the system's) */
  resolve?: (host: string) => Promise<string[]>;
  config: GatewayConfig;
}

/** Body limits (docs/contract.md, DESIGN §2): 1 MB for single requests, 10 MB for batches. */
export const BODY_LIMIT = { single: "1mb", batch: "10mb", answer: MAX_ANSWER_BYTES } as const;

export function createApp(deps: GatewayDeps): express.Express {
  const { store, queue, logger, config } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", config.trustProxy);
  if (deps.metrics) app.use(httpMetrics(deps.metrics));

  app.use((req, res, next) => {
    const incoming = req.get("X-Request-Id");
    const id = incoming && /^[A-Za-z0-9._:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    res.setHeader("X-Request-Id", id);
    next();
  });
  app.use(
    pinoHttp({
      logger,
      genReqId: (_req, res) => String(res.getHeader("X-Request-Id")),
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? "error" : "info"),
      autoLogging: { ignore: (req) => req.url === OPERATIONS.getHealth.path },
      // Access lines carry what an operator reads (request id, method, URL, client, status, Retry-After), not
      // the headers: no credential can reach them, and a line costs a third of the CPU of a full serialization.
      serializers: {
        req: (req: { id: unknown; method: string; url: string; remoteAddress?: string; headers: Record<string, unknown> }) => ({
          id: req.id,
          method: req.method,
          url: req.url,
          remoteAddress: req.remoteAddress,
          userAgent: req.headers["user-agent"],
        }),
        res: (res: { statusCode: number; headers?: Record<string, unknown> }) => {
          const retryAfter = res.headers?.["retry-after"];
          return retryAfter === undefined
            ? { statusCode: res.statusCode }
            : { statusCode: res.statusCode, headers: { "retry-after": retryAfter } };
        },
      },
    }),
  );
  // An HTTP/1.1 request must name its Host (RFC 9112 §3.2). Node's own check answers a bare 400, so it is
  // off (server.ts) and the refusal is made here, with the spec's error body.
  app.use((req, _res, next) => {
    next(req.httpVersion === "1.1" && req.headers.host === undefined ? new ApiError("malformedRequest") : undefined);
  });

  const json = express.json({ limit: BODY_LIMIT.single });
  const jsonBatch = express.json({ limit: BODY_LIMIT.batch });
  const jsonAnswer = express.json({ limit: BODY_LIMIT.answer });
  const limits = createRateLimits({ ...config.rateLimit, redis: deps.rateLimitRedis });
  // Every customer route: authenticate the key, then spend one unit of its rate-limit budget.
  const authenticate = requireCustomer(store);
  const customer: RequestHandler = async (req, res, next) => {
    let authenticated = false;
    await authenticate(req, res, () => {
      authenticated = true;
    });
    if (authenticated) await limits.perKey(req, res, next);
  };
  const labeler = requireLabeler(store);
  const admin = requireAdmin(config.adminToken);

  const viewUrls = viewUrlSigner({
    store,
    secretBox: deps.secretBox,
    logger,
    ttlSeconds: Math.min(VIEW_URL_MAX_TTL_SECONDS, config.claimTtlSeconds),
  });
  const { secretBox, resolve } = deps;
  const { allowPrivateUrls } = config;
  const handlers: Handlers = {
    ...systemHandlers({ store, queue, serviceName: config.serviceName }),
    ...customerHandlers({ store, sandboxLabelQuota: config.sandboxLabelQuota }),
    ...taskHandlers({ store, queue, logger }),
    ...batchHandlers({ store }),
    ...webhookHandlers({ store, queue, secretBox, allowPrivateUrls, webhookRetryMax: config.webhookRetryMax, resolve }),
    ...jobHandlers({ store, queue, secretBox, allowPrivateUrls, logger }),
    ...billingHandlers({ store, billing: config.billing }),
    ...dashboardHandlers({ store }),
    ...labelingHandlers({ store, queue, claimTtlSeconds: config.claimTtlSeconds, viewUrls }),
    ...adminHandlers({ store, productionLabelQuota: config.productionLabelQuota }),
  };
  const v1 = Router();
  registerOperations(v1, "/v1", handlers, {
    customer,
    labeler,
    admin,
    perAddress: limits.registration,
    json,
    jsonLarge: jsonBatch,
    jsonAnswer,
  });
  app.use("/v1", v1);
  app.use(DOCS_PATH, docsRouter());
  // the labeler app at /label/ and the customer console at /console/ (web.ts); the console's "verify" button
  // reads the chain at EVM_RPC_URL, so its origin joins the apps' connect-src
  app.use(webRouter({ evmRpcUrl: config.evmRpcUrl }));
  // on-call queue dashboard (bull-board): admin token as bearer or as the Basic password of a browser prompt
  app.use(QUEUE_DASHBOARD_PATH, requireAdminOrBasic(config.adminToken), queueDashboard(queue));
  app.use(((_req, _res, next) => next(new ApiError("routeNotFound"))) as RequestHandler);
  app.use(errorHandler(logger));
  return app;
}
