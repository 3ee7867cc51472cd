/**
 * The free_text part of `pnpm bench:types` (bench/free-text.ts runs it): the consensus of src/types/free_text on the
 * crowd-text sets against their gold texts.
 *
 * Data (one folder per set, read from the shared data folder; its README-source.txt): CrowdSpeech dev-clean and
 * dev-other (Pavlichenko, Stelmakh & Ustalov 2021, "CrowdSpeech and VoxDIY: benchmark datasets for crowdsourced
 * audio transcription", NeurIPS Datasets and Benchmarks; Toloka/CrowdSpeech, CC BY 4.0: 7 transcriptions per
 * LibriSpeech utterance, the LibriSpeech transcript as gold, the repository's shipped ROVER and T5 outputs) and
 * CrowdWSA2019 T1 / T2 (Li & Fukumoto 2019; garfieldpigljy/CrowdWSA2019, CC BY 4.0: 10 crowd translations per
 * sentence, a reference translation). Every text is normalized by the contract's `words` rule before scoring.
 *
 * Per set:
 * - arrival order: each item's answers in the order of the SHA-256 of "seed:item:worker" (seeded, random);
 * - gold: the items of `pickGold` (the replay's rule, share `goldShare`) are gold tasks: their answers and gold
 *   text calibrate the confidences; the labeler accuracies are fitted on every item's answers WITHOUT gold
 *   (fit.ts). The weights are fitted once on every answer of the set (the service refits on the labels it has).
 * - every answer used: corpus WER (total word edits / total gold words) of the consensus, of the same vote
 *   unweighted (our ROVER: every labeler at one accuracy), of the shipped ROVER and T5 outputs (CrowdSpeech); and
 *   the ECE (10 bins) of the whole-text confidence against "consensus = gold after normalization", on the non-gold items.
 * - threshold policy (t equal normalized answers, max_labels = every answer of the item) and confidence policy
 *   (every slot's confidence >= T, min_labels 1), answers taken one at a time in arrival order: corpus WER, label
 *   share (answers used / answers available) and whole-text ECE at settlement, on the non-gold items (their WER
 *   beside the all-answers WER of the same items).
 * - the limit of the per-slot rule (`oracleCalibration`): the same replay with every slot's confidence taken from
 *   its cell's accuracy on the evaluated items themselves, for each target: no calibration spends fewer labels.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  decideText,
  fitTextModel,
  normalizeWords,
  slotCorrectness,
  type TextAnswer,
  type TextConsensus,
  type TextModel,
  type TextTask,
  textConsensus,
  wordDistance,
} from "../src/types/free_text";
import { ece, pickGold } from "./types-quality";

export interface FreeTextOptions {
  /** folder holding the crowd-text sets */
  dir: string;
  sets: string[];
  goldShare: number;
  seed: number;
  /** confidence targets of the confidence policy */
  targets: number[];
  /** thresholds of the threshold policy */
  thresholds: number[];
}

export const FREE_TEXT_SETS = ["crowdspeech-dev-clean", "crowdspeech-dev-other", "crowdwsa-t1", "crowdwsa-t2"];

interface Item {
  id: string;
  answers: TextAnswer[];
  gold: string[];
  reference?: Record<string, string[]>;
}

function readJsonl<T>(file: string): T[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as T);
}

