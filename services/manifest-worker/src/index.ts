/**
 * @labelgate/manifest-worker: manifest jobs (DESIGN §8). Ingests manifests from S3, GCS or https into
 * tasks (streamed, resumable) and writes completed jobs' JSONL exports to their output_url.
 */
import type { HandlersFor } from "@labelgate/queue";
import { type ExportDeps, writeExportToOutput } from "./export";
import { type IngestDeps, ingestManifest } from "./ingest";

export * from "./export";
export * from "./ingest";
export * from "./lines";
export * from "./storage";

export type ManifestDeps = IngestDeps & ExportDeps;

export function manifestHandlers(deps: ManifestDeps): HandlersFor<"manifest-worker"> {
  return {
    manifestIngest: async ({ jobId }, ctx) => void (await ingestManifest(deps, jobId, ctx)),
    manifestExport: async ({ jobId }) => void (await writeExportToOutput(deps, jobId)),
  };
}
