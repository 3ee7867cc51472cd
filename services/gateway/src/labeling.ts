/**
 * Claims and labels (DESIGN §4). A task is claimable by a labeler when it is open, the labeler has not
 * labeled it nor holds a live claim on it, and its live claims are fewer than `labels_needed` (the
 * smallest number of further labels that could settle it). Claims lock the task row
 * (`FOR UPDATE SKIP LOCKED`) and re-check under the lock, so concurrent claims never over-assign.
 * Expired claims stop counting by themselves (`expires_at`), which returns their slot.
 */
import { newId } from "@labelgate/core";
import type { Prisma, PrismaClient } from "@labelgate/db";
import { ApiError } from "./errors";

type Tx = Prisma.TransactionClient;

export interface ClaimResult {
  claim_id: string;
  task_id: string;
  data_url: string;
  label_spec: { question: string; options: string[] };
  expires_at: string;
}

/** Re-checks, under the task's row lock and with a fresh snapshot, that the task is claimable. */
async function stillClaimable(tx: Tx, taskId: string, labelerId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ ok: boolean }[]>`
    SELECT (t.status IN ('pending', 'labeling')
      AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.task_id = t.id AND c.labeler_id = ${labelerId}
                      AND (c.status = 'labeled' OR (c.status = 'active' AND c.expires_at > now())))
      AND (SELECT count(*) FROM claims c WHERE c.task_id = t.id AND c.status = 'active' AND c.expires_at > now())
          < t.labels_needed) AS ok
    FROM tasks t WHERE t.id = ${taskId}`;
  return rows[0]?.ok === true;
}

