/**
 * Export of a completed job (DESIGN §8) as JSONL, one line per manifest line in manifest order, read from
 * Postgres page by page along the (job_id, manifest_line) index: constant memory at any size.
 * The lines come from `exportStream` of @labelgate/store, shared with the gateway's HTTP export.
 */
import type { Logger, SecretBox } from "@labelgate/core";
import { exportStream, type PrismaClient } from "@labelgate/store";
import { PermanentStorageError, type StorageCredentials, type StorageOptions, writeObject } from "./storage";

export interface ExportDeps {
  prisma: PrismaClient;
  secretBox: SecretBox;
  logger: Logger;
  storage: StorageOptions;
}

/** Writes a completed job's export to its output_url once (`export_written_at`). Idempotent. */
export async function writeExportToOutput(deps: ExportDeps, jobId: string): Promise<"written" | "skipped" | "failed"> {
  const job = await deps.prisma.job.findUnique({ where: { id: jobId } });
  if (!job) throw new Error(`job ${jobId} not found`);
  if (job.status !== "completed" || !job.outputUrl || job.exportWrittenAt) return "skipped";
  const credentials = job.credentialsCiphertext
    ? (JSON.parse(deps.secretBox.open(job.credentialsCiphertext, job.id)) as StorageCredentials)
    : undefined;
  try {
    await writeObject(job.outputUrl, exportStream(deps.prisma, jobId), credentials, deps.storage, "application/x-ndjson");
  } catch (err) {
    if (err instanceof PermanentStorageError) {
      // The labels are safe and the HTTP export works; record why the copy could not be written.
      await deps.prisma.job.update({ where: { id: jobId }, data: { error: `export to output_url failed: ${err.message}` } });
      deps.logger.warn({ job_id: jobId, error: err.message }, "export to output_url failed");
      return "failed";
    }
    throw err;
  }
  await deps.prisma.job.update({ where: { id: jobId }, data: { exportWrittenAt: new Date() } });
  return "written";
}
