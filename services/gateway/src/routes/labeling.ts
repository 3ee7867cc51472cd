/**
 * Labeler routes (contract §labelers): claim a task (generic or named; retry-safe with an
 * `Idempotency-Key`, and a named task the labeler holds returns its live claim), release a claim (skip), and
 * label it. A claim on a private item of a manifest job carries a presigned `view_url` (view-url.ts). The label is recorded with the decision of the rule in the same transaction
 * (packages/store/src/labeling.ts); a deciding label enqueues its task's settlement (labels that decide
 * nothing need no queue job).
 */
import { ApiError, claimBody, labelBody } from "@labelgate/api";
import type * as wire from "@labelgate/api/types";
import type { FollowUpNudge } from "@labelgate/queue";
import type { Store } from "@labelgate/store";
import { labelerOf } from "../auth";
import { parse } from "../errors";
import type { Handlers } from "../operations";
import type { ViewUrlSigner } from "../view-url";
import { labelView } from "../views";
import { idempotencyKeyOf, pathParam } from "./tasks";

export interface LabelingRouteDeps {
  store: Store;
  /** the process's follow-up relay, nudged after a deciding label (docs/decisions/0300) */
  relay?: FollowUpNudge;
  /** how long a claim holds its slot, seconds */
  claimTtlSeconds: number;
  /** signs the `view_url` of private (`s3://`, `gs://`) items of manifest jobs */
  viewUrls: ViewUrlSigner;
}

/** Handlers of the operations under /v1/labeling (authentication and body parsing are done before them, operations.ts). */
export function labelingHandlers(deps: LabelingRouteDeps): Pick<Handlers, "claimTask" | "releaseClaim" | "labelClaim" | "getInstructions"> {
  const { store, relay } = deps;

  return {
    claimTask: async (req, res) => {
      const { labelerId } = labelerOf(res);
      const body = parse(claimBody, req.body);
      const key = idempotencyKeyOf(req, undefined);
      const claim = await store.labeling.claim(labelerId, body.task_id, deps.claimTtlSeconds, key);
      if (!claim) {
        // why nothing is served, when the reason is the labeler's own (contract §qualification)
        const reason = body.task_id === undefined ? await store.labeling.idleReason(labelerId) : undefined;
        if (reason) res.setHeader("Labelgate-Idle-Reason", reason);
        res.status(204).end();
        return;
      }
      const viewUrl = await deps.viewUrls.viewUrl(claim);
      const out: wire.Claim = {
        claim_id: claim.claim_id,
        task_id: claim.task_id,
        task_type: claim.task_type,
        data_url: claim.data_url,
        ...(viewUrl ? { view_url: viewUrl } : {}),
        label_spec: claim.label_spec,
        ...(claim.data_text !== undefined ? { data_text: claim.data_text } : {}),
        ...(claim.data_url_b !== undefined ? { data_url_b: claim.data_url_b } : {}),
        ...(claim.data_text_b !== undefined ? { data_text_b: claim.data_text_b } : {}),
        expires_at: claim.expires_at,
        label_space: claim.label_space,
        instructions_version: claim.instructions_version,
        ...(claim.prelabel ? { prelabel: claim.prelabel } : {}),
      };
      res.status(201).json(out);
    },

    releaseClaim: async (req, res) => {
      const { labelerId } = labelerOf(res);
      await store.labeling.release(labelerId, pathParam(req, "claimId", "clm_", "claimNotFound"));
      res.status(204).end();
    },

    labelClaim: async (req, res) => {
      const { labelerId } = labelerOf(res);
      const claimId = pathParam(req, "claimId", "clm_", "claimNotFound");
      const body = parse(labelBody, req.body);
      const { label, followUps } = await store.labeling.label(labelerId, claimId, body);
      // The decision is committed with its settlement's follow_up row (the relay enqueues it, whatever the queue's state).
      if (followUps.consensus?.length) relay?.nudge();
      res.status(201).json(labelView(label));
    },

    getInstructions: async (req, res) => {
      const found = await store.instructions.current(pathParam(req, "id", "lsp_", "instructionsNotFound"));
      if (!found) throw new ApiError("instructionsNotFound");
      const out: wire.Instructions = {
        label_space: found.labelSpaceId,
        version: found.version,
        instructions: found.instructions,
        examples: found.examples as wire.Instructions["examples"],
        created_at: found.createdAt.toISOString(),
      };
      res.json(out);
    },
  };
}
