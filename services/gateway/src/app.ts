/**
 * The gateway's express app: `createApp(deps)` wires routes to plain handler functions. No slow work
 * happens inline: requests touch Postgres and enqueue BullMQ jobs, nothing else (DESIGN §1).
 */
import { randomUUID } from "node:crypto";
import type { SecretBox } from "@labelgate/core";
import { issueKey, KEY_PREFIX, type Logger, newId } from "@labelgate/core";
import { isUniqueViolation, type Pool, type PrismaClient } from "@labelgate/db";
import { httpMetrics, type Metrics } from "@labelgate/metrics";
import type { QueueClient } from "@labelgate/queue";
import express, { type Request, type RequestHandler, type Response, Router } from "express";
import type { Redis } from "ioredis";
import { pinoHttp } from "pino-http";
import { adminRoutes } from "./admin";
import { customerOf, labelerOf, requireAdmin, requireCustomer, requireLabeler } from "./auth";
import { type BillingConfig, billingRoutes } from "./billing";
import { dashboardRoutes } from "./dashboard";
import { ApiError, errorHandler, parse } from "./errors";
import { jobRoutes } from "./jobs";
import { claimTask, recordLabel } from "./labeling";
import { DOCS_PATH, docsRouter, serveOpenApi } from "./openapi";
import { QUEUE_DASHBOARD_PATH, queueDashboard, requireAdminOrBasic } from "./queue-dashboard";
import { createRateLimits, type RateLimitConfig } from "./ratelimit";
import { batchBody, claimBody, idempotencyKey as idempotencyKeySchema, labelBody, pathId, registrationBody, taskBody } from "./schemas";
import { cancelTask, createBatch, createTask } from "./tasks";
import { batchView, customerView, type TaskCounts, taskView } from "./views";
import { webRouter } from "./web";
import { requireWebhooksFor, webhookRoutes } from "./webhooks";

export interface GatewayDeps {
  prisma: PrismaClient;
  /** the pg pool under `prisma` (createDb's `pool`): key lookups and submissions run on it */
  pool: Pool;
  queue: QueueClient;
  logger: Logger;
  /** seals webhook secrets (AES-256-GCM under ENCRYPTION_KEY) */
  secretBox: SecretBox;
  /** Redis for rate-limit counters shared by replicas; undefined = in-process counters (standalone) */
  rateLimitRedis?: Redis;
  /** HTTP request counts and latency by route pattern and status; optional (tests build apps without it) */
  metrics?: Pick<Metrics, "httpRequests" | "httpDuration">;
  /** DNS resolver of outbound URL checks (default: the system's) */
  resolve?: (host: string) => Promise<string[]>;
  config: {
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
  };
}

/** Body limits (DESIGN §2): 1 MB for single requests, 10 MB for batches. */
export const BODY_LIMIT = { single: "1mb", batch: "10mb" } as const;

function param(req: Request, name: string, prefix: string, notFound: ApiError["kind"]): string {
  const value = req.params[name];
  if (typeof value !== "string" || !pathId(prefix).safeParse(value).success) throw new ApiError(notFound);
  return value;
}

/** `Idempotency-Key` header (wins) or the body field (DESIGN §2). */
function idempotencyKeyOf(req: Request, bodyKey: string | undefined): string | undefined {
  const header = req.get("Idempotency-Key");
  if (header === undefined) return bodyKey;
  const parsed = idempotencyKeySchema.safeParse(header);
  if (!parsed.success)
    throw new ApiError("validation", [{ path: "Idempotency-Key", message: "printable ASCII without spaces, 1..255 characters" }]);
  return parsed.data;
}

const ZERO_COUNTS: TaskCounts = { pending: 0, labeling: 0, settling: 0, settled: 0, canceled: 0 };

