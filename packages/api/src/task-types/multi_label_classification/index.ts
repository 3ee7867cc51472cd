/**
 * `multi_label_classification` (contract §task-types): label_spec `{question, options}` (1..50 unique); answer
 * `{labels: [option, ...]}`, the set of options that apply (may be empty, no repeats); canonical form: the
 * options in the spec's order.
 */
import { z } from "zod";
import { type AnswerIssue, choices, defineWireTaskType, MAX_CHOICES, optionsSpecResponse, question } from "../module";
import { multiLabelExportRows } from "./export";

/** `multi_label_classification`: the question and the options that may apply (1..50 unique). */
export const multiLabelSpec = z.object({ question, options: choices("options", 1) }).strict();
export type MultiLabelSpec = z.output<typeof multiLabelSpec>;

/** `{labels}`: a multi-label answer, the set of options that apply (may be empty). */
export const multiLabelAnswer = z.object({ labels: z.array(z.string().min(1).max(200)).max(MAX_CHOICES) }).strict();
export type MultiLabelAnswer = z.output<typeof multiLabelAnswer>;

const posterior = z.record(z.string(), z.number().min(0).max(1));

export const multiLabelWire = defineWireTaskType({
  name: "multi_label_classification",
  title: "multi_label_classification",
  labelSpec: multiLabelSpec,
  choicesField: "options",
  answer: multiLabelAnswer,
  answerKey: "labels",
  answerShape: "{labels: [option, ...]}",
  answerIssues: (spec, answer) => {
    const known = new Set(spec.options);
    const issues: AnswerIssue[] = [];
    const seen = new Set<string>();
    answer.labels.forEach((l, i) => {
      if (!known.has(l)) issues.push({ path: ["labels", i], message: `unknown option "${l}"` });
      else if (seen.has(l)) issues.push({ path: ["labels", i], message: `option "${l}" is repeated` });
      seen.add(l);
    });
    return issues;
  },
  canonicalAnswer: (spec, answer) => {
    const set = new Set(answer.labels);
    return { labels: spec.options.filter((o) => set.has(o)) };
  },
  exportLine: {},
  exportRows: multiLabelExportRows,
  responseSpec: optionsSpecResponse,
  consensus: z.strictObject({
    labels: z.array(z.string()).describe("the options that apply"),
    confidence: posterior.describe("per option: the posterior of its decided side (applies or not)"),
  }),
  task: {
    fields: {},
    goldDescription: "a gold task's true answer: the options that apply",
    description: "A multi-label task: the labeler ticks every option that applies (possibly none).",
  },
});
