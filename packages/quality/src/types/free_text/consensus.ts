/**
 * Consensus of `free_text` tasks (contract §task-types): a text voted word by word from the answers, each
 * labeler's vote weighted by its estimated word accuracy.
 *
 * 1. Each answer is normalized (normalize.ts) and the answers are aligned into a word transition network (align.ts,
 *    ROVER's multiple alignment), the answers of the most reliable labelers first: the skeleton is the answer of
 *    the labeler the model trusts most (ties: arrival order).
 * 2. Voting in each slot (one-coin model, the symmetric special case of Dawid & Skene 1979): labeler i writes the
 *    true word of a slot (or nothing, when the truth has no word there) with probability p_i, and else one of M
 *    other choices, uniformly. With a flat prior over the choices seen in the slot and a weight RHO for the truth
 *    being a choice no answer has, the posterior of choice c is
 *      exp(sum_{i votes c} w_i) / (sum_{c'} exp(sum_{i votes c'} w_i) + RHO),  w_i = log(p_i M / (1 - p_i)).
 *    The consensus takes each slot's most probable choice (ties: the choice of the more trusted answer), and its
 *    words are the slots whose choice is a word. Unweighted (every p_i equal) this is ROVER's frequency vote.
 * 3. Confidence: the slot posterior of the chosen choice and the numbers of answers with and without it are mapped
 *    by a logistic map (`TextMap`, Platt's map (Platt 1999) with the two counts as further inputs) fitted on gold
 *    tasks (calibration in fit.ts): the calibrated probability that the slot's choice is right. Every slot is
 *    a part of the stopping rule (parts.ts), slots where "no word" won included: the confidence that there is no
 *    word there. The whole text's confidence is a logistic map (`TextMap`) of the log-odds of the product of the
 *    slot confidences and of the numbers of answers equal and not equal to the consensus, fitted on gold tasks too.
 */
import type { Part } from "../../parts";
import { alignSequences, type Slot } from "./align";

/** Number of wrong choices a labeler spreads its errors over (M of the module doc). */
export const WRONG_CHOICES = 4;
/** Prior weight of "the truth is a choice no answer has" against one seen choice (RHO of the module doc). */
export const UNSEEN_WEIGHT = 0.5;
/** Word accuracy used for a labeler the model does not know (before any fit). */
export const DEFAULT_ACCURACY = 0.85;
/** Accuracies are kept in [MIN_ACCURACY, MAX_ACCURACY]. */
export const MIN_ACCURACY = 0.05;
export const MAX_ACCURACY = 0.995;

/** One answer of a task: its labeler and its normalized words. */
export interface TextAnswer {
  labelerId: string;
  words: readonly string[];
}

/** The labeler model of a free-text label space: each labeler's word accuracy p_i (shrunk; free-text-fit.ts). */
export interface TextModel {
  /** labeler id -> word accuracy in (0, 1) */
  accuracy: Map<string, number>;
  /** accuracy of a labeler absent from `accuracy` (the population's) */
  defaultAccuracy: number;
  /** map of a slot's features (`slotFeatures`) to its calibrated confidence */
  word: TextMap;
  /** map of the whole text's features (`textFeatures`) to its calibrated confidence */
  text: TextMap;
}

/** A Platt map (Platt 1999, "Probabilistic outputs for support vector machines"): p = sigmoid(a * logit(raw) + b). */
export interface PlattMap {
  a: number;
  b: number;
}

/** The identity map. */
export const IDENTITY_MAP: PlattMap = { a: 1, b: 0 };

/**
 * The whole-text map: p = sigmoid(coefficients . textFeatures), a logistic regression (Platt's map with two more
 * inputs) on [1, logit(product of slot confidences), log(1 + answers equal to the consensus), log(1 + other answers)].
 * The counts carry what the product cannot: answers that agree as a whole (correlated errors make the slots of
 * one text less independent than the product assumes).
 */
export interface TextMap {
  coefficients: [number, number, number, number];
}

/** The map that returns its raw probability (the product of the slot confidences, a slot's raw posterior). */
export const IDENTITY_TEXT_MAP: TextMap = { coefficients: [0, 1, 0, 0] };

/**
 * The inputs of a slot's map (a `TextMap` too): [1, logit(raw slot posterior), log(1 + answers with the chosen
 * choice), log(1 + answers with another)]. The counts let the map tell one answer from several agreeing ones at
 * the same raw posterior (the raw posterior counts each answer as independent evidence; answers that agree are
 * often right together and wrong together).
 */
