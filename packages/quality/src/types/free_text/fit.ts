/**
 * Fitting the free-text labeler model (consensus.ts `TextModel`).
 *
 * Labeler word accuracy, without gold (unsupervised, EM-style): starting from every labeler at the same accuracy,
 * each round computes, for every answer, the consensus of the task's OTHER answers under the current accuracies
 * (leave-one-out, so an answer is never judged against itself; voted in one network of all the task's answers,
 * aligned once in arrival order for every round, consensus.ts `leaveOneOutWords`) and counts the answer's word edits against it
 * (`wordDistance`) and the words of that consensus. A labeler's accuracy is then
 *   p_i = (words_i - edits_i + S * p0) / (words_i + S),   p0 = the population's (sum over every labeler),
 * the Beta posterior mean under a prior of S words at the population's accuracy (shrinkage, as model.ts shrinks a
 * labeler with few labels toward its label space: never more trust than the data show), clamped to
 * [MIN_ACCURACY, MAX_ACCURACY]. Rounds repeat with the new accuracies (`rounds`, default 2). This is the
 * iterative reliability estimate of RASA (Li & Fukumoto 2019, "A dataset of crowdsourced word sequences:
 * collections and answer aggregation for ground truth creation", AnnoNLP; Li 2020, HRRASA) and the one-coin
 * Dawid-Skene EM (Dawid & Skene 1979), with a leave-one-out consensus in place of the posterior. Gold answers are
 * not needed for it, and are not used.
 *
 * Calibration, on gold tasks (a few tasks with a known text, as the service has them): each gold task's answers are
 * taken in their order and, after each prefix (1, 2, ..., n answers: the states in which decisions are taken),
 * the consensus is compared with the gold text. Each slot gives a sample (raw posterior, right?): a word slot is
 * right when the word is matched in a longest common subsequence of consensus and gold; a "no word" slot is
 * right when inserting its best word would not lower the word distance to the gold. The slot map (consensus.ts
 * `slotFeatures`: Platt's map of the raw posterior with the counts of answers for and against the choice) is fitted
 * by maximum likelihood (`fitLogistic`: Newton's method, with Platt's smoothed targets (n+ + 1)/(n+ + 2) and
 * 1/(n- + 2) against overfitting) to the slot samples; then the whole-text map (consensus.ts `TextMap`, a logistic regression on the
 * log-odds of the product of calibrated slot confidences and the numbers of answers equal and not equal to the
 * consensus) to (those inputs, text equal to gold). Each gold task weighs 1 in total (its prefixes share the weight). With no gold task, the maps stay the
 * identity (the raw posterior).
 */
import { diffArrays } from "diff";
import { alignSequences } from "./align";
import {
  DEFAULT_ACCURACY,
  emptyTextModel,
  IDENTITY_TEXT_MAP,
  leaveOneOutWords,
  logit,
  MAX_ACCURACY,
  MIN_ACCURACY,
  type PlattMap,
  sigmoid,
  slotFeatures,
  type TextAnswer,
  type TextConsensus,
  type TextMap,
  type TextModel,
  textConsensus,
  textFeatures,
} from "./consensus";
import { wordDistance } from "./metric";

/** A task for the fit: its answers in arrival order and, for a gold task, its normalized gold words. */
export interface TextTask {
  id: string;
  answers: readonly TextAnswer[];
  gold?: readonly string[];
}

/** Options of `fitTextModel`. */
export interface TextFitOptions {
  /** leave-one-out rounds of the accuracy estimate (>= 0; 0 keeps every labeler at the population default) */
  rounds?: number;
  /** prior strength S in words (> 0) */
  priorWords?: number;
}

/** Default prior strength S: 50 words (a labeler's first few answers move its accuracy only a little). */
export const PRIOR_WORDS = 50;

/**
 * Labeler accuracies by leave-one-out agreement (module doc). Returns the accuracy per labeler and the
 * population's. Cost: one alignment of each task's answers, and rounds x (answers per task) votes of its slots.
 */
