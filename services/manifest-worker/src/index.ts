/**
 * @labelgate/manifest-worker: manifest ingestion and JSONL export. This release ships the service shell
 * only: it consumes no queue yet (`HandlersFor<"manifest-worker">` is empty).
 */
import type { HandlersFor } from "@labelgate/queue";

export function manifestHandlers(): HandlersFor<"manifest-worker"> {
  return {};
}
