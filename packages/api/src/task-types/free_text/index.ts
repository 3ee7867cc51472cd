/**
 * `free_text` (contract §task-types): label_spec `{question, max_length?, normalize?}` (`max_length` in code
 * points, 1..MAX_FREE_TEXT_CODE_POINTS, default DEFAULT_FREE_TEXT_MAX_LENGTH; `normalize` `words` (default) or
 * `none`); answer `{text}`: at most `max_length` code points and at least one word after the spec's normalization
 * (docs/decisions/0281). Canonical form: line ends as "\n" and the ends trimmed of white space; the words are
 * compared after normalization (@labelgate/quality types/free_text). The consensus is `{text, words: [{word,
 * confidence}], slots}`: the normalized consensus text, each of its words with the calibrated probability that it
 * is right, and the answers aligned slot by slot; the task's `confidence` is that the whole text is right
 * (decision 0280); `consensus_label` is the canonical JSON of `{text}`.
 */
import { z } from "zod";
import { type AnswerIssue, codePointLength, defineWireTaskType, probability, question } from "../module";
import { freeTextExportRows } from "./export";

/** The default `max_length` of a free-text answer (code points). */
export const DEFAULT_FREE_TEXT_MAX_LENGTH = 2000;
/** The largest `max_length` a label_spec may set (code points). */
export const MAX_FREE_TEXT_CODE_POINTS = 10_000;
/** The normalizations a free-text label_spec may name (`words`: the default). */
export const FREE_TEXT_NORMALIZATIONS = ["words", "none"] as const;

/** `free_text`: the question, the longest answer (code points) and how answers are compared. */
export const freeTextSpec = z
  .object({
    question,
    max_length: z
      .int()
      .min(1)
      .max(MAX_FREE_TEXT_CODE_POINTS)
      .optional()
      .describe(`the longest answer in code points (default ${DEFAULT_FREE_TEXT_MAX_LENGTH})`),
    normalize: z
      .enum(FREE_TEXT_NORMALIZATIONS, { message: `one of ${FREE_TEXT_NORMALIZATIONS.join(", ")}` })
      .optional()
      .describe(
        "how answers are compared: `words` (default: NFKC, lower case, punctuation replaced by a space, white space collapsed) or `none` (split on white space)",
      ),
  })
  .strict();
export type FreeTextSpec = z.output<typeof freeTextSpec>;

/** `{text}`: a free-text answer (its length against the spec's `max_length` is checked by `answerIssues`). */
export const freeTextAnswer = z
  .object({
    text: z
      .string()
      .max(4 * MAX_FREE_TEXT_CODE_POINTS)
      .describe("the answer: a transcription, translation or short answer"),
  })
  .strict();
export type FreeTextAnswer = z.output<typeof freeTextAnswer>;

/** The `max_length` of a spec (its default when absent). */
export function maxLengthOf(spec: FreeTextSpec): number {
  return spec.max_length ?? DEFAULT_FREE_TEXT_MAX_LENGTH;
}

/**
 * Whether a text has a word under a normalization: a letter, mark, number or symbol (`words` replaces
 * punctuation by spaces, so a text of punctuation only has none), or any non-space character (`none`).
 */
export function hasWord(text: string, normalize: FreeTextSpec["normalize"]): boolean {
  return normalize === "none" ? /\S/u.test(text) : /[^\p{P}\s]/u.test(text.normalize("NFKC"));
}

export const freeTextWire = defineWireTaskType({
  name: "free_text",
  title: "free_text",
  labelSpec: freeTextSpec,
  choicesField: null,
  answer: freeTextAnswer,
  answerKey: "text",
  answerShape: "{text}",
  answerIssues: (spec, answer) => {
    const issues: AnswerIssue[] = [];
    const max = maxLengthOf(spec);
    const length = codePointLength(answer.text);
    if (length > max) issues.push({ path: ["text"], message: `is ${length} code points, more than max_length ${max}` });
    if (!hasWord(answer.text, spec.normalize))
      issues.push({ path: ["text"], message: "has no word after normalization (skip the task instead of answering empty)" });
    return issues;
  },
  canonicalAnswer: (_spec, answer) => ({ text: answer.text.replace(/\r\n?/g, "\n").trim() }),
  exportLine: {},
  exportRows: freeTextExportRows,
  responseSpec: z.strictObject({
    question: z.string(),
    max_length: z.int().optional(),
    normalize: z.enum(FREE_TEXT_NORMALIZATIONS).optional(),
  }),
  consensus: z.strictObject({
    text: z.string().describe("the consensus text, normalized (its words joined by spaces)"),
    words: z
      .array(z.strictObject({ word: z.string(), confidence: probability.describe("P(this word is right where it stands)") }))
      .describe("the consensus words in order"),
    slots: z
      .array(
        z.strictObject({
          word: z.string().nullable().describe("the slot's choice: a word of the consensus, or null (no word here)"),
          confidence: probability.describe("P(the choice is right)"),
          answers: z.array(z.string().nullable()).describe("each answer's word in this slot, in recording order (null: none)"),
        }),
      )
      .describe("the answers aligned word by word (ROVER's network): per slot, the consensus choice and every answer's word"),
  }),
  task: {
    fields: {},
    goldDescription: "a gold task's true text",
    description: "A free-text task: the labeler writes a text (a transcription, translation or short answer).",
  },
});
