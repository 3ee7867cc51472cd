/**
 * Text spans' export rows (contract §exports, docs/decisions/0256 and 0258): jsonl adds `consensus` (and
 * `item_error`); Label Studio `labels` regions over the text (offsets in UTF-16 code units as Label Studio
 * counts them); CoNLL the text's tokens with BIO tags (`tagTokens`); hf `{task_id, data_url, text, tokens,
 * ner_tags, spans}`; COCO does not fit.
 */
import { consensusField, type ExportRow, itemErrorField, labelStudioRegion, type TaggedToken, type TypeExportRows } from "../export-rows";

/** A consensus span (text_span's `consensus.spans[]`): code points of the text, end exclusive. */
export interface ConsensusSpan {
  start: number;
  end: number;
  label: string;
  confidence: number;
}

/** The consensus spans of a row sorted by start ([] until decided). */
export function spansOf(row: ExportRow): ConsensusSpan[] {
  return ((row.consensus?.spans as ConsensusSpan[] | undefined) ?? []).slice().sort((a, b) => a.start - b.start);
}

const WORD = /[\p{L}\p{M}\p{N}_]/u;
const SPACE = /\s/u;

/**
 * The tokens of `text` (code points) tagged with the spans (sorted, not overlapping: an answer's spans never
 * overlap, contract §task-types), in the CoNLL-2003 BIO scheme (Tjong Kim Sang and De Meulder 2003): `B-<type>`
 * the first token of a span, `I-<type>` the next ones, `O` outside. Tokens (docs/decisions/0256): runs of
 * letters, marks, digits and `_`, and every other character that is not white space alone, cut again at each
 * span's start and end so that a span is whole tokens.
 */
export function tagTokens(text: string, spans: readonly { start: number; end: number; label: string }[]): TaggedToken[] {
  const chars = Array.from(text);
  const cuts = new Set<number>();
  for (const s of spans) {
    cuts.add(s.start);
    cuts.add(s.end);
  }
  const tokens: TaggedToken[] = [];
  let i = 0;
  while (i < chars.length) {
    const ch = chars[i] as string;
    if (SPACE.test(ch)) {
      i++;
      continue;
    }
    let j = i + 1;
    if (WORD.test(ch)) while (j < chars.length && WORD.test(chars[j] as string) && !cuts.has(j)) j++;
    tokens.push({ token: chars.slice(i, j).join(""), start: i, end: j, tag: "O" });
    i = j;
  }
  // the first token inside each span opens it (B-), the next ones continue it (I-)
  let k = 0;
  let opened = -1;
  for (const t of tokens) {
    while (k < spans.length && (spans[k] as { end: number }).end <= t.start) k++;
    const s = spans[k];
    if (s && s.start <= t.start && t.end <= s.end) {
      t.tag = `${opened === k ? "I" : "B"}-${s.label}`;
      opened = k;
    }
  }
  return tokens;
}

/** The UTF-16 offset of each code point offset 0..n of `text` (Label Studio counts JavaScript string indices). */
function utf16Offsets(text: string): number[] {
  const out = [0];
  let at = 0;
  for (const ch of text) {
    at += ch.length;
    out.push(at);
  }
  return out;
}

export const textSpanExportRows: TypeExportRows = {
  texts: "format",
  jsonl: (r) => consensusField(r) + itemErrorField(r),
  "label-studio": (r) => {
    const text = r.data_text ?? "";
    const at = utf16Offsets(text);
    const chars = Array.from(text);
    return {
      item: text,
      result: spansOf(r).map((s, i) => ({
        ...labelStudioRegion(i, "labels"),
        value: { start: at[s.start] ?? s.start, end: at[s.end] ?? s.end, text: chars.slice(s.start, s.end).join(""), labels: [s.label] },
        score: s.confidence,
      })),
    };
  },
  coco: null,
  conll: (r) => (r.consensus === null || r.data_text === null ? undefined : tagTokens(r.data_text, spansOf(r))),
  hf: (r) => {
    const spans = spansOf(r);
    const tokens = r.data_text === null ? [] : tagTokens(r.data_text, r.consensus === null ? [] : spans);
    return {
      task_id: r.task_id,
      data_url: r.data_url,
      text: r.data_text,
      tokens: tokens.map((t) => t.token),
      ner_tags: r.consensus === null ? null : tokens.map((t) => t.tag),
      spans: r.consensus === null ? null : spans.map((s) => ({ start: s.start, end: s.end, label: s.label, confidence: s.confidence })),
    };
  },
};
