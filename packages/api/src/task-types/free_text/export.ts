/**
 * Free text's export rows (contract §exports, docs/decisions/0258): jsonl adds `consensus`; Label Studio a
 * `textarea` region of the consensus text; hf `{task_id, data_url, text, words, word_confidences}` (the
 * normalized consensus text, its words and each word's confidence; null until decided); COCO and CoNLL do not
 * fit.
 */
import { consensusField, type ExportRow, type TypeExportRows, textareaResult } from "../export-rows";

/** The consensus text of a free-text row (null until decided). */
export function freeTextOf(row: ExportRow): string | null {
  const text = row.consensus?.text;
  return typeof text === "string" ? text : null;
}

/** The consensus words of a free-text row with their confidences (null until decided). */
export function freeTextWordsOf(row: ExportRow): { word: string; confidence: number }[] | null {
  const words = row.consensus?.words;
  return Array.isArray(words) ? (words as { word: string; confidence: number }[]).slice() : null;
}

export const freeTextExportRows: TypeExportRows = {
  texts: "never",
  jsonl: (r) => consensusField(r),
  "label-studio": (r) => {
    const text = freeTextOf(r);
    return { item: r.data_url, result: text === null ? [] : [textareaResult(text, r.confidence)] };
  },
  coco: null,
  conll: null,
  hf: (r) => {
    const words = freeTextWordsOf(r);
    return {
      task_id: r.task_id,
      data_url: r.data_url,
      text: freeTextOf(r),
      words: words === null ? null : words.map((w) => w.word),
      word_confidences: words === null ? null : words.map((w) => w.confidence),
    };
  },
};
