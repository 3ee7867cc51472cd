/** The manifest worker's queue handlers: ingest a job's manifest; write a completed job's export; fetch a task's item. */
import type { HandlersFor } from "@labelgate/queue";
import { type ExportDeps, writeExportToOutput } from "./export";
import { type IngestDeps, ingestManifest } from "./ingest";
import { fetchItem } from "./items";

export type ManifestDeps = IngestDeps & ExportDeps;

export function manifestHandlers(deps: ManifestDeps): HandlersFor<"manifest-worker"> {
  return {
    manifestIngest: async ({ manifestJobId }, ctx) => void (await ingestManifest(deps, manifestJobId, ctx)),
    manifestExport: async ({ manifestJobId }) => void (await writeExportToOutput(deps, manifestJobId)),
    itemFetch: async ({ taskId }, ctx) => void (await fetchItem(deps, taskId, ctx)),
  };
}
