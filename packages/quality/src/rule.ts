/**
 * The decision rule of a task (contract §lifecycle, §quality), defined once and pure (no SQL, no I/O): given a task's
 * policy, its labels in recording order and its label space's model, `decide` answers whether the task is
 * done, with which label, calibrated confidence, posterior and resolution, how many labels it may still take,
 * and how many labelers may hold a claim on it at once. The label transaction of the store calls it for every
 * label it records (the label response's `labels_needed` is its answer), and the settlement keeps what it
 * decided: one rule wherever it runs (tests: packages/quality/test/rule.test.ts, and against the store's
 * transactions packages/store/test/decision.property.test.ts). `initialClaimCap` is its answer for a new task.
 *
 * The model is the label space's Dawid-Skene model (model.ts: a confusion matrix per labeler, class priors, a
 * calibration); the policies are decision.ts's functions:
 * - threshold policy (the default): decided when one option holds `consensus_threshold` labels
 *   (`consensus`), or at `max_labels` with the plurality option (`max_labels`; ties by the posterior, then
 *   option order);
 * - confidence policy (a task with `confidence_target`): decided when the calibrated posterior of the leading
 *   option reaches the target after at least `min_labels` labels (`confidence`), or at `max_labels` with the
 *   most probable option (`max_labels`); with `min_gain`, also when the best outcome of one more label cannot
 *   raise that posterior by `min_gain` (`no_gain`);
 * - a gold task is never decided: it takes any number of labelers, each once.
 */
import {
  confidenceClaimCap,
  type Decision,
  decideConfidence,
  decideThreshold,
  expectedGainOfOneLabel,
  leadingOption,
  optionCounts,
  type Resolution,
  thresholdClaimCap,
} from "./decision";
import { emptySpace, type LabelerParams, type Vote as ModelVote, type SpaceParams, scoreTask } from "./model";
import type { Policy } from "./policy";

/** One recorded label: who gave it and which option. */
export interface LabelVote {
  labelerId: string;
  value: string;
}

/** What the rule needs of a task: its options, its policy (policy.ts) and whether it is a gold task. */
export interface DecisionTask {
  /** the label spec's options, in order (2..50) */
  options: readonly string[];
  policy: Policy;
  /** a gold (control) task: never decided */
  gold?: boolean;
  /**
   * options a review rejected (docs/decisions/0260): the task never settles on them. Their labels still count
   * toward `maxLabels`; the posterior is renormalized over the other options and the quorum counts only theirs.
   */
  excludedOptions?: readonly string[];
}

/** The label space's model: its parameters and the rows of the labelers it knows (others score at the population mean). */
export interface ScoringModel {
  space: SpaceParams;
  labelers: ReadonlyMap<string, LabelerParams>;
}

/**
 * A space's model as stored rows give it: the space row (null before the first fit: the prior of `k` options)
 * and the rows of the labelers concerned (those without parameters score at the population mean).
 */
export function scoringModelOf(
  k: number,
  space: SpaceParams | null,
  labelers: readonly { labeler_id: string; params: LabelerParams | null }[],
): ScoringModel {
  const known = new Map(labelers.flatMap((l): [string, LabelerParams][] => (l.params ? [[l.labeler_id, l.params]] : [])));
  return { space: space ?? priorModel(k).space, labelers: known };
}

/** A space's model before any fit: the prior of `emptySpace`, no labeler known. */
export function priorModel(k: number): ScoringModel {
  return { space: emptySpace(k), labelers: new Map() };
}

/** How many labelers may hold a claim on a gold task at once: any number (each labeler answers it once). */
export const GOLD_CLAIM_CAP = 1_000_000;

export type TaskDecision =
  | {
      done: false;
      /** labels per option (every option present) */
      counts: Record<string, number>;
      /** the most labels the task may still take (at least 1): the label response's `labels_needed` */
      labelsNeeded: number;
      /** the fewest further labels that could decide the task: how many labelers may hold a claim at once */
      claimCap: number;
    }
  | {
      done: true;
      counts: Record<string, number>;
      label: string;
      /** calibrated posterior of `label` */
      confidence: number;
      /** option → calibrated posterior probability (sums to 1) */
      posterior: Record<string, number>;
      resolution: Resolution;
      labelsNeeded: 0;
      claimCap: 0;
    };

