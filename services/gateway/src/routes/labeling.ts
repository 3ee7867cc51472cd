/**
 * Labeler routes (../shared/DESIGN.md §4): claim a task (generic or named), release a claim (skip), and
 * label it. The label is recorded with the decision of the rule in the same transaction
 * (packages/store/src/labeling.ts); a deciding label enqueues its task's settlement (labels that decide
 * nothing need no queue job).
 */
import { claimBody, labelBody } from "@labelgate/api";
import type { QueueClient } from "@labelgate/queue";
import type { Store } from "@labelgate/store";
import { type RequestHandler, Router } from "express";
import { labelerOf } from "../auth";
import { parse } from "../errors";
import { pathParam } from "./tasks";

export interface LabelingRouteDeps {
  store: Store;
  queue: QueueClient;
  /** how long a claim holds its slot, seconds */
  claimTtlSeconds: number;
}

/** Routes under /v1/labeling; `auth` is the labeler authentication. */
export function labelingRoutes(deps: LabelingRouteDeps, auth: RequestHandler, json: RequestHandler): Router {
  const { store, queue } = deps;
  const router = Router();

  router.post("/claims", auth, json, async (req, res) => {
    const { labelerId } = labelerOf(res);
    const body = parse(claimBody, req.body);
    const claim = await store.labeling.claim(labelerId, body.task_id, deps.claimTtlSeconds);
    if (!claim) {
      res.status(204).end();
      return;
    }
    res.status(201).json(claim);
  });

  router.delete("/claims/:claimId", auth, async (req, res) => {
    const { labelerId } = labelerOf(res);
    await store.labeling.release(labelerId, pathParam(req, "claimId", "clm_", "claimNotFound"));
    res.status(204).end();
  });

  router.post("/claims/:claimId/label", auth, json, async (req, res) => {
    const { labelerId } = labelerOf(res);
    const claimId = pathParam(req, "claimId", "clm_", "claimNotFound");
    const body = parse(labelBody, req.body);
    const { label, decided } = await store.labeling.label(labelerId, claimId, body.label);
    if (decided) {
      // The decision is committed. If the queue is down, the reconciliation enqueues the settlement later.
      await queue.enqueue("consensus", { taskId: label.task_id, labelId: label.label_id }).catch((err: unknown) => {
        req.log.warn({ err, task_id: label.task_id, label_id: label.label_id }, "settlement enqueue deferred to reconciliation");
      });
    }
    res.status(201).json(label);
  });

  return router;
}
