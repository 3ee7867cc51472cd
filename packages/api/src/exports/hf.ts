/**
 * `hf` (contract §exports): JSON Lines that Hugging Face `datasets` loads (`load_dataset("json",
 * data_files=...)`): one record per task, the same keys in every record of a type (so one Arrow schema), label
 * names as strings, `confidence` last (null until decided). The record's other keys are its type module's
 * (`exportRows.hf`, docs/decisions/0258).
 */
import type { ExportRow, HfRow } from "../task-types/export-rows";

export type { HfRow } from "../task-types/export-rows";

/** One record of the export (with its "\n"). */
export function hfLine(r: ExportRow, row: HfRow): string {
  return `${JSON.stringify({ ...row(r), confidence: r.confidence })}\n`;
}
