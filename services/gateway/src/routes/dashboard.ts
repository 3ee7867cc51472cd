/**
 * Dashboard routes (contract §routes Dashboard): overview, the task list, quality and daily usage of the calling
 * customer, read by the store (packages/store/src/dashboard.ts: every statement an index range of that
 * customer, periods bounded so their cost does not grow with the customer's history).
 */
import { ApiError, noQuery, TASK_STATUSES, tasksQuery, zeroTaskCounts } from "@labelgate/api";
import type * as wire from "@labelgate/api/types";
import { QUALITY_WINDOW_DAYS, reviewedQuality, type Store } from "@labelgate/store";
import { customerOf } from "../auth";
import { parse } from "../errors";
import type { Handlers } from "../operations";
import { type ChainState, taskView, waitingFor } from "../views";

export interface DashboardRouteDeps {
  store: Store;
  /** the chain settlements wait for (LEDGER=evm), for a settling task's `waiting_for`; undefined = the local ledger */
  chain?: ChainState;
}

/** A share in 0..1 rounded to 4 decimals, or null without a denominator. */
function share(part: number, whole: number): number | null {
  return whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : null;
}

function round(value: number | null, decimals: number): number | null {
  if (value === null) return null;
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}

/** Handlers of the operations under /v1/dashboard (authentication and body parsing are done before them, operations.ts). */
export function dashboardHandlers(
  deps: DashboardRouteDeps,
): Pick<Handlers, "getDashboardOverview" | "listDashboardTasks" | "getDashboardQuality" | "getDashboardLabelers" | "getDashboardUsage"> {
  const { store } = deps;

  return {
    getDashboardOverview: async (req, res) => {
      const { customerId } = customerOf(res);
      parse(noQuery, req.query);
      const row = await store.dashboard.overview(customerId);
      if (!row) throw new ApiError("unauthorized");
      const counts = zeroTaskCounts();
      for (const s of TASK_STATUSES) counts[s] = row.tasks_by_status[s] ?? 0;
      const body: wire.DashboardOverview = {
        tasks_by_status: counts,
        labels_this_month: row.labels_this_month,
        label_quota: row.label_quota,
        label_quota_remaining: Math.max(0, row.label_quota - row.quota_used),
        median_seconds_to_settle: round(row.median_seconds_to_settle, 3),
        webhook_delivery_success_rate: share(row.deliveries_delivered, row.deliveries_delivered + row.deliveries_failed),
      };
      res.json(body);
    },

    listDashboardTasks: async (req, res) => {
      const { customerId } = customerOf(res);
      const q = parse(tasksQuery, req.query);
      const { total, items } = await store.dashboard.tasks(customerId, {
        status: q.status || undefined,
        sort: q.sort,
        limit: q.per_page,
        offset: (q.page - 1) * q.per_page,
      });
      // each item is the task body of GET /v1/tasks/{id}: its reviews (one statement for the page) and waiting_for
      const reviews = await store.reviews.reviewsOfTasks(items.map((t) => t.id));
      const page = items.map((t) => ({ ...taskView(t, reviews.get(t.id)), waiting_for: waitingFor(t, deps.chain) }));
      res.json({ page: q.page, per_page: q.per_page, total, items: page });
    },

    getDashboardQuality: async (req, res) => {
      const { customerId } = customerOf(res);
      parse(noQuery, req.query);
      const [row, calibration, reviewed] = await Promise.all([
        store.dashboard.quality(customerId),
        store.spaces.calibration(customerId),
        store.reviews.reviewedBins(customerId),
      ]);
      const body: wire.DashboardQuality = {
        window_days: QUALITY_WINDOW_DAYS,
        tasks_settled: row.tasks_settled,
        mean_confidence: round(row.mean_confidence, 4),
        resolution: {
          consensus: { tasks: row.consensus, share: share(row.consensus, row.tasks_settled) },
          confidence: { tasks: row.confidence, share: share(row.confidence, row.tasks_settled) },
          max_labels: { tasks: row.max_labels, share: share(row.max_labels, row.tasks_settled) },
        },
        labels_per_task: row.labels_per_task,
        agreement_rate: share(row.agreeing, row.labels),
        calibration,
        reviewed: reviewedQuality(reviewed),
      };
      res.json(body);
    },

    getDashboardLabelers: async (req, res) => {
      const { customerId } = customerOf(res);
      parse(noQuery, req.query);
      const body: wire.LabelerQualityList = { items: await store.spaces.labelers(customerId) };
      res.json(body);
    },

    getDashboardUsage: async (req, res) => {
      const { customerId } = customerOf(res);
      parse(noQuery, req.query);
      res.json({ days: await store.dashboard.usageDays(customerId) });
    },
  };
}
