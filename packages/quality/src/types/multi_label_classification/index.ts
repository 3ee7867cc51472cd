/**
 * `multi_label_classification` (contract §task-types): the consensus per option, chosen or not (multilabel.ts:
 * one Dawid-Skene model per option); parts are the options; a gold answer matches on equal canonical answers;
 * the model is stored one sub-space per option.
 */
import { type MultiLabelSpec, multiLabelAnswer as multiLabelAnswerShape, multiLabelSpec } from "@labelgate/api";
import { canonicalJson } from "@labelgate/canonical-json";
import type { z } from "zod";
import { emptyMultiLabelModel, fitMultiLabel, type MultiLabelModel, aggregateMultiLabel as runMultiLabel } from "../../multilabel";
import { indexer, partsRows, refinedAnswer, type TaskTypeDefinition, typedTaskType } from "../module";

export interface MultiLabelAnswerBody {
  labels: string[];
}
export interface MultiLabelConsensusBody {
  labels: string[];
  /** per option: the posterior of its decided side (chosen or not) */
  confidence: Record<string, number>;
}

/** The answer schema of a multi-label task: `{labels}`, each one of `spec.options`, no repeats. */
export function multiLabelAnswer(spec: MultiLabelSpec): z.ZodType<MultiLabelAnswerBody> {
  return refinedAnswer("multi_label_classification", multiLabelAnswerShape, spec, {});
}

export const multiLabelType: TaskTypeDefinition<MultiLabelSpec, MultiLabelAnswerBody, MultiLabelModel, MultiLabelConsensusBody> = {
  type: "multi_label_classification",
  labelSpec: multiLabelSpec,
  answerSchema: (spec) => multiLabelAnswer(spec),
  canonicalAnswer: (spec, answer) => {
    const set = new Set(answer.labels);
    return { labels: spec.options.filter((o) => set.has(o)) };
  },
  emptyModel: (spec) => emptyMultiLabelModel(spec.options.length),
  fit: (spec, tasks, previous) => {
    const option = indexer(spec.options, "option");
    return fitMultiLabel(
      spec.options.length,
      tasks.map((t) => {
        const gold = t.gold ? new Set(t.gold.labels) : null;
        return {
          id: t.id,
          answers: t.answers.map((a) => ({ labelerId: a.labelerId, chosen: a.answer.labels.map(option) })),
          gold: gold ? spec.options.map((o) => gold.has(o)) : undefined,
        };
      }),
      { previous },
    );
  },
  aggregate: (spec, model, answers) => {
    const option = indexer(spec.options, "option");
    const r = runMultiLabel(
      model,
      answers.map((a) => ({ labelerId: a.labelerId, chosen: a.answer.labels.map(option) })),
    );
    const labels = r.chosen.map((j) => spec.options[j] as string);
    const confidence = Object.fromEntries(spec.options.map((o, j) => [o, r.confidence[j] as number]));
    const posterior = Object.fromEntries(spec.options.map((o, j) => [o, r.posterior[j] as number]));
    return {
      consensus: { labels, confidence },
      consensusLabel: canonicalJson({ labels }),
      confidence: r.taskConfidence,
      parts: r.parts,
      posterior,
    };
  },
};

export const multiLabelQuality = typedTaskType({
  definition: multiLabelType,
  rows: partsRows<MultiLabelModel>(
    (m) => m.options,
    (spec, options) => ({ k: (spec as MultiLabelSpec).options.length, options }),
  ),
  needsText: false,
  namesOf: (answer) => answer.labels,
  reviewed: (spec, answer) => ({
    posterior: Object.fromEntries(spec.options.map((o) => [o, answer.labels.includes(o) ? 1 : 0])),
    consensus: { labels: answer.labels, confidence: Object.fromEntries(spec.options.map((o) => [o, 1])) },
  }),
});
