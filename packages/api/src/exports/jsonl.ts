/**
 * `jsonl` (the default, contract §exports and §jobs): one JSON object per line, per task in export order:
 * `{task_id, data_url, consensus_label, confidence, ...the type's fields, ledger_txid, settled_at, source}`
 * (a batch's lines end with `metadata` instead of `source`), the type's fields from its module
 * (`exportRows.jsonl`). Each line is built as a string: the same bytes as `JSON.stringify` of that object, byte
 * for byte the export of decision 0080.
 */
import type { ExportRow, JsonlFields } from "../task-types/export-rows";

export type { JsonlFields } from "../task-types/export-rows";

/** One line of the export (with its "\n"), the type's fields from `fields`. */
export function jsonlLine(r: ExportRow, fields: JsonlFields): string {
  const tail = r.source !== undefined ? `"source":${JSON.stringify(r.source)}` : `"metadata":${JSON.stringify(r.metadata ?? null)}`;
  return (
    `{"task_id":${JSON.stringify(r.task_id)},"data_url":${JSON.stringify(r.data_url)},` +
    `"consensus_label":${JSON.stringify(r.consensus_label)},"confidence":${JSON.stringify(r.confidence)}` +
    fields(r) +
    `,"ledger_txid":${JSON.stringify(r.ledger_txid)},"settled_at":${JSON.stringify(r.settled_at)},${tail}}\n`
  );
}
