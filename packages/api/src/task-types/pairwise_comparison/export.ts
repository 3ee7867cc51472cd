/**
 * Pairwise comparison's export rows (contract §exports, docs/decisions/0258): jsonl adds `consensus`,
 * `data_url_b`, `data_text` and `data_text_b` (null when absent); Label Studio's Pairwise tag (`value.selected`
 * "left" for item a, "right" for item b; a tie as `choices` ["tie"]; item b in `data.item_b`); hf `{task_id,
 * item_a, item_b, winner}` (items: the text, else the URL; winner "a", "b" or "tie", null until decided); COCO
 * and CoNLL do not fit.
 */
import {
  choicesResult,
  consensusField,
  type ExportRow,
  type LabelStudioResult,
  labelStudioRegion,
  type TypeExportRows,
} from "../export-rows";

/** The consensus winner of a pairwise row ("a", "b" or "tie"), null until decided. */
export function winnerOf(row: ExportRow): string | null {
  const winner = row.consensus?.winner;
  return typeof winner === "string" ? winner : null;
}

/** A pairwise task's items besides `data_url`: `data_url_b`, `data_text`, `data_text_b` (null when absent). */
const pairwiseItemsField = (r: ExportRow) =>
  `,"data_url_b":${JSON.stringify(r.data_url_b ?? null)},"data_text":${JSON.stringify(r.data_text)},"data_text_b":${JSON.stringify(r.data_text_b ?? null)}`;

export const pairwiseExportRows: TypeExportRows = {
  texts: "always",
  jsonl: (r) => consensusField(r) + pairwiseItemsField(r),
  "label-studio": (r) => {
    const winner = winnerOf(r);
    const result: LabelStudioResult[] =
      winner === null
        ? []
        : winner === "tie"
          ? [choicesResult(["tie"], r.confidence)]
          : [
              {
                ...labelStudioRegion(0, "pairwise"),
                value: { selected: winner === "a" ? "left" : "right" },
                ...(r.confidence === null ? {} : { score: r.confidence }),
              },
            ];
    return { item: r.data_text ?? r.data_url, data: { item_b: r.data_text_b ?? r.data_url_b ?? null }, result };
  },
  coco: null,
  conll: null,
  hf: (r) => ({
    task_id: r.task_id,
    item_a: r.data_text ?? r.data_url,
    item_b: r.data_text_b ?? r.data_url_b ?? null,
    winner: winnerOf(r),
  }),
};
