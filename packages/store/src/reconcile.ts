/**
 * The scans of the reconciliation (nothing accepted is lost when Redis drops work): the work whose queue
 * job may be gone, found in the rows that are the truth, as payloads by queue key: one scan per queue whose
 * catalog entry declares `lostWork.by` "reconciliation" (packages/queue catalog.ts). The consensus worker
 * walks the catalog and requeues them under deterministic job ids (services/consensus-worker/src/reconcile.ts).
 */
import type { Payload, ReconciledQueue } from "@labelgate/queue";
import type { Db } from "./database";

export type LostWork = {
  /**
   * consensus: decided tasks (`settling`) not settled after the grace, with their deciding label; routeEvent:
   * events the webhook worker has not recorded after the grace; webhookDelivery: deliveries still pending
   * after the delivery grace; manifestIngest: manifest jobs still queued or ingesting after the grace;
   * manifestExport: completed manifest jobs whose export to output_url is not written; itemFetch: open tasks
   * still waiting for their item (`item_pending`) after the grace
   */
  [K in ReconciledQueue]: Payload<K>[];
} & {
  /** manifest jobs in `labeling` (each checked for completion) */
  labelingJobs: string[];
};

export function reconcileStore(db: Db) {
  const { prisma } = db;
  return {
    /**
     * Work older than its grace whose queue job may be lost, at most `limit` rows of each kind.
     * @param graceMs tasks, events and manifest jobs untouched this long, ms
     * @param deliveryGraceMs pending deliveries untouched this long, ms
     */
    async lostWork(graceMs: number, deliveryGraceMs: number, limit: number): Promise<LostWork> {
      const cutoff = new Date(Date.now() - graceMs);
      const deliveryCutoff = new Date(Date.now() - deliveryGraceMs);
      const [settlements, events, deliveries, ingestions, exports, labelingJobs, itemFetches] = await Promise.all([
        prisma.task.findMany({
          where: { status: "settling", lastLabelAt: { lt: cutoff }, lastLabelId: { not: null } },
          select: { id: true, lastLabelId: true, revision: true },
          take: limit,
        }),
        prisma.event.findMany({ where: { recordedAt: null, createdAt: { lt: cutoff } }, select: { id: true }, take: limit }),
        prisma.delivery.findMany({ where: { status: "pending", updatedAt: { lt: deliveryCutoff } }, select: { id: true }, take: limit }),
        prisma.job.findMany({
          where: { status: { in: ["queued", "ingesting"] }, updatedAt: { lt: cutoff } },
          select: { id: true },
          take: limit,
        }),
        prisma.job.findMany({
          where: { status: "completed", outputUrl: { not: null }, exportWrittenAt: null, error: null },
          select: { id: true },
          take: limit,
        }),
        prisma.job.findMany({ where: { status: "labeling" }, select: { id: true }, take: limit }),
        // the partial index on updated_at WHERE item_pending (migration item_fetch)
        prisma.task.findMany({
          where: { itemPending: true, status: "pending", updatedAt: { lt: cutoff } },
          select: { id: true },
          orderBy: { updatedAt: "asc" },
          take: limit,
        }),
      ]);
      // LEDGER=evm: a task whose record is appended waits for its anchor (the anchorer), not for a settlement job
      const recorded = new Set(
        settlements.length === 0
          ? []
          : (
              await prisma.ledgerEntry.findMany({
                where: { OR: settlements.map((t) => ({ taskId: t.id, revision: t.revision })) },
                select: { taskId: true },
              })
            ).map((e) => e.taskId),
      );
      return {
        consensus: settlements.filter((t) => !recorded.has(t.id)).map((t) => ({ taskId: t.id, labelId: t.lastLabelId as string })),
        routeEvent: events.map((e) => ({ eventId: e.id })),
        webhookDelivery: deliveries.map((d) => ({ deliveryId: d.id })),
        manifestIngest: ingestions.map((j) => ({ manifestJobId: j.id })),
        manifestExport: exports.map((j) => ({ manifestJobId: j.id })),
        itemFetch: itemFetches.map((t) => ({ taskId: t.id })),
        labelingJobs: labelingJobs.map((j) => j.id),
      };
    },
  };
}

export type ReconcileStore = ReturnType<typeof reconcileStore>;
