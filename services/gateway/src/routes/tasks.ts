/**
 * Task routes (contract §routes Tasks; contract §wire, §lifecycle): submission (single and batch, idempotent),
 * status, result, cancellation, and batch status. The store does the writes (packages/store/src/tasks.ts).
 */
import {
  ApiError,
  auditsQuery,
  batchBody,
  batchesQuery,
  type ErrorDetail,
  idempotencyKey as idempotencyKeySchema,
  pathId,
  reviewBody,
  taskBody,
} from "@labelgate/api";
import type * as wire from "@labelgate/api/types";
import type { Logger } from "@labelgate/core";
import { resolvePolicy } from "@labelgate/quality";
import type { FollowUpNudge } from "@labelgate/queue";
import { type PolicyColumns, policyColumns, type Store, type Task } from "@labelgate/store";
import type { Request, Response } from "express";
import { customerOf } from "../auth";
import { requireWebhooksFor } from "../callbacks";
import { parse } from "../errors";
import { exportFormatOf, sendExport } from "../exports";
import { recordGuides } from "../guides";
import type { Handlers } from "../operations";
import { rankingOf } from "../ranking";
import { auditView, batchView, type ChainState, resultView, reviewView, revisionView, taskView, waitingFor } from "../views";

export interface TaskRouteDeps {
  store: Store;
  /** the process's follow-up relay, nudged after a commit that wrote follow-up rows (docs/decisions/0300) */
  relay?: FollowUpNudge;
  logger: Logger;
  /** the chain settlements wait for (LEDGER=evm), for `waiting_for`; undefined = the local ledger */
  chain?: ChainState;
}

/** A path id of the expected prefix, else the resource's 404 (an id that cannot exist names nothing). */
export function pathParam(req: Request, name: string, prefix: string, notFound: ApiError["kind"]): string {
  const value = req.params[name];
  if (typeof value !== "string" || !pathId(prefix).safeParse(value).success) throw new ApiError(notFound);
  return value;
}

/**
 * `Idempotency-Key` header (wins) or the body field (contract §wire).
 * @throws ApiError validation when the header is not 1..255 printable ASCII characters without spaces
 */
export function idempotencyKeyOf(req: Request, bodyKey: string | undefined): string | undefined {
  const header = req.get("Idempotency-Key");
  if (header === undefined) return bodyKey;
  const parsed = idempotencyKeySchema.safeParse(header);
  if (!parsed.success)
    throw new ApiError("validation", [{ path: "Idempotency-Key", message: "printable ASCII without spaces, 1..255 characters" }]);
  return parsed.data;
}

/**
 * A task's result body: settled (its revision, the earlier revisions and each one's settlement) or its
 * progress. @throws ApiError goldHasNoResult, taskCanceled
 */
async function resultOf(
  store: Store,
  task: Task,
): Promise<{ settled: true; body: wire.SettledResult } | { settled: false; body: wire.PendingResult }> {
  if (task.goldLabel !== null) throw new ApiError("goldHasNoResult", undefined, { task_id: task.id });
  if (task.status === "canceled") throw new ApiError("taskCanceled", undefined, { task_id: task.id, status: task.status });
  if (task.status !== "settled") {
    return {
      settled: false,
      body: {
        task_id: task.id,
        status: task.status === "staged" ? "pending" : task.status,
        labels_collected: task.labelsCollected,
        consensus_threshold: task.consensusThreshold,
      },
    };
  }
  const [entry, earlier] = await Promise.all([
    store.tasks.ledgerRecord(task),
    task.revision > 1 ? store.reviews.revisionsOf(task.id) : Promise.resolve([]),
  ]);
  // a txid other than the record's own: settled by an anchor (LEDGER=evm), whose proof is read from its rows
  const anchored = task.ledgerTxid !== entry.txid ? await store.anchors.anchoredRecord(task.id, task.revision) : undefined;
  const revisions = await Promise.all(
    earlier.map(async (r) =>
      revisionView(r, task.taskType, r.ledger_txid !== r.entry.txid ? await store.anchors.anchoredRecord(task.id, r.revision) : undefined),
    ),
  );
  return { settled: true, body: resultView(task, entry, anchored, revisions) };
}

