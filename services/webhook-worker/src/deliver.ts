/**
 * One delivery attempt (SPEC §6, DESIGN §7): POST the `task.settled` payload with a fresh `timestamp`,
 * signed `X-SVC-Signature: sha256=<hex HMAC-SHA256 of the raw body>`, with `X-SVC-Event-Id` and
 * `X-SVC-Delivery-Attempt`. Success is any 2xx within the timeout (10 s); redirects are not followed
 * (a 3xx is a failure). The URL is checked again before sending (DESIGN §9: DNS can change).
 * Every attempt is stored; a failed attempt throws so BullMQ retries it with `webhookBackoffMs`; after
 * the last attempt the delivery is `failed` and the task's `webhook_status` becomes `failed` (webhook_fail).
 */
import { createHmac } from "node:crypto";
import { checkOutboundUrl, type Logger, newId, type SecretBox } from "@labelgate/core";
import type { PrismaClient } from "@labelgate/db";
import type { JobContext } from "@labelgate/queue";
import { type Dispatcher, request } from "undici";

export interface DeliverDeps {
  prisma: PrismaClient;
  secretBox: SecretBox;
  logger: Logger;
  allowPrivateUrls: boolean;
  /** total time allowed for one attempt (connect, headers and body), ms */
  timeoutMs: number;
  /** HTTP dispatcher (connection pool); default: undici's global agent */
  dispatcher?: Dispatcher;
  /** DNS resolver of the URL check (tests inject one) */
  resolve?: (host: string) => Promise<string[]>;
}

/** BullMQ custom backoff: the delay before attempt k+1 is 4^(k−1) s (1 s, 4 s, 16 s, ...). `attemptsMade` = k. */
export function webhookBackoffMs(attemptsMade: number): number {
  return 1000 * 4 ** Math.max(0, attemptsMade - 1);
}

/** `sha256=<lowercase hex>` of the raw body keyed with the webhook secret. */
export function signatureHeader(rawBody: string, secret: string): string {
  return `sha256=${createHmac("sha256", secret).update(rawBody, "utf8").digest("hex")}`;
}

/** Raised to make BullMQ retry a failed attempt (its message is stored as the job's failure reason). */
export class DeliveryAttemptFailed extends Error {
  override name = "DeliveryAttemptFailed";
}

interface DeliveryRow {
  id: string;
  status: string;
  attempts: number;
  event_id: string;
  task_id: string;
  webhook_id: string;
  callback_url: string;
  secret_ciphertext: string;
  active: boolean;
  payload: Record<string, unknown>;
}

interface AttemptOutcome {
  success: boolean;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  startedAt: Date;
  finishedAt: Date;
}

async function post(deps: DeliverDeps, url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
  const startedAt = new Date();
  const t0 = performance.now();
  let statusCode: number | null = null;
  let error: string | null = null;
  try {
    await checkOutboundUrl(url, { allowPrivate: deps.allowPrivateUrls, resolve: deps.resolve });
    const res = await request(url, {
      method: "POST",
      body,
      headers,
      dispatcher: deps.dispatcher,
      signal: AbortSignal.timeout(deps.timeoutMs),
      headersTimeout: deps.timeoutMs,
      bodyTimeout: deps.timeoutMs,
    });
    statusCode = res.statusCode;
    await res.body.dump({ limit: 64 * 1024 });
    if (statusCode < 200 || statusCode > 299) error = `receiver answered ${statusCode}`;
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string };
    error =
      e.name === "TimeoutError" || e.name === "AbortError" || e.code === "UND_ERR_HEADERS_TIMEOUT" || e.code === "UND_ERR_BODY_TIMEOUT"
        ? `timed out after ${deps.timeoutMs} ms`
        : `${e.code ? `${e.code}: ` : ""}${e.message ?? String(err)}`;
  }
  const finishedAt = new Date();
  return { success: error === null, statusCode, error, latencyMs: Math.round(performance.now() - t0), startedAt, finishedAt };
}

/**
 * Runs one attempt of a delivery. Safe to run twice: a delivered delivery is not sent again by the
 * schedule, and a manual redelivery (`redelivery` = its reserved attempt id) is sent at most once.
 * @throws DeliveryAttemptFailed when the attempt failed and BullMQ has attempts left.
 */
