/**
 * A task's consensus policy, defined once (docs/contract.md "Policies", decision 0240): the one
 * union the rule decides with, how it is resolved from the places that set it, its defaults and the checks the
 * rules make of it. The bounds of each field are the wire's (@labelgate/api `POLICY_BOUNDS`), written once there.
 *
 * - `threshold` (the default): settle when one option holds `consensusThreshold` labels and leads the
 *   posterior, else at `maxLabels`.
 * - `confidence` (a `confidence_target` is set): settle when the leading option's calibrated posterior reaches
 *   `confidenceTarget` after at least `minLabels` labels, else at `maxLabels`; with `minGain`, also when the best
 *   outcome of one more label cannot raise that posterior by `minGain` (resolution `no_gain`).
 *   `consensusThreshold` only sizes the quota a task reserves.
 *
 * A policy field is taken from the most specific layer that sets it (the task body, then the batch's top level,
 * then the manifest job body, then the customer's task defaults), else its default. Adding a field: a member
 * of the variant it belongs to, its line in `PolicyLayer` and in `resolvePolicy`; its stored column is read by
 * the store's `policyOf` (packages/store/src/policy.ts).
 */
import { POLICY_BOUNDS } from "@labelgate/api";

/** The threshold policy. */
export interface ThresholdPolicy {
  kind: "threshold";
  /** labels one option needs (1..25) */
  consensusThreshold: number;
  /** labels after which the task settles anyway (consensusThreshold..50) */
  maxLabels: number;
}

/** The confidence policy. */
export interface ConfidencePolicy {
  kind: "confidence";
  /** the quota a task reserves (1..25); no part in the decision */
  consensusThreshold: number;
  /** labels after which the task settles anyway (minLabels..50) */
  maxLabels: number;
  /** target T of the leading option's calibrated posterior (0.5..0.999) */
  confidenceTarget: number;
  /** labels before the target may settle the task (>= 1) */
  minLabels: number;
  /**
   * settle (resolution `no_gain`) when the best outcome of one more label cannot raise the calibrated probability
   * of a right consensus by this much (0.001..0.5); absent or null = off
   */
  minGain?: number | null;
}

/** A task's effective policy: one of the two rules. */
export type Policy = ThresholdPolicy | ConfidencePolicy;

/** What a rule reads of a policy (a `Policy` is one; tests and simulations may give only these fields). */
export type RulePolicy =
  | Pick<ThresholdPolicy, "kind" | "consensusThreshold" | "maxLabels">
  | (Pick<ConfidencePolicy, "kind" | "confidenceTarget" | "minLabels" | "maxLabels"> & Pick<Partial<ConfidencePolicy>, "minGain">);

/**
 * The policy fields one layer may set, as the wire and the settings name them (absent = not set here;
 * `confidence_target: null` = the threshold policy, overriding a less specific layer's target).
 */
export interface PolicyLayer {
  consensus_threshold?: number | null;
  max_labels?: number | null;
  confidence_target?: number | null;
  min_labels?: number | null;
  min_gain?: number | null;
}

/** The policy fields a layer may set, in the order the settings list them. */
export const POLICY_FIELDS = [
  "consensus_threshold",
  "confidence_target",
  "min_labels",
  "min_gain",
  "max_labels",
] as const satisfies readonly (keyof PolicyLayer)[];

/** A field of a layer that makes the policy inconsistent: its path (with the caller's prefix) and why. */
export interface PolicyIssue {
  path: string;
  message: string;
}

/** The system's default quorum (docs/contract.md: "default 3"). */
export const DEFAULT_CONSENSUS_THRESHOLD = 3;
/** Labels before the confidence target may decide a task, when nothing sets it. */
export const DEFAULT_MIN_LABELS = 1;

/** The default `max_labels` of a quorum: 2t+1, at most the bound (50). */
export function defaultMaxLabels(threshold: number): number {
  return Math.min(2 * threshold + 1, POLICY_BOUNDS.max_labels.max);
}

/** The policy of a task nothing sets a field of: threshold 3, at most 7 labels. */
export const DEFAULT_POLICY: ThresholdPolicy = {
  kind: "threshold",
  consensusThreshold: DEFAULT_CONSENSUS_THRESHOLD,
  maxLabels: defaultMaxLabels(DEFAULT_CONSENSUS_THRESHOLD),
};

