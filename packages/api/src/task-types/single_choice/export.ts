/**
 * Single choice's export rows (contract §exports, docs/decisions/0258): jsonl adds nothing; Label Studio a
 * `choices` region of the consensus option; hf `{task_id, data_url, label}`; COCO and CoNLL do not fit.
 */
import { choicesResult, type TypeExportRows } from "../export-rows";

export const singleChoiceExportRows: TypeExportRows = {
  texts: "never",
  jsonl: () => "",
  "label-studio": (r) => ({
    item: r.data_url,
    result: r.consensus_label === null ? [] : [choicesResult([r.consensus_label], r.confidence)],
  }),
  coco: null,
  conll: null,
  hf: (r) => ({ task_id: r.task_id, data_url: r.data_url, label: r.consensus_label }),
};