export function slotFeatures(raw: number, labels: number, others: number): [number, number, number, number] {
  return [1, logit(raw), Math.log1p(labels), Math.log1p(others)];
}

/** The inputs of the whole-text map (`TextMap`). */
export function textFeatures(rawConfidence: number, agreeing: number, others: number): [number, number, number, number] {
  return [1, logit(rawConfidence), Math.log1p(agreeing), Math.log1p(others)];
}

/** Applies the whole-text map. */
export function applyTextMap(map: TextMap, features: readonly number[]): number {
  let z = 0;
  map.coefficients.forEach((c, i) => {
    z += c * (features[i] as number);
  });
  return sigmoid(z);
}

/** A model with no data: every labeler at DEFAULT_ACCURACY, identity calibration. */
export function emptyTextModel(): TextModel {
  return { accuracy: new Map(), defaultAccuracy: DEFAULT_ACCURACY, word: IDENTITY_TEXT_MAP, text: IDENTITY_TEXT_MAP };
}

const EPS = 1e-6;

/** logit(p) with p clamped to [1e-6, 1 - 1e-6]. */
export function logit(p: number): number {
  const q = Math.min(1 - EPS, Math.max(EPS, p));
  return Math.log(q / (1 - q));
}

/** The logistic function. */
export function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

/** Applies a Platt map to a probability. */
export function applyPlatt(map: PlattMap, raw: number): number {
  return sigmoid(map.a * logit(raw) + map.b);
}

/** The vote weight w_i of a labeler of word accuracy p (module doc, step 2). */
export function voteWeight(p: number): number {
  const q = Math.min(MAX_ACCURACY, Math.max(MIN_ACCURACY, p));
  return Math.log((q * WRONG_CHOICES) / (1 - q));
}

/** One slot of a consensus: its choice (a word or null for none), the raw and calibrated posterior, the votes. */
export interface ConsensusSlot {
  /** the chosen word, or null: the consensus has no word here */
  word: string | null;
  /** raw slot posterior of `word` (module doc, step 2) */
  raw: number;
  /** calibrated probability that `word` is right here */
  confidence: number;
  /** every choice of the slot with its raw posterior, best first (null = no word) */
  choices: { word: string | null; posterior: number; labels: number }[];
  /** each answer's word in this slot, in the order of the task's answers (null = none) */
  votes: (string | null)[];
}

/** The consensus of a free-text task. */
export interface TextConsensus {
  /** the consensus words (normalized) */
  words: string[];
  /** the consensus text: `words` joined by spaces */
  text: string;
  /** every slot of the network, in order */
  slots: ConsensusSlot[];
  /** calibrated confidence per word of `words` (same length) */
  wordConfidences: number[];
  /** calibrated probability that `text` equals the truth after normalization */
  confidence: number;
  /** product of the slot confidences before the text map (the raw whole-text confidence) */
  rawConfidence: number;
  /** answers whose normalized words equal `words` */
  agreeing: number;
}

/** Accuracy of a labeler under the model. */
export function accuracyOf(model: TextModel, labelerId: string): number {
  return model.accuracy.get(labelerId) ?? model.defaultAccuracy;
}

/** The answers' vote weights and their indices, most trusted first (ties: arrival order). */
function trustOrder(model: TextModel, answers: readonly TextAnswer[]): { weights: number[]; order: number[] } {
  const weights = answers.map((a) => voteWeight(accuracyOf(model, a.labelerId)));
  const order = answers.map((_, i) => i).sort((x, y) => (weights[y] as number) - (weights[x] as number) || x - y);
  return { weights, order };
}

/**
 * The consensus of a task's answers (module doc). Answers may be empty (no words); with no answers, or only empty
 * ones, the consensus is the empty text, and its confidence is the text map of a raw confidence of 1 (no slot).
 */