export function fitAccuracies(
  tasks: readonly TextTask[],
  options: TextFitOptions = {},
): { accuracy: Map<string, number>; defaultAccuracy: number } {
  const rounds = options.rounds ?? 2;
  const prior = options.priorWords ?? PRIOR_WORDS;
  if (!(prior > 0)) throw new RangeError(`priorWords must be > 0, got ${prior}`);
  let model = emptyTextModel();
  // each task aligned once, in arrival order; every round votes the same network with its accuracies
  const networks = new Map(tasks.map((task) => [task, task.answers.length < 2 ? [] : alignSequences(task.answers.map((a) => a.words))]));
  for (let round = 0; round < rounds; round++) {
    const words = new Map<string, number>();
    const edits = new Map<string, number>();
    let totalWords = 0;
    let totalEdits = 0;
    for (const task of tasks) {
      if (task.answers.length < 2) continue;
      const references = leaveOneOutWords(model, task.answers, networks.get(task));
      task.answers.forEach((answer, i) => {
        const reference = references[i] as string[];
        const n = Math.max(reference.length, 1);
        const e = Math.min(wordDistance(answer.words, reference), n);
        words.set(answer.labelerId, (words.get(answer.labelerId) ?? 0) + n);
        edits.set(answer.labelerId, (edits.get(answer.labelerId) ?? 0) + e);
        totalWords += n;
        totalEdits += e;
      });
    }
    const p0 = totalWords > 0 ? 1 - totalEdits / totalWords : DEFAULT_ACCURACY;
    const accuracy = new Map<string, number>();
    for (const [labeler, n] of words) {
      const p = (n - (edits.get(labeler) ?? 0) + prior * p0) / (n + prior);
      accuracy.set(labeler, Math.min(MAX_ACCURACY, Math.max(MIN_ACCURACY, p)));
    }
    model = { ...model, accuracy, defaultAccuracy: Math.min(MAX_ACCURACY, Math.max(MIN_ACCURACY, p0)) };
  }
  return { accuracy: model.accuracy, defaultAccuracy: model.defaultAccuracy };
}

/** A weighted calibration sample: a raw probability and whether it was right. */
export interface CalibrationSample {
  raw: number;
  right: boolean;
  weight: number;
}

/** A weighted sample of a logistic regression: its inputs (with the constant 1 if wanted) and outcome. */
export interface LogisticSample {
  x: readonly number[];
  right: boolean;
  weight: number;
}

/**
 * Maximum-likelihood logistic regression p = sigmoid(beta . x) on weighted samples, with Platt's smoothed targets
 * (module doc) and a ridge of 1e-6 on beta: Newton's method with step halving (Lin, Lin & Weng 2007, "A note on
 * Platt's probabilistic outputs for support vector machines", Machine Learning 68). Returns `start` when there
 * are no samples of positive weight.
 */
export function fitLogistic(samples: readonly LogisticSample[], start: readonly number[]): number[] {
  const d = start.length;
  let pos = 0;
  let neg = 0;
  for (const s of samples) {
    if (s.right) pos += s.weight;
    else neg += s.weight;
  }
  if (samples.length === 0 || pos + neg <= 0) return [...start];
  const hi = (pos + 1) / (pos + 2);
  const lo = 1 / (neg + 2);
  const ridge = 1e-6;
  const loss = (beta: readonly number[]): number => {
    let l = 0;
    for (const s of samples) {
      let z = 0;
      for (let i = 0; i < d; i++) z += (beta[i] as number) * (s.x[i] as number);
      const t = s.right ? hi : lo;
      l += s.weight * (Math.max(z, 0) - t * z + Math.log1p(Math.exp(-Math.abs(z))));
    }
    for (const b of beta) l += 0.5 * ridge * b * b;
    return l;
  };
  let beta = [...start];
  let current = loss(beta);
  for (let iter = 0; iter < 100; iter++) {
    const g = new Array<number>(d).fill(0);
    const h = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? ridge : 0)));
    for (let i = 0; i < d; i++) g[i] = ridge * (beta[i] as number);
    for (const s of samples) {
      let z = 0;
      for (let i = 0; i < d; i++) z += (beta[i] as number) * (s.x[i] as number);
      const p = sigmoid(z);
      const r = (p - (s.right ? hi : lo)) * s.weight;
      const w = p * (1 - p) * s.weight;
      for (let i = 0; i < d; i++) {
        g[i] = (g[i] as number) + r * (s.x[i] as number);
        const row = h[i] as number[];
        for (let j = 0; j < d; j++) row[j] = (row[j] as number) + w * (s.x[i] as number) * (s.x[j] as number);
      }
    }
    const step = solve(h, g);
    if (!step) break;
    let t = 1;
    let candidate = beta.map((b, i) => b - t * (step[i] as number));
    let next = loss(candidate);
    while (next > current + 1e-12 && t > 1e-8) {
      t /= 2;
      candidate = beta.map((b, i) => b - t * (step[i] as number));
      next = loss(candidate);
    }
    if (next > current + 1e-12) break;
    const gain = current - next;
    beta = candidate;
    current = next;
    if (gain < 1e-10) break;
  }
  return beta.every(Number.isFinite) ? beta : [...start];
}