function loadSet(dir: string, seed: number): Item[] {
  const gold = new Map(
    readJsonl<{ item: string; text: string }>(path.join(dir, "gold.jsonl")).map((g) => [g.item, normalizeWords(g.text)]),
  );
  const answers = new Map<string, { labelerId: string; words: string[]; key: string }[]>();
  for (const a of readJsonl<{ item: string; worker: string; text: string }>(path.join(dir, "answers.jsonl"))) {
    const list = answers.get(a.item) ?? [];
    const key = createHash("sha256").update(`${seed}:${a.item}:${a.worker}:${list.length}`).digest("hex");
    list.push({ labelerId: a.worker, words: normalizeWords(a.text), key });
    answers.set(a.item, list);
  }
  let reference: Map<string, Record<string, string[]>> | undefined;
  try {
    reference = new Map(
      readJsonl<Record<string, string>>(path.join(dir, "reference.jsonl")).map((r) => [
        r.item as string,
        Object.fromEntries(
          Object.entries(r)
            .filter(([k]) => k !== "item")
            .map(([k, v]) => [k, normalizeWords(v)]),
        ),
      ]),
    );
  } catch {
    reference = undefined;
  }
  const items: Item[] = [];
  for (const [id, list] of answers) {
    const g = gold.get(id);
    if (!g) continue;
    list.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
    items.push({ id, answers: list.map(({ labelerId, words }) => ({ labelerId, words })), gold: g, reference: reference?.get(id) });
  }
  return items;
}

interface Corpus {
  edits: number;
  words: number;
}
const wer = (c: Corpus) => (c.words > 0 ? (100 * c.edits) / c.words : 0);

export interface PolicyRow {
  policy: string;
  wer: number;
  allWer: number;
  labelShare: number;
  ece: number;
  meanConfidence: number;
  exact: number;
  items: number;
}

export interface FreeTextSetResult {
  set: string;
  items: number;
  answers: number;
  labelers: number;
  goldItems: number;
  /** corpus WER (%) with every answer, on every item */
  all: { weighted: number; unweighted: number; shipped: Record<string, number>; ece: number; exact: number; meanConfidence: number };
  policies: PolicyRow[];
  fitSeconds: number;
  seconds: number;
}

/**
 * The least label share any calibration of the per-slot rule can reach on a set (decision 0334): each slot's
 * confidence replaced by the accuracy, on the evaluated items themselves, of its cell (answers so far, a word or
 * "no word" chosen, answers for and against the choice, tenth of the raw posterior, tenth of the model's
 * confidence), Laplace-smoothed. A calibration fitted on gold can only be less sharp than these cells, which are
 * fitted on the very items they are scored on.
 * @returns the cells' accuracies of a consensus's slots, in slot order
 */
function oracleCalibration(model: TextModel, items: readonly Item[]): (consensus: TextConsensus) => number[] {
  const cellsOf = (c: TextConsensus) =>
    c.slots.map((slot) => {
      const labels = slot.choices[0]?.labels ?? 0;
      const tenth = (p: number) => Math.min(9, Math.floor(p * 10));
      return `${slot.votes.length} ${slot.word === null ? "none" : "word"} ${labels} ${slot.votes.length - labels} ${tenth(slot.raw)} ${tenth(slot.confidence)}`;
    });
  const cells = new Map<string, { n: number; right: number }>();
  for (const item of items)
    for (let k = 1; k <= item.answers.length; k++) {
      const c = textConsensus(model, item.answers.slice(0, k));
      const right = slotCorrectness(c, item.gold);
      cellsOf(c).forEach((key, i) => {
        const cell = cells.get(key) ?? { n: 0, right: 0 };
        cell.n += 1;
        if (right[i]) cell.right += 1;
        cells.set(key, cell);
      });
    }
  return (c) =>
    cellsOf(c).map((key) => {
      const cell = cells.get(key) ?? { n: 0, right: 0 };
      return (cell.right + 1) / (cell.n + 2);
    });
}

