/**
 * Reconciliation: nothing accepted is lost when Redis drops work. Runs periodically (a BullMQ job
 * scheduler) and once at worker start, and requeues, by their deterministic job ids, the work the store's
 * scan finds older than its grace (packages/store/src/reconcile.ts): (1) the settlement of every decided
 * task still `settling`, (2) every `task.settled` event the webhook worker has not recorded, (3) every
 * webhook delivery still pending whose job is gone (its grace is longer: a delivery's first attempt runs in
 * its routing job without a job of its own, for up to WEBHOOK_TIMEOUT_MS plus a slot wait), (4) manifest
 * jobs still `queued`/`ingesting`, (5) completed manifest jobs whose export to output_url is not written,
 * (6) the item fetch of every open task still waiting for its item (`item_pending`, docs/decisions/0194).
 * It also completes manifest jobs none of whose tasks is open (normally done at settlement).
 * Requeue is a no-op for jobs still waiting, delayed or active (a delivery between retries is delayed).
 * One failed requeue never ends the pass: a requeue that races a job finishing or being retried elsewhere
 * (`raced`: expected, e.g. at a worker's start, when its first pass and the scheduled one overlap) is logged
 * at debug; any other failure is counted, the pass goes on, and one error line sums them up at its end
 * (the next pass finds the work again).
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
  /** tasks still waiting for their item */
  items: number;
  requeued: number;
  /** requeues that raced a job moved by someone else (skipped) */
  raced: number;
  /** requeues that failed otherwise (logged; the next pass tries again) */
  failed: number;
}

/** Failed requeues named in the pass's error line, at most. */
const FAILURES_LOGGED = 5;

/**
 * One pass: completes finished manifest jobs, then requeues every piece of lost work, each on its own.
 * @throws only when the scan itself (Postgres) fails; requeue failures are reported, not thrown.
 */
export async function reconcile(deps: ReconcileDeps): Promise<ReconcileReport> {
  const lost = await deps.store.reconcile.lostWork(deps.graceMs, deps.deliveryGraceMs, deps.limit ?? 1000);
  for (const jobId of lost.labelingJobs) await deps.store.jobs.completeIfDone(jobId);
  let requeued = 0;
  let raced = 0;
  const failures: { queue: string; work: string; err: Error }[] = [];
  const requeue = async (queue: string, work: string, run: () => Promise<"added" | "retried" | "pending" | "raced">) => {
    try {
      const r = await run();
      if (r === "raced") {
        raced++;
        deps.logger.debug({ queue, work }, "requeue skipped: the job moved on meanwhile");
      } else if (r !== "pending") {
        requeued++;
      }
    } catch (err) {
      failures.push({ queue, work, err: err as Error });
    }
  };
  for (const t of lost.settlements) {
    await requeue("consensus", t.taskId, () => deps.queue.requeue("consensus", { taskId: t.taskId, labelId: t.labelId }));
  }
  for (const eventId of lost.events) await requeue("taskSettled", eventId, () => deps.queue.requeue("taskSettled", { eventId }));
  for (const deliveryId of lost.deliveries) {
    await requeue("webhookDelivery", deliveryId, () =>
      deps.queue.requeue("webhookDelivery", { deliveryId }, { attempts: deps.webhookRetryMax }),
    );
  }
  for (const manifestJobId of lost.ingestions) {
    await requeue("manifestIngest", manifestJobId, () => deps.queue.requeue("manifestIngest", { manifestJobId }));
  }
  for (const manifestJobId of lost.exports) {
    await requeue("manifestExport", manifestJobId, () => deps.queue.requeue("manifestExport", { manifestJobId }));
  }
  for (const taskId of lost.itemFetches) await requeue("itemFetch", taskId, () => deps.queue.requeue("itemFetch", { taskId }));
  const report: ReconcileReport = {
    tasks: lost.settlements.length,
    events: lost.events.length,
    deliveries: lost.deliveries.length,
    jobs: lost.ingestions.length + lost.exports.length,
    items: lost.itemFetches.length,
    requeued,
    raced,
    failed: failures.length,
  };
  if (failures.length > 0) {
    deps.logger.error(
      {
        ...report,
        err: (failures[0] as { err: Error }).err,
        failures: failures.slice(0, FAILURES_LOGGED).map((f) => ({ queue: f.queue, work: f.work, error: f.err.message })),
      },
      "reconciliation could not requeue some lost work; the next pass tries again",
    );
  } else if (requeued > 0) {
    deps.logger.warn(report, "reconciliation requeued lost work");
  }
  return report;
}
