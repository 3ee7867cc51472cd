/**
 * The bounds of a task's policy fields on the wire (docs/contract.md "Policies"): the request
 * schemas (requests.ts) enforce them, and the policy itself (@labelgate/quality `resolvePolicy`, the rules'
 * checks) reads them from here, so each bound is written once (decision 0240: why the model reads the wire's).
 */
export const POLICY_BOUNDS = {
  /** the threshold policy's quorum (default 3) */
  consensus_threshold: { min: 1, max: 25 },
  /** labels after which a task settles anyway (default 2 × consensus_threshold + 1, at most 50) */
  max_labels: { min: 1, max: 50 },
  /** set = the confidence policy */
  confidence_target: { min: 0.5, max: 0.999 },
  /** labels before the confidence target may decide a task (default 1) */
  min_labels: { min: 1, max: 50 },
  /** the confidence policy's stop on a label that cannot help (contract §quality; absent = off) */
  min_gain: { min: 0.001, max: 0.5 },
} as const;
