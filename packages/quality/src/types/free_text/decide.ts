/**
 * Stopping of `free_text` tasks under the two policies (contract §quality, §task-types):
 * - threshold: the task settles when `consensusThreshold` of its answers are equal after normalization
 *   (resolution "consensus"), else at `maxLabels` answers ("max_labels"). The consensus is in both cases the
 *   weighted word vote of every answer (consensus.ts), which with that many equal answers is almost always their text.
 * - confidence: the task settles when every slot of the consensus (each word, and each place where "no word" won)
 *   has a calibrated confidence >= `confidenceTarget`, after at least `minLabels` answers ("confidence"), else at
 *   `maxLabels` ("max_labels"): parts.ts `decideParts` with one part per slot. A consensus with no slot (every
 *   answer empty) is one part whose confidence is the whole text's. The whole-text confidence is reported, not used
 *   to stop.
 */
import { decideParts, type PartsDecision } from "../../parts";
import type { RulePolicy } from "../../policy";
import { checkThresholdRule } from "../../policy";
import { type TextConsensus, textParts } from "./consensus";

/** The largest number of answers with one normalized text (answers given as their normalized words). */
export function equalAnswers(answers: readonly (readonly string[])[]): number {
  const counts = new Map<string, number>();
  let best = 0;
  for (const words of answers) {
    const key = words.join(" ");
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    best = Math.max(best, n);
  }
  return best;
}

/**
 * Decision after the latest answer. `answers` = the normalized words of every answer so far (the latest
 * included); `consensus` = their consensus.
 * @throws RangeError on a policy outside its bounds
 */
export function decideText(policy: RulePolicy, answers: readonly (readonly string[])[], consensus: TextConsensus): PartsDecision {
  const labels = answers.length;
  if (policy.kind === "threshold") {
    checkThresholdRule(policy);
    if (labels > 0 && equalAnswers(answers) >= policy.consensusThreshold) return { settled: true, resolution: "consensus" };
    if (labels >= policy.maxLabels) return { settled: true, resolution: "max_labels" };
    return { settled: false, labelsNeeded: policy.maxLabels - labels };
  }
  const parts = textParts(consensus);
  if (parts.length === 0) parts.push({ posterior: [consensus.confidence, 1 - consensus.confidence], counts: null });
  return decideParts(policy, labels, parts);
}
