/**
 * The gateway's express app: `createApp(deps)` wires the middleware (request ids, access log, metrics, body
 * limits, authentication, rate limits) and registers one handler per operation of the route catalog
 * (operations.ts; handlers in routes/*.ts, plain functions over the store and the queue). No slow work happens inline: requests touch Postgres and
 * enqueue BullMQ jobs, nothing else (contract §shape).
 */
import { randomUUID } from "node:crypto";
import { ApiError, MAX_ANSWER_BYTES } from "@labelgate/api";
import { OPERATIONS } from "@labelgate/api/routes";
import type { Logger, SecretBox } from "@labelgate/core";
import { httpMetrics, type Metrics } from "@labelgate/metrics";
import type { FollowUpNudge, QueueClient } from "@labelgate/queue";
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
import { samplesRouter } from "./samples";
import { VIEW_URL_MAX_TTL_SECONDS, viewUrlSigner } from "./view-url";
import type { ChainState } from "./views";
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
  /** the process's follow-up relay (the runtime's), nudged after commits that wrote follow-up rows (docs/decisions/0300) */
  relay?: FollowUpNudge;
  logger: Logger;
  /** seals webhook secrets and storage credentials (AES-256-GCM under ENCRYPTION_KEY) */
  secretBox: SecretBox;
  /** Redis for rate-limit counters shared by replicas; undefined = in-process counters (standalone) */
  rateLimitRedis?: Redis;
  /** HTTP request counts and latency by route pattern and status; optional (tests build apps without it) */
  metrics?: Pick<Metrics, "httpRequests" | "httpDuration">;
  /** DNS resolver of outbound URL checks (default: the system's) */
  resolve?: (host: string) => Promise<string[]>;
  /**
   * what /v1/health checks, by name (the runtime's `checks`: database, queue, chain, workers); default: the
   * database and the queue
   */
  checks?: Record<string, () => Promise<boolean>>;
  /** the chain settlements wait for (LEDGER=evm), for a settling task's `waiting_for`; undefined = the local ledger */
  chain?: ChainState;
  config: GatewayConfig;
}

/** Body limits (contract §wire): 1 MB for single requests, 10 MB for batches. */
export const BODY_LIMIT = { single: "1mb", batch: "10mb", answer: MAX_ANSWER_BYTES } as const;

/** The media types a body is read as: JSON, and the `+json` types built on it (RFC 6839 §3.1). */
export const JSON_MEDIA_TYPES = ["application/json", "application/*+json"];

/**
 * The JSON body parser of a route, limited to `limit` (bytes, or a string such as "1mb"). A request that
 * carries a body (`Transfer-Encoding`, or a `Content-Length` above 0) sent as another media type, or with
 * none, is refused with 415 `content-type must be application/json` before a byte of it is read: express.json
 * would skip it, and the handler would answer a list of missing fields for a body it never saw (issue 40).
 * A request without a body reaches the handler as `{}`, whatever its Content-Type.
 */
export function jsonBody(limit: string | number): RequestHandler {
  const parse = express.json({ limit, type: JSON_MEDIA_TYPES });
  return (req, res, next) => {
    const length = req.headers["content-length"];
    const hasBody = req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
    if (hasBody && !req.is(JSON_MEDIA_TYPES)) {
      next(new ApiError("unsupportedMediaType"));
      return;
    }
    parse(req, res, next);
  };
}

export function createApp(deps: GatewayDeps): express.Express {
  const { store, queue, relay, logger, config } = deps;
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

  const json = jsonBody(BODY_LIMIT.single);
  const jsonBatch = jsonBody(BODY_LIMIT.batch);
  const jsonAnswer = jsonBody(BODY_LIMIT.answer);
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
    ...systemHandlers({
      checks: deps.checks ?? { database: () => store.ping(), queue: () => queue.ping() },
      serviceName: config.serviceName,
    }),
    ...customerHandlers({ store, sandboxLabelQuota: config.sandboxLabelQuota }),
    ...taskHandlers({ store, relay, logger, chain: deps.chain }),
    ...batchHandlers({ store, logger }),
    ...webhookHandlers({ store, relay, secretBox, allowPrivateUrls, webhookRetryMax: config.webhookRetryMax, resolve }),
    ...jobHandlers({ store, relay, secretBox, allowPrivateUrls, logger }),
    ...billingHandlers({ store, billing: config.billing }),
    ...dashboardHandlers({ store, chain: deps.chain }),
    ...labelingHandlers({ store, relay, claimTtlSeconds: config.claimTtlSeconds, viewUrls }),
    ...adminHandlers({ store, relay, productionLabelQuota: config.productionLabelQuota }),
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
  // the sample pictures and texts of data/samples, read-only (samples.ts)
  app.use(samplesRouter());
  // on-call queue dashboard (bull-board): admin token as bearer or as the Basic password of a browser prompt
  app.use(QUEUE_DASHBOARD_PATH, requireAdminOrBasic(config.adminToken), queueDashboard(queue));
  app.use(((_req, _res, next) => next(new ApiError("routeNotFound"))) as RequestHandler);
  app.use(errorHandler(logger));
  return app;
}
