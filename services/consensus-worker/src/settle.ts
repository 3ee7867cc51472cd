/**
 * The consensus handler: re-evaluates one task and, when decided, settles it in ONE transaction:
 * task row (locked `FOR UPDATE`) → labelers' accuracy counts → ledger record → `task.settled` outbox row.
 * Exactly once: a second run (duplicate job, racing replica) finds the task settled and does nothing;
 * the unique `events(task_id, type)` and `ledger_entries(task_id)` make a double write impossible.
 */
import { type Logger, newId } from "@labelgate/core";
import type { Prisma, PrismaClient } from "@labelgate/db";
import type { QueueClient } from "@labelgate/queue";
import { type AccuracyPrior, decide, labelerAccuracy } from "./consensus";
import { appendSettlement } from "./ledger";

export interface ConsensusDeps {
  prisma: PrismaClient;
  queue: QueueClient;
  logger: Logger;
  prior: AccuracyPrior;
}

export type EvaluationOutcome = "settled" | "open" | "closed";

/** The `task.settled` payload of SPEC §6, without `timestamp` (set at each delivery attempt). */
export interface TaskSettledPayload {
  event: "task.settled";
  task_id: string;
  consensus_label: string;
  confidence: number;
  ledger_txid: string;
  settled_at: string;
}

async function settleInTransaction(
  tx: Prisma.TransactionClient,
  taskId: string,
  prior: AccuracyPrior,
): Promise<{ outcome: EvaluationOutcome; eventId?: string }> {
  const locked = await tx.$queryRaw<{ status: string }[]>`SELECT status::text AS status FROM tasks WHERE id = ${taskId} FOR UPDATE`;
  const status = locked[0]?.status;
  if (status !== "pending" && status !== "labeling") return { outcome: "closed" };
  const task = await tx.task.findUniqueOrThrow({ where: { id: taskId } });
  const labels = await tx.label.findMany({ where: { taskId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  const labelerIds = [...new Set(labels.map((l) => l.labelerId))].sort();
  // Lock the labelers in id order: concurrent settlements sharing labelers cannot deadlock.
  const labelers = await tx.$queryRaw<{ id: string; settled_labels: number; agreed_labels: number }[]>`
    SELECT id, settled_labels, agreed_labels FROM labelers WHERE id = ANY(${labelerIds}::text[]) ORDER BY id FOR UPDATE`;
  const accuracy = new Map(labelers.map((l) => [l.id, labelerAccuracy({ settled: l.settled_labels, agreed: l.agreed_labels }, prior)]));
  const decision = decide(
    { options: task.options, consensusThreshold: task.consensusThreshold, maxLabels: task.maxLabels, votes: labels },
    accuracy,
    prior,
  );
  if (!decision.settle) return { outcome: "open" };

  const settledAt = new Date();
  const agreeing = labels.filter((l) => l.value === decision.label).map((l) => l.labelerId);
  await tx.$executeRaw`
    UPDATE labelers SET settled_labels = settled_labels + 1,
      agreed_labels = agreed_labels + CASE WHEN id = ANY(${agreeing}::text[]) THEN 1 ELSE 0 END
    WHERE id = ANY(${labelerIds}::text[])`;
  const { txid } = await appendSettlement(tx, {
    task_id: task.id,
    customer_id: task.customerId,
    consensus_label: decision.label,
    confidence: decision.confidence,
    resolution: decision.resolution,
    label_counts: decision.counts,
    labels: labels.map((l) => ({ label_id: l.id, labeler_id: l.labelerId, value: l.value })),
    settled_at: settledAt.toISOString(),
  });
  await tx.task.update({
    where: { id: task.id },
    data: {
      status: "settled",
      consensusLabel: decision.label,
      confidence: decision.confidence,
      resolution: decision.resolution,
      labelCounts: decision.counts,
      labelsNeeded: 0,
      ledgerTxid: txid,
      settledAt,
    },
  });
  await tx.claim.updateMany({ where: { taskId, status: "active" }, data: { status: "expired" } });
  const payload: TaskSettledPayload = {
    event: "task.settled",
    task_id: task.id,
    consensus_label: decision.label,
    confidence: decision.confidence,
    ledger_txid: txid,
    settled_at: settledAt.toISOString(),
  };
  const eventId = newId("event");
  await tx.event.create({
    data: {
      id: eventId,
      type: "task.settled",
      taskId: task.id,
      customerId: task.customerId,
      payload: payload as unknown as Prisma.InputJsonValue,
    },
  });
  return { outcome: "settled", eventId };
}

/**
 * Evaluates a task and settles it if decided. Safe to run any number of times, concurrently.
 * After commit, the `task.settled` event is enqueued; if the queue is down the reconciliation does it.
 */
export async function evaluateTask(deps: ConsensusDeps, taskId: string): Promise<EvaluationOutcome> {
  const result = await deps.prisma.$transaction((tx) => settleInTransaction(tx, taskId, deps.prior), { timeout: 15000 });
  if (result.outcome === "settled" && result.eventId) {
    deps.logger.info({ task_id: taskId, event_id: result.eventId }, "task settled");
    await deps.queue.enqueue("taskSettled", { eventId: result.eventId }).catch((err: unknown) => {
      deps.logger.warn({ err, event_id: result.eventId }, "task.settled enqueue deferred to reconciliation");
    });
  }
  return result.outcome;
}