/** Runs one set (module doc). */
export function runFreeTextSet(dir: string, set: string, options: FreeTextOptions, log: (line: string) => void): FreeTextSetResult {
  const started = performance.now();
  const items = loadSet(path.join(dir, set), options.seed);
  const goldIds = pickGold(
    items.map((i) => i.id),
    options.goldShare,
    options.seed,
  );
  const tasks: TextTask[] = items.map((i) => ({ id: i.id, answers: i.answers, gold: goldIds.has(i.id) ? i.gold : undefined }));
  const model = fitTextModel(tasks);
  const fitSeconds = (performance.now() - started) / 1000;
  log(
    `free_text ${set}: ${items.length} items, fit ${fitSeconds.toFixed(1)} s, word map ${model.word.coefficients.map((c) => c.toFixed(2)).join(",")}, text map ${model.text.coefficients.map((c) => c.toFixed(2)).join(",")}`,
  );
  const unweighted: TextModel = { ...model, accuracy: new Map() };
  const weighted: Corpus = { edits: 0, words: 0 };
  const flat: Corpus = { edits: 0, words: 0 };
  const shipped = new Map<string, Corpus>();
  const pairs: { confidence: number; right: boolean }[] = [];
  const allByItem = new Map<string, number>();
  for (const item of items) {
    const c = textConsensus(model, item.answers);
    const e = wordDistance(c.words, item.gold);
    allByItem.set(item.id, e);
    weighted.edits += e;
    weighted.words += item.gold.length;
    flat.edits += wordDistance(textConsensus(unweighted, item.answers).words, item.gold);
    flat.words += item.gold.length;
    for (const [name, words] of Object.entries(item.reference ?? {})) {
      const s = shipped.get(name) ?? { edits: 0, words: 0 };
      s.edits += wordDistance(words, item.gold);
      s.words += item.gold.length;
      shipped.set(name, s);
    }
    if (!goldIds.has(item.id)) pairs.push({ confidence: c.confidence, right: c.text === item.gold.join(" ") });
  }
  log(
    `free_text ${set}: every answer: WER ${wer(weighted).toFixed(2)}% (unweighted ${wer(flat).toFixed(2)}%), ECE ${ece(pairs).toFixed(3)}`,
  );
  const evaluated = items.filter((i) => !goldIds.has(i.id));
  const policies: PolicyRow[] = [];
  /** Replays each evaluated item's answers in arrival order until `settles` (k = answers so far, of n). */
  const simulate = (name: string, settles: (consensus: TextConsensus, prefix: readonly TextAnswer[], n: number) => boolean): void => {
    const corpus: Corpus = { edits: 0, words: 0 };
    const allCorpus: Corpus = { edits: 0, words: 0 };
    let used = 0;
    let available = 0;
    const settled: { confidence: number; right: boolean }[] = [];
    for (const item of evaluated) {
      let k = 0;
      let consensus = textConsensus(model, []);
      for (k = 1; k <= item.answers.length; k++) {
        const prefix = item.answers.slice(0, k);
        consensus = textConsensus(model, prefix);
        if (settles(consensus, prefix, item.answers.length)) break;
      }
      used += Math.min(k, item.answers.length);
      available += item.answers.length;
      corpus.edits += wordDistance(consensus.words, item.gold);
      corpus.words += item.gold.length;
      allCorpus.edits += allByItem.get(item.id) as number;
      allCorpus.words += item.gold.length;
      settled.push({ confidence: consensus.confidence, right: consensus.text === item.gold.join(" ") });
    }
    policies.push({
      policy: name,
      wer: wer(corpus),
      allWer: wer(allCorpus),
      labelShare: used / Math.max(available, 1),
      ece: ece(settled),
      meanConfidence: settled.reduce((a, s) => a + s.confidence, 0) / Math.max(settled.length, 1),
      exact: settled.filter((s) => s.right).length / Math.max(settled.length, 1),
      items: settled.length,
    });
    log(`free_text ${set}: ${name}: WER ${wer(corpus).toFixed(2)}% share ${(used / available).toFixed(3)} ECE ${ece(settled).toFixed(3)}`);
  };
  const decided =
    (policyOf: (n: number) => Parameters<typeof decideText>[0]) => (c: TextConsensus, prefix: readonly TextAnswer[], n: number) =>
      decideText(
        policyOf(n),
        prefix.map((a) => a.words),
        c,
      ).settled;
  for (const t of options.thresholds)
    simulate(
      `threshold ${t}`,
      decided((n) => ({ kind: "threshold", consensusThreshold: Math.min(t, n), maxLabels: n })),
    );
  for (const t of options.targets)
    simulate(
      `confidence T ${t}`,
      decided((n) => ({ kind: "confidence", confidenceTarget: t, minLabels: 1, maxLabels: n })),
    );
  const oracle = oracleCalibration(model, evaluated);
  for (const t of options.targets)
    simulate(`confidence T ${t}, oracle calibration (limit)`, (c, prefix, n) => prefix.length >= n || oracle(c).every((p) => p >= t));
  const labelers = new Set(items.flatMap((i) => i.answers.map((a) => a.labelerId))).size;
  return {
    set,
    items: items.length,
    answers: items.reduce((n, i) => n + i.answers.length, 0),
    labelers,
    goldItems: goldIds.size,
    all: {
      weighted: wer(weighted),
      unweighted: wer(flat),
      shipped: Object.fromEntries([...shipped].map(([k, v]) => [k, wer(v)])),
      ece: ece(pairs),
      exact: pairs.filter((p) => p.right).length / Math.max(pairs.length, 1),
      meanConfidence: pairs.reduce((a, p) => a + p.confidence, 0) / Math.max(pairs.length, 1),
    },
    policies,
    fitSeconds,
    seconds: (performance.now() - started) / 1000,
  };
}

