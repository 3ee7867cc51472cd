/**
 * Reconciliation: nothing accepted is lost when Redis drops work. Runs periodically (a BullMQ job
 * scheduler) and once at worker start, walks the queue catalog and, for each queue whose `lostWork` is found
 * by the reconciliation, requeues by their deterministic job ids the work the store's scan finds older than
 * its grace (packages/store/src/reconcile.ts), in catalog order. Today that is (1) the settlement of every decided
 * task still `settling`, (2) every `task.settled` event the webhook worker has not recorded, (3) every
 * webhook delivery still pending whose job is gone (its grace is longer: a delivery's first attempt runs in
 * its routing job without a job of its own, for up to WEBHOOK_TIMEOUT_MS plus a slot wait), (4) manifest
 * jobs still `queued`/`ingesting`, (5) completed manifest jobs whose export to output_url is not written,
 * (6) the item fetch of every open task still waiting for its item (`item_pending`, docs/decisions/0194).
 * It also completes manifest jobs none of whose tasks is open (normally done at settlement).
 * The work found is written as `follow_up` rows that re-run it (`requeue`; a row already waiting for the same
 * work is not written twice, so passes during a Redis outage do not pile up), and the process's relay moves
 * them to BullMQ before the pass returns (docs/decisions/0300: the relay is the one place that enqueues).
 * Requeue is a no-op for jobs still waiting, delayed or active (a delivery between retries is delayed); one
 * that races a job moved by someone else is skipped; one that fails otherwise stays a row, which the relay
 * warns of and tries again (labelgate_follow_up_backlog_age_seconds).
 */
import type { Logger } from "@labelgate/core";
import { catalog, type FollowUpRelay, type FollowUps, type Payload, type ReconciledQueue, reconciledQueueKeys } from "@labelgate/queue";
import type { FollowUpModes, Store } from "@labelgate/store";

export interface ReconcileDeps {
  store: Store;
  /** the process's follow-up relay: the pass's rows are relayed (`drain`) before it returns */
  relay: Pick<FollowUpRelay, "drain">;
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
  /** follow-up rows written to re-run lost work (work a row waited for already is not counted) */
  requeued: number;
}

/**
 * One pass: completes finished manifest jobs, then writes a requeue row for every piece of lost work and
 * relays them. @throws only when the scan or the rows' insert (Postgres) fails; a failed enqueue stays a row.
 */
export async function reconcile(deps: ReconcileDeps): Promise<ReconcileReport> {
  const lost = await deps.store.reconcile.lostWork(deps.graceMs, deps.deliveryGraceMs, deps.limit ?? 1000);
  // a job completed here emitted its job.completed event: routed with the lost events below
  const jobEvents: Payload<"routeEvent">[] = [];
  for (const jobId of lost.labelingJobs) {
    const done = await deps.store.jobs.completeIfDone(jobId);
    jobEvents.push(...(done.followUps.routeEvent ?? []));
  }
  const lostOf: { [K in ReconciledQueue]: Payload<K>[] } = { ...lost, routeEvent: [...lost.routeEvent, ...jobEvents] };
  // the catalog says, queue by queue, how its lost work is found: here, every queue the store's scan covers
  const rows: FollowUps = {};
  const modes: FollowUpModes = {};
  for (const key of reconciledQueueKeys()) {
    const finder = catalog[key].lostWork;
    (rows as Record<string, unknown[]>)[key] = lostOf[key];
    modes[key] = {
      requeue: true,
      ...(finder.by === "reconciliation" && finder.attempts === "webhookRetryMax" ? { attempts: deps.webhookRetryMax } : {}),
    };
  }
  const requeued = await deps.store.followUps.addMissing(rows, modes);
  if (requeued > 0) await deps.relay.drain();
  const report: ReconcileReport = {
    tasks: lost.consensus.length,
    events: lost.routeEvent.length,
    deliveries: lost.webhookDelivery.length,
    jobs: lost.manifestIngest.length + lost.manifestExport.length,
    items: lost.itemFetch.length,
    requeued,
  };
  if (requeued > 0) deps.logger.warn(report, "reconciliation requeued lost work");
  return report;
}
