/**
 * Manifest batch jobs (docs/contract.md, SPEC §4 Batch jobs; DESIGN §8): create (validate, seal the credentials, enqueue the
 * ingestion), list, status, and the JSONL export streamed from Postgres with a keyset cursor (constant
 * memory at any size). Reading the manifest itself is the manifest worker's job: nothing slow here.
 */

import { ApiError, choicesOf, isReservedTaskType, jobBody, jobsQuery, pathId, resolvePolicy, type TaskPolicy } from "@labelgate/api";
import { checkUrlForm, type Logger, newId, OutboundUrlError, type SecretBox } from "@labelgate/core";
import { dispatch, type QueueClient } from "@labelgate/queue";
import type { Store } from "@labelgate/store";
import type { Request } from "express";
import { customerOf } from "../auth";
import { requireWebhooksFor } from "../callbacks";
import { parse } from "../errors";
import type { Handlers } from "../operations";
import { jobView } from "../views";

/** The storage scheme of a manifest or output URL; `http` only when private URLs are allowed. */
export function storageScheme(raw: string, allowPrivate: boolean): "s3" | "gs" | "https" {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundUrlError("not a valid URL");
  }
  if (url.protocol === "s3:" || url.protocol === "gs:") {
    if (!url.hostname || url.pathname.length <= 1) throw new OutboundUrlError(`must be ${url.protocol}//bucket/key`);
    return url.protocol === "s3:" ? "s3" : "gs";
  }
  if (url.protocol === "https:" || (url.protocol === "http:" && allowPrivate)) {
    checkUrlForm(raw, allowPrivate);
    return "https";
  }
  throw new OutboundUrlError("must be s3://bucket/key, gs://bucket/key or an https:// URL");
}

export interface JobRouteDeps {
  store: Store;
  queue: QueueClient;
  secretBox: SecretBox;
  allowPrivateUrls: boolean;
  logger: Logger;
}

export function jobHandlers(deps: JobRouteDeps): Pick<Handlers, "createJob" | "listJobs" | "getJob" | "exportJob"> {
  const { store, queue, secretBox } = deps;

  const ownJob = async (req: Request, customerId: string) => {
    const id = req.params.id;
    if (typeof id !== "string" || !pathId("job_").safeParse(id).success) throw new ApiError("jobNotFound");
    const found = await store.jobs.get(customerId, id);
    if (!found) throw new ApiError("jobNotFound");
    return found;
  };

  return {
    createJob: async (req, res) => {
      const { customerId, settings } = customerOf(res);
      const body = parse(jobBody, req.body);
      const credentials = body.credentials ?? body.s3_credentials;
      const details: { path: string; message: string }[] = [];
      const checkStorage = (path: "manifest_url" | "output_url", raw: string | undefined) => {
        if (raw === undefined) return;
        try {
          const scheme = storageScheme(raw, deps.allowPrivateUrls);
          if (path === "output_url" && scheme === "https") details.push({ path, message: "must be s3://bucket/key or gs://bucket/key" });
          if (scheme === "s3" && !(credentials && "access_key_id" in credentials)) {
            details.push({ path: "credentials", message: `${path} is on S3: give access_key_id, secret_access_key and region` });
          }
          if (scheme === "gs" && !(credentials && "service_account_json" in credentials)) {
            details.push({ path: "credentials", message: `${path} is on GCS: give service_account_json` });
          }
        } catch (err) {
          if (!(err instanceof OutboundUrlError)) throw err;
          details.push({ path, message: err.message });
        }
      };
      checkStorage("manifest_url", body.manifest_url);
      checkStorage("output_url", body.output_url);
      if (credentials && "endpoint" in credentials && credentials.endpoint !== undefined) {
        try {
          checkUrlForm(credentials.endpoint, deps.allowPrivateUrls);
        } catch (err) {
          if (!(err instanceof OutboundUrlError)) throw err;
          details.push({ path: "credentials.endpoint", message: err.message });
        }
      }
      // the job body, then the customer's task defaults (docs/contract.md, DESIGN §10): every task of the job gets this policy
      let policy: TaskPolicy | undefined;
      try {
        policy = resolvePolicy([body, settings.task_defaults]);
      } catch (err) {
        if (!(err instanceof ApiError && err.details)) throw err;
        details.push(...err.details);
      }
      if (details.length > 0 || !policy) throw new ApiError("validation", details);
      await requireWebhooksFor(store, customerId, body.callback_url ? [{ path: "callback_url", url: body.callback_url }] : []);

      const id = newId("job");
      const { job, followUps } = await store.jobs.create({
        id,
        customerId,
        manifestUrl: body.manifest_url,
        taskType: body.type,
        question: body.label_spec.question,
        options: choicesOf(body.label_spec),
        labelSpec: isReservedTaskType(body.type) ? body.label_spec : undefined,
        consensusThreshold: policy.consensus_threshold,
        maxLabels: policy.max_labels,
        confidenceTarget: policy.confidence_target,
        minLabels: policy.min_labels,
        callbackUrl: body.callback_url ?? null,
        outputUrl: body.output_url ?? null,
        credentialsCiphertext: credentials ? secretBox.seal(JSON.stringify(credentials), id) : null,
      });
      // If the queue is down the job stays `queued`; the reconciliation enqueues it later.
      await dispatch(queue, followUps, deps.logger);
      res.status(202).json({ job_id: job.id, status: job.status, created_at: job.createdAt.toISOString() });
    },

    listJobs: async (req, res) => {
      const { customerId } = customerOf(res);
      const q = parse(jobsQuery, req.query);
      const { total, items } = await store.jobs.list(customerId, q.page, q.per_page);
      res.json({ page: q.page, per_page: q.per_page, total, items: items.map((j) => jobView(j.job, j.tasksSettled)) });
    },

    getJob: async (req, res) => {
      const { customerId } = customerOf(res);
      const { job, tasksSettled } = await ownJob(req, customerId);
      res.json(jobView(job, tasksSettled));
    },

    exportJob: async (req, res) => {
      const { customerId } = customerOf(res);
      const { job } = await ownJob(req, customerId);
      if (job.status !== "completed") throw new ApiError("jobNotCompleted", undefined, { status: job.status });
      res.status(200);
      res.setHeader("Content-Type", "application/x-ndjson; charset=utf-8");
      res.setHeader("Content-Disposition", `attachment; filename="${job.id}.jsonl"`);
      const stream = store.jobs.exportStream(job.id);
      stream.on("error", (err) => {
        // Headers are sent: the only honest signal left is to cut the response short.
        deps.logger.error({ err, job_id: job.id }, "export failed mid-stream");
        res.destroy(err);
      });
      stream.pipe(res);
    },
  };
}
