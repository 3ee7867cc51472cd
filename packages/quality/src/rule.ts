/**
 * The decision rule of a task (DESIGN §3, §10), defined once and pure (no SQL, no I/O): given a task's
 * policy, its labels in recording order and its label space's model, `decide` answers whether the task is
 * done, with which label, calibrated confidence, posterior and resolution, how many labels it may still take,
 * and how many labelers may hold a claim on it at once. The label transaction of the store calls it for every
 * label it records (the label response's `labels_needed` is its answer), and the settlement keeps what it
 * decided: one rule wherever it runs (tests: packages/quality/test/rule.test.ts, and against the store's
 * transactions packages/store/test/decision.property.test.ts). `initialClaimCap` is its answer for a new task.
 *
 * The model is the label space's Dawid-Skene model (model.ts: a confusion matrix per labeler, class priors, a
 * calibration); the policies are decision.ts's functions:
 * - threshold policy (the default, SPEC): decided when one option holds `consensus_threshold` labels
 *   (`consensus`), or at `max_labels` with the plurality option (`max_labels`; ties by the posterior, then
 *   option order);
 * - confidence policy (a task with `confidence_target`): decided when the calibrated posterior of the leading
 *   option reaches the target after at least `min_labels` labels (`confidence`), or at `max_labels` with the
 *   most probable option (`max_labels`);
 * - a gold task is never decided: it takes any number of labelers, each once.
 */
import { confidenceClaimCap, decideConfidence, decideThreshold, optionCounts, type Resolution, thresholdClaimCap } from "./decision";
import { emptySpace, type LabelerParams, type Vote as ModelVote, type SpaceParams, scoreTask } from "./model";

/** One recorded label: who gave it and which option. */
export interface LabelVote {
  labelerId: string;
  value: string;
}

/** What the rule needs of a task. */
export interface DecisionTask {
  /** the label spec's options, in order (2..50) */
  options: readonly string[];
  consensusThreshold: number;
  maxLabels: number;
  /** the confidence policy's target (0.5..0.999); null or absent = the threshold policy */
  confidenceTarget?: number | null;
  /** labels before the target may decide the task (confidence policy; default 1) */
  minLabels?: number | null;
  /** a gold (control) task: never decided */
  gold?: boolean;
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
function modelVotes(task: DecisionTask, votes: readonly LabelVote[], model: ScoringModel): ModelVote[] {
  return votes.map((v) => {
    const option = task.options.indexOf(v.value);
    if (option < 0) throw new Error(`label ${v.value} is not an option of the task`);
    return { labeler: model.labelers.get(v.labelerId), option };
  });
}

/** The calibrated posterior of a task's labels under the model (option → probability). */
export function taskPosterior(task: DecisionTask, votes: readonly LabelVote[], model: ScoringModel): Record<string, number> {
  return posteriorRecord(task.options, scoreTask(model.space, modelVotes(task, votes, model)).posterior);
}

/**
 * Decides a task from its votes (in recording order).
 * @throws Error when the task has more votes than `maxLabels` allows (gold tasks excepted), fewer than 2
 * options, a vote that is not an option, or a model of another number of options
 */
export function decide(task: DecisionTask, votes: readonly LabelVote[], model: ScoringModel): TaskDecision {
  const k = task.options.length;
  if (k < 2) throw new Error("a task needs at least 2 options");
  if (model.space.k !== k) throw new Error(`the model has ${model.space.k} options, the task ${k}`);
  const counts = countVotes(task.options, votes);
  if (task.gold) return { done: false, counts, labelsNeeded: 1, claimCap: GOLD_CLAIM_CAP };
  const n = votes.length;
  if (n > task.maxLabels) throw new Error(`${n} votes exceed max_labels ${task.maxLabels}`);
  const mv = modelVotes(task, votes, model);
  const countVector = optionCounts(
    k,
    mv.map((v) => v.option),
  );
  const posterior = scoreTask(model.space, mv).posterior;
  const confidencePolicy =
    task.confidenceTarget === null || task.confidenceTarget === undefined
      ? undefined
      : { confidenceTarget: task.confidenceTarget, minLabels: task.minLabels ?? 1, maxLabels: task.maxLabels };
  const decision = confidencePolicy
    ? decideConfidence(confidencePolicy, countVector, posterior)
    : decideThreshold({ consensusThreshold: task.consensusThreshold, maxLabels: task.maxLabels }, countVector, posterior);
  if (!decision.settled) {
    const cap = confidencePolicy
      ? confidenceClaimCap(model.space, mv, confidencePolicy)
      : thresholdClaimCap({ consensusThreshold: task.consensusThreshold, maxLabels: task.maxLabels }, countVector);
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
  const key = `${task.gold ? "gold " : ""}${task.options.length} ${task.consensusThreshold} ${task.maxLabels} ${task.confidenceTarget ?? ""} ${task.minLabels ?? ""}`;
  const known = initialCaps.get(key);
  if (known !== undefined) return known;
  const decision = decide(task, [], priorModel(task.options.length));
  if (decision.done) throw new Error("a task without labels is never decided");
  const confidencePolicy = !task.gold && task.confidenceTarget !== null && task.confidenceTarget !== undefined;
  const cap = confidencePolicy ? Math.max(1, Math.min(task.minLabels ?? 1, task.maxLabels)) : decision.claimCap;
  if (initialCaps.size >= INITIAL_CAPS_MAX) initialCaps.clear();
  initialCaps.set(key, cap);
  return cap;
}
