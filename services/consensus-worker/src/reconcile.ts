/**
 * Reconciliation: nothing accepted is lost when Redis drops work. Runs periodically (a BullMQ job
 * scheduler) and requeues, by their deterministic job ids, (1) the consensus job of every task that
 * could be decided (labels_needed = 0) but is still open after `graceMs`, (2) every `task.settled`
 * event the webhook worker has not recorded after `graceMs`, and (3) every webhook delivery still
 * pending after `deliveryGraceMs` whose job is gone (longer: a delivery's first attempt runs in its
 * routing job without a job of its own, for up to WEBHOOK_TIMEOUT_MS (≤ 60 s) plus a slot wait), (4) manifest jobs still `queued`/`ingesting` after `graceMs`
 * whose ingestion job is gone, (5) completed manifest jobs whose export to output_url is not written.
 * It also completes manifest jobs none of whose tasks is open (normally done at settlement).
 * Requeue is a no-op for jobs still waiting, delayed or active (a delivery between retries is delayed).
 */
import type { Logger } from "@labelgate/core";
import type { PrismaClient } from "@labelgate/store";
import { completeJobIfDone } from "@labelgate/store";
import type { QueueClient } from "@labelgate/queue";

export interface ReconcileDeps {
  prisma: PrismaClient;
  queue: QueueClient;
  logger: Logger;
  /** work younger than this is left to the queue, ms */
  graceMs: number;
  /**
   * a pending delivery untouched this long is considered lost, ms (default `graceMs` + 65 s: longer than
   * an inline first attempt can take, WEBHOOK_TIMEOUT_MS ≤ 60 s plus up to 1 s waiting for a slot)
   */
  deliveryGraceMs?: number;
  /** most rows handled per run */
  limit?: number;
  /** WEBHOOK_RETRY_MAX: attempts of a requeued delivery job */
  webhookRetryMax: number;
}

export interface ReconcileReport {
  tasks: number;
  events: number;
  deliveries: number;
  jobs: number;
  requeued: number;
}

export async function reconcile(deps: ReconcileDeps): Promise<ReconcileReport> {
  const limit = deps.limit ?? 1000;
  const cutoff = new Date(Date.now() - deps.graceMs);
  const tasks = await deps.prisma.task.findMany({
    where: { status: "labeling", labelsNeeded: 0, lastLabelAt: { lt: cutoff }, lastLabelId: { not: null } },
    select: { id: true, lastLabelId: true },
    take: limit,
  });
  const events = await deps.prisma.event.findMany({
    where: { recordedAt: null, createdAt: { lt: cutoff } },
    select: { id: true },
    take: limit,
  });
  const deliveryCutoff = new Date(Date.now() - (deps.deliveryGraceMs ?? deps.graceMs + 65_000));
  const deliveries = await deps.prisma.delivery.findMany({
    where: { status: "pending", updatedAt: { lt: deliveryCutoff } },
    select: { id: true },
    take: limit,
  });
  const stalledJobs = await deps.prisma.job.findMany({
    where: { status: { in: ["queued", "ingesting"] }, updatedAt: { lt: cutoff } },
    select: { id: true },
    take: limit,
  });
  const labelingJobs = await deps.prisma.job.findMany({ where: { status: "labeling" }, select: { id: true }, take: limit });
  for (const j of labelingJobs) await completeJobIfDone(deps.prisma, j.id);
  const unexported = await deps.prisma.job.findMany({
    where: { status: "completed", outputUrl: { not: null }, exportWrittenAt: null, error: null },
    select: { id: true },
    take: limit,
  });
  let requeued = 0;
  for (const t of tasks) {
    const r = await deps.queue.requeue("consensus", { taskId: t.id, labelId: t.lastLabelId as string });
    if (r !== "pending") requeued++;
  }
  for (const e of events) {
    const r = await deps.queue.requeue("taskSettled", { eventId: e.id });
    if (r !== "pending") requeued++;
  }
  for (const d of deliveries) {
    const r = await deps.queue.requeue("webhookDelivery", { deliveryId: d.id }, { attempts: deps.webhookRetryMax });
    if (r !== "pending") requeued++;
  }
  for (const j of stalledJobs) {
    const r = await deps.queue.requeue("manifestIngest", { jobId: j.id });
    if (r !== "pending") requeued++;
  }
  for (const j of unexported) {
    const r = await deps.queue.requeue("manifestExport", { jobId: j.id });
    if (r !== "pending") requeued++;
  }
  const report = {
    tasks: tasks.length,
    events: events.length,
    deliveries: deliveries.length,
    jobs: stalledJobs.length + unexported.length,
    requeued,
  };
  if (requeued > 0) deps.logger.warn(report, "reconciliation requeued lost work");
  return report;
}
