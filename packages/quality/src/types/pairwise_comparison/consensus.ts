/**
 * Per-task consensus of `pairwise_comparison` tasks (contract §task-types; decision 0285): a task asks
 * which of two items wins, and its answer is `{winner: "a" | "b" | "tie"}` ("tie" only when the label spec has
 * `allow_tie`). The consensus is single choice over the options ["a", "b"] or ["a", "b", "tie"], so the
 * single-choice engine applies unchanged: a Dawid-Skene model of the space (fit.ts `refit`, with its hierarchical
 * prior, gold as known truths and its calibration), each labeler's confusion matrix over a / b (/ tie), the
 * calibrated posterior of the task (model.ts `scoreTask`), and the two stopping policies (decision.ts
 * `decideThreshold`, `decideConfidence`). A spammer's rows come out near uniform (its votes move nothing) and an
 * adversary's reversed (its "a" counts as evidence for "b"), which majority vote cannot do.
 *
 * `confidence` = the calibrated posterior of the winner: the probability that the consensus winner is the
 * task's true answer (decision 0285).
 */
import { byLabeler } from "../../answers";
import { type Decision, decideConfidence, decideThreshold, leadingOption, optionCounts } from "../../decision";
import { refit } from "../../fit";
import { emptySpace, type QualityModel, scoreTask } from "../../model";
import type { RulePolicy } from "../../policy";
import { LabelTable } from "../../table";

/** A pairwise answer: which item won. */
export type Winner = "a" | "b" | "tie";

/** The options of a pairwise space, in order: their indexes are the model's option indexes. */
export function pairwiseOptions(allowTie: boolean): readonly Winner[] {
  return allowTie ? ["a", "b", "tie"] : ["a", "b"];
}

/** One labeler's answer to a pairwise task. */
export interface PairwiseAnswer {
  labelerId: string;
  winner: Winner;
}

/** A pairwise task with its answers (for the fit and the ranking). `itemA` / `itemB` name the compared items. */
export interface PairwiseTask {
  id: string;
  itemA: string;
  itemB: string;
  answers: readonly PairwiseAnswer[];
  /** the known winner of a gold task */
  gold?: Winner;
}

/** Options of `fitPairwise`. */
export interface PairwiseFitOptions {
  /** whether "tie" is an answer (the label spec's `allow_tie`, default false) */
  allowTie?: boolean;
  /** the space's previous model (same options), kept when the new fit is not identified (fit.ts `refit`) */
  previous?: QualityModel;
  /** EM iteration limit (fit.ts) */
  maxIterations?: number;
}

/** The consensus of one pairwise task. */
export interface PairwiseConsensus {
  winner: Winner;
  /** calibrated posterior of `winner` */
  confidence: number;
  /** calibrated posterior per option (a, b[, tie]) */
  posterior: Record<Winner, number>;
  /** answers per option (a, b[, tie]) */
  counts: Record<Winner, number>;
}

/**
 * The option index of a winner. @throws RangeError for a winner outside the space's options ("tie" when ties
 * are not allowed, or anything else)
 */
export function winnerIndex(winner: string, allowTie: boolean): number {
  const i = (pairwiseOptions(allowTie) as readonly string[]).indexOf(winner);
  if (i < 0) throw new RangeError(`winner must be one of ${pairwiseOptions(allowTie).join(", ")}, got "${winner}"`);
  return i;
}

/** The model of a pairwise space with no labels yet (the single-choice prior of `emptySpace`). */
export function emptyPairwiseModel(allowTie = false): QualityModel {
  return { space: emptySpace(allowTie ? 3 : 2), labelers: new Map() };
}

function allowTieOf(model: QualityModel): boolean {
  if (model.space.k !== 2 && model.space.k !== 3) throw new RangeError(`a pairwise model has 2 or 3 options, got ${model.space.k}`);
  return model.space.k === 3;
}

/**
 * Fits the Dawid-Skene model of a pairwise space to every answer (gold tasks at their known winner), with
 * fit.ts `refit` (cold fit from majority vote, identification check, calibration). Deterministic for a given
 * task order.
 * @throws RangeError on a winner outside the options, two answers of one labeler in a task, or a `previous` of
 *   another number of options
 */
export function fitPairwise(tasks: readonly PairwiseTask[], options: PairwiseFitOptions = {}): QualityModel {
  const allowTie = options.allowTie ?? false;
  const table = new LabelTable(allowTie ? 3 : 2);
  for (const task of tasks) {
    for (const answer of byLabeler(task.answers)) table.add(task.id, answer.labelerId, winnerIndex(answer.winner, allowTie));
    if (task.gold !== undefined) table.setGold(task.id, winnerIndex(task.gold, allowTie));
  }
  return refit(table, options.previous, { maxIterations: options.maxIterations }).model;
}

function record(allowTie: boolean, values: readonly number[]): Record<Winner, number> {
  const out = { a: values[0] as number, b: values[1] as number } as Record<Winner, number>;
  if (allowTie) out.tie = values[2] as number;
  return out;
}

/**
 * The consensus of one task from its answers (one per labeler, any order) and the space's model; labelers the
 * model does not know count at the population mean. No answers: the class prior's leader.
 * @throws RangeError on a winner outside the model's options or two answers of one labeler
 */
export function aggregatePairwise(model: QualityModel, input: readonly PairwiseAnswer[]): PairwiseConsensus {
  const allowTie = allowTieOf(model);
  const answers = byLabeler(input);
  const votes = answers.map((a) => ({ labeler: model.labelers.get(a.labelerId), option: winnerIndex(a.winner, allowTie) }));
  const counts = optionCounts(
    model.space.k,
    votes.map((v) => v.option),
  );
  const { posterior } = scoreTask(model.space, votes);
  const option = leadingOption(posterior, counts);
  return {
    winner: pairwiseOptions(allowTie)[option] as Winner,
    confidence: posterior[option] as number,
    posterior: record(allowTie, posterior),
    counts: record(allowTie, counts),
  };
}

/** A pairwise decision: decision.ts `Decision`, with the winner of a settled task. */
export type PairwiseDecision = (Decision & { settled: false }) | (Decision & { settled: true; winner: Winner });

/**
 * The decision after a label under a task's policy (threshold: `consensusThreshold` equal answers that lead the
 * posterior; confidence: the winner's calibrated posterior >= `confidenceTarget` after `minLabels`; either: at
 * `maxLabels`), decision.ts's rules on this task's counts and calibrated posterior.
 * @throws RangeError on a bad answer (see `aggregatePairwise`) or a policy outside its bounds
 */
export function decidePairwise(policy: RulePolicy, model: QualityModel, answers: readonly PairwiseAnswer[]): PairwiseDecision {
  const allowTie = allowTieOf(model);
  const consensus = aggregatePairwise(model, answers);
  const options = pairwiseOptions(allowTie);
  const counts = options.map((o) => consensus.counts[o]);
  const posterior = options.map((o) => consensus.posterior[o]);
  const decision = policy.kind === "threshold" ? decideThreshold(policy, counts, posterior) : decideConfidence(policy, counts, posterior);
  if (!decision.settled) return decision;
  return { ...decision, winner: options[decision.option] as Winner };
}
