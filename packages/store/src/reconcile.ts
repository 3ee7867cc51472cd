/**
 * The scans of the reconciliation (nothing accepted is lost when Redis drops work): the work whose queue
 * job may be gone, found in the rows that are the truth. The consensus worker requeues what they return
 * under deterministic job ids (services/consensus-worker/src/reconcile.ts).
 */
import type { Db } from "./database";

export interface LostWork {
  /** decided tasks (`settling`) not settled after the grace: their deciding label */
  settlements: { taskId: string; labelId: string }[];
  /** `task.settled` events the webhook worker has not recorded after the grace */
  events: string[];
  /** deliveries still pending after the delivery grace */
  deliveries: string[];
  /** manifest jobs still queued or ingesting after the grace */
  ingestions: string[];
  /** completed manifest jobs whose export to output_url is not written */
  exports: string[];
  /** manifest jobs in `labeling` (each checked for completion) */
  labelingJobs: string[];
  /** open tasks still waiting for their item (`item_pending`) after the grace: their fetch */
  itemFetches: string[];
}

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
          select: { id: true, lastLabelId: true },
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
          : (await prisma.ledgerEntry.findMany({ where: { taskId: { in: settlements.map((t) => t.id) } }, select: { taskId: true } })).map(
              (e) => e.taskId,
            ),
      );
      return {
        settlements: settlements.filter((t) => !recorded.has(t.id)).map((t) => ({ taskId: t.id, labelId: t.lastLabelId as string })),
        events: events.map((e) => e.id),
        deliveries: deliveries.map((d) => d.id),
        ingestions: ingestions.map((j) => j.id),
        exports: exports.map((j) => j.id),
        labelingJobs: labelingJobs.map((j) => j.id),
        itemFetches: itemFetches.map((t) => t.id),
      };
    },
  };
}

export type ReconcileStore = ReturnType<typeof reconcileStore>;
