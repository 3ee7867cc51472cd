/**
 * Export of a completed job (contract §jobs) to its output_url, as JSONL, one line per manifest line
 * in manifest order, streamed from the store's `jobs.exportStream` (shared with the gateway's HTTP export):
 * constant memory at any size.
 */
import type { Logger, SecretBox } from "@labelgate/core";
import { PermanentStorageError, type StorageCredentials, type StorageOptions, writeObject } from "@labelgate/storage";
import type { Store } from "@labelgate/store";

export interface ExportDeps {
  store: Store;
  secretBox: SecretBox;
  logger: Logger;
  storage: StorageOptions;
}

/** Writes a completed job's export to its output_url once (`export_written_at`). Idempotent. */
export async function writeExportToOutput(deps: ExportDeps, jobId: string): Promise<"written" | "skipped" | "failed"> {
  const job = await deps.store.jobs.find(jobId);
  if (!job) throw new Error(`job ${jobId} not found`);
  if (job.status !== "completed" || !job.outputUrl || job.exportWrittenAt) return "skipped";
  const credentials = job.credentialsCiphertext
    ? (JSON.parse(deps.secretBox.open(job.credentialsCiphertext, job.id)) as StorageCredentials)
    : undefined;
  try {
    await writeObject(job.outputUrl, deps.store.jobs.exportStream(jobId), credentials, deps.storage, "application/x-ndjson");
  } catch (err) {
    if (err instanceof PermanentStorageError) {
      // The labels are safe and the HTTP export works; record why the copy could not be written.
      await deps.store.jobs.exportFailed(jobId, `export to output_url failed: ${err.message}`);
      deps.logger.warn({ job_id: jobId, error: err.message }, "export to output_url failed");
      return "failed";
    }
    throw err;
  }
  await deps.store.jobs.exportWritten(jobId);
  return "written";
}
