/**
 * Presigned view URLs of private items (contract §web-apps, issue 18): a claim on a task whose `data_url` is
 * `s3://bucket/key` or `gs://bucket/key` and whose manifest job stored credentials for that store carries a
 * `view_url`, a GET of that one object signed with the job's credentials and valid for at most 15 minutes
 * (never longer than the claim). Labelers' browsers load it directly; the credentials never leave the gateway.
 *
 * The signing itself is @labelgate/storage's `objectSigner` (S3 SigV4, GCS V4, computed locally).
 * Signing makes no network request. Tasks submitted outside a manifest job have no stored credentials and
 * get no `view_url` (their `data_url` is what the customer gave). A task whose scheme does not match its
 * job's credentials (a `gs://` item in an S3 job) gets none either.
 */
import type { Logger, SecretBox } from "@labelgate/core";
import { type ObjectSigner, objectSigner, type StorageCredentials, storageObjectOf } from "@labelgate/storage";
import type { Store } from "@labelgate/store";

/** The longest a view URL is valid, seconds (15 minutes). */
export const VIEW_URL_MAX_TTL_SECONDS = 900;

/** How long the opened credentials of a job are kept in memory, ms. */
const SIGNER_TTL_MS = 60_000;
/** Jobs whose signer is kept at once (least recently built first out). */
const SIGNER_CACHE_SIZE = 256;

export interface ViewUrlOptions {
  store: Store;
  /** opens the job's sealed credentials (context: the job id) */
  secretBox: SecretBox;
  logger: Logger;
  /** how long a view URL is valid, seconds: capped at {@link VIEW_URL_MAX_TTL_SECONDS} */
  ttlSeconds: number;
}

/**
 * The view URL signer of a gateway: `viewUrl(task)` answers the presigned GET of the task's item, or
 * undefined when there is none to give (not `s3://`/`gs://`, no manifest job, no stored credentials of
 * that store). A job's credentials are opened once and kept a minute. A failure to sign (credentials that
 * do not parse, a key that cannot sign) is logged with the job id and answers undefined, and the job's
 * next claims of that minute are not signed either (one warning a minute): the claim still goes out, with
 * its `data_url` only.
 */
export function viewUrlSigner(options: ViewUrlOptions) {
  const ttl = Math.max(1, Math.min(VIEW_URL_MAX_TTL_SECONDS, Math.floor(options.ttlSeconds)));
  const cache = new Map<string, { at: number; signer: Promise<ObjectSigner | undefined> }>();

  const signerOf = (jobId: string): Promise<ObjectSigner | undefined> => {
    const hit = cache.get(jobId);
    if (hit && Date.now() - hit.at < SIGNER_TTL_MS) return hit.signer;
    const signer = (async () => {
      const job = await options.store.jobs.find(jobId);
      if (!job?.credentialsCiphertext) return undefined;
      return objectSigner(JSON.parse(options.secretBox.open(job.credentialsCiphertext, job.id)) as StorageCredentials);
    })();
    cache.delete(jobId);
    cache.set(jobId, { at: Date.now(), signer });
    if (cache.size > SIGNER_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    signer.catch(() => cache.delete(jobId));
    return signer;
  };

  return {
    /** seconds a view URL is valid */
    ttlSeconds: ttl,
    async viewUrl(task: { data_url: string; job_id: string | null }): Promise<string | undefined> {
      const object = storageObjectOf(task.data_url);
      if (!object || !task.job_id) return undefined;
      try {
        const signer = await signerOf(task.job_id);
        if (!signer || signer.scheme !== object.scheme) return undefined;
        return await signer.sign(object.bucket, object.key, ttl);
      } catch (err) {
        // the name and message only: a parse error's message could quote the credentials it failed on
        const reason = err instanceof SyntaxError ? "SyntaxError" : err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        options.logger.warn({ job_id: task.job_id, reason }, "view_url not signed: the job's stored credentials cannot sign");
        // the job's claims go without view_url until the entry ages out: one warning a minute, not one a claim
        cache.set(task.job_id, { at: Date.now(), signer: Promise.resolve(undefined) });
        return undefined;
      }
    },
  };
}

export type ViewUrlSigner = ReturnType<typeof viewUrlSigner>;
