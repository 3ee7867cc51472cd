/**
 * The decision rule of a task whose consensus has several parts (contract §task-types types: an option of a multi-label
 * task, a candidate box, a token of a text), each a small single-choice question of its own with label counts
 * and a calibrated posterior. The single-choice rules of decision.ts apply to every part:
 *
 * - threshold policy: the task settles when every part with counts is settled by `decideThreshold` (one side
 *   holds `consensusThreshold` labels); at `maxLabels` labels it settles anyway ("max_labels"). Parts without
 *   counts (e.g. "no object missed by every labeler" of a box task) do not take part in this policy.
 * - confidence policy: the task settles when every part's leading posterior reaches `confidenceTarget` after at
 *   least `minLabels` labels ("confidence"), or at `maxLabels` ("max_labels"). This is the issue's rule for
 *   multi-label ("the task stops when every option's posterior is decided at the target").
 *
 * The task's `confidence` is a separate figure (the probability that the whole consensus is right, the product of
 * the parts' confidences under their independence given the model): with 14 options decided at 0.95 each it
 * may be as low as 0.95^14 = 0.49, so the stopping rule is per part, not on the product.
 */
import { POLICY_BOUNDS } from "@labelgate/api";
import { decideThreshold, leadingOption, type Resolution } from "./decision";
import { checkConfidenceRule, type RulePolicy } from "./policy";

/** One part of a consensus: its calibrated posterior over its K choices and, when counted, the labels per choice. */
export interface Part {
  /** calibrated posterior, length K >= 2, sums to 1 */
  posterior: readonly number[];
  /** labels per choice (same length), or null when the part is not decided by counting labels */
  counts: readonly number[] | null;
}

/** The outcome of a multi-part decision. */
export type PartsDecision = { settled: true; resolution: Resolution } | { settled: false; labelsNeeded: number };

/** The posterior of a part's leading choice (ties: more labels, then the lower index; decision.ts `leadingOption`). */
export function partConfidence(part: Part): number {
  return part.posterior[leadingOption(part.posterior, part.counts ?? undefined)] as number;
}

/**
 * Decides a task of several parts after its `labels`-th label (labels = answers of the task, one per labeler).
 * @throws RangeError on a policy outside its bounds (policy.ts)
 */
export function decideParts(policy: RulePolicy, labels: number, parts: readonly Part[]): PartsDecision {
  const { maxLabels } = policy;
  const bound = POLICY_BOUNDS.max_labels;
  // no upper bound: a task's rule may take more votes than a request's max_labels (a pre-label, contract §prelabels)
  if (!Number.isInteger(maxLabels) || maxLabels < bound.min) throw new RangeError(`maxLabels must be at least ${bound.min}`);
  if (policy.kind === "confidence") {
    checkConfidenceRule(policy);
    const { confidenceTarget, minLabels } = policy;
    if (labels >= minLabels && parts.every((p) => partConfidence(p) >= confidenceTarget))
      return { settled: true, resolution: "confidence" };
  } else {
    const counted = parts.filter((p): p is Part & { counts: readonly number[] } => p.counts !== null);
    // a part is settled when one of its choices holds the threshold; maxLabels is the task's, checked below
    const settled = counted.every(
      (p) => decideThreshold({ consensusThreshold: policy.consensusThreshold, maxLabels: bound.max }, p.counts, p.posterior).settled,
    );
    if (labels >= policy.consensusThreshold && settled) return { settled: true, resolution: "consensus" };
  }
  if (labels >= maxLabels) return { settled: true, resolution: "max_labels" };
  return { settled: false, labelsNeeded: maxLabels - labels };
}

/** The probability that every part is right, under independence of the parts given the model: prod of partConfidence. */
export function wholeConfidence(parts: readonly Part[]): number {
  let p = 1;
  for (const part of parts) p *= partConfidence(part);
  return p;
}