/** Runs every set of `options.sets` that exists under `options.dir` (a missing set is skipped with a log line). */
export function runFreeText(options: FreeTextOptions, log: (line: string) => void): FreeTextSetResult[] {
  const out: FreeTextSetResult[] = [];
  for (const set of options.sets) {
    try {
      readFileSync(path.join(options.dir, set, "answers.jsonl"), { flag: "r" }).subarray(0, 0);
    } catch {
      log(`free_text: ${set} not found under ${options.dir}, skipped`);
      continue;
    }
    out.push(runFreeTextSet(options.dir, set, options, log));
  }
  return out;
}

const f2 = (x: number) => x.toFixed(2);
const f3 = (x: number) => x.toFixed(3);

/** The markdown rows of the free_text section (after its heading and machine line). */
export function renderFreeText(results: readonly FreeTextSetResult[], options: FreeTextOptions): string[] {
  const lines: string[] = [
    `Gold share ${options.goldShare} of each set's items (calibration only; labeler accuracies fitted without gold), seed ${options.seed}. ` +
      "WER = corpus word error rate (total word edits / total gold words, %) after the contract's `words` normalization. " +
      'ECE = expected calibration error (10 bins) of the whole-text confidence against "consensus = gold" (exact match after normalization), on the non-gold items.',
    "",
    "Every answer used (all items):",
    "",
    "| set | items / answers / labelers | weighted vote | same vote unweighted | shipped ROVER | shipped T5 | whole-text ECE | exact match | mean confidence |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of results) {
    lines.push(
      `| ${r.set} | ${r.items} / ${r.answers} / ${r.labelers} | ${f2(r.all.weighted)} | ${f2(r.all.unweighted)} | ${r.all.shipped.rover !== undefined ? f2(r.all.shipped.rover) : "-"} | ${r.all.shipped.t5 !== undefined ? f2(r.all.shipped.t5) : "-"} | ${f3(r.all.ece)} | ${f3(r.all.exact)} | ${f3(r.all.meanConfidence)} |`,
    );
  }
  lines.push(
    "",
    "Stopping, answers in seeded random arrival order, non-gold items (max_labels = the item's answers; min_labels 1):",
    "",
    "| set | policy | WER | WER, every answer (same items) | label share | whole-text ECE | exact match | mean confidence |",
    "|---|---|---|---|---|---|---|---|",
  );
  for (const r of results)
    for (const p of r.policies)
      lines.push(
        `| ${r.set} | ${p.policy} | ${f2(p.wer)} | ${f2(p.allWer)} | ${f3(p.labelShare)} | ${f3(p.ece)} | ${f3(p.exact)} | ${f3(p.meanConfidence)} |`,
      );
  return lines;
}
