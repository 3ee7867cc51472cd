/**
 * The quality part of `pnpm bench:types` (bench/types.ts): consensus of the contract §task-types types against truth.
 *
 * - text_span on a crowd-spans folder (PICO "Participants", 191 abstracts, expert gold): token and exact-span
 *   precision / recall / F1 under the folder README's tokenization and rules, beside the per-token majority votes
 *   (reproduced) and the shipped HMM-Crowd aggregate (reference-hmmcrowd.jsonl, reproduced); the shipped
 *   Dawid-Skene figures are quoted from the README (its output is not in the folder). Then, with a gold share S of
 *   the documents as gold tasks: the same figures and the ECE of span confidence (is the exact span right?) on the
 *   other documents.
 * - multi_label_classification on a crowd-multilabel folder (CrowdTruth RelEx, expert gold on the seed relation):
 *   accuracy against the expert over the gold rows, beside the README's per-option majority vote (an option is
 *   chosen when at least half the item's judgments include it); then with a gold share S of the gold items.
 * - bounding_box on the generated crowd of boxes-crowd.ts, for each seed: precision and recall at IoU 0.5 (same
 *   class), mean IoU of the true positives and ECE of box confidence, beside the greedy Jaccard baseline, with a
 *   gold share S of the images as gold tasks and without gold.
 * Gold tasks are drawn by the replay's rule (the items with the smallest SHA-256 of "seed:item") and scored out.
 * Every figure uses one set of defaults: nothing is tuned per dataset.
 */
import { createHash } from "node:crypto";
import {
  aggregateBoxes,
  aggregateMultiLabel,
  aggregateSpans,
  fitBoxes,
  fitMultiLabel,
  fitSpans,
  type MultiLabelModel,
  type SpanModel,
} from "../src/index";
import { CLASSES, type DetectionSummary, generateBoxCrowd, greedyJaccard, summarize } from "./boxes-crowd";
import {
  loadMultiLabelData,
  loadSpanData,
  majorityMask,
  maskRuns,
  type SpanDoc,
  type SpanScores,
  scoreSpans,
  tokenMask,
} from "./types-data";

/** The shipped aggregates of crowd-spans' README that are not in the folder (token P/R/F1, exact-span P/R/F1). */
export const SHIPPED_SPAN_FIGURES = {
  dawidSkene: { token: [77.8, 75.1, 76.4], span: [60.4, 50.6, 55.1] },
  majorityVote: { token: [86.4, 62.7, 72.7], span: [63.0, 42.1, 50.4] },
} as const;

export interface TypesQualityOptions {
  /** crowd-spans folder, or undefined to skip */
  spans?: string;
  /** crowd-multilabel folder, or undefined to skip */
  multilabel?: string;
  /** generated images per box seed (0 = skip) */
  boxImages: number;
  boxSeeds: number[];
  /** gold share S */
  goldShare: number;
  /** seed of the gold draws of the two datasets */
  seed: number;
}

