/**
 * Single choice (contract §task-types, §10): every `type` value that is not reserved. Its consensus is the rule
 * of rule.ts (Dawid-Skene posterior, threshold or confidence policy, reviews' excluded options) and its refit
 * refit-space.ts; a label's stored `value` is the option itself; its export line adds no fields.
 */
import { answerIssues, choicesOf } from "@labelgate/api";
import type { LabelerParams, SpaceParams } from "../../model";
import { decide, initialClaimCap, type ScoringModel, scoringModelOf } from "../../rule";
import type { QualityTaskType } from "../module";

export const singleChoiceQuality: QualityTaskType = {
  name: "single_choice",
  needsText: false,
  readAnswer(spec, body) {
    const issues = answerIssues("single_choice", spec, body);
    if (issues.length > 0 || !("label" in body)) return { issues };
    return { value: body.label };
  },
  scoringModel(spec, space, labelers) {
    return scoringModelOf(
      choicesOf("single_choice", spec).length,
      space as SpaceParams | null,
      labelers as { labeler_id: string; params: LabelerParams | null }[],
    );
  },
  decide(spec, task, votes, model) {
    return decide({ options: choicesOf("single_choice", spec), ...task }, votes, model as ScoringModel);
  },
  goldCorrect: (_spec, gold, value) => gold === value,
  initialClaimCap: (spec, task) => initialClaimCap({ options: choicesOf("single_choice", spec), ...task }),
  reviewed: (spec, value) => ({ posterior: Object.fromEntries(choicesOf("single_choice", spec).map((o) => [o, o === value ? 1 : 0])) }),
  labelCounts(spec, votes) {
    const counts = Object.fromEntries(choicesOf("single_choice", spec).map((o) => [o, 0]));
    for (const v of votes) counts[v.value] = (counts[v.value] ?? 0) + 1;
    return counts;
  },
  labelerSummary: (_space, params) => ({ labels: (params as LabelerParams | null)?.labels ?? 0, estimatedAccuracy: null }),
};
