/**
 * `label-studio` (contract §exports): Label Studio's JSON task format (https://labelstud.io/guide/task_format),
 * a JSON array of tasks `{id, data, annotations: [{id, result: [...], score, ground_truth, was_cancelled,
 * created_at}], predictions: []}`, the consensus as the one annotation (none until decided) with the task's
 * confidence as its `score`. Every result names `from_name: "label"` and `to_name: "item"`, the item being
 * `data.item` (the data_url, or a text_span task's text): the labeling configs to import with are in
 * docs/guide.md. Result types: `choices` (single choice, multi-label), `rectanglelabels` (boxes, in percent of
 * the image: it needs the image's size, docs/decisions/0257), `labels` (spans, offsets in UTF-16 code units as
 * Label Studio counts them), `textarea` (free text), `pairwise` (`value.selected`: "left" for item a, "right"
 * for item b; a tie as `choices` ["tie"]; item b in `data.item_b`). A task's item and results are its type
 * module's (`exportRows["label-studio"]`); this file frames them.
 */
import type { ExportRow, LabelStudioRow } from "../task-types/export-rows";

export {
  choicesResult,
  type LabelStudioParts,
  type LabelStudioResult,
  type LabelStudioRow,
  textareaResult,
} from "../task-types/export-rows";

/** One task of the export (compact JSON, no separator), its results from `row`. */
export function labelStudioTask(r: ExportRow, row: LabelStudioRow): string {
  const parts = row(r);
  const annotations =
    r.consensus_label === null
      ? []
      : [
          {
            id: 1,
            result: parts.result,
            score: r.confidence,
            ground_truth: false,
            was_cancelled: false,
            created_at: r.settled_at,
          },
        ];
  const task = {
    id: r.ordinal,
    data: { item: parts.item, ...parts.data, data_url: r.data_url, task_id: r.task_id, task_type: r.task_type },
    annotations,
    predictions: [],
    meta: parts.warning === undefined ? {} : { warning: parts.warning },
  };
  return JSON.stringify(task);
}
