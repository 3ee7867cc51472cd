/**
 * Single choice (contract §task-types): every `type` value that is not a registry key (`image_classification`,
 * `text_classification`, ...). label_spec `{question, options}` (2..50 unique options); answer `{label}`, one
 * of the options. Its task body is requests.ts `singleChoiceTaskBody` (a free `type`, `gold_label`).
 */
import { z } from "zod";
import { choices, defineWireTaskType, optionsSpecResponse, question } from "../module";
import { singleChoiceExportRows } from "./export";

/** Single choice: the question and its answer options (2..50 unique strings). */
export const labelSpec = z.object({ question, options: choices("options", 2) }).strict();
/** The question and its answer options (2..50 unique strings). */
export type LabelSpec = z.output<typeof labelSpec>;

/** `{label}`: a single-choice answer. */
export const singleChoiceAnswer = z.object({ label: z.string().min(1).max(200) }).strict();
export type SingleChoiceAnswer = z.output<typeof singleChoiceAnswer>;

export const singleChoiceWire = defineWireTaskType({
  name: "single_choice",
  title: "single choice",
  labelSpec,
  choicesField: "options",
  answer: singleChoiceAnswer,
  answerKey: "label",
  answerShape: "{label}",
  answerIssues: (spec, answer) =>
    spec.options.includes(answer.label)
      ? []
      : [{ path: ["label"], message: `must be one of the task's options: ${spec.options.join(", ")}` }],
  canonicalAnswer: (_spec, answer) => answer,
  exportLine: {},
  exportRows: singleChoiceExportRows,
  responseSpec: optionsSpecResponse,
  consensus: undefined,
});