/** Counts of each option (every option present, zeros included). */
export function countVotes(options: readonly string[], votes: readonly LabelVote[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of options) counts[o] = 0;
  for (const v of votes) counts[v.value] = (counts[v.value] ?? 0) + 1;
  return counts;
}

/** option → probability of a posterior vector over `options`. */
export function posteriorRecord(options: readonly string[], posterior: readonly number[]): Record<string, number> {
  const record: Record<string, number> = {};
  options.forEach((o, i) => {
    record[o] = posterior[i] as number;
  });
  return record;
}

/** The model's votes of a task's labels (option indexes, each labeler's row or undefined). @throws on a value not an option */
function modelVotes(task: Pick<DecisionTask, "options">, votes: readonly LabelVote[], model: ScoringModel): ModelVote[] {
  return votes.map((v) => {
    const option = task.options.indexOf(v.value);
    if (option < 0) throw new Error(`label ${v.value} is not an option of the task`);
    return { labeler: model.labelers.get(v.labelerId), option };
  });
}

/** The calibrated posterior of a task's labels under the model (option → probability). */
export function taskPosterior(
  task: Pick<DecisionTask, "options">,
  votes: readonly LabelVote[],
  model: ScoringModel,
): Record<string, number> {
  return posteriorRecord(task.options, scoreTask(model.space, modelVotes(task, votes, model)).posterior);
}

/**
 * Decides a task from its votes (in recording order).
 * @throws Error when the task has more votes than its policy's `maxLabels` allows (gold tasks excepted), fewer than 2
 * options, a vote that is not an option, or a model of another number of options
 */
export function decide(task: DecisionTask, votes: readonly LabelVote[], model: ScoringModel): TaskDecision {
  const k = task.options.length;
  if (k < 2) throw new Error("a task needs at least 2 options");
  if (model.space.k !== k) throw new Error(`the model has ${model.space.k} options, the task ${k}`);
  const counts = countVotes(task.options, votes);
  if (task.gold) return { done: false, counts, labelsNeeded: 1, claimCap: GOLD_CLAIM_CAP };
  const { policy } = task;
  const n = votes.length;
  if (n > policy.maxLabels) throw new Error(`${n} votes exceed max_labels ${policy.maxLabels}`);
  const mv = modelVotes(task, votes, model);
  const countVector = optionCounts(
    k,
    mv.map((v) => v.option),
  );
  const excluded = excludedIndexes(task);
  const posterior = withoutOptions(scoreTask(model.space, mv).posterior, excluded);
  // labels of a rejected option stay collected: the decision sees the others, against what remains of max_labels
  const excludedVotes = excluded.reduce((sum, i) => sum + (countVector[i] as number), 0);
  for (const i of excluded) countVector[i] = 0;
  const maxLabels = Math.max(1, policy.maxLabels - excludedVotes);
  const rule: Policy =
    policy.kind === "confidence"
      ? { ...policy, maxLabels, minLabels: Math.min(policy.minLabels, maxLabels) }
      : { ...policy, maxLabels, consensusThreshold: Math.min(policy.consensusThreshold, maxLabels) };
  // the optimistic gain of one more label (min_gain), on the posterior the decision sees (rejected options out)
  const gain = () => expectedGainOfOneLabel(model.space, mv, excluded).optimistic;
  let decision: Decision =
    rule.kind === "confidence" ? decideConfidence(rule, countVector, posterior, gain) : decideThreshold(rule, countVector, posterior);
  if (!decision.settled && excluded.length > 0 && n >= policy.maxLabels) {
    // every label spent, the rejected options' included: the leader among the others settles it
    const leader = leadingOption(posterior, countVector);
    decision = { settled: true, option: leader, confidence: posterior[leader] as number, resolution: "max_labels" };
  }
  if (!decision.settled) {
    const cap =
      rule.kind === "confidence"
        ? confidenceClaimCap(
            model.space,
            mv.filter((v) => !excluded.includes(v.option)),
            rule,
          )
        : thresholdClaimCap(rule, countVector);
    return { done: false, counts, labelsNeeded: Math.max(1, decision.labelsNeeded), claimCap: Math.max(1, cap) };
  }
  const label = task.options[decision.option] as string;
  return {
    done: true,
    counts,
    label,
    confidence: decision.confidence,
    posterior: posteriorRecord(task.options, posterior),
    resolution: decision.resolution,
    labelsNeeded: 0,
    claimCap: 0,
  };
}