/** The first layer's value of `field` that is set; with `nullable`, null counts as set. */
function pick<F extends keyof PolicyLayer>(layers: readonly (PolicyLayer | undefined)[], field: F, nullable: boolean): PolicyLayer[F] {
  for (const layer of layers) {
    const value = layer?.[field];
    if (value !== undefined && (nullable || value !== null)) return value;
  }
  return undefined;
}

/**
 * The effective policy of a task from its layers, most specific first, or why there is none: `max_labels`
 * below `consensus_threshold` (threshold policy) or below `min_labels` (confidence policy). Never throws; the
 * API answers the issues as 400 details, the settings store as its `invalid` refusal.
 * @param prefix path prefix of the issues (e.g. `tasks.3.`, `task_defaults.`)
 */
export function resolvePolicy(layers: readonly (PolicyLayer | undefined)[], prefix = ""): { policy: Policy } | { issues: PolicyIssue[] } {
  const consensusThreshold = pick(layers, "consensus_threshold", false) ?? DEFAULT_CONSENSUS_THRESHOLD;
  const confidenceTarget = pick(layers, "confidence_target", true) ?? null;
  const maxLabels = pick(layers, "max_labels", false) ?? defaultMaxLabels(consensusThreshold);
  if (confidenceTarget === null) {
    if (maxLabels < consensusThreshold)
      return { issues: [{ path: `${prefix}max_labels`, message: "must be at least consensus_threshold" }] };
    return { policy: { kind: "threshold", consensusThreshold, maxLabels } };
  }
  const minLabels = pick(layers, "min_labels", false) ?? DEFAULT_MIN_LABELS;
  if (maxLabels < minLabels) return { issues: [{ path: `${prefix}max_labels`, message: "must be at least min_labels" }] };
  const minGain = pick(layers, "min_gain", true) ?? null;
  return { policy: { kind: "confidence", consensusThreshold, maxLabels, confidenceTarget, minLabels, minGain } };
}

/** The quota a task reserves at submission: `consensusThreshold` labels, never more than it may take. */
export function reservedLabels(policy: Policy): number {
  return Math.min(policy.consensusThreshold, policy.maxLabels);
}

/** The threshold rule's fields within their bounds. @throws RangeError */
export function checkThresholdRule(policy: Pick<ThresholdPolicy, "consensusThreshold" | "maxLabels">): void {
  const { consensusThreshold, maxLabels } = policy;
  if (!Number.isInteger(consensusThreshold) || consensusThreshold < 1) throw new RangeError("consensusThreshold must be >= 1");
  if (!Number.isInteger(maxLabels) || maxLabels < consensusThreshold) throw new RangeError("maxLabels must be >= consensusThreshold");
}

/** The confidence rule's fields within their bounds (POLICY_BOUNDS). @throws RangeError */
export function checkConfidenceRule(
  policy: Pick<ConfidencePolicy, "confidenceTarget" | "minLabels" | "maxLabels"> & Pick<Partial<ConfidencePolicy>, "minGain">,
): void {
  const { confidenceTarget, minLabels, maxLabels, minGain } = policy;
  const gain = POLICY_BOUNDS.min_gain;
  if (minGain !== undefined && minGain !== null && !(minGain >= gain.min && minGain <= gain.max))
    throw new RangeError(`minGain must be in [${gain.min}, ${gain.max}]`);
  const target = POLICY_BOUNDS.confidence_target;
  if (!(confidenceTarget >= target.min && confidenceTarget <= target.max))
    throw new RangeError(`confidenceTarget must be in [${target.min}, ${target.max}]`);
  if (!Number.isInteger(minLabels) || minLabels < 1) throw new RangeError("minLabels must be >= 1");
  // no upper bound here: the request schemas bound max_labels, and a task's rule may take more votes than that
  // (a reopened task's further labels, a pre-label: contract §prelabels)
  if (!Number.isInteger(maxLabels) || maxLabels < minLabels) throw new RangeError("maxLabels must be >= minLabels");
}

/** The labels a task needs before its policy may decide it: the quorum, or `minLabels`. */
export function labelsToDecide(policy: Policy): number {
  return policy.kind === "threshold" ? policy.consensusThreshold : policy.minLabels;
}
