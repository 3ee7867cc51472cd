/**
 * Task submission, cancellation and quota (DESIGN §2, §3, §6). Plain functions over Prisma.
 * Quota is reserved in the same transaction as the insert: `consensus_threshold` labels per task.
 */
import { createHash } from "node:crypto";
import { canonicalJson, newId } from "@labelgate/core";
import {
  completeJobIfDone,
  Prisma,
  type PrismaClient,
  QuotaExhaustedError,
  releaseQuota,
  reserveQuota as reserveQuotaUnits,
  type Task,
} from "@labelgate/db";
import { ApiError } from "./errors";
import type { BatchInput, TaskInput } from "./schemas";

type Tx = Prisma.TransactionClient;

/** SHA-256 of the canonical request, without its idempotency key: equal requests give equal hashes. */
export function requestFingerprint(body: object): string {
  const { idempotency_key: _ignored, ...rest } = body as Record<string, unknown>;
  return createHash("sha256").update(canonicalJson(rest)).digest("hex");
}

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002";
}

/** Reserves quota in the caller's transaction; a shortfall is 403 `quota exhausted` (nothing is created). */
async function reserveQuota(tx: Tx, customerId: string, units: number): Promise<void> {
  try {
    await reserveQuotaUnits(tx, customerId, units);
  } catch (err) {
    if (err instanceof QuotaExhaustedError) throw new ApiError("quotaExhausted");
    throw err;
  }
}

function taskRow(
  customerId: string,
  input: TaskInput,
  extra: { id: string; batchId?: string; callbackUrl?: string; idempotencyKey?: string },
) {
  return {
    id: extra.id,
    customerId,
    batchId: extra.batchId ?? null,
    taskType: input.type,
    dataUrl: input.data_url,
    question: input.label_spec.question,
    options: input.label_spec.options,
    callbackUrl: input.callback_url ?? extra.callbackUrl ?? null,
    consensusThreshold: input.consensus_threshold,
    maxLabels: input.max_labels,
    metadata: (input.metadata ?? Prisma.DbNull) as Prisma.InputJsonValue,
    idempotencyKey: extra.idempotencyKey ?? input.idempotency_key ?? null,
    requestHash: requestFingerprint(input),
    labelsNeeded: Math.min(input.max_labels, input.consensus_threshold),
    quotaReserved: input.consensus_threshold,
  };
}

/**
 * Creates one task (POST /v1/tasks). With an idempotency key, a repeat of the same request returns the
 * original task (`created: false`); the same key with another request is 422.
 * @throws ApiError quotaExhausted | idempotencyMismatch
 */
export async function createTask(
  prisma: PrismaClient,
  customerId: string,
  input: TaskInput,
  idempotencyKey: string | undefined,
): Promise<{ task: Task; created: boolean }> {
  const fingerprint = requestFingerprint(input);
  const replay = async (): Promise<{ task: Task; created: boolean } | undefined> => {
    if (!idempotencyKey) return undefined;
    const existing = await prisma.task.findUnique({ where: { customerId_idempotencyKey: { customerId, idempotencyKey } } });
    if (!existing) return undefined;
    if (existing.requestHash !== fingerprint || existing.batchId) throw new ApiError("idempotencyMismatch");
    return { task: existing, created: false };
  };
  const earlier = await replay();
  if (earlier) return earlier;
  try {
    const task = await prisma.$transaction(async (tx) => {
      await reserveQuota(tx, customerId, input.consensus_threshold);
      return tx.task.create({ data: taskRow(customerId, input, { id: newId("task"), idempotencyKey }) });
    });
    return { task, created: true };
  } catch (err) {
    // Two identical requests raced: the loser answers with the winner's task.
    if (isUniqueViolation(err)) {
      const raced = await replay();
      if (raced) return raced;
    }
    throw err;
  }
}

export interface CreatedBatch {
  batchId: string;
  taskIds: string[];
  createdAt: Date;
  created: boolean;
}