export function textConsensus(model: TextModel, answers: readonly TextAnswer[]): TextConsensus {
  const { weights, order } = trustOrder(model, answers);
  const net = alignSequences(order.map((i) => (answers[i] as TextAnswer).words));
  const slots: ConsensusSlot[] = [];
  let logProduct = 0;
  for (const slot of net) {
    const votes = new Array<string | null>(answers.length);
    for (let position = 0; position < order.length; position++) votes[order[position] as number] = slot.words[position] ?? null;
    const choice = voteSlot(votes, weights, order);
    const labels = choice.choices[0]?.labels ?? 0;
    const confidence = applyTextMap(model.word, slotFeatures(choice.raw, labels, answers.length - labels));
    logProduct += Math.log(Math.max(confidence, EPS));
    slots.push({ word: choice.word, raw: choice.raw, choices: choice.choices, confidence, votes });
  }
  const words: string[] = [];
  const wordConfidences: number[] = [];
  for (const s of slots)
    if (s.word !== null) {
      words.push(s.word);
      wordConfidences.push(s.confidence);
    }
  const rawConfidence = Math.exp(logProduct);
  const text = words.join(" ");
  const agreeing = answers.filter((a) => a.words.join(" ") === text).length;
  const confidence = applyTextMap(model.text, textFeatures(rawConfidence, agreeing, answers.length - agreeing));
  return { words, text, slots, wordConfidences, confidence, rawConfidence, agreeing };
}

/**
 * For each answer, the consensus words of the OTHER answers (the fit's leave-one-out reference, fit.ts), voted in
 * one network of all the answers, as ROVER votes a single network (Fiscus 1997): slot by slot without the left-out
 * answer's vote, ties to the more trusted answer; a slot only the left-out answer fills votes "no word". One
 * alignment of the n answers instead of n alignments of n - 1: the alignment of the others may differ where the
 * left-out answer opened slots, which moves no vote between words. `slots` = `alignSequences` of the answers'
 * words in the order of `answers` (the fit aligns each task once and votes it in every round).
 * @returns one word list per answer, in the order of `answers`
 */
export function leaveOneOutWords(
  model: TextModel,
  answers: readonly TextAnswer[],
  slots: readonly Slot[] = alignSequences(answers.map((a) => a.words)),
): string[][] {
  const { weights, order } = trustOrder(model, answers);
  const others = answers.map((_, left) => order.filter((i) => i !== left));
  const words: string[][] = answers.map(() => []);
  for (const slot of slots)
    answers.forEach((_, left) => {
      const word = voteSlot(slot.words, weights, others[left] as number[]).word;
      if (word !== null) (words[left] as string[]).push(word);
    });
  return words;
}

/**
 * The vote of one slot: choices with their raw posterior (module doc, step 2), best first; ties go to the choice
 * of the answer earliest in `order`. Only the answers in `order` vote. A slot has a handful of choices, so they
 * are kept in an array, not a map.
 */
function voteSlot(
  votes: readonly (string | null)[],
  weights: readonly number[],
  order: readonly number[],
): Omit<ConsensusSlot, "confidence" | "votes"> {
  // each entry sums its labelers' weights in `posterior` and becomes its choice once normalized (no copies:
  // the consensus votes some 330 slots per answer of a long text)
  const entries: { word: string | null; posterior: number; labels: number; rank: number }[] = [];
  for (let rank = 0; rank < order.length; rank++) {
    const i = order[rank] as number;
    const v = votes[i] ?? null;
    let entry: (typeof entries)[number] | undefined;
    for (const e of entries)
      if (e.word === v) {
        entry = e;
        break;
      }
    if (!entry) {
      entry = { word: v, posterior: 0, labels: 0, rank };
      entries.push(entry);
    }
    entry.posterior += weights[i] as number;
    entry.labels += 1;
  }
  let max = 0;
  for (const e of entries) max = Math.max(max, e.posterior);
  let total = UNSEEN_WEIGHT * Math.exp(-max);
  for (const e of entries) total += Math.exp(e.posterior - max);
  entries.sort((x, y) => y.posterior - x.posterior || x.rank - y.rank);
  for (const e of entries) e.posterior = Math.exp(e.posterior - max) / total;
  const choices: ConsensusSlot["choices"] = entries;
  const best = choices[0] as { word: string | null; posterior: number };
  return { word: best.word, raw: best.posterior, choices };
}

/**
 * The parts of the stopping rule (parts.ts): one per slot, a two-way part (its choice right or not) with the
 * calibrated confidence; counts = [labels of the choice, other labels].
 */
export function textParts(consensus: TextConsensus): Part[] {
  return consensus.slots.map((s) => {
    const labels = s.choices[0]?.labels ?? 0;
    const others = s.votes.length - labels;
    return { posterior: [s.confidence, 1 - s.confidence], counts: [labels, others] };
  });
}
