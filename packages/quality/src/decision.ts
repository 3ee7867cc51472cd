/**
 * Decision rules of a task when a label is recorded (contract §lifecycle, §quality), pure functions over option counts and
 * the calibrated posterior (`scoreTask`). Options are indexes 0..K-1 of the label space's ordered options.
 *
 * - Threshold policy (the default, contract §quality as amended by issue 27): settles when one option holds
 *   `consensusThreshold` labels AND leads the calibrated posterior (resolution "consensus"); while the option that
 *   reached the threshold does not lead, the task keeps collecting labels, and at `maxLabels` it settles with the
 *   leading option (resolution "max_labels"). Agreeing votes of labelers the model knows nothing about lead
 *   whenever the space's population is better than chance, so 3 agreeing new labelers settle a task as the contract says.
 * - Confidence policy (contract §quality): settles as soon as the posterior of the leading option reaches
 *   `confidenceTarget` after at least `minLabels` labels (resolution "confidence"); at `maxLabels` with the most
 *   probable option (resolution "max_labels"). A label that does both resolves as "confidence". With `minGain`,
 *   an open task with at least `minLabels` labels also settles with its leader when the best outcome of one more
 *   label of a typical labeler cannot raise the calibrated posterior of the leader by `minGain` (resolution
 *   "no_gain": the optimistic knowledge gradient of Chen, Lin & Zhou 2015, `expectedGainOfOneLabel`).
 * In every case the chosen option is the posterior's leader (`leadingOption`: highest posterior, ties by more
 * labels, then the lower index) and `confidence` = its calibrated posterior: never an option with a lower
 * posterior than another.
 */
import type { Resolution } from "@labelgate/api";
import { calibratedPosterior, type SpaceParams, taskLogHard, taskLogits, type Vote } from "./model";
import { type ConfidencePolicy, checkConfidenceRule, checkThresholdRule, type ThresholdPolicy } from "./policy";

/** How a task was decided: the wire enum of @labelgate/api (`RESOLUTIONS`), defined there once. */
export type { Resolution };

/** The task settles with `option`. */
export interface SettledDecision {
  settled: true;
  option: number;
  /** calibrated posterior of `option` */
  confidence: number;
  resolution: Resolution;
}

/** The task stays open; `labelsNeeded` = the most labels it may still take (>= 1), the label response's labels_needed. */
export interface OpenDecision {
  settled: false;
  labelsNeeded: number;
}

export type Decision = SettledDecision | OpenDecision;

/** What the threshold rule reads of a policy (policy.ts `ThresholdPolicy`). */
export type ThresholdRule = Pick<ThresholdPolicy, "consensusThreshold" | "maxLabels">;
/** What the confidence rule reads of a policy (policy.ts `ConfidencePolicy`). */
export type ConfidenceRule = Pick<ConfidencePolicy, "confidenceTarget" | "minLabels" | "maxLabels"> &
  Pick<Partial<ConfidencePolicy>, "minGain">;

/**
 * Posteriors closer than this are a tie: sums of the same log terms in another order differ in the last bits,
 * and rounding must not pick the winner.
 */
export const POSTERIOR_TIE = 1e-9;

/** Number of labels of each option (length K). @throws RangeError for an option outside 0..k-1 */
export function optionCounts(k: number, options: Iterable<number>): number[] {
  const counts = new Array<number>(k).fill(0);
  for (const o of options) {
    if (!Number.isInteger(o) || o < 0 || o >= k) throw new RangeError(`option index must be an integer in 0..${k - 1}, got ${o}`);
    counts[o] = (counts[o] as number) + 1;
  }
  return counts;
}

/** Most probable option: highest posterior (within POSTERIOR_TIE), then most labels, then lowest index. */
export function leadingOption(posterior: readonly number[], counts?: readonly number[]): number {
  let best = 0;
  for (let c = 1; c < posterior.length; c++) {
    const dp = (posterior[c] as number) - (posterior[best] as number);
    if (dp > POSTERIOR_TIE) best = c;
    else if (Math.abs(dp) <= POSTERIOR_TIE && counts && (counts[c] as number) > (counts[best] as number)) best = c;
  }
  return best;
}

