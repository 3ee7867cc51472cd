/**
 * Reconciliation: nothing accepted is lost when Redis drops work. Runs periodically (a BullMQ job
 * scheduler) and once at worker start, and requeues, by their deterministic job ids, the work the store's
 * scan finds older than its grace (packages/store/src/reconcile.ts): (1) the settlement of every decided
 * task still `settling`, (2) every `task.settled` event the webhook worker has not recorded, (3) every
 * webhook delivery still pending whose job is gone (its grace is longer: a delivery's first attempt runs in
 * its routing job without a job of its own, for up to WEBHOOK_TIMEOUT_MS plus a slot wait), (4) manifest
 * jobs still `queued`/`ingesting`, (5) completed manifest jobs whose export to output_url is not written.
 * It also completes manifest jobs none of whose tasks is open (normally done at settlement).
 * Requeue is a no-op for jobs still waiting, delayed or active (a delivery between retries is delayed).
 */
import type { Logger } from "@labelgate/core";
import type { QueueClient } from "@labelgate/queue";
import type { Store } from "@labelgate/store";

export interface ReconcileDeps {
  store: Store;
  queue: QueueClient;
  logger: Logger;
  /** work younger than this is left to the queue, ms */
  graceMs: number;
  /** a pending delivery untouched this long is considered lost, ms */
  deliveryGraceMs: number;
  /** most rows handled per run (default 1000) */
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
  const lost = await deps.store.reconcile.lostWork(deps.graceMs, deps.deliveryGraceMs, deps.limit ?? 1000);
  for (const jobId of lost.labelingJobs) await deps.store.jobs.completeIfDone(jobId);
  let requeued = 0;
  const count = (r: "added" | "retried" | "pending") => {
    if (r !== "pending") requeued++;
  };
  for (const t of lost.settlements) count(await deps.queue.requeue("consensus", { taskId: t.taskId, labelId: t.labelId }));
  for (const eventId of lost.events) count(await deps.queue.requeue("taskSettled", { eventId }));
  for (const deliveryId of lost.deliveries) {
    count(await deps.queue.requeue("webhookDelivery", { deliveryId }, { attempts: deps.webhookRetryMax }));
  }
  for (const manifestJobId of lost.ingestions) count(await deps.queue.requeue("manifestIngest", { manifestJobId }));
  for (const manifestJobId of lost.exports) count(await deps.queue.requeue("manifestExport", { manifestJobId }));
  const report = {
    tasks: lost.settlements.length,
    events: lost.events.length,
    deliveries: lost.deliveries.length,
    jobs: lost.ingestions.length + lost.exports.length,
    requeued,
  };
  if (requeued > 0) deps.logger.warn(report, "reconciliation requeued lost work");
  return report;
}