export async function deliver(
  deps: DeliverDeps,
  job: { deliveryId: string; redelivery?: string },
  ctx: JobContext,
): Promise<"delivered" | "failed" | "retrying" | "skipped"> {
  const { prisma } = deps;
  const rows = await prisma.$queryRaw<DeliveryRow[]>`
    SELECT d.id, d.status::text AS status, d.attempts, d.event_id, d.task_id, d.webhook_id,
           w.callback_url, w.secret_ciphertext, w.active, e.payload
    FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.id = d.event_id
    WHERE d.id = ${job.deliveryId}`;
  const d = rows[0];
  if (!d) throw new Error(`delivery ${job.deliveryId} not found`);
  const manual = job.redelivery !== undefined;
  if (manual) {
    const done = await prisma.deliveryAttempt.findUnique({ where: { id: job.redelivery as string }, select: { id: true } });
    if (done) return "skipped";
  } else if (d.status !== "pending") {
    return "skipped";
  }
  if (!d.active) {
    // Deleted webhooks receive nothing: the delivery ends without an attempt.
    await prisma.delivery.updateMany({ where: { id: d.id, status: "pending" }, data: { status: "failed", lastError: "webhook deleted" } });
    await recomputeTaskStatus(prisma, d.task_id);
    return "skipped";
  }

  const attempt = d.attempts + 1;
  const body = JSON.stringify({ ...d.payload, timestamp: new Date().toISOString() });
  const secret = deps.secretBox.open(d.secret_ciphertext, d.webhook_id);
  const outcome = await post(deps, d.callback_url, body, {
    "content-type": "application/json",
    "user-agent": "labelgate-webhooks/1",
    "x-svc-signature": signatureHeader(body, secret),
    "x-svc-event-id": d.event_id,
    "x-svc-delivery-attempt": String(attempt),
  });
  const lastScheduled = ctx.attemptsMade + 1 >= ctx.maxAttempts;
  // A manual redelivery that fails leaves the delivery failed; a scheduled one fails on its last attempt.
  const status = outcome.success ? "delivered" : manual || lastScheduled ? "failed" : "pending";

  await prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM tasks WHERE id = ${d.task_id} FOR UPDATE`;
    await tx.deliveryAttempt.create({
      data: {
        id: job.redelivery ?? newId("attempt"),
        deliveryId: d.id,
        webhookId: d.webhook_id,
        eventId: d.event_id,
        attempt,
        manual,
        success: outcome.success,
        statusCode: outcome.statusCode,
        error: outcome.error,
        latencyMs: outcome.latencyMs,
        startedAt: outcome.startedAt,
        finishedAt: outcome.finishedAt,
      },
    });
    await tx.delivery.update({
      where: { id: d.id },
      data: {
        attempts: { increment: 1 },
        status,
        lastStatusCode: outcome.statusCode,
        lastError: outcome.error,
        ...(outcome.success ? { deliveredAt: outcome.finishedAt } : {}),
      },
    });
    await recomputeTaskStatus(tx, d.task_id);
  });

  if (outcome.success) return "delivered";
  deps.logger.warn({ delivery_id: d.id, event_id: d.event_id, attempt, error: outcome.error }, "webhook delivery attempt failed");
  if (status === "failed") return "failed";
  throw new DeliveryAttemptFailed(`attempt ${attempt} failed: ${outcome.error}`);
}

type Sql = Pick<PrismaClient, "$executeRaw">;

/**
 * Task `webhook_status` from its deliveries: failed if any failed, delivered if all delivered, else pending.
 * Run under the task's row lock so concurrent deliveries of one event see each other's commits.
 */
async function recomputeTaskStatus(db: Sql, taskId: string): Promise<void> {
  await db.$executeRaw`
    UPDATE tasks SET webhook_status = agg.status
    FROM (
      SELECT CASE WHEN bool_or(status = 'failed') THEN 'failed'
                  WHEN bool_and(status = 'delivered') THEN 'delivered'
                  ELSE 'pending' END::"WebhookStatus" AS status
      FROM deliveries WHERE task_id = ${taskId}
    ) agg
    WHERE tasks.id = ${taskId} AND agg.status IS NOT NULL`;
}
