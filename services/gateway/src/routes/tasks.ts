/**
 * Task routes (docs/contract.md, SPEC §4 Tasks; DESIGN §2, §3): submission (single and batch, idempotent),
 * status, result, cancellation, and batch status. The store does the writes (packages/store/src/tasks.ts).
 */
import {
  ApiError,
  batchBody,
  batchesQuery,
  type ErrorDetail,
  idempotencyKey as idempotencyKeySchema,
  pathId,
  resolvePolicy,
  type TaskPolicy,
  taskBody,
} from "@labelgate/api";
import type * as wire from "@labelgate/api/types";
import type { Logger } from "@labelgate/core";
import { dispatch, type QueueClient } from "@labelgate/queue";
import type { Store } from "@labelgate/store";
import type { Request, Response } from "express";
import { customerOf } from "../auth";
import { requireWebhooksFor } from "../callbacks";
import { parse } from "../errors";
import type { Handlers } from "../operations";
import { batchView, resultView, taskView } from "../views";

export interface TaskRouteDeps {
  store: Store;
  queue: QueueClient;
  logger: Logger;
}

/** A path id of the expected prefix, else the resource's 404 (an id that cannot exist names nothing). */
export function pathParam(req: Request, name: string, prefix: string, notFound: ApiError["kind"]): string {
  const value = req.params[name];
  if (typeof value !== "string" || !pathId(prefix).safeParse(value).success) throw new ApiError(notFound);
  return value;
}

/**
 * `Idempotency-Key` header (wins) or the body field (docs/contract.md, DESIGN §2).
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

/** Handlers of the operations under /v1/tasks (authentication and body parsing are done before them, operations.ts). */
export function taskHandlers(
  deps: TaskRouteDeps,
): Pick<Handlers, "createTask" | "createTaskBatch" | "getTask" | "getTaskResult" | "cancelTask"> {
  const { store, queue } = deps;

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
      // the task body, then the customer's task defaults (docs/contract.md, DESIGN §10)
      const policy = resolvePolicy([input, settings.task_defaults]);
      await requireWebhooksFor(store, customerId, input.callback_url ? [{ path: "callback_url", url: input.callback_url }] : []);
      const { task, followUps } = await store.tasks.create(customerId, { input, policy }, idempotencyKeyOf(req, input.idempotency_key));
      // a text_span task without data_text: the fetch of its text (if the queue is down, the reconciliation sends it)
      await dispatch(queue, followUps, deps.logger);
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
      const policies = input.tasks.flatMap((t, i): TaskPolicy[] => {
        try {
          return [resolvePolicy([t, input, settings.task_defaults], `tasks.${i}.`)];
        } catch (err) {
          if (err instanceof ApiError && err.details) details.push(...err.details);
          else throw err;
          return [];
        }
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
      await dispatch(queue, batch.followUps, deps.logger);
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
      res.json(taskView(await ownTask(req, res)));
    },

    getTaskResult: async (req, res) => {
      const task = await ownTask(req, res);
      if (task.goldLabel !== null) throw new ApiError("goldHasNoResult", undefined, { task_id: task.id });
      if (task.status === "canceled") throw new ApiError("taskCanceled", undefined, { task_id: task.id, status: task.status });
      if (task.status !== "settled") {
        const body: wire.PendingResult = {
          task_id: task.id,
          status: task.status === "staged" ? "pending" : task.status,
          labels_collected: task.labelsCollected,
          consensus_threshold: task.consensusThreshold,
        };
        res.status(202).json(body);
        return;
      }
      const entry = await store.tasks.ledgerRecord(task);
      // a txid other than the record's own: settled by an anchor (LEDGER=evm), whose proof is read from its rows
      const anchored = task.ledgerTxid !== entry.txid ? await store.anchors.anchoredRecord(task.id) : undefined;
      res.json(resultView(task, entry, anchored));
    },

    cancelTask: async (req, res) => {
      const { customerId } = customerOf(res);
      const { task, followUps } = await store.tasks.cancel(customerId, pathParam(req, "id", "tsk_", "taskNotFound"));
      await dispatch(queue, followUps, req.log);
      res.json(taskView(task));
    },
  };
}

/** Handlers of the operations under /v1/batches: the list (newest first, paged) and one batch. */
export function batchHandlers(deps: { store: Store }): Pick<Handlers, "listBatches" | "getBatch"> {
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
  };
}