function checkLengths(counts: readonly number[], posterior: readonly number[]): void {
  if (counts.length !== posterior.length || counts.length < 2) {
    throw new RangeError(`counts (${counts.length}) and posterior (${posterior.length}) must both have K >= 2 entries`);
  }
}

/**
 * Threshold policy decision after a label. `counts` = labels per option (all labels of the task, the new one
 * included); `posterior` = the calibrated posterior (same length). Settles with the posterior's leader once it
 * holds `consensusThreshold` labels ("consensus"), or at `maxLabels` labels whatever its count ("max_labels").
 * @throws RangeError on inconsistent lengths or a policy outside its bounds
 */
export function decideThreshold(policy: ThresholdRule, counts: readonly number[], posterior: readonly number[]): Decision {
  checkLengths(counts, posterior);
  checkThresholdRule(policy);
  const n = counts.reduce((a, b) => a + b, 0);
  const option = leadingOption(posterior, counts);
  const confidence = posterior[option] as number;
  if ((counts[option] as number) >= policy.consensusThreshold) return { settled: true, option, confidence, resolution: "consensus" };
  if (n >= policy.maxLabels) return { settled: true, option, confidence, resolution: "max_labels" };
  return { settled: false, labelsNeeded: policy.maxLabels - n };
}

/**
 * Confidence policy decision after a label. `counts` = labels per option (the new one included); `posterior` =
 * the calibrated posterior. `gain` answers the optimistic gain of one more label (`expectedGainOfOneLabel`'s
 * `optimistic`); it is called only when the policy has `minGain`, the task is open with at least `minLabels`
 * labels and below `maxLabels`. Order: the target ("confidence"), then `maxLabels` ("max_labels"), then the gain
 * ("no_gain").
 * @throws RangeError on inconsistent lengths or a policy outside its bounds
 */
export function decideConfidence(
  policy: ConfidenceRule,
  counts: readonly number[],
  posterior: readonly number[],
  gain?: () => number,
): Decision {
  checkLengths(counts, posterior);
  checkConfidenceRule(policy);
  const n = counts.reduce((a, b) => a + b, 0);
  const option = leadingOption(posterior, counts);
  const confidence = posterior[option] as number;
  if (n >= policy.minLabels && confidence >= policy.confidenceTarget)
    return { settled: true, option, confidence, resolution: "confidence" };
  if (n >= policy.maxLabels) return { settled: true, option, confidence, resolution: "max_labels" };
  const minGain = policy.minGain ?? null;
  if (minGain !== null && gain !== undefined && n >= policy.minLabels && gain() < minGain)
    return { settled: true, option, confidence, resolution: "no_gain" };
  return { settled: false, labelsNeeded: policy.maxLabels - n };
}

/**
 * Claim cap of an open task under the threshold policy: the fewest further labels that could settle it,
 * min(maxLabels - n, max(1, consensusThreshold - top count)) (an option at the threshold that does not lead the
 * posterior needs at least one more label); 0 when the task needs no more labels (n >= maxLabels).
 */
export function thresholdClaimCap(policy: ThresholdRule, counts: readonly number[]): number {
  const n = counts.reduce((a, b) => a + b, 0);
  const top = Math.max(...counts);
  const remaining = policy.maxLabels - n;
  if (remaining <= 0) return 0;
  return Math.min(remaining, Math.max(1, policy.consensusThreshold - top));
}

/**
 * Claim cap of an open task under the confidence policy: the fewest further labels that could settle it,
 * estimated as the fewest labels of a typical labeler (the population mean of the space) all naming one option
 * after which that option's calibrated posterior reaches the target; at least max(1, minLabels - n), at most
 * maxLabels - n (0 when the task needs no more labels). Cost O(K^2 * (maxLabels - n)).
 */