/** Indexes of the task's excluded options. @throws Error when an excluded option is not an option, or every option is excluded */
function excludedIndexes(task: DecisionTask): number[] {
  const excluded = (task.excludedOptions ?? []).map((o) => {
    const i = task.options.indexOf(o);
    if (i < 0) throw new Error(`excluded option ${o} is not an option of the task`);
    return i;
  });
  if (new Set(excluded).size >= task.options.length) throw new Error("every option of the task is excluded");
  return excluded;
}

/**
 * The posterior with the `excluded` options at 0, renormalized over the others (uniform over them when the
 * model gives them no mass). Unchanged without exclusions.
 */
export function withoutOptions(posterior: readonly number[], excluded: readonly number[]): number[] {
  if (excluded.length === 0) return [...posterior];
  const kept = posterior.map((p, i) => (excluded.includes(i) ? 0 : p));
  const total = kept.reduce((a, b) => a + b, 0);
  const free = kept.length - new Set(excluded).size;
  return total > 0 ? kept.map((p) => p / total) : kept.map((_, i) => (excluded.includes(i) ? 0 : 1 / free));
}

/** initialClaimCap's answers by option count and policy (a pure function: the entries never go stale). */
const initialCaps = new Map<string, number>();
const INITIAL_CAPS_MAX = 4096;

/**
 * How many labelers may claim a new task at once.
 * - Threshold policy: the decision rule's claim cap for a task without labels under the prior model
 *   (`consensusThreshold`, at most `maxLabels`).
 * - Confidence policy: max(1, min(minLabels, maxLabels)), the fewest labels that could settle it, as for the
 *   reserved types (task-kinds.ts). The rule's cap for a task without labels would count labels of the prior's
 *   typical labeler (accuracy 2/3: 5 of them for T = 0.95 on 2 options), a prior built to shrink sparse
 *   labelers, not a forecast of the workforce: a fitted space's labelers settle most tasks in far fewer, and the
 *   claims beyond were answered and refused with 409 "task no longer accepts labels" (bench:types, single
 *   choice under the confidence policy: 605 to 710 refused answers per 5 s phase against about 1,300 recorded;
 *   decision "A new task under the confidence policy admits min_labels claims"). From its first label on, the
 *   task's cap is the rule's with the space's fitted model.
 * Without labels the rule sees only the option count and the policy, so the answer is remembered by those (a
 * batch of 1,000 alike tasks asks the rule once, not 1,000 times).
 * @throws Error when the rule decides a task without labels (a broken invariant)
 */
export function initialClaimCap(task: DecisionTask): number {
  const { policy } = task;
  const rule =
    policy.kind === "confidence"
      ? `confidence ${policy.maxLabels} ${policy.confidenceTarget} ${policy.minLabels} ${policy.minGain ?? "-"}`
      : `threshold ${policy.maxLabels} ${policy.consensusThreshold}`;
  const key = `${task.gold ? "gold " : ""}${task.options.length} ${rule}`;
  const known = initialCaps.get(key);
  if (known !== undefined) return known;
  const decision = decide(task, [], priorModel(task.options.length));
  if (decision.done) throw new Error("a task without labels is never decided");
  const cap = !task.gold && policy.kind === "confidence" ? Math.max(1, Math.min(policy.minLabels, policy.maxLabels)) : decision.claimCap;
  if (initialCaps.size >= INITIAL_CAPS_MAX) initialCaps.clear();
  initialCaps.set(key, cap);
  return cap;
}
