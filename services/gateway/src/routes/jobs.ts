/**
 * Manifest batch jobs (contract §routes Batch jobs; contract §jobs): create (validate, seal the credentials, enqueue the
 * ingestion), list, status, and the export in a format (../exports.ts), streamed from Postgres with a keyset cursor (constant
 * memory at any size). Reading the manifest itself is the manifest worker's job: nothing slow here.
 */

import { ApiError, choicesOf, isReservedTaskType, jobBody, jobsQuery, pathId, splitGuide } from "@labelgate/api";
import { checkUrlForm, type Logger, newId, OutboundUrlError, type SecretBox } from "@labelgate/core";
import { resolvePolicy } from "@labelgate/quality";
import type { FollowUpNudge } from "@labelgate/queue";
import { policyColumns, type Store } from "@labelgate/store";
import type { Request } from "express";
import { customerOf } from "../auth";
import { requireWebhooksFor } from "../callbacks";
import { parse } from "../errors";
import { exportFormatOf, sendExport } from "../exports";
import { recordGuides } from "../guides";
import type { Handlers } from "../operations";
import { rankingOf, requireRankedJob } from "../ranking";
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
  /** the process's follow-up relay, nudged after a job is created (docs/decisions/0300) */
  relay?: FollowUpNudge;
  secretBox: SecretBox;
  allowPrivateUrls: boolean;
  logger: Logger;
}

export function jobHandlers(deps: JobRouteDeps): Pick<Handlers, "createJob" | "listJobs" | "getJob" | "exportJob" | "getJobRanking"> {
  const { store, relay, secretBox } = deps;

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
      // the job body, then the customer's task defaults (contract §quality): every task of the job gets this policy
      const resolved = resolvePolicy([body, settings.task_defaults]);
      if ("issues" in resolved) details.push(...resolved.issues);
      if (details.length > 0 || !("policy" in resolved)) throw new ApiError("validation", details);
      const policy = policyColumns(resolved.policy);
      await requireWebhooksFor(store, customerId, body.callback_url ? [{ path: "callback_url", url: body.callback_url }] : []);

      const id = newId("job");
      // the guide (instructions, examples) is the label space's: recorded apart, not part of the job's spec
      const { spec } = splitGuide(body.label_spec);
      const { job, followUps } = await store.jobs.create({
        id,
        customerId,
        manifestUrl: body.manifest_url,
        taskType: body.type,
        question: spec.question,
        options: choicesOf(body.type, spec),
        labelSpec: isReservedTaskType(body.type) ? spec : undefined,
        consensusThreshold: policy.consensus_threshold,
        maxLabels: policy.max_labels,
        confidenceTarget: policy.confidence_target,
        minLabels: policy.min_labels,
        minGain: policy.min_gain ?? null,
        showPrelabel: body.label_spec.show_prelabel === true,
        callbackUrl: body.callback_url ?? null,
        outputUrl: body.output_url ?? null,
        credentialsCiphertext: credentials ? secretBox.seal(JSON.stringify(credentials), id) : null,
      });
      await recordGuides(store, customerId, [body]);
      // Its ingestion is a follow_up row of the job's insert: the relay enqueues it, now or once the queue is back.
      if (followUps.manifestIngest?.length) relay?.nudge();
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

    getJobRanking: async (req, res) => {
      const { customerId } = customerOf(res);
      const { job } = await ownJob(req, customerId);
      requireRankedJob(job);
      const ranking = await rankingOf(store, customerId, { kind: "job", id: job.id });
      if (!ranking) throw new ApiError("jobNotFound");
      res.json(ranking);
    },

    exportJob: async (req, res) => {
      const { customerId } = customerOf(res);
      const format = exportFormatOf(req);
      const { job } = await ownJob(req, customerId);
      if (job.status !== "completed") throw new ApiError("jobNotCompleted", undefined, { status: job.status });
      await sendExport(deps, res, { kind: "job", id: job.id }, format);
    },
  };
}
