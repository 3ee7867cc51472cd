/**
 * A task's policy as its row stores it (the columns of `tasks` and, camel-cased by Prisma, of `jobs`) and the
 * one way from a row to the policy the rule decides with (@labelgate/quality `Policy`): `policyOf`.
 * `confidence_target` null = the threshold policy, whose `min_labels` is null; a confidence row without
 * `min_labels` (none is written so) reads the default.
 */
import { DEFAULT_MIN_LABELS, type Policy } from "@labelgate/quality";

/** The policy columns of a task row (and what a task's GET shows: docs/contract.md). */
export interface PolicyColumns {
  consensus_threshold: number;
  max_labels: number;
  /** null: the threshold policy */
  confidence_target: number | null;
  /** null under the threshold policy */
  min_labels: number | null;
  /** null: off (and under the threshold policy); absent in rows read before the column existed */
  min_gain?: number | null;
}

/** The policy a row stores. */
export function policyOf(row: PolicyColumns): Policy {
  const { consensus_threshold: consensusThreshold, max_labels: maxLabels, confidence_target: confidenceTarget } = row;
  if (confidenceTarget === null) return { kind: "threshold", consensusThreshold, maxLabels };
  return {
    kind: "confidence",
    consensusThreshold,
    maxLabels,
    confidenceTarget,
    minLabels: row.min_labels ?? DEFAULT_MIN_LABELS,
    minGain: row.min_gain ?? null,
  };
}

/** The columns that store `policy` (the inverse of `policyOf`). */
export function policyColumns(policy: Policy): PolicyColumns {
  return {
    consensus_threshold: policy.consensusThreshold,
    max_labels: policy.maxLabels,
    confidence_target: policy.kind === "confidence" ? policy.confidenceTarget : null,
    min_labels: policy.kind === "confidence" ? policy.minLabels : null,
    min_gain: policy.kind === "confidence" ? (policy.minGain ?? null) : null,
  };
}
