/**
 * Instructions of a label space (docs/contract.md "Instructions"): a label spec may carry `instructions`
 * (Markdown, at most MAX_INSTRUCTIONS_CHARS characters) and `examples` (at most MAX_EXAMPLES items, each an
 * item, its right answer and why). They are not part of the label space's identity (spaces.ts `spaceIdOf`
 * hashes the question and the choices only): the latest given for a space is its current version, numbered
 * from 1, and a claim carries that number (`instructions_version`).
 *
 * The request schemas take the guide as extra fields of `label_spec` (`spec.extend(guideFields)`); {@link splitGuide}
 * separates it from the spec the task and its space store.
 */
import { z } from "zod";
import { showPrelabelField } from "./prelabels";
import { type AnswerBody, type AnyLabelSpec, answerIssues, answerSchemaOf, codePointLength, labelSpecSchemaOf } from "./task-types";

/** At most this many characters (UTF-16 code units, as `String.length`) of Markdown in `instructions`. */
export const MAX_INSTRUCTIONS_CHARS = 20_000;
/** At most this many examples in a label spec. */
export const MAX_EXAMPLES = 20;
/** At most this many characters in one example's `explanation`. */
export const MAX_EXPLANATION_CHARS = 2_000;
/** At most this many code points in one example's `data_text`. */
export const MAX_EXAMPLE_TEXT_CODE_POINTS = 10_000;

const exampleUrl = z
  .string()
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === "https:" || u.protocol === "http:";
    } catch {
      return false;
    }
  }, "must be an http(s) URL");

/**
 * One example: the item (`data_url`, an http(s) URL, or `data_text`, exactly one of them), its right `answer`
 * (an answer body of the task's type, checked against the label spec by {@link guideIssues}) and an
 * optional `explanation` (Markdown).
 */
export const instructionExample = z
  .object({
    data_url: exampleUrl.optional(),
    data_text: z
      .string()
      .min(1)
      .max(4 * MAX_EXAMPLE_TEXT_CODE_POINTS)
      .refine((t) => codePointLength(t) <= MAX_EXAMPLE_TEXT_CODE_POINTS, `must be at most ${MAX_EXAMPLE_TEXT_CODE_POINTS} code points`)
      .optional(),
    answer: z
      .record(z.string(), z.unknown())
      .describe("the right answer: an answer body of the task's type ({label}, {labels}, {boxes}, {spans})"),
    explanation: z.string().max(MAX_EXPLANATION_CHARS).optional(),
  })
  .strict()
  .refine((e) => (e.data_url === undefined) !== (e.data_text === undefined), "give exactly one of data_url and data_text");
/** An example as submitted. */
export type InstructionExample = z.output<typeof instructionExample>;

/** The guide fields a label spec may carry besides its identity (question and choices). */
export const guideFields = {
  instructions: z
    .string()
    .max(MAX_INSTRUCTIONS_CHARS, `must be at most ${MAX_INSTRUCTIONS_CHARS} characters`)
    .optional()
    .describe("Markdown shown to labelers before their first task of the label space and whenever it changes"),
  examples: z
    .array(instructionExample)
    .max(MAX_EXAMPLES, `at most ${MAX_EXAMPLES} examples`)
    .optional()
    .describe("worked examples shown with the instructions: {data_url | data_text, answer, explanation}"),
  // not part of the guide's versions: a setting of the tasks that carry it (contract §prelabels)
  ...showPrelabelField,
};

/** The guide of a label spec as given: what a new instructions version stores. */
export interface Guide {
  instructions: string | null;
  examples: InstructionExample[];
}

/** A label spec as a request gives it: its identity and, optionally, its guide. */
export type GuidedLabelSpec = AnyLabelSpec & { instructions?: string; examples?: InstructionExample[]; show_prelabel?: boolean };

/** The label spec schema of a task type (strict) with the guide fields: a job's `label_spec`. */
export function guidedSpecSchemaOf(type: string): z.ZodType<GuidedLabelSpec> {
  return (labelSpecSchemaOf(type) as unknown as z.ZodObject).extend(guideFields) as unknown as z.ZodType<GuidedLabelSpec>;
}

/**
 * Splits a label spec as given into the spec its tasks and label space store (identity: question and
 * choices) and its guide, or `guide: undefined` when it gives neither `instructions` nor `examples`.
 */
export function splitGuide(given: GuidedLabelSpec): { spec: AnyLabelSpec; guide: Guide | undefined } {
  const { instructions, examples, show_prelabel: _shown, ...spec } = given;
  const guide =
    instructions === undefined && examples === undefined ? undefined : { instructions: instructions ?? null, examples: examples ?? [] };
  return { spec: spec as AnyLabelSpec, guide };
}

/**
 * What is wrong with the examples of a label spec of a task of `type`: an answer not of the type's shape
 * (its answer schema) or not fitting the spec (task-types.ts `answerIssues`: an unknown option, class or
 * entity type, a span past the example's text). Paths start at `examples.<i>.answer`; empty when all fit.
 */
export function guideIssues(type: string, spec: GuidedLabelSpec): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  (spec.examples ?? []).forEach((example, i) => {
    const at = ["examples", i, "answer"];
    const shaped = answerSchemaOf(type).safeParse(example.answer);
    if (!shaped.success) {
      for (const issue of shaped.error.issues)
        issues.push({ path: [...at, ...issue.path.map((p) => p as string | number)], message: issue.message });
      return;
    }
    for (const issue of answerIssues(type, spec, shaped.data as AnswerBody, { text: example.data_text }))
      issues.push({ path: [...at, ...issue.path], message: issue.message });
  });
  return issues;
}
