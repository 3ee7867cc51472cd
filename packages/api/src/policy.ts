/**
 * A task's consensus policy and where it comes from (docs/contract.md, DESIGN §10 "Where the policy is set"):
 * each field is taken from the most specific layer that sets it (the task body, then the batch's top level,
 * then the manifest job body, then the customer's task defaults), else the system default. The result is
 * what a task stores and what its GET shows: the effective policy, wherever it came from.
 *
 * - `consensus_threshold` (default 3): the threshold policy's quorum; under the confidence policy it only
 *   sizes the quota reservation.
 * - `confidence_target` (0.5..0.999; default none): set = the confidence policy. `null` in a layer is an
 *   explicit "threshold policy", which overrides a less specific layer's target.
 * - `min_labels` (default 1 under the confidence policy; null under the threshold policy, where it has no
 *   meaning).
 * - `max_labels` (default 2 × consensus_threshold + 1, at most 50).
 */
import { ApiError, type ErrorDetail } from "./errors";

/** The policy fields a layer may set (absent = not set here; `confidence_target: null` = threshold policy). */
export interface PolicyFields {
  consensus_threshold?: number | null;
  max_labels?: number | null;
  confidence_target?: number | null;
  min_labels?: number | null;
}

/** A task's effective policy. */
export interface TaskPolicy {
  consensus_threshold: number;
  max_labels: number;
  /** null: the threshold policy */
  confidence_target: number | null;
  /** null under the threshold policy */
  min_labels: number | null;
}

/** The system's default quorum (docs/contract.md, SPEC §4: "default 3"). */
export const DEFAULT_CONSENSUS_THRESHOLD = 3;
/** Labels before the confidence target may decide a task, when nothing sets it (docs/contract.md, DESIGN §10). */
export const DEFAULT_MIN_LABELS = 1;
/** Bounds of `confidence_target` (docs/contract.md, DESIGN §10). */
export const CONFIDENCE_TARGET_MIN = 0.5;
export const CONFIDENCE_TARGET_MAX = 0.999;

/** default `max_labels` for a threshold: 2t+1, capped at 50 (docs/contract.md, DESIGN §2) */
export function defaultMaxLabels(threshold: number): number {
  return Math.min(2 * threshold + 1, 50);
}

/** The first layer's value of `field` that is set; `nullable` fields treat null as set. */
function pick<F extends keyof PolicyFields>(layers: readonly (PolicyFields | undefined)[], field: F, nullable: boolean): PolicyFields[F] {
  for (const layer of layers) {
    const value = layer?.[field];
    if (value !== undefined && (nullable || value !== null)) return value;
  }
  return undefined;
}

/**
 * The effective policy of a task from its layers, most specific first.
 * @param prefix path prefix of the error details (e.g. `tasks.3.`)
 * @throws ApiError validation when the effective policy is inconsistent: `max_labels` below
 *   `consensus_threshold` (threshold policy) or below `min_labels` (confidence policy)
 */
export function resolvePolicy(layers: readonly (PolicyFields | undefined)[], prefix = ""): TaskPolicy {
  const threshold = pick(layers, "consensus_threshold", false) ?? DEFAULT_CONSENSUS_THRESHOLD;
  const target = pick(layers, "confidence_target", true) ?? null;
  const maxLabels = pick(layers, "max_labels", false) ?? defaultMaxLabels(threshold);
  const minLabels = target === null ? null : (pick(layers, "min_labels", false) ?? DEFAULT_MIN_LABELS);
  const details: ErrorDetail[] = [];
  if (target === null && maxLabels < threshold) {
    details.push({ path: `${prefix}max_labels`, message: "must be at least consensus_threshold" });
  }
  if (minLabels !== null && maxLabels < minLabels) {
    details.push({ path: `${prefix}max_labels`, message: "must be at least min_labels" });
  }
  if (details.length > 0) throw new ApiError("validation", details);
  return { consensus_threshold: threshold, max_labels: maxLabels, confidence_target: target, min_labels: minLabels };
}

/** The quota a task reserves at submission: `consensus_threshold` labels (docs/contract.md, DESIGN §6), never more than it may take. */
export function reservedLabels(policy: TaskPolicy): number {
  return Math.min(policy.consensus_threshold, policy.max_labels);
}
