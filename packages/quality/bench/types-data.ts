/**
 * Loaders and scoring for the `pnpm bench:types` quality part: the PICO crowd spans (a folder laid out as
 * crowd-spans: docs.jsonl, answers.jsonl, gold.jsonl, reference-hmmcrowd.jsonl) and the CrowdTruth medical relation
 * judgments (a folder laid out as crowd-multilabel: items.jsonl, answers.csv, gold.csv). Each folder's
 * README-source.txt describes its files; the evaluation rules below are the ones those READMEs state.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { type SpanAnswer, type Token, type TypedSpan, tokenize } from "../src/index";

function jsonLines<T>(file: string): T[] {
  return readFileSync(file, "utf8")
    .split(/\r?\n/)
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as T);
}

/** One document of the span data with its tokens, its workers' answers and its gold spans. */
export interface SpanDoc {
  id: string;
  text: string;
  tokens: Token[];
  answers: SpanAnswer[];
  gold: TypedSpan[];
  /** the shipped HMM-Crowd aggregate (reference-hmmcrowd.jsonl) */
  hmmCrowd: TypedSpan[];
}

export interface SpanData {
  docs: SpanDoc[];
  /** answers whose overlapping spans were merged to make them valid answers (contract §task-types refuses overlaps) */
  mergedAnswers: number;
}

type RawSpan = { start: number; end: number; label: string };

/** Merges a worker's overlapping spans (touching spans stay apart): an answer the API would accept. */
function mergeOverlaps(spans: readonly TypedSpan[]): { spans: TypedSpan[]; merged: boolean } {
  const sorted = [...spans].sort((a, b) => a.start - b.start || a.end - b.end);
  const out: TypedSpan[] = [];
  let merged = false;
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start < last.end && s.type === last.type) {
      last.end = Math.max(last.end, s.end);
      merged = true;
    } else {
      out.push({ ...s });
    }
  }
  return { spans: out, merged };
}

/** Loads a crowd-spans folder (one entity type, "Participants", type index 0). */
export function loadSpanData(dir: string): SpanData {
  const docs = jsonLines<{ doc_id: string; text: string }>(path.join(dir, "docs.jsonl"));
  const answers = jsonLines<{ doc_id: string; worker: string; spans: RawSpan[] }>(path.join(dir, "answers.jsonl"));
  const gold = new Map(jsonLines<{ doc_id: string; spans: RawSpan[] }>(path.join(dir, "gold.jsonl")).map((g) => [g.doc_id, g.spans]));
  const hmm = new Map(
    jsonLines<{ doc_id: string; spans: RawSpan[] }>(path.join(dir, "reference-hmmcrowd.jsonl")).map((g) => [g.doc_id, g.spans]),
  );
  const typed = (spans: readonly RawSpan[]): TypedSpan[] => spans.map((s) => ({ start: s.start, end: s.end, type: 0 }));
  const byDoc = new Map<string, SpanAnswer[]>();
  let mergedAnswers = 0;
  for (const a of answers) {
    const { spans, merged } = mergeOverlaps(typed(a.spans));
    if (merged) mergedAnswers++;
    const list = byDoc.get(a.doc_id) ?? [];
    list.push({ labelerId: a.worker, spans });
    byDoc.set(a.doc_id, list);
  }
  return {
    docs: docs.map((d) => ({
      id: d.doc_id,
      text: d.text,
      tokens: tokenize(d.text),
      answers: byDoc.get(d.doc_id) ?? [],
      gold: typed(gold.get(d.doc_id) ?? []),
      hmmCrowd: typed(hmm.get(d.doc_id) ?? []),
    })),
    mergedAnswers,
  };
}

/** The README's token mask: a token is inside when a span overlaps it by at least one character. */
export function tokenMask(tokens: readonly Token[], spans: readonly { start: number; end: number }[]): Uint8Array {
  const mask = new Uint8Array(tokens.length);
  for (const s of spans) {
    for (let t = 0; t < tokens.length; t++) {
      const tok = tokens[t] as Token;
      if (tok.start < s.end && tok.end > s.start) mask[t] = 1;
    }
  }
  return mask;
}

/** Maximal runs of 1s of a mask, as "first:last" token keys (touching and overlapping spans merge). */
export function maskRuns(mask: Uint8Array): string[] {
  const runs: string[] = [];
  let open = -1;
  for (let t = 0; t <= mask.length; t++) {
    if (t < mask.length && mask[t]) {
      if (open < 0) open = t;
    } else if (open >= 0) {
      runs.push(`${open}:${t - 1}`);
      open = -1;
    }
  }
  return runs;
}

