/**
 * Consensus of `multi_label_classification` tasks (contract §task-types): each labeler answers the set of options that
 * apply (possibly empty). Binary relevance: every option j is a binary label space of its own ("chosen" or not),
 * with the single-choice engine's Dawid-Skene model (fit.ts, model.ts) in each: a labeler has a 2 x 2 confusion
 * matrix per option (its sensitivity and specificity for that option), shrunk to the option's population of
 * labelers, and each option has its prior and its calibration. Sources: the BinaryRelevance aggregator of
 * Crowd-Kit (Ustalov et al. 2021, "Learning from crowds with Crowd-Kit", arXiv:2109.08584), and SageMaker Ground
 * Truth's multi-label consolidation ("a variant of the Expectation Maximization approach", one binary EM per
 * class). Every labeler who answers a task votes on every option: chosen = 1, not chosen = 0.
 *
 * Result of a task:
 * - `posterior[j]` = calibrated P(option j applies | the task's answers);
 * - `chosen` = the options with posterior > 0.5 (an exact 0.5 is not chosen);
 * - `confidence[j]` = the posterior of the chosen side, max(p, 1 - p);
 * - `taskConfidence` = the product of `confidence[j]` over the options: the probability that the whole set is
 *   right when the options are independent given the answers (the model's assumption). With many options it is
 *   far below each option's confidence.
 * The stopping rule (parts.ts `decideParts`) is per option: every option decided at the target.
 */
import { byLabeler } from "./answers";
import { refit } from "./fit";
import { emptySpace, type QualityModel, scoreTask } from "./model";
import type { Part } from "./parts";
import { LabelTable } from "./table";

/** One labeler's answer to a multi-label task, as option indexes 0..k-1 of the label space's ordered options. */
export interface MultiLabelAnswer {
  labelerId: string;
  chosen: readonly number[];
}

/** A task with its answers, for the fit. */
export interface MultiLabelTask {
  id: string;
  answers: readonly MultiLabelAnswer[];
  /** known truth per option (gold), length k: true / false, or null where unknown (gold on some options only) */
  gold?: readonly (boolean | null)[];
}

/** The model of a multi-label space: one binary Dawid-Skene model per option (option index j = `options[j]`). */
export interface MultiLabelModel {
  k: number;
  options: QualityModel[];
}

/** The consensus of one multi-label task (see the module doc). */
export interface MultiLabelConsensus {
  /** chosen option indexes, ascending */
  chosen: number[];
  /** calibrated P(option applies), length k */
  posterior: number[];
  /** posterior of the chosen side per option, length k */
  confidence: number[];
  /** product of `confidence`: P(the whole set is right) under independence of the options */
  taskConfidence: number;
  /** per option, its binary part: posterior [not chosen, chosen] and counts [not chosen, chosen] (for `decideParts`) */
  parts: Part[];
}

/** Options of `fitMultiLabel`. */
export interface MultiLabelFitOptions {
  /** the previous model (same k): each option's fit is warm-started from it */
  previous?: MultiLabelModel;
  /** EM iteration limit per option (fit.ts) */
  maxIterations?: number;
}

function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 1 || k > 50) throw new RangeError(`a multi-label space has 1..50 options, got ${k}`);
}

/** The model of a space with no labels yet: every option at the prior of `emptySpace(2)`. */
export function emptyMultiLabelModel(k: number): MultiLabelModel {
  checkK(k);
  return { k, options: Array.from({ length: k }, () => ({ space: emptySpace(2), labelers: new Map() })) };
}

/** The chosen options of an answer as a 0/1 vector of length k. @throws RangeError for an index outside 0..k-1 */
function chosenMask(k: number, answer: MultiLabelAnswer): Uint8Array {
  const mask = new Uint8Array(k);
  for (const j of answer.chosen) {
    if (!Number.isInteger(j) || j < 0 || j >= k) throw new RangeError(`option index must be an integer in 0..${k - 1}, got ${j}`);
    mask[j] = 1;
  }
  return mask;
}

/**
 * Fits one binary Dawid-Skene model per option to every answer of the space (gold options clamped to their truth).
 * Deterministic for a given task order.
 * @throws RangeError on an option index out of range, a gold vector of another length, or a `previous` of another k
 */
export function fitMultiLabel(k: number, tasks: readonly MultiLabelTask[], options: MultiLabelFitOptions = {}): MultiLabelModel {
  checkK(k);
  if (options.previous && options.previous.k !== k) throw new RangeError(`previous model has ${options.previous.k} options, expected ${k}`);
  const tables = Array.from({ length: k }, () => new LabelTable(2));
  for (const task of tasks) {
    if (task.gold && task.gold.length !== k) throw new RangeError(`task ${task.id}: gold has ${task.gold.length} entries, expected ${k}`);
    for (const answer of task.answers) {
      const mask = chosenMask(k, answer);
      for (let j = 0; j < k; j++) (tables[j] as LabelTable).add(task.id, answer.labelerId, mask[j] as number);
    }
    task.gold?.forEach((g, j) => {
      if (g !== null && g !== undefined) (tables[j] as LabelTable).setGold(task.id, g ? 1 : 0);
    });
  }
  return {
    k,
    options: tables.map((table, j) => refit(table, options.previous?.options[j], { maxIterations: options.maxIterations }).model),
  };
}

/**
 * The consensus of one task from its answers (one per labeler) and the space's model; labelers the model does not
 * know count at the population mean. An empty list of answers gives every option its prior.
 * The answers are taken in labeler-id order, so their order does not change the result (to the last bit).
 * @throws RangeError on an option index out of range or two answers of one labeler
 */
export function aggregateMultiLabel(model: MultiLabelModel, input: readonly MultiLabelAnswer[]): MultiLabelConsensus {
  const { k } = model;
  const answers = byLabeler(input);
  const masks = answers.map((a) => chosenMask(k, a));
  const posterior: number[] = [];
  const confidence: number[] = [];
  const parts: Part[] = [];
  const chosen: number[] = [];
  let taskConfidence = 1;
  for (let j = 0; j < k; j++) {
    const option = model.options[j] as QualityModel;
    let yes = 0;
    const votes = answers.map((a, i) => {
      const vote = (masks[i] as Uint8Array)[j] as number;
      yes += vote;
      return { labeler: option.labelers.get(a.labelerId), option: vote };
    });
    const p = scoreTask(option.space, votes).posterior[1] as number;
    posterior.push(p);
    const c = Math.max(p, 1 - p);
    confidence.push(c);
    taskConfidence *= c;
    if (p > 0.5) chosen.push(j);
    parts.push({ posterior: [1 - p, p], counts: [answers.length - yes, yes] });
  }
  return { chosen, posterior, confidence, taskConfidence, parts };
}