export function createApp(deps: GatewayDeps): express.Express {
  const { prisma, pool, queue, logger, config } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", false);
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
      autoLogging: { ignore: (req) => req.url === "/v1/health" },
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

  const jsonSingle = express.json({ limit: BODY_LIMIT.single });
  const jsonBatch = express.json({ limit: BODY_LIMIT.batch });
  const limits = createRateLimits({ ...config.rateLimit, redis: deps.rateLimitRedis });
  // Every customer route: authenticate the key, then spend one unit of its rate-limit budget.
  const authenticate = requireCustomer(pool);
  const customer: RequestHandler = async (req, res, next) => {
    let authenticated = false;
    await authenticate(req, res, () => {
      authenticated = true;
    });
    if (authenticated) await limits.perKey(req, res, next);
  };
  const labeler = requireLabeler(pool);
  const admin = requireAdmin(config.adminToken);

  const v1 = Router();

  // --- system ---------------------------------------------------------------------------------
  v1.get("/health", async (_req, res) => {
    const [database, queueOk] = await Promise.all([
      prisma.$queryRaw`SELECT 1`.then(
        () => true,
        () => false,
      ),
      queue.ping(),
    ]);
    const checks = { database: database ? "ok" : "unavailable", queue: queueOk ? "ok" : "unavailable" };
    if (database && queueOk) {
      res.json({ ok: true, service: config.serviceName, checks });
    } else {
      res.setHeader("Retry-After", "5");
      res.status(503).json({ error: "service unavailable", ok: false, service: config.serviceName, checks });
    }
  });

  // the OpenAPI 3.1 document (no auth); its rendered reference is at /docs/
  v1.get("/openapi.json", serveOpenApi);

  // --- customers ------------------------------------------------------------------------------
  v1.post("/customers", limits.registration, jsonSingle, async (req, res) => {
    const body = parse(registrationBody, req.body);
    const key = issueKey(KEY_PREFIX.sandbox);
    const customerId = newId("customer");
    try {
      const created = await prisma.customer.create({
        data: {
          id: customerId,
          name: body.name,
          email: body.email,
          tier: "sandbox",
          labelQuota: config.sandboxLabelQuota,
          apiKeys: { create: { id: newId("apiKey"), keyHash: key.hash, hint: key.hint, tier: "sandbox" } },
        },
      });
      res.status(201).json({
        customer_id: created.id,
        name: created.name,
        email: created.email,
        api_key: key.key,
        tier: created.tier,
        label_quota: created.labelQuota,
        created_at: Math.floor(created.createdAt.getTime() / 1000),
        message: "Store this API key now: it is shown only once and cannot be retrieved again.",
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ApiError("emailTaken");
      throw err;
    }
  });

  v1.get("/customers/me", customer, async (_req, res) => {
    const { customerId } = customerOf(res);
    const found = await prisma.customer.findUniqueOrThrow({ where: { id: customerId } });
    const key = await prisma.apiKey.findFirst({
      where: { customerId, revokedAt: null },
      orderBy: { createdAt: "desc" },
      select: { hint: true },
    });
    res.json(customerView(found, key?.hint ?? null));
  });

  // --- tasks ----------------------------------------------------------------------------------
  v1.post("/tasks", customer, jsonSingle, async (req, res) => {
    const { customerId } = customerOf(res);
    const input = parse(taskBody, req.body);
    await requireWebhooksFor(prisma, customerId, input.callback_url ? [{ path: "callback_url", url: input.callback_url }] : []);
    const { task } = await createTask({ prisma, pool }, customerId, input, idempotencyKeyOf(req, input.idempotency_key));
    res.status(202).json({ task_id: task.id, status: task.status, created_at: task.createdAt.toISOString() });
  });

  v1.post("/tasks/batch", customer, jsonBatch, async (req, res) => {
    const { customerId } = customerOf(res);
    const input = parse(batchBody, req.body);
    await requireWebhooksFor(
      prisma,
      customerId,
      input.tasks.flatMap((t, i) => {
        const url = t.callback_url ?? input.callback_url;
        return url ? [{ path: t.callback_url ? `tasks.${i}.callback_url` : "callback_url", url }] : [];
      }),
    );
    const batch = await createBatch({ prisma, pool }, customerId, input, idempotencyKeyOf(req, input.idempotency_key));
    res.status(202).json({
      batch_id: batch.batchId,
      task_count: batch.taskIds.length,
      status: "accepted",
      created_at: batch.createdAt.toISOString(),
      task_ids: batch.taskIds,
    });
  });

  const ownTask = async (req: Request, res: Response) => {
    const { customerId } = customerOf(res);
    const id = param(req, "id", "tsk_", "taskNotFound");
    const task = await prisma.task.findFirst({ where: { id, customerId } });
    if (!task) throw new ApiError("taskNotFound");
    return task;
  };

  v1.get("/tasks/:id", customer, async (req, res) => {
    res.json(taskView(await ownTask(req, res)));
  });

  v1.get("/tasks/:id/result", customer, async (req, res) => {
    const task = await ownTask(req, res);
    if (task.status === "canceled") throw new ApiError("taskCanceled", undefined, { task_id: task.id, status: task.status });
    if (task.status !== "settled") {
      res.status(202).json({
        task_id: task.id,
        status: task.status,
        labels_collected: task.labelsCollected,
        consensus_threshold: task.consensusThreshold,
      });
      return;
    }
    const entry = await prisma.ledgerEntry.findUnique({ where: { taskId: task.id } });
    if (!entry || !task.settledAt || task.consensusLabel === null) {
      throw new Error(`settled task ${task.id} has no ledger entry`);
    }
    res.json({
      task_id: task.id,
      status: task.status,
      consensus_label: task.consensusLabel,
      confidence: task.confidence,
      resolution: task.resolution,
      label_counts: task.labelCounts,
      labels_collected: task.labelsCollected,
      settled_at: task.settledAt.toISOString(),
      settlement: {
        ledger_txid: entry.txid,
        ledger: "local",
        sequence: Number(entry.seq),
        prev_hash: entry.prevHash,
        recorded_at: entry.createdAt.toISOString(),
      },
    });
  });

  v1.post("/tasks/:id/cancel", customer, async (req, res) => {
    const { customerId } = customerOf(res);
    const id = param(req, "id", "tsk_", "taskNotFound");
    const { task, completedJobId } = await cancelTask(prisma, customerId, id);
    if (completedJobId) {
      await queue.enqueue("manifestExport", { jobId: completedJobId }).catch((err: unknown) => {
        req.log.warn({ err, job_id: completedJobId }, "export enqueue deferred to reconciliation");
      });
    }
    res.json(taskView(task));
  });

  v1.get("/batches/:id", customer, async (req, res) => {
    const { customerId } = customerOf(res);
    const id = param(req, "id", "bat_", "batchNotFound");
    const batch = await prisma.batch.findFirst({ where: { id, customerId } });
    if (!batch) throw new ApiError("batchNotFound");
    const grouped = await prisma.task.groupBy({ by: ["status"], where: { batchId: id }, _count: { _all: true } });
    const counts = { ...ZERO_COUNTS };
    for (const g of grouped) if (g.status !== "staged") counts[g.status] = g._count._all;
    res.json(batchView(batch, counts));
  });

  // --- webhooks -------------------------------------------------------------------------------
  v1.use(
    "/webhooks",
    webhookRoutes(
      {
        prisma,
        queue,
        secretBox: deps.secretBox,
        allowPrivateUrls: config.allowPrivateUrls,
        webhookRetryMax: config.webhookRetryMax,
        resolve: deps.resolve,
      },
      customer,
      jsonSingle,
    ),
  );

  // --- manifest jobs --------------------------------------------------------------------------
  v1.use(
    "/jobs",
    jobRoutes({ prisma, queue, secretBox: deps.secretBox, allowPrivateUrls: config.allowPrivateUrls, logger }, customer, jsonSingle),
  );

  // --- billing and dashboard ------------------------------------------------------------------
  v1.use("/billing", billingRoutes({ prisma, billing: config.billing }, customer));
  v1.use("/dashboard", dashboardRoutes({ prisma }, customer));

  // --- labelers -------------------------------------------------------------------------------
  v1.post("/labeling/claims", labeler, jsonSingle, async (req, res) => {
    const { labelerId } = labelerOf(res);
    const body = parse(claimBody, req.body);
    const claim = await claimTask(pool, labelerId, body.task_id, config.claimTtlSeconds);
    if (!claim) {
      res.status(204).end();
      return;
    }
    res.status(201).json(claim);
  });

  v1.post("/labeling/claims/:claimId/label", labeler, jsonSingle, async (req, res) => {
    const { labelerId } = labelerOf(res);
    const claimId = param(req, "claimId", "clm_", "claimNotFound");
    const body = parse(labelBody, req.body);
    const label = await recordLabel(pool, labelerId, claimId, body.label);
    // The label is committed. If the queue is down, the reconciliation enqueues the consensus later.
    await queue.enqueue("consensus", { taskId: label.task_id, labelId: label.label_id }).catch((err: unknown) => {
      req.log.warn({ err, task_id: label.task_id, label_id: label.label_id }, "consensus enqueue deferred to reconciliation");
    });
    res.status(201).json(label);
  });

  // --- operators ------------------------------------------------------------------------------
  v1.use("/admin", adminRoutes({ prisma, productionLabelQuota: config.productionLabelQuota }, admin, jsonSingle));

  app.use("/v1", v1);
  app.use(DOCS_PATH, docsRouter());
  app.use(webRouter()); // the labeler app at /label/ and the customer console at /console/ (web.ts)
  // on-call queue dashboard (bull-board): admin token as bearer or as the Basic password of a browser prompt
  app.use(QUEUE_DASHBOARD_PATH, requireAdminOrBasic(config.adminToken), queueDashboard(queue));
  app.use(((_req, _res, next) => next(new ApiError("routeNotFound"))) as RequestHandler);
  app.use(errorHandler(logger));
  return app;
}