/**
 * Creates a batch atomically (POST /v1/tasks/batch): every task or none, one quota reservation for all.
 * A top-level `callback_url` applies to every task without its own. A batch-level idempotency key
 * replays the original batch; a task-level key that already exists is 422 (a batch never adopts tasks).
 * @throws ApiError quotaExhausted | idempotencyMismatch
 */
export async function createBatch(
  prisma: PrismaClient,
  customerId: string,
  input: BatchInput,
  idempotencyKey: string | undefined,
): Promise<CreatedBatch> {
  const fingerprint = requestFingerprint(input);
  const replay = async (): Promise<CreatedBatch | undefined> => {
    if (!idempotencyKey) return undefined;
    const existing = await prisma.batch.findUnique({ where: { customerId_idempotencyKey: { customerId, idempotencyKey } } });
    if (!existing) return undefined;
    if (existing.requestHash !== fingerprint) throw new ApiError("idempotencyMismatch");
    const tasks = await prisma.task.findMany({ where: { batchId: existing.id }, select: { id: true }, orderBy: { createdAt: "asc" } });
    return { batchId: existing.id, taskIds: tasks.map((t) => t.id), createdAt: existing.createdAt, created: false };
  };
  const earlier = await replay();
  if (earlier) return earlier;

  const batchId = newId("batch");
  const createdAt = new Date();
  const rows = input.tasks.map((t) => taskRow(customerId, t, { id: newId("task"), batchId, callbackUrl: input.callback_url }));
  // Tasks of a batch share its creation time; ordering inside it follows the ids' insertion order.
  const reserved = input.tasks.reduce((sum, t) => sum + t.consensus_threshold, 0);
  try {
    await prisma.$transaction(async (tx) => {
      await reserveQuota(tx, customerId, reserved);
      await tx.batch.create({
        data: {
          id: batchId,
          customerId,
          taskCount: rows.length,
          callbackUrl: input.callback_url ?? null,
          idempotencyKey: idempotencyKey ?? null,
          requestHash: fingerprint,
          createdAt,
        },
      });
      await tx.task.createMany({ data: rows.map((r, i) => ({ ...r, createdAt: new Date(createdAt.getTime() + i) })) });
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      const raced = await replay();
      if (raced) return raced;
      throw new ApiError("idempotencyMismatch", [
        { path: "tasks.idempotency_key", message: "a task with this idempotency_key already exists" },
      ]);
    }
    throw err;
  }
  return { batchId, taskIds: rows.map((r) => r.id), createdAt, created: true };
}

/**
 * Cancels an open task (pending or labeling): active claims expire, the unused part of the quota
 * reservation is returned. Canceling a canceled task answers it again. When it was the last open task of
 * a manifest job, the job completes in the same transaction (`completedJobId`).
 * @throws ApiError taskNotFound | taskNotCancelable (settling, settled)
 */
export async function cancelTask(
  prisma: PrismaClient,
  customerId: string,
  taskId: string,
): Promise<{ task: Task; completedJobId?: string }> {
  let completedJobId: string | undefined;
  const task = await prisma.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<{ status: string }[]>`
      SELECT status::text AS status FROM tasks WHERE id = ${taskId} AND customer_id = ${customerId} FOR UPDATE`;
    const row = locked[0];
    if (!row) throw new ApiError("taskNotFound");
    if (row.status === "canceled") return tx.task.findUniqueOrThrow({ where: { id: taskId } });
    if (row.status !== "pending" && row.status !== "labeling") {
      throw new ApiError("taskNotCancelable", undefined, { status: row.status });
    }
    const task = await tx.task.update({ where: { id: taskId }, data: { status: "canceled", canceledAt: new Date() } });
    await tx.claim.updateMany({ where: { taskId, status: "active" }, data: { status: "expired" } });
    await releaseQuota(tx, customerId, task.quotaReserved - task.labelsCollected);
    if (task.jobId && (await completeJobIfDone(tx, task.jobId))) completedJobId = task.jobId;
    return task;
  });
  return { task, completedJobId };
}
