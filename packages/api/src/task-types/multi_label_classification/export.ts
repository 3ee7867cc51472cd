/**
 * Multi-label's export rows (contract §exports, docs/decisions/0258): jsonl adds `consensus` (and `item_error`);
 * Label Studio a `choices` region of the options that apply; hf `{task_id, data_url, labels}`; COCO and CoNLL
 * do not fit.
 */
import { choicesResult, consensusField, type ExportRow, itemErrorField, type TypeExportRows } from "../export-rows";

/** The consensus options of a multi-label row ([] until decided). */
export function consensusLabelsOf(row: ExportRow): string[] {
  return ((row.consensus?.labels as string[] | undefined) ?? []).slice();
}

export const multiLabelExportRows: TypeExportRows = {
  texts: "never",
  jsonl: (r) => consensusField(r) + itemErrorField(r),
  "label-studio": (r) => ({
    item: r.data_url,
    result: consensusLabelsOf(r).length === 0 ? [] : [choicesResult(consensusLabelsOf(r), r.confidence)],
  }),
  coco: null,
  conll: null,
  hf: (r) => ({ task_id: r.task_id, data_url: r.data_url, labels: r.consensus === null ? null : consensusLabelsOf(r) }),
};