export function confidenceClaimCap(space: SpaceParams, votes: readonly Vote[], policy: ConfidenceRule): number {
  checkConfidenceRule(policy);
  const n = votes.length;
  const remaining = policy.maxLabels - n;
  if (remaining <= 0) return 0;
  const floor = Math.max(1, policy.minLabels - n);
  if (floor >= remaining) return remaining;
  const k = space.k;
  const base = taskLogits(space, votes);
  const baseHard = taskLogHard(space, votes);
  // log theta of the population-mean labeler: logMean[z][o] = log(alpha[z][o] / alpha0[z]); its marginal m(o)
  const logMean = space.population.map((row) => {
    const total = row.reduce((a, b) => a + b, 0);
    return row.map((a) => Math.log(a / total));
  });
  let best = remaining;
  for (let o = 0; o < k; o++) {
    const logits = base.slice();
    let logHard = baseHard;
    let marginal = 0;
    for (let z = 0; z < k; z++) marginal += (space.classPrior[z] as number) * Math.exp((logMean[z] as number[])[o] as number);
    for (let m = 1; m < best; m++) {
      for (let z = 0; z < k; z++) logits[z] = (logits[z] as number) + ((logMean[z] as number[])[o] as number);
      logHard += Math.log(marginal);
      if (m >= floor && (calibratedPosterior(space, logits, logHard)[o] as number) >= policy.confidenceTarget) {
        best = m;
        break;
      }
    }
  }
  return best;
}

/**
 * The gain in the probability of a right consensus from one more label of a typical labeler (the space's
 * population mean): the knowledge gradient of Chen, Lin & Zhou 2015 (JMLR 16, "Statistical decision making for
 * optimal budget allocation in crowd labeling") for one step.
 * - `expected`: sum_l P(l) max_k posterior'(k | l) - max_k posterior(k), P(l) = sum_z posterior(z) theta[z][l];
 *   0 whenever one label cannot change the leader (the posterior is a martingale).
 * - `optimistic`: max_l max_k posterior'(k | l) - max_k posterior(k), the best outcome (their optimistic KG).
 * posterior' is the calibrated posterior after the label. Both in [0, 1]. `excluded`: options a review rejected
 * (rule.ts), at 0 in every posterior and the rest renormalized, as the decision sees them. The optimistic gain is
 * the confidence policy's `minGain` stop (`decideConfidence`, resolution "no_gain"); the simulator's
 * `--stop-rule` measures both (docs/notes/quality.md section 0). Cost O(K^2) calibrated posteriors.
 */
export function expectedGainOfOneLabel(
  space: SpaceParams,
  votes: readonly Vote[],
  excluded: readonly number[] = [],
): { expected: number; optimistic: number } {
  const k = space.k;
  const base = taskLogits(space, votes);
  const baseHard = taskLogHard(space, votes);
  const renormalized = (p: number[]): number[] => {
    if (excluded.length === 0) return p;
    const kept = p.map((v, i) => (excluded.includes(i) ? 0 : v));
    const total = kept.reduce((a, b) => a + b, 0);
    return total > 0 ? kept.map((v) => v / total) : kept;
  };
  const now = renormalized(calibratedPosterior(space, base, baseHard));
  const theta = space.population.map((row) => {
    const total = row.reduce((a, b) => a + b, 0);
    return row.map((a) => a / total);
  });
  let expected = 0;
  let best = 0;
  for (let l = 0; l < k; l++) {
    let pl = 0;
    let marginal = 0;
    for (let z = 0; z < k; z++) {
      pl += (now[z] as number) * ((theta[z] as number[])[l] as number);
      marginal += (space.classPrior[z] as number) * ((theta[z] as number[])[l] as number);
    }
    const logits = base.map((v, z) => v + Math.log((theta[z] as number[])[l] as number));
    const after = renormalized(calibratedPosterior(space, logits, baseHard + Math.log(marginal)));
    expected += pl * Math.max(...after);
    best = Math.max(best, Math.max(...after));
  }
  const top = Math.max(...now);
  return { expected: Math.max(0, expected - top), optimistic: Math.max(0, best - top) };
}
