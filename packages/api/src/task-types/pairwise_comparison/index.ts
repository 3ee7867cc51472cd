/**
 * `pairwise_comparison` (contract §task-types): a task compares item a (`data_url`, or `data_text` for text) with
 * item b (`data_url_b`, or `data_text_b`). label_spec `{question, allow_tie?}` (`allow_tie` defaults to false and
 * is always present once parsed, which is how a stored spec is told from other types'); answer
 * `{winner: "a" | "b" | "tie"}` ("tie" only when `allow_tie`); canonical form: the answer itself. An item's id in
 * the ranking: @labelgate/quality `pairwiseItemId` (docs/decisions/0287).
 */
import { z } from "zod";
import { codePointLength, defineWireTaskType, probability, question } from "../module";
import { pairwiseExportRows } from "./export";

/** `pairwise_comparison`: the question, and whether "tie" is an answer (default false). */
export const pairwiseSpec = z.object({ question, allow_tie: z.boolean().default(false) }).strict();
export type PairwiseSpec = z.output<typeof pairwiseSpec>;

/** `{winner}`: which item won ("tie" only when the spec allows ties). */
export const pairwiseAnswer = z.object({ winner: z.enum(["a", "b", "tie"]) }).strict();
export type PairwiseAnswerBody = z.output<typeof pairwiseAnswer>;

/** The options of a pairwise spec: a, b, and tie when allowed. */
export function pairwiseChoices(spec: { allow_tie?: boolean }): string[] {
  return spec.allow_tie ? ["a", "b", "tie"] : ["a", "b"];
}

/** At most this many code points in `data_text` / `data_text_b`. */
export const MAX_PAIRWISE_TEXT_CODE_POINTS = 20_000;

const itemText = z
  .string()
  .min(1)
  .max(4 * MAX_PAIRWISE_TEXT_CODE_POINTS)
  .refine((text) => codePointLength(text) <= MAX_PAIRWISE_TEXT_CODE_POINTS, `must be at most ${MAX_PAIRWISE_TEXT_CODE_POINTS} code points`);

export const pairwiseWire = defineWireTaskType({
  name: "pairwise_comparison",
  title: "pairwise_comparison",
  labelSpec: pairwiseSpec,
  choicesField: null,
  choices: pairwiseChoices,
  answer: pairwiseAnswer,
  answerKey: "winner",
  answerShape: '{winner: "a" | "b" | "tie"}',
  answerIssues: (spec, answer) =>
    answer.winner === "tie" && !spec.allow_tie
      ? [{ path: ["winner"], message: 'must be "a" or "b": this task does not allow ties (label_spec.allow_tie)' }]
      : [],
  canonicalAnswer: (_spec, answer) => ({ winner: answer.winner }),
  exportLine: {},
  exportRows: pairwiseExportRows,
  responseSpec: z.strictObject({ question: z.string(), allow_tie: z.boolean() }),
  consensus: z.strictObject({
    winner: z.enum(["a", "b", "tie"]),
    confidence: probability.describe("the calibrated posterior of the winner"),
  }),
  task: {
    fields: {
      data_url_b: z
        .url({ protocol: /^(https?|s3|gs)$/, error: "must be an http(s), s3:// or gs:// URL" })
        .max(2048)
        .optional()
        .describe("item b's URL (item a is `data_url`); required unless `data_text_b` is given"),
      data_text: itemText.optional().describe("item a as text (e.g. a model's answer); then `data_text_b` is required"),
      data_text_b: itemText.optional().describe("item b as text; requires `data_text`"),
    },
    // a manifest line carries item b (and the texts) under the body's names (docs/decisions/0305)
    lineFields: ["data_text", "data_url_b", "data_text_b"],
    goldDescription: "a gold task's true winner",
    description:
      "A pairwise comparison: the labeler says which of item a (`data_url` or `data_text`) and item b (`data_url_b` or `data_text_b`) wins, or tie when allowed.",
    issues: (t) => {
      const issues: { path: string[]; message: string }[] = [];
      if (t.data_text_b !== undefined && t.data_text === undefined)
        issues.push({ path: ["data_text"], message: "required with data_text_b (item b is a text, so is item a)" });
      if (t.data_text !== undefined && t.data_text_b === undefined)
        issues.push({ path: ["data_text_b"], message: "required with data_text (item a is a text, so is item b)" });
      if (t.data_text === undefined && t.data_url_b === undefined)
        issues.push({ path: ["data_url_b"], message: "required: item b (data_url_b, or data_text_b with data_text)" });
      if (t.data_text === undefined && t.data_url_b !== undefined && t.data_url_b === t.data_url)
        issues.push({ path: ["data_url_b"], message: "must differ from data_url (an item is not compared with itself)" });
      if (t.data_text !== undefined && t.data_text === t.data_text_b)
        issues.push({ path: ["data_text_b"], message: "must differ from data_text (an item is not compared with itself)" });
      return issues;
    },
  },
});