/** Handlers of the operations under /v1/tasks (authentication and body parsing are done before them, operations.ts). */
export function taskHandlers(
  deps: TaskRouteDeps,
): Pick<Handlers, "createTask" | "createTaskBatch" | "getTask" | "getTaskResult" | "cancelTask" | "reviewTask" | "listAudits"> {
  const { store, relay } = deps;

  const ownTask = async (req: Request, res: Response) => {
    const { customerId } = customerOf(res);
    const task = await store.tasks.get(customerId, pathParam(req, "id", "tsk_", "taskNotFound"));
    if (!task) throw new ApiError("taskNotFound");
    return task;
  };

  return {
    createTask: async (req, res) => {
      const { customerId, settings } = customerOf(res);
      const input = parse(taskBody, req.body);
      // the task body, then the customer's task defaults (contract §quality)
      const resolved = resolvePolicy([input, settings.task_defaults]);
      if ("issues" in resolved) throw new ApiError("validation", resolved.issues);
      const policy = policyColumns(resolved.policy);
      await requireWebhooksFor(store, customerId, input.callback_url ? [{ path: "callback_url", url: input.callback_url }] : []);
      const { task, followUps } = await store.tasks.create(customerId, { input, policy }, idempotencyKeyOf(req, input.idempotency_key));
      await recordGuides(store, customerId, [input]);
      // a text_span task without data_text: the fetch of its text, a follow_up row of the task's transaction
      if (followUps.itemFetch?.length) relay?.nudge();
      const body: wire.TaskAccepted = {
        task_id: task.id,
        status: task.status as wire.TaskStatus,
        created_at: task.createdAt.toISOString(),
      };
      res.status(202).json(body);
    },

    createTaskBatch: async (req, res) => {
      const { customerId, settings } = customerOf(res);
      const input = parse(batchBody, req.body);
      // each task body, then the batch's top level, then the customer's task defaults; every task's problem reported
      const details: ErrorDetail[] = [];
      const policies = input.tasks.flatMap((t, i): PolicyColumns[] => {
        const resolved = resolvePolicy([t, input, settings.task_defaults], `tasks.${i}.`);
        if ("policy" in resolved) return [policyColumns(resolved.policy)];
        details.push(...resolved.issues);
        return [];
      });
      if (details.length > 0) throw new ApiError("validation", details);
      await requireWebhooksFor(
        store,
        customerId,
        input.tasks.flatMap((t, i) => {
          const url = t.callback_url ?? input.callback_url;
          return url ? [{ path: t.callback_url ? `tasks.${i}.callback_url` : "callback_url", url }] : [];
        }),
      );
      const batch = await store.tasks.createBatch(customerId, input, policies, idempotencyKeyOf(req, input.idempotency_key));
      await recordGuides(store, customerId, input.tasks);
      if (batch.followUps.itemFetch?.length) relay?.nudge();
      const body: wire.BatchAccepted = {
        batch_id: batch.batchId,
        task_count: batch.taskIds.length,
        status: "accepted",
        created_at: batch.createdAt.toISOString(),
        task_ids: batch.taskIds,
      };
      res.status(202).json(body);
    },

    getTask: async (req, res) => {
      const task = await ownTask(req, res);
      res.json({ ...taskView(task, await store.reviews.reviewsOf(task.id)), waiting_for: waitingFor(task, deps.chain) });
    },

    getTaskResult: async (req, res) => {
      const result = await resultOf(store, await ownTask(req, res));
      res.status(result.settled ? 200 : 202).json(result.body);
    },

    reviewTask: async (req, res) => {
      const { customerId } = customerOf(res);
      const taskId = pathParam(req, "id", "tsk_", "taskNotFound");
      const input = parse(reviewBody, req.body);
      const done = await store.reviews.review(customerId, taskId, input);
      // a revision from the reviewer's answer is settled by the consensus worker (a follow_up row of the review's transaction)
      relay?.nudge();
      const task = await store.tasks.get(customerId, taskId);
      if (!task) throw new ApiError("taskNotFound");
      const body: wire.ReviewOutcome = { review: reviewView(done.review), result: (await resultOf(store, task)).body };
      res.json(body);
    },

    listAudits: async (req, res) => {
      const { customerId } = customerOf(res);
      const q = parse(auditsQuery, req.query);
      const { total, items } = await store.reviews.audits(customerId, q.status, q.page, q.per_page);
      const body: wire.AuditPage = { page: q.page, per_page: q.per_page, total, items: items.map(auditView) };
      res.json(body);
    },

    cancelTask: async (req, res) => {
      const { customerId } = customerOf(res);
      const { task, followUps } = await store.tasks.cancel(customerId, pathParam(req, "id", "tsk_", "taskNotFound"));
      // its event and its job's export: follow_up rows of the cancellation's transaction
      if (Object.values(followUps).some((p) => p && p.length > 0)) relay?.nudge();
      res.json(taskView(task));
    },
  };
}

/** Handlers of the operations under /v1/batches: the list (newest first, paged), one batch, and its export (../exports.ts). */
export function batchHandlers(deps: {
  store: Store;
  logger: Logger;
}): Pick<Handlers, "listBatches" | "getBatch" | "exportBatch" | "getBatchRanking"> {
  return {
    listBatches: async (req, res) => {
      const { customerId } = customerOf(res);
      const q = parse(batchesQuery, req.query);
      const { total, items } = await deps.store.batches.list(customerId, q.page, q.per_page);
      const body: wire.BatchPage = {
        page: q.page,
        per_page: q.per_page,
        total,
        items: items.map((b) => batchView(b.batch, b.counts, b.goldTasks)),
      };
      res.json(body);
    },
    getBatch: async (req, res) => {
      const { customerId } = customerOf(res);
      const found = await deps.store.tasks.batch(customerId, pathParam(req, "id", "bat_", "batchNotFound"));
      if (!found) throw new ApiError("batchNotFound");
      res.json(batchView(found.batch, found.counts, found.goldTasks));
    },
    getBatchRanking: async (req, res) => {
      const { customerId } = customerOf(res);
      const ranking = await rankingOf(deps.store, customerId, { kind: "batch", id: pathParam(req, "id", "bat_", "batchNotFound") });
      if (!ranking) throw new ApiError("batchNotFound");
      res.json(ranking);
    },
    exportBatch: async (req, res) => {
      const { customerId } = customerOf(res);
      const format = exportFormatOf(req);
      const found = await deps.store.tasks.batch(customerId, pathParam(req, "id", "bat_", "batchNotFound"));
      if (!found) throw new ApiError("batchNotFound");
      const view = batchView(found.batch, found.counts, found.goldTasks);
      if (view.status !== "completed") throw new ApiError("batchNotCompleted", undefined, { status: view.status });
      await sendExport(deps, res, { kind: "batch", id: found.batch.id }, format);
    },
  };
}
