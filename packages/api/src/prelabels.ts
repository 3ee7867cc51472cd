/**
 * Pre-labels (contract §prelabels): a task (single, batch item or manifest line) may carry a model's
 * prediction, `prelabel: {answer, model, score?}`. The answer is an answer body of the task's type (`{label}`,
 * `{labels}`, `{boxes}`, `{spans}`), checked against its label spec like a label; the store records it as the
 * label of the customer's labeler `model:<model>`. `label_spec.show_prelabel` (default false) puts it in the
 * task's claims as a suggestion.
 */
import { z } from "zod";
import { type AnswerBody, type AnyLabelSpec, answerIssues, answerSchemaOf, answerShapeOf, isReservedTaskType } from "./task-types";

/** A model's name: letters, digits and `._:/@+-`, 1..100 characters (its labeler is named `model:<name>`). */
export const prelabelModelName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$/, "letters, digits and . _ : / @ + - (e.g. resnet50-v2)");

/** `prelabel` of a task body: the answer checked against the task's type by {@link prelabelIssues}. */
export const prelabelField = z
  .object({
    answer: z
      .record(z.string(), z.unknown())
      .describe("the model's answer: an answer body of the task's type ({label}, {labels}, {boxes} or {spans})"),
    model: prelabelModelName.describe("the model's name: its votes are those of the labeler `model:<model>`"),
    score: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe("the model's own score of its answer (0..1), kept and shown, not used by the labeler model"),
  })
  .strict()
  .describe("a model's prediction, counted as the vote of the labeler `model:<model>` (never charged, never settles a task alone)");
/** A pre-label as given. */
export type Prelabel = z.output<typeof prelabelField>;

/** The pre-label fields of a task body and its label spec. */
export const prelabelTaskFields = { prelabel: prelabelField.optional() };
export const showPrelabelField = {
  show_prelabel: z.boolean().optional().describe("claims carry the task's pre-label, which the labeler app pre-fills (default false)"),
};

/** The labeler name of a model (contract §prelabels). */
export function modelLabelerName(model: string): string {
  return `model:${model}`;
}

/**
 * What is wrong with a task's pre-label: its answer not of the type's shape (a pre-label for another type)
 * or not fitting the label spec (task-types.ts `answerIssues`). Paths start at `prelabel.answer`; empty when it fits.
 */
export function prelabelIssues(
  type: string,
  spec: AnyLabelSpec,
  prelabel: Prelabel | undefined,
  text?: string,
): { path: (string | number)[]; message: string }[] {
  if (prelabel === undefined) return [];
  const at = ["prelabel", "answer"];
  const shaped = answerSchemaOf(type).safeParse(prelabel.answer);
  if (!shaped.success)
    return [
      { path: at, message: `a pre-label of a ${isReservedTaskType(type) ? type : "single choice"} task answers ${answerShapeOf(type)}` },
      ...shaped.error.issues.map((issue) => ({ path: [...at, ...issue.path.map((p) => p as string | number)], message: issue.message })),
    ];
  return answerIssues(type, spec, shaped.data as AnswerBody, { text }).map((issue) => ({
    path: [...at, ...issue.path],
    message: issue.message,
  }));
}