async function lockCandidate(tx: Tx, labelerId: string, taskId: string | undefined, skip: string[]): Promise<string | undefined> {
  if (taskId) {
    // A named task: wait for its lock rather than skip it.
    const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM tasks WHERE id = ${taskId} FOR UPDATE`;
    return rows[0]?.id;
  }
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT t.id FROM tasks t
    WHERE t.status IN ('pending', 'labeling') AND t.labels_needed > 0
      AND t.id <> ALL(${skip}::text[])
      AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.task_id = t.id AND c.labeler_id = ${labelerId}
                      AND (c.status = 'labeled' OR (c.status = 'active' AND c.expires_at > now())))
      AND (SELECT count(*) FROM claims c WHERE c.task_id = t.id AND c.status = 'active' AND c.expires_at > now())
          < t.labels_needed
    ORDER BY t.created_at, t.id
    LIMIT 1
    FOR UPDATE OF t SKIP LOCKED`;
  return rows[0]?.id;
}

/**
 * Claims the oldest open task for a labeler, or the named one. Returns undefined when nothing is open
 * for this labeler (the route answers 204).
 * @throws ApiError taskNotFound when `taskId` names no task.
 */
export async function claimTask(
  prisma: PrismaClient,
  labelerId: string,
  taskId: string | undefined,
  ttlSeconds: number,
): Promise<ClaimResult | undefined> {
  if (taskId && !(await prisma.task.findUnique({ where: { id: taskId }, select: { id: true } }))) {
    throw new ApiError("taskNotFound");
  }
  return prisma.$transaction(async (tx) => {
    const skipped: string[] = [];
    for (let attempt = 0; attempt < 8; attempt++) {
      const candidate = await lockCandidate(tx, labelerId, taskId, skipped);
      if (!candidate) return undefined;
      if (!(await stillClaimable(tx, candidate, labelerId))) {
        if (taskId) return undefined;
        skipped.push(candidate);
        continue;
      }
      const claimId = newId("claim");
      const rows = await tx.$queryRaw<{ expires_at: Date }[]>`
        INSERT INTO claims (id, task_id, labeler_id, status, expires_at)
        VALUES (${claimId}, ${candidate}, ${labelerId}, 'active', now() + make_interval(secs => ${ttlSeconds}))
        RETURNING expires_at`;
      const task = await tx.task.findUniqueOrThrow({ where: { id: candidate }, select: { dataUrl: true, question: true, options: true } });
      return {
        claim_id: claimId,
        task_id: candidate,
        data_url: task.dataUrl,
        label_spec: { question: task.question, options: task.options },
        expires_at: (rows[0] as { expires_at: Date }).expires_at.toISOString(),
      };
    }
    return undefined;
  });
}

export interface RecordedLabel {
  label_id: string;
  claim_id: string;
  task_id: string;
  label: string;
  created_at: string;
  /** further labels that could settle the task; 0 means consensus can be decided now */
  labels_needed: number;
}

/** labels_needed = min(max_labels − n, threshold − top count), never negative. */
export function labelsNeeded(maxLabels: number, threshold: number, counts: Record<string, number>): number {
  const n = Object.values(counts).reduce((a, b) => a + b, 0);
  const top = Math.max(0, ...Object.values(counts));
  return Math.max(0, Math.min(maxLabels - n, threshold - top));
}

/**
 * Records a label on a claim: one label per claim, the value one of the task's options. Charges one
 * quota unit when the task's reservation is already used (DESIGN §6). The caller enqueues consensus.
 * @throws ApiError claimNotFound | claimAlreadyLabeled | claimExpired | taskNotOpen | validation
 */
export async function recordLabel(prisma: PrismaClient, labelerId: string, claimId: string, value: string): Promise<RecordedLabel> {
  return prisma.$transaction(async (tx) => {
    const claim = await tx.claim.findFirst({ where: { id: claimId, labelerId }, select: { taskId: true } });
    if (!claim) throw new ApiError("claimNotFound");
    // Lock the task first (same order as claims and settlement), then read the claim under the lock.
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM tasks WHERE id = ${claim.taskId} FOR UPDATE`;
    if (locked.length === 0) throw new ApiError("taskNotFound");
    const state = await tx.$queryRaw<{ status: string; expired: boolean }[]>`
      SELECT status::text AS status, (status = 'expired' OR expires_at <= now()) AS expired FROM claims WHERE id = ${claimId}`;
    const task = await tx.task.findUniqueOrThrow({ where: { id: claim.taskId } });
    const claimState = state[0] as { status: string; expired: boolean };
    if (claimState.status === "labeled") throw new ApiError("claimAlreadyLabeled");
    if (task.status !== "pending" && task.status !== "labeling") throw new ApiError("taskNotOpen", undefined, { status: task.status });
    if (claimState.expired) throw new ApiError("claimExpired");
    if (!task.options.includes(value)) {
      throw new ApiError("validation", [{ path: "label", message: `must be one of the task's options: ${task.options.join(", ")}` }]);
    }
    const counts = { ...(task.labelCounts as Record<string, number>) };
    counts[value] = (counts[value] ?? 0) + 1;
    const needed = labelsNeeded(task.maxLabels, task.consensusThreshold, counts);
    const labelId = newId("label");
    const label = await tx.label.create({
      data: { id: labelId, taskId: task.id, customerId: task.customerId, labelerId, claimId, value },
    });
    await tx.claim.update({ where: { id: claimId }, data: { status: "labeled" } });
    await tx.task.update({
      where: { id: task.id },
      data: {
        status: "labeling",
        labelsCollected: { increment: 1 },
        labelCounts: counts,
        labelsNeeded: needed,
        lastLabelId: labelId,
        lastLabelAt: label.createdAt,
      },
    });
    if (task.labelsCollected >= task.quotaReserved) {
      // Beyond the reservation: charged as collected; an in-flight task always finishes (may exceed quota).
      await tx.$executeRaw`UPDATE customers SET quota_used = quota_used + 1 WHERE id = ${task.customerId}`;
    }
    return {
      label_id: labelId,
      claim_id: claimId,
      task_id: task.id,
      label: value,
      created_at: label.createdAt.toISOString(),
      labels_needed: needed,
    };
  });
}