/** Items chosen as gold: the ceil(share x n) ids with the smallest SHA-256 of "seed:id" (the replay's rule). */
export function pickGold(ids: readonly string[], share: number, seed: number): Set<string> {
  const n = Math.ceil(share * ids.length);
  const keyed = ids.map((id) => ({ id, key: createHash("sha256").update(`${seed}:${id}`).digest("hex") }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return new Set(keyed.slice(0, n).map((k) => k.id));
}

/** ECE over 10 equal-width bins of (confidence, right) pairs. */
export function ece(pairs: readonly { confidence: number; right: boolean }[]): number {
  const bins = Array.from({ length: 10 }, () => ({ n: 0, c: 0, r: 0 }));
  for (const p of pairs) {
    const b = bins[Math.min(9, Math.floor(p.confidence * 10))] as { n: number; c: number; r: number };
    b.n++;
    b.c += p.confidence;
    b.r += p.right ? 1 : 0;
  }
  let e = 0;
  for (const b of bins) if (b.n > 0) e += Math.abs(b.c - b.r) / Math.max(pairs.length, 1);
  return e;
}

export interface SpanResult {
  docs: number;
  tokens: number;
  workers: number;
  answers: number;
  mergedAnswers: number;
  all: { name: string; scores: SpanScores; note?: string }[];
  gold: { docs: number; evaluated: number; rows: { name: string; scores: SpanScores; spanEce?: number; spans?: number }[] };
  fitSeconds: number;
}

function spanMaskOf(
  model: SpanModel,
  doc: SpanDoc,
): { mask: Uint8Array; spans: { firstToken: number; lastToken: number; confidence: number }[] } {
  const r = aggregateSpans(model, doc.tokens, doc.answers);
  return { mask: tokenMask(doc.tokens, r.spans), spans: r.spans };
}

/** text_span on a crowd-spans folder. */
export function runSpans(dir: string, options: TypesQualityOptions, log: (line: string) => void): SpanResult {
  const data = loadSpanData(dir);
  const docs = data.docs;
  log(`text_span: ${docs.length} docs, ${docs.reduce((n, d) => n + d.tokens.length, 0)} tokens`);
  const started = performance.now();
  const model = fitSpans(
    1,
    docs.map((d) => ({ id: d.id, tokens: d.tokens, answers: d.answers })),
  );
  const fitSeconds = (performance.now() - started) / 1000;
  const ours = new Map(docs.map((d) => [d.id, spanMaskOf(model, d)]));
  const all = [
    { name: "majority vote, strict (> 1/2)", scores: scoreSpans(docs, (d) => majorityMask(d, false)) },
    { name: "majority vote, inclusive (≥ 1/2)", scores: scoreSpans(docs, (d) => majorityMask(d, true)) },
    { name: "shipped HMM-Crowd (reference-hmmcrowd.jsonl)", scores: scoreSpans(docs, (d) => tokenMask(d.tokens, d.hmmCrowd)) },
    { name: "labelgate: token Dawid-Skene, no gold", scores: scoreSpans(docs, (d) => (ours.get(d.id) as { mask: Uint8Array }).mask) },
  ];
  // with gold
  const goldIds = pickGold(
    docs.map((d) => d.id),
    options.goldShare,
    options.seed,
  );
  const withGold = fitSpans(
    1,
    docs.map((d) => ({ id: d.id, tokens: d.tokens, answers: d.answers, gold: goldIds.has(d.id) ? d.gold : undefined })),
  );
  const rest = docs.filter((d) => !goldIds.has(d.id));
  const spanPairs = (m: SpanModel) =>
    rest.flatMap((d) => {
      const runs = new Set(maskRunsOf(d));
      return spanMaskOf(m, d).spans.map((s) => ({ confidence: s.confidence, right: runs.has(`${s.firstToken}:${s.lastToken}`) }));
    });
  const gold = {
    docs: goldIds.size,
    evaluated: rest.length,
    rows: [
      { name: "majority vote, strict", scores: scoreSpans(rest, (d) => majorityMask(d, false)) },
      {
        name: "labelgate, no gold",
        scores: scoreSpans(rest, (d) => spanMaskOf(model, d).mask),
        spanEce: ece(spanPairs(model)),
        spans: spanPairs(model).length,
      },
      {
        name: `labelgate, gold S = ${options.goldShare}`,
        scores: scoreSpans(rest, (d) => spanMaskOf(withGold, d).mask),
        spanEce: ece(spanPairs(withGold)),
        spans: spanPairs(withGold).length,
      },
    ],
  };
  const workers = new Set(docs.flatMap((d) => d.answers.map((a) => a.labelerId))).size;
  return {
    docs: docs.length,
    tokens: docs.reduce((n, d) => n + d.tokens.length, 0),
    workers,
    answers: docs.reduce((n, d) => n + d.answers.length, 0),
    mergedAnswers: data.mergedAnswers,
    all,
    gold,
    fitSeconds,
  };
}

/** Gold runs of a document as "first:last" keys: a consensus span is exactly right when its token range is one. */
function maskRunsOf(doc: SpanDoc): string[] {
  return maskRuns(tokenMask(doc.tokens, doc.gold));
}

export interface Confusion {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
}

export interface MultiLabelRow {
  name: string;
  rows: number;
  accuracy: number;
  /** per relation name: confusion against the expert */
  byRelation: Record<string, Confusion>;
  /** ECE of the chosen side's confidence on the expert rows (labelgate rows only) */
  ece?: number;
}

export interface MultiLabelResult {
  items: number;
  judgments: number;
  workers: number;
  repeats: number;
  goldRows: number;
  all: MultiLabelRow[];
  gold: { items: number; rows: MultiLabelRow[] };
  fitSeconds: number;
}

/** multi_label_classification on a crowd-multilabel folder. */
export function runMultiLabel(dir: string, options: TypesQualityOptions, log: (line: string) => void): MultiLabelResult {
  const data = loadMultiLabelData(dir);
  const k = data.options.length;
  const byId = new Map(data.items.map((i) => [i.id, i]));
  log(`multi_label: ${data.items.length} items, ${data.judgments} judgments, ${data.gold.length} expert rows`);
  const score = (
    name: string,
    rows: typeof data.gold,
    predict: (item: string, option: number) => { chosen: boolean; confidence?: number },
  ) => {
    const byRelation: Record<string, Confusion> = {};
    let right = 0;
    const pairs: { confidence: number; right: boolean }[] = [];
    for (const g of rows) {
      const p = predict(g.item, g.option);
      const relation = data.options[g.option] as string;
      const c = byRelation[relation] ?? { tp: 0, fp: 0, fn: 0, tn: 0 };
      byRelation[relation] = c;
      if (p.chosen && g.truth) c.tp++;
      else if (p.chosen) c.fp++;
      else if (g.truth) c.fn++;
      else c.tn++;
      if (p.chosen === g.truth) right++;
      if (p.confidence !== undefined) pairs.push({ confidence: p.confidence, right: p.chosen === g.truth });
    }
    const row: MultiLabelRow = { name, rows: rows.length, accuracy: right / Math.max(rows.length, 1), byRelation };
    if (pairs.length > 0) row.ece = ece(pairs);
    return row;
  };
  const majority = (item: string, option: number) => {
    const judgments = byId.get(item)?.judgments ?? [];
    const votes = judgments.filter((j) => j.includes(option)).length;
    return { chosen: votes * 2 >= judgments.length && judgments.length > 0 };
  };
  const oursOf = (model: MultiLabelModel) => {
    const cache = new Map<string, ReturnType<typeof aggregateMultiLabel>>();
    return (item: string, option: number) => {
      let r = cache.get(item);
      if (!r) {
        r = aggregateMultiLabel(model, byId.get(item)?.answers ?? []);
        cache.set(item, r);
      }
      return { chosen: r.chosen.includes(option), confidence: r.confidence[option] as number };
    };
  };
  const started = performance.now();
  const model = fitMultiLabel(
    k,
    data.items.map((i) => ({ id: i.id, answers: i.answers })),
  );
  const fitSeconds = (performance.now() - started) / 1000;
  log(`multi_label: fitted in ${fitSeconds.toFixed(1)} s`);
  const all = [
    score("per-option majority vote (README rule)", data.gold, majority),
    score("labelgate: binary Dawid-Skene per option, no gold", data.gold, oursOf(model)),
  ];
  const goldItems = pickGold([...new Set(data.gold.map((g) => g.item))], options.goldShare, options.seed);
  const withGold = fitMultiLabel(
    k,
    data.items.map((i) => {
      const rows = data.gold.filter((g) => g.item === i.id && goldItems.has(i.id));
      if (rows.length === 0) return { id: i.id, answers: i.answers };
      const gold: (boolean | null)[] = new Array(k).fill(null);
      for (const g of rows) gold[g.option] = g.truth;
      return { id: i.id, answers: i.answers, gold };
    }),
  );
  const rest = data.gold.filter((g) => !goldItems.has(g.item));
  const gold = {
    items: goldItems.size,
    rows: [
      score("per-option majority vote", rest, majority),
      score("labelgate, no gold", rest, oursOf(model)),
      score(`labelgate, gold S = ${options.goldShare}`, rest, oursOf(withGold)),
    ],
  };
  const workers = new Set(data.items.flatMap((i) => i.answers.map((a) => a.labelerId))).size;
  return {
    items: data.items.length,
    judgments: data.judgments,
    workers,
    repeats: data.repeats,
    goldRows: data.gold.length,
    all,
    gold,
    fitSeconds,
  };
}

export interface BoxSeedResult {
  seed: number;
  images: number;
  goldImages: number;
  truths: number;
  labelgateGold: DetectionSummary;
  labelgateNoGold: DetectionSummary;
  greedy: DetectionSummary;
  /** labelgate (gold) keeping only boxes with confidence >= c: an operating point a customer may choose */
  cutoffs: { cutoff: number; summary: DetectionSummary }[];
  fitSeconds: number;
}

/** bounding_box on the generated crowd, one seed. */
export function runBoxes(seed: number, options: TypesQualityOptions, log: (line: string) => void): BoxSeedResult {
  const crowd = generateBoxCrowd(seed, options.boxImages);
  const goldIds = pickGold(
    crowd.images.map((m) => m.id),
    options.goldShare,
    seed,
  );
  const started = performance.now();
  const withGold = fitBoxes(
    CLASSES.length,
    crowd.images.map((m) => ({ id: m.id, answers: m.answers, gold: goldIds.has(m.id) ? m.truth : undefined })),
  );
  const fitSeconds = (performance.now() - started) / 1000;
  const noGold = fitBoxes(
    CLASSES.length,
    crowd.images.map((m) => ({ id: m.id, answers: m.answers })),
  );
  const rest = crowd.images.filter((m) => !goldIds.has(m.id));
  const consensus = rest.map((m) => aggregateBoxes(withGold, m.answers));
  const result: BoxSeedResult = {
    seed,
    images: crowd.images.length,
    goldImages: goldIds.size,
    truths: rest.reduce((n, m) => n + m.truth.length, 0),
    labelgateGold: summarize(rest.map((m, i) => ({ truth: m.truth, detections: consensus[i]?.boxes ?? [] }))),
    labelgateNoGold: summarize(rest.map((m) => ({ truth: m.truth, detections: aggregateBoxes(noGold, m.answers).boxes }))),
    greedy: summarize(rest.map((m) => ({ truth: m.truth, detections: greedyJaccard(m.answers) }))),
    cutoffs: [0.5, 0.8, 0.9].map((cutoff) => ({
      cutoff,
      summary: summarize(
        rest.map((m, i) => ({ truth: m.truth, detections: (consensus[i]?.boxes ?? []).filter((b) => b.confidence >= cutoff) })),
      ),
    })),
    fitSeconds,
  };
  log(
    `bounding_box seed ${seed}: precision ${result.labelgateGold.precision.toFixed(3)} / greedy ${result.greedy.precision.toFixed(3)}, recall ${result.labelgateGold.recall.toFixed(3)} / ${result.greedy.recall.toFixed(3)}`,
  );
  return result;
}

export interface TypesQualityResult {
  spans: SpanResult | null;
  multilabel: MultiLabelResult | null;
  boxes: BoxSeedResult[];
}

/** Runs the parts whose inputs are given. */
export function runTypesQuality(options: TypesQualityOptions, log: (line: string) => void): TypesQualityResult {
  return {
    spans: options.spans ? runSpans(options.spans, options, log) : null,
    multilabel: options.multilabel ? runMultiLabel(options.multilabel, options, log) : null,
    boxes: options.boxImages > 0 ? options.boxSeeds.map((seed) => runBoxes(seed, options, log)) : [],
  };
}

const pct = (v: number) => (v * 100).toFixed(1);
const triple = (s: { p: number; r: number; f1: number }) => `${pct(s.p)} / ${pct(s.r)} / ${pct(s.f1)}`;
const f3 = (v: number) => v.toFixed(3);
const fixed = (values: readonly number[]) => values.map((v) => v.toFixed(1)).join(" / ");
const count = (v: number) => v.toLocaleString("en-US");

function range(values: readonly number[], digits = 3): string {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  if (values.length === 1) return mean.toFixed(digits);
  return `${mean.toFixed(digits)} [${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}]`;
}

/** The markdown of the results (one subsection per type, targets checked). */
export function renderTypesQuality(result: TypesQualityResult, options: TypesQualityOptions): string[] {
  const lines: string[] = [];
  const s = result.spans;
  if (s) {
    const ours = s.all[s.all.length - 1] as { scores: SpanScores };
    const mv = s.all[0] as { scores: SpanScores };
    const ds = SHIPPED_SPAN_FIGURES.dawidSkene;
    lines.push(
      "### text_span: PICO Participants (crowd-spans)",
      "",
      `${s.docs} abstracts, ${s.tokens.toLocaleString("en-US")} tokens (the README's \`\\w+|[^\\w\\s]\`), ${s.workers} workers, ${count(s.answers)} answers ` +
        `(${s.mergedAnswers} with overlapping spans of one worker merged into one: the API refuses overlaps). All documents, no gold. ` +
        `Fit: ${s.fitSeconds.toFixed(1)} s.`,
      "",
      "| aggregate | token P / R / F1 | exact-span P / R / F1 |",
      "|---|---|---|",
      ...s.all.map((r) => `| ${r.name} | ${triple(r.scores.token)} | ${triple(r.scores.span)} |`),
      `| shipped Dawid-Skene (README figure; output not in the folder) | ${fixed(ds.token)} | ${fixed(ds.span)} |`,
      `| shipped MajorityVote (README figure) | ${fixed(SHIPPED_SPAN_FIGURES.majorityVote.token)} | ${fixed(SHIPPED_SPAN_FIGURES.majorityVote.span)} |`,
      "",
      `Targets: above per-token majority vote (${pct(mv.scores.token.f1)} / ${pct(mv.scores.span.f1)}): ` +
        `${ours.scores.token.f1 > mv.scores.token.f1 && ours.scores.span.f1 > mv.scores.span.f1 ? "met" : "missed"}; ` +
        `at least the shipped Dawid-Skene (${ds.token[2]} / ${ds.span[2]}): ` +
        `${ours.scores.token.f1 * 100 >= ds.token[2] && ours.scores.span.f1 * 100 >= ds.span[2] ? "met" : "missed"} ` +
        `(${pct(ours.scores.token.f1)} / ${pct(ours.scores.span.f1)}; why: docs/notes/types.md §3).`,
      "",
      `With gold: ${s.gold.docs} documents (S = ${options.goldShare}, seed ${options.seed}) as gold tasks; figures on the other ${s.gold.evaluated}. ` +
        'Span ECE: consensus spans\' `confidence` against "the exact token range is a gold span", 10 bins.',
      "",
      "| aggregate | token P / R / F1 | exact-span P / R / F1 | spans | span confidence ECE |",
      "|---|---|---|---|---|",
      ...s.gold.rows.map(
        (r) =>
          `| ${r.name} | ${triple(r.scores.token)} | ${triple(r.scores.span)} | ${r.spans ?? "–"} | ${r.spanEce === undefined ? "–" : f3(r.spanEce)} |`,
      ),
      "",
    );
  }
  const m = result.multilabel;
  if (m) {
    const rel = (r: MultiLabelRow, name: string) => {
      const c = r.byRelation[name];
      if (!c) return "–";
      const p = c.tp + c.fp > 0 ? c.tp / (c.tp + c.fp) : 0;
      const rc = c.tp + c.fn > 0 ? c.tp / (c.tp + c.fn) : 0;
      return `${pct((c.tp + c.tn) / (c.tp + c.fp + c.fn + c.tn))}% (P ${pct(p)}, R ${pct(rc)})`;
    };
    const mv = m.all[0] as MultiLabelRow;
    const ours = m.all[1] as MultiLabelRow;
    lines.push(
      "### multi_label_classification: CrowdTruth medical relations (crowd-multilabel)",
      "",
      `${count(m.items)} items, 14 options, ${count(m.judgments)} judgments by ${m.workers} workers (${m.repeats} repeated judgments of one worker on one item kept ` +
        `by the majority vote, dropped by labelgate: one answer per labeler). Accuracy against the expert on the ${m.goldRows} seed-relation rows. ` +
        `Fit (14 binary spaces): ${m.fitSeconds.toFixed(1)} s.`,
      "",
      "| aggregate | accuracy | [CAUSES] | [TREATS] | ECE |",
      "|---|---|---|---|---|",
      ...m.all.map(
        (r) =>
          `| ${r.name} | ${pct(r.accuracy)}% | ${rel(r, "[CAUSES]")} | ${rel(r, "[TREATS]")} | ${r.ece === undefined ? "–" : f3(r.ece)} |`,
      ),
      "",
      `Target: at least majority vote (${pct(mv.accuracy)}%): ${ours.accuracy >= mv.accuracy ? "met" : "missed"} (${pct(ours.accuracy)}%).`,
      "",
      `With gold: ${m.gold.items} items' expert rows (S = ${options.goldShare}, seed ${options.seed}) as gold (clamped on the seed relation only); figures on the other rows.`,
      "",
      "| aggregate | rows | accuracy | [CAUSES] | [TREATS] | ECE |",
      "|---|---|---|---|---|---|",
      ...m.gold.rows.map(
        (r) =>
          `| ${r.name} | ${r.rows} | ${pct(r.accuracy)}% | ${rel(r, "[CAUSES]")} | ${rel(r, "[TREATS]")} | ${r.ece === undefined ? "–" : f3(r.ece)} |`,
      ),
      "",
    );
  }
  if (result.boxes.length > 0) {
    const b = result.boxes;
    const first = b[0] as BoxSeedResult;
    const row = (name: string, pick: (r: BoxSeedResult) => DetectionSummary) =>
      `| ${name} | ${range(b.map((r) => pick(r).precision))} | ${range(b.map((r) => pick(r).recall))} | ${range(b.map((r) => pick(r).meanIou))} | ` +
      `${range(b.map((r) => pick(r).ece))} | ${range(b.map((r) => pick(r).meanConfidence))} | ${range(
        b.map((r) => pick(r).detections),
        0,
      )} |`;
    const mean = (f: (r: BoxSeedResult) => number) => b.reduce((a, r) => a + f(r), 0) / b.length;
    const p = mean((r) => r.labelgateGold.precision);
    const rc = mean((r) => r.labelgateGold.recall);
    const iou = mean((r) => r.labelgateGold.meanIou);
    const e = mean((r) => r.labelgateGold.ece);
    const gp = mean((r) => r.greedy.precision);
    const gr = mean((r) => r.greedy.recall);
    const gi = mean((r) => r.greedy.meanIou);
    lines.push(
      "### bounding_box: generated crowd (packages/quality/bench/boxes-crowd.ts)",
      "",
      `${first.images} images per seed (seeds ${b.map((r) => r.seed).join(", ")}), COCO object sizes, 5 labelers per image from a pool of 40 ` +
        `(careful / average / sloppy / spammer, rates in boxes-crowd.ts); ${first.goldImages} images (S = ${options.goldShare}) as gold tasks, ` +
        `figures on the other ${first.images - first.goldImages} (${range(
          b.map((r) => r.truths),
          0,
        )} true boxes per seed). True positive: same class, IoU ≥ 0.5, one-to-one. Mean [min–max] over seeds. Fit: ${range(
          b.map((r) => r.fitSeconds),
          1,
        )} s.`,
      "",
      "| consensus | precision | recall | mean IoU (TP) | ECE of confidence | mean confidence | boxes |",
      "|---|---|---|---|---|---|---|",
      row(`labelgate, gold S = ${options.goldShare}`, (r) => r.labelgateGold),
      row("labelgate, no gold", (r) => r.labelgateNoGold),
      row("greedy Jaccard, IoU 0.5, ≥ half the labelers (confidence = share of labelers)", (r) => r.greedy),
      ...first.cutoffs.map((c, i) =>
        row(`labelgate, gold, only confidence ≥ ${c.cutoff}`, (r) => (r.cutoffs[i] as { summary: DetectionSummary }).summary),
      ),
      "",
      `Targets (means): precision ≥ greedy (${f3(p)} vs ${f3(gp)}): ${p >= gp ? "met" : "missed"}; recall ≥ greedy (${f3(rc)} vs ${f3(gr)}): ` +
        `${rc >= gr ? "met" : "missed"}; mean IoU ≥ greedy (${f3(iou)} vs ${f3(gi)}): ${iou >= gi ? "met" : "missed"}; ECE ≤ 0.05 (${f3(e)}): ${e <= 0.05 ? "met" : "missed"}. ` +
        "Discussion: docs/notes/types.md §4.",
      "",
    );
  }
  return lines;
}