/** Solves h x = g by Gaussian elimination with partial pivoting; null when h is singular. */
function solve(h: readonly (readonly number[])[], g: readonly number[]): number[] | null {
  const n = g.length;
  const m = h.map((row, i) => [...row, g[i] as number]);
  for (let c = 0; c < n; c++) {
    let pivot = c;
    for (let r = c + 1; r < n; r++)
      if (Math.abs((m[r] as number[])[c] as number) > Math.abs((m[pivot] as number[])[c] as number)) pivot = r;
    if (Math.abs((m[pivot] as number[])[c] as number) < 1e-15) return null;
    [m[c], m[pivot]] = [m[pivot] as number[], m[c] as number[]];
    const top = m[c] as number[];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const row = m[r] as number[];
      const f = (row[c] as number) / (top[c] as number);
      for (let k = c; k <= n; k++) row[k] = (row[k] as number) - f * (top[k] as number);
    }
  }
  return m.map((row, i) => (row[n] as number) / (row[i] as number));
}

/** A weighted calibration sample: a raw probability and whether it was right. */
export interface CalibrationSample {
  raw: number;
  right: boolean;
  weight: number;
}

/** Maximum-likelihood Platt map of (raw probability, right) samples: `fitLogistic` on [logit(raw), 1]. */
export function fitPlatt(samples: readonly CalibrationSample[]): PlattMap {
  const [a, b] = fitLogistic(
    samples.map((s) => ({ x: [logit(s.raw), 1], right: s.right, weight: s.weight })),
    [1, 0],
  );
  return { a: a as number, b: b as number };
}

/** Whether each slot of `consensus` is right against the gold words (module doc). */
export function slotCorrectness(consensus: TextConsensus, gold: readonly string[]): boolean[] {
  const matched = new Set<number>();
  let pos = 0;
  for (const change of diffArrays([...consensus.words], [...gold])) {
    if (change.added) continue;
    if (!change.removed) for (let c = 0; c < change.count; c++) matched.add(pos + c);
    pos += change.count;
  }
  const base = wordDistance(consensus.words, gold);
  const out: boolean[] = [];
  let wordIndex = 0;
  for (const slot of consensus.slots) {
    if (slot.word !== null) {
      out.push(matched.has(wordIndex));
      wordIndex++;
      continue;
    }
    const alternative = slot.choices.find((c) => c.word !== null)?.word;
    if (alternative === undefined || alternative === null) {
      out.push(true);
      continue;
    }
    const inserted = [...consensus.words.slice(0, wordIndex), alternative, ...consensus.words.slice(wordIndex)];
    out.push(wordDistance(inserted, gold) >= base);
  }
  return out;
}

/**
 * Fits the whole model: accuracies without gold (`fitAccuracies`), then the two Platt maps on the tasks with
 * `gold` (module doc). `tasks` without gold only inform the accuracies.
 */
export function fitTextModel(tasks: readonly TextTask[], options: TextFitOptions = {}): TextModel {
  const { accuracy, defaultAccuracy } = fitAccuracies(tasks, options);
  let model: TextModel = { accuracy, defaultAccuracy, word: IDENTITY_TEXT_MAP, text: IDENTITY_TEXT_MAP };
  const goldTasks = tasks.filter((t): t is TextTask & { gold: readonly string[] } => t.gold !== undefined && t.answers.length > 0);
  if (goldTasks.length === 0) return model;
  const states = goldTasks.flatMap((task) =>
    task.answers.map((_, k) => ({ answers: task.answers.slice(0, k + 1), gold: task.gold, weight: 1 / task.answers.length })),
  );
  const wordSamples: LogisticSample[] = [];
  for (const state of states) {
    const consensus = textConsensus(model, state.answers);
    const right = slotCorrectness(consensus, state.gold);
    if (consensus.slots.length === 0) continue;
    const w = state.weight / consensus.slots.length;
    consensus.slots.forEach((slot, i) => {
      const labels = slot.choices[0]?.labels ?? 0;
      wordSamples.push({ x: slotFeatures(slot.raw, labels, slot.votes.length - labels), right: right[i] as boolean, weight: w });
    });
  }
  model = { ...model, word: { coefficients: fitLogistic(wordSamples, IDENTITY_TEXT_MAP.coefficients) as TextMap["coefficients"] } };
  const textSamples: LogisticSample[] = states.map((state) => {
    const consensus = textConsensus(model, state.answers);
    return {
      x: textFeatures(consensus.rawConfidence, consensus.agreeing, state.answers.length - consensus.agreeing),
      right: consensus.text === state.gold.join(" "),
      weight: state.weight,
    };
  });
  const coefficients = fitLogistic(textSamples, IDENTITY_TEXT_MAP.coefficients);
  model = { ...model, text: { coefficients: coefficients as TextMap["coefficients"] } };
  return model;
}