/** Token and exact-span precision / recall / F1 (micro over documents), the README's evaluation. */
export interface SpanScores {
  token: { p: number; r: number; f1: number };
  span: { p: number; r: number; f1: number };
}

const prf = (tp: number, predicted: number, actual: number) => {
  const p = predicted > 0 ? tp / predicted : 0;
  const r = actual > 0 ? tp / actual : 0;
  return { p, r, f1: p + r > 0 ? (2 * p * r) / (p + r) : 0 };
};

/** Scores predicted masks against the gold masks of `docs` (the README's protocol). */
export function scoreSpans(docs: readonly SpanDoc[], predict: (doc: SpanDoc) => Uint8Array): SpanScores {
  let tp = 0;
  let predicted = 0;
  let actual = 0;
  let spanTp = 0;
  let spanPredicted = 0;
  let spanActual = 0;
  for (const doc of docs) {
    const gold = tokenMask(doc.tokens, doc.gold);
    const pred = predict(doc);
    for (let t = 0; t < gold.length; t++) {
      if (pred[t]) predicted++;
      if (gold[t]) actual++;
      if (pred[t] && gold[t]) tp++;
    }
    const goldRuns = new Set(maskRuns(gold));
    const predRuns = maskRuns(pred);
    spanPredicted += predRuns.length;
    spanActual += goldRuns.size;
    for (const r of predRuns) if (goldRuns.has(r)) spanTp++;
  }
  return { token: prf(tp, predicted, actual), span: prf(spanTp, spanPredicted, spanActual) };
}

/** Per-token majority vote of the README: strict (count > n/2) or inclusive (count >= n/2). */
export function majorityMask(doc: SpanDoc, inclusive: boolean): Uint8Array {
  const masks = doc.answers.map((a) => tokenMask(doc.tokens, a.spans));
  const n = masks.length;
  const out = new Uint8Array(doc.tokens.length);
  for (let t = 0; t < out.length; t++) {
    let c = 0;
    for (const m of masks) c += m[t] as number;
    out[t] = (inclusive ? c * 2 >= n : c * 2 > n) && n > 0 ? 1 : 0;
  }
  return out;
}

/** The multi-label data: items with their options and answers, and the expert rows on the seed relation. */
export interface MultiLabelData {
  options: string[];
  /** answers: one per worker (a repeat dropped); judgments: every row as given (the README's majority vote counts them all) */
  items: { id: string; answers: { labelerId: string; chosen: number[] }[]; judgments: number[][] }[];
  gold: { item: string; option: number; truth: boolean }[];
  /** judgments dropped as a worker's repeat on the same item (one answer per labeler per task) */
  repeats: number;
  judgments: number;
}

/** Loads a crowd-multilabel folder. @throws Error on a label that is not one of the items' options */
export function loadMultiLabelData(dir: string): MultiLabelData {
  const items = jsonLines<{ item_id: string; options: string[] }>(path.join(dir, "items.jsonl"));
  const options = items[0]?.options ?? [];
  const index = new Map(options.map((o, i) => [o, i]));
  const byItem = new Map(items.map((i) => [i.item_id, [] as { labelerId: string; chosen: number[] }[]]));
  const judgmentsOf = new Map(items.map((i) => [i.item_id, [] as number[][]]));
  const rows = readFileSync(path.join(dir, "answers.csv"), "utf8").split(/\r?\n/).slice(1);
  let repeats = 0;
  let judgments = 0;
  for (const row of rows) {
    if (row.trim() === "") continue;
    const [item, worker, labels] = row.split(",") as [string, string, string];
    judgments++;
    const list = byItem.get(item);
    if (!list) throw new Error(`answers.csv: unknown item ${item}`);
    const chosen = [
      ...new Set(
        labels.split("|").map((l) => {
          const j = index.get(l);
          if (j === undefined) throw new Error(`answers.csv: unknown option ${l}`);
          return j;
        }),
      ),
    ];
    judgmentsOf.get(item)?.push(chosen);
    if (list.some((a) => a.labelerId === worker)) {
      repeats++;
      continue;
    }
    list.push({ labelerId: worker, chosen });
  }
  const gold = readFileSync(path.join(dir, "gold.csv"), "utf8")
    .split(/\r?\n/)
    .slice(1)
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const [item, relation, expert] = l.split(",") as [string, string, string];
      const option = index.get(relation);
      if (option === undefined) throw new Error(`gold.csv: unknown relation ${relation}`);
      return { item, option, truth: expert === "1" };
    });
  return {
    options,
    items: [...byItem].map(([id, answers]) => ({ id, answers, judgments: judgmentsOf.get(id) ?? [] })),
    gold,
    repeats,
    judgments,
  };
}
