/**
 * Consensus rules and confidence (DESIGN §3), pure functions.
 *
 * Decision: a task settles when one option holds `consensus_threshold` labels (`resolution: "consensus"`),
 * or when `max_labels` labels are collected, with the plurality label (`resolution: "max_labels"`; a tie is
 * broken by the posterior, then by option order).
 *
 * Confidence: the one-coin model of Toloka's dynamic overlap ("Dynamic overlap", Toloka documentation,
 * toloka.ai/docs/guide/concepts/dynamic-overlap): each labeler i answers correctly with probability q[i]
 * and otherwise picks one of the Y−1 other options uniformly; the prior over options is uniform. Then
 *   P(z = c | labels) ∝ Π_i ( q[i] if label_i = c else (1 − q[i]) / (Y − 1) ).
 * q[i] is estimated from the labeler's agreement with settled results under a Beta(a, b) prior:
 *   q[i] = (a + agreed[i]) / (a + b + settled[i])
 * (Toloka uses a = b = K, the smoothing constant; we default to a = 4, b = 1, a prior mean of 0.8.)
 */

export interface LabelVote {
  labelerId: string;
  value: string;
}

export interface LabelerRecord {
  /** labels of this labeler on settled tasks */
  settled: number;
  /** of those, labels equal to the settled result */
  agreed: number;
}

export interface AccuracyPrior {
  /** pseudo-count of correct answers (a) */
  correct: number;
  /** pseudo-count of wrong answers (b) */
  wrong: number;
}

export const DEFAULT_PRIOR: AccuracyPrior = { correct: 4, wrong: 1 };

/** Accuracy estimate q in (0, 1), clamped to [0.001, 0.999] so no single label is ever decisive. */
export function labelerAccuracy(record: LabelerRecord, prior: AccuracyPrior = DEFAULT_PRIOR): number {
  const q = (prior.correct + record.agreed) / (prior.correct + prior.wrong + record.settled);
  return Math.min(0.999, Math.max(0.001, q));
}

/**
 * Posterior probability of every option under the one-coin model (sums to 1).
 * @param options the task's options (Y = options.length >= 2)
 * @param accuracy q[i] of each labeler by id (labelers missing from the map get the prior mean)
 */
export function posterior(
  options: readonly string[],
  votes: readonly LabelVote[],
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

export interface TaskState {
  options: readonly string[];
  consensusThreshold: number;
  maxLabels: number;
  votes: readonly LabelVote[];
}

export type Decision =
  | { settle: false }
  | { settle: true; label: string; confidence: number; resolution: "consensus" | "max_labels"; counts: Record<string, number> };

/** Counts of each option (every option present, zeros included). */
export function countVotes(options: readonly string[], votes: readonly LabelVote[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of options) counts[o] = 0;
  for (const v of votes) counts[v.value] = (counts[v.value] ?? 0) + 1;
  return counts;
}

/** Decides whether the task settles now, on which label, with which confidence. */
export function decide(task: TaskState, accuracy: ReadonlyMap<string, number>, prior: AccuracyPrior = DEFAULT_PRIOR): Decision {
  const counts = countVotes(task.options, task.votes);
  const post = posterior(task.options, task.votes, accuracy, prior);
  const reached = task.options.filter((o) => (counts[o] ?? 0) >= task.consensusThreshold);
  let label: string | undefined;
  let resolution: "consensus" | "max_labels" = "consensus";
  if (reached.length > 0) {
    label = pickBest(reached, counts, post, task.options);
  } else if (task.votes.length >= task.maxLabels) {
    const top = Math.max(...task.options.map((o) => counts[o] ?? 0));
    label = pickBest(
      task.options.filter((o) => counts[o] === top),
      counts,
      post,
      task.options,
    );
    resolution = "max_labels";
  }
  if (label === undefined) return { settle: false };
  return { settle: true, label, confidence: post[label] ?? 0, resolution, counts };
}

/**
 * Posteriors closer than this are a tie: they are sums of the same log terms in another order, so exact
 * ties on paper differ in the last bits, and rounding must not pick the winner.
 */
const POSTERIOR_TIE = 1e-9;

function pickBest(candidates: string[], counts: Record<string, number>, post: Record<string, number>, options: readonly string[]): string {
  const byPosterior = (a: string, b: string) => {
    const diff = (post[b] ?? 0) - (post[a] ?? 0);
    return Math.abs(diff) < POSTERIOR_TIE ? 0 : diff;
  };
  return [...candidates].sort(
    (a, b) => (counts[b] ?? 0) - (counts[a] ?? 0) || byPosterior(a, b) || options.indexOf(a) - options.indexOf(b),
  )[0] as string;
}
