/**
 * The decision rule (../shared/DESIGN.md §3, §10), defined once and pure (no SQL, no I/O): given a task's
 * policy, its labels in recording order and a scoring model, `decide` answers whether the task is done,
 * with which label, confidence, posterior and resolution, how many labels it may still take, and how many
 * labelers may hold a claim on it at once. The label transaction of the store calls it for every label it
 * records (the gateway's `labels_needed` is its answer), and the settlement keeps what it decided: one rule
 * wherever it runs (test: packages/store/test/decision.property.test.ts).
 *
 * Threshold policy (SPEC, the default): the task is decided when one option holds `consensus_threshold`
 * labels (`resolution: "consensus"`), or when `max_labels` labels are collected, with the plurality option
 * (`resolution: "max_labels"`; a tie broken by the posterior, then by option order).
 */
import type { Resolution } from "@labelgate/api";

/** One recorded label: who gave it and which option. */
export interface Vote {
  labelerId: string;
  value: string;
}

/** What the rule needs of a task. */
export interface DecisionTask {
  /** the label spec's options, in order (2..50) */
  options: readonly string[];
  consensusThreshold: number;
  maxLabels: number;
}

/** A labeler model: the posterior over the task's options given its votes (sums to 1). */
export interface ScoringModel {
  posterior(options: readonly string[], votes: readonly Vote[]): Record<string, number>;
}

export type Decision =
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
      /** posterior of `label` */
      confidence: number;
      posterior: Record<string, number>;
      resolution: Resolution;
      labelsNeeded: 0;
      claimCap: 0;
    };

/** Counts of each option (every option present, zeros included). */
export function countVotes(options: readonly string[], votes: readonly Vote[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of options) counts[o] = 0;
  for (const v of votes) counts[v.value] = (counts[v.value] ?? 0) + 1;
  return counts;
}

/**
 * Posteriors closer than this are a tie: they are sums of the same log terms in another order, so exact
 * ties on paper differ in the last bits, and rounding must not pick the winner.
 */
const POSTERIOR_TIE = 1e-9;

/** The best of `candidates`: most votes, then highest posterior, then first in option order. */
function pickBest(candidates: readonly string[], counts: Record<string, number>, post: Record<string, number>, options: readonly string[]) {
  const byPosterior = (a: string, b: string) => {
    const diff = (post[b] ?? 0) - (post[a] ?? 0);
    return Math.abs(diff) < POSTERIOR_TIE ? 0 : diff;
  };
  return [...candidates].sort(
    (a, b) => (counts[b] ?? 0) - (counts[a] ?? 0) || byPosterior(a, b) || options.indexOf(a) - options.indexOf(b),
  )[0] as string;
}

/**
 * Decides a task from its votes (in recording order). Votes whose value is not an option are a caller
 * bug. @throws Error when the task has more votes than `maxLabels` allows or fewer than 2 options.
 */
export function decide(task: DecisionTask, votes: readonly Vote[], model: ScoringModel): Decision {
  if (task.options.length < 2) throw new Error("a task needs at least 2 options");
  const n = votes.length;
  if (n > task.maxLabels) throw new Error(`${n} votes exceed max_labels ${task.maxLabels}`);
  const counts = countVotes(task.options, votes);
  const top = Math.max(...task.options.map((o) => counts[o] ?? 0));
  const reached = task.options.filter((o) => (counts[o] ?? 0) >= task.consensusThreshold);
  let resolution: Resolution | undefined;
  let candidates: string[] = [];
  if (reached.length > 0) {
    resolution = "consensus";
    candidates = reached;
  } else if (n >= task.maxLabels) {
    resolution = "max_labels";
    candidates = task.options.filter((o) => counts[o] === top);
  }
  if (resolution === undefined) {
    return {
      done: false,
      counts,
      labelsNeeded: Math.max(1, task.maxLabels - n),
      claimCap: Math.max(1, Math.min(task.maxLabels - n, task.consensusThreshold - top)),
    };
  }
  const posterior = model.posterior(task.options, votes);
  const label = pickBest(candidates, counts, posterior, task.options);
  return { done: true, counts, label, confidence: posterior[label] ?? 0, posterior, resolution, labelsNeeded: 0, claimCap: 0 };
}

// --- the one-coin model -------------------------------------------------------------------------------

/**
 * The one-coin model of Toloka's dynamic overlap ("Dynamic overlap", Toloka documentation,
 * toloka.ai/docs/guide/concepts/dynamic-overlap): each labeler i answers correctly with probability q[i]
 * and otherwise picks one of the Y−1 other options uniformly; the prior over options is uniform. Then
 *   P(z = c | labels) ∝ Π_i ( q[i] if label_i = c else (1 − q[i]) / (Y − 1) ).
 * q[i] is estimated from the labeler's agreement with settled results under a Beta(a, b) prior:
 *   q[i] = (a + agreed[i]) / (a + b + settled[i])
 * (Toloka uses a = b = K, the smoothing constant; the default here is a = 4, b = 1, a prior mean of 0.8).
 */
export interface AccuracyPrior {
  /** pseudo-count of correct answers (a) */
  correct: number;
  /** pseudo-count of wrong answers (b) */
  wrong: number;
}

export const DEFAULT_PRIOR: AccuracyPrior = { correct: 4, wrong: 1 };

/** A labeler's record on settled tasks. */
export interface LabelerRecord {
  /** labels of this labeler on settled tasks */
  settled: number;
  /** of those, labels equal to the settled result */
  agreed: number;
}

/** Accuracy estimate q in (0, 1), clamped to [0.001, 0.999] so no single label is ever decisive. */
export function labelerAccuracy(record: LabelerRecord, prior: AccuracyPrior = DEFAULT_PRIOR): number {
  const q = (prior.correct + record.agreed) / (prior.correct + prior.wrong + record.settled);
  return Math.min(0.999, Math.max(0.001, q));
}

/**
 * Posterior probability of every option under the one-coin model (sums to 1).
 * @param accuracy q[i] of each labeler by id (labelers missing from the map get the prior mean)
 */
export function oneCoinPosterior(
  options: readonly string[],
  votes: readonly Vote[],
  accuracy: ReadonlyMap<string, number>,
  prior: AccuracyPrior = DEFAULT_PRIOR,
): Record<string, number> {
  const y = options.length;
  const fallback = labelerAccuracy({ settled: 0, agreed: 0 }, prior);
  const logScore = options.map((option) =>
    votes.reduce((sum, v) => {
      const q = accuracy.get(v.labelerId) ?? fallback;
      return sum + Math.log(v.value === option ? q : (1 - q) / (y - 1));
    }, 0),
  );
  const max = Math.max(...logScore);
  const weights = logScore.map((s) => Math.exp(s - max));
  const total = weights.reduce((a, b) => a + b, 0);
  const result: Record<string, number> = {};
  options.forEach((option, i) => {
    result[option] = (weights[i] as number) / total;
  });
  return result;
}

/** The one-coin ScoringModel over the labelers' records (labelers without a record get the prior mean). */
export function oneCoinModel(records: ReadonlyMap<string, LabelerRecord>, prior: AccuracyPrior = DEFAULT_PRIOR): ScoringModel {
  const accuracy = new Map([...records].map(([id, r]) => [id, labelerAccuracy(r, prior)]));
  return { posterior: (options, votes) => oneCoinPosterior(options, votes, accuracy, prior) };
}
