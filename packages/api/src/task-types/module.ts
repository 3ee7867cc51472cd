/**
 * The wire half of a task type (contract §task-types) as one module: what every type's folder under
 * packages/api/src/task-types/<type>/ exports, and the pieces they share (limits, the question and choice
 * schemas, code points). The registry (registry.ts) collects the modules; the request and response unions,
 * the OpenAPI `oneOf` and every per-type lookup of this package walk it. The meaning half (parts, consensus,
 * calibration, stopping, gold match, model rows) is the type's module in
 * packages/quality/src/types/<type>/ (docs/architecture.md "Adding a task type").
 */
import { z } from "zod";
import type { TypeExportRows } from "./export-rows";

/** At most this many options, classes or entity types in a label_spec. */
export const MAX_CHOICES = 50;
/** At most this many boxes or spans in one answer. */
export const MAX_PARTS = 500;
/** At most this many code points in a `text_span` task's `data_text`. */
export const MAX_TEXT_CODE_POINTS = 100_000;
/** A label request body larger than this (bytes) is refused before parsing: 413. */
export const MAX_ANSWER_BYTES = 256 * 1024;

/** A label_spec's question: 1..2,000 characters after trimming. */
export const question = z.string().trim().min(1).max(2000);
const choice = z.string().trim().min(1).max(200);
/** A label_spec's list of names (options, classes, entity types): `min`..MAX_CHOICES unique strings. */
export const choices = (what: string, min: number) =>
  z
    .array(choice)
    .min(min)
    .max(MAX_CHOICES)
    .refine((o) => new Set(o).size === o.length, `${what} must be unique`);

/** Code points of a string (a surrogate pair is one). */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** What is known of an item when an answer is checked: the image size in pixels, the text of a span task. */
export interface ItemContext {
  width?: number;
  height?: number;
  text?: string;
}

/** One problem of an answer: its path inside the answer body and a message. */
export interface AnswerIssue {
  path: (string | number)[];
  message: string;
}

/** How a type's task body (`POST /v1/tasks`) differs from the common fields (requests.ts `typedTaskBody`). */
export interface TaskBodyParts<Extra extends z.ZodRawShape> {
  /** fields placed after `label_spec` and before the common ones (e.g. `data_text`) */
  fields: Extra;
  /** the description of `gold_answer` */
  goldDescription: string;
  /** the description of the task body (OpenAPI) */
  description: string;
  /** further problems of a whole task body (paths from the body) */
  issues?(task: { data_url: string } & { [K in keyof Extra]?: z.output<Extra[K]> }): AnswerIssue[];
  /**
   * the fields of `fields` a manifest line carries as they are (pairwise: its items), checked by their schemas and
   * `issues` like a body's and stored in the task's columns of the same names (`manifestLineItems`,
   * docs/decisions/0305); absent: a line carries none of them this way
   */
  lineFields?: readonly (keyof Extra & string)[];
}

/**
 * The wire module of one task type. `Name` is the registry key: `single_choice` for the default (every `type`
 * value that is not a registry key), else the reserved `type` value itself.
 */
export interface WireTaskType<
  Name extends string,
  SpecShape extends z.ZodRawShape,
  AnswerShape extends z.ZodRawShape,
  Extra extends z.ZodRawShape,
  ResponseSpec extends z.ZodType = z.ZodType,
  Consensus extends z.ZodType | undefined = z.ZodType | undefined,
  ExportLine extends z.ZodRawShape = z.ZodRawShape,
> {
  name: Name;
  /** how messages name the type ("single choice", or the type value) */
  title: string;
  /** `label_spec` (strict): the question and the names answers may use */
  labelSpec: z.ZodObject<SpecShape, z.core.$strict>;
  /** the field of `labelSpec` that lists those names; null for a spec without one (then `choices` gives them) */
  choicesField: "options" | "classes" | "entity_types" | null;
  /** the names of a spec without a choices field (pairwise: a, b[, tie]); none when absent (free text) */
  choices?(spec: z.output<z.ZodObject<SpecShape>>): string[];
  /** the answer body (strict; structure and limits only) */
  answer: z.ZodObject<AnswerShape, z.core.$strict>;
  /** the one field an answer body of this type has: how a body's type is recognized */
  answerKey: string;
  /** how the answer is written, for messages */
  answerShape: string;
  /** what is wrong with an answer of the right shape for one task (`answer` passed `answer.parse`); empty if fine */
  answerIssues(spec: z.output<z.ZodObject<SpecShape>>, answer: z.output<z.ZodObject<AnswerShape>>, item: ItemContext): AnswerIssue[];
  /** the answer with its parts in canonical order: what a stored label and a gold answer are (canonical JSON of it) */
  canonicalAnswer(spec: z.output<z.ZodObject<SpecShape>>, answer: z.output<z.ZodObject<AnswerShape>>): z.output<z.ZodObject<AnswerShape>>;
  /** `label_spec` as responses show it (a shape shared by types with the same fields is one object) */
  responseSpec: ResponseSpec;
  /** the typed `consensus` of results (reserved types; single choice has none: undefined, only `consensus_label`) */
  consensus: Consensus;
  /**
   * the shape of the fields its JSONL export line adds after `consensus` (responses.ts `ExportLine`; the
   * values are written by its `exportRows.jsonl`); `{}` for none
   */
  exportLine: ExportLine;
  /**
   * what the type writes in each export format (export-rows.ts `TypeExportRows`; null: the format does not fit
   * the type): the format files of packages/api/src/exports only frame these rows, walking the registry
   */
  exportRows: TypeExportRows;
  /** the task body's own parts (reserved types; single choice's body is requests.ts `singleChoiceTaskBody`) */
  task?: TaskBodyParts<Extra>;
}

/** Any wire module (for walking the registry). */
// biome-ignore lint/suspicious/noExplicitAny: the registry holds modules of different shapes
export type AnyWireTaskType = WireTaskType<string, any, any, any, z.ZodType, z.ZodType | undefined, z.ZodRawShape>;

/** Defines a wire module, keeping its exact types (the request unions are inferred from them). */
export function defineWireTaskType<
  Name extends string,
  SpecShape extends z.ZodRawShape,
  AnswerShape extends z.ZodRawShape,
  ResponseSpec extends z.ZodType,
  Consensus extends z.ZodType | undefined,
  ExportLine extends z.ZodRawShape,
  Extra extends z.ZodRawShape = Record<never, never>,
>(
  module: WireTaskType<Name, SpecShape, AnswerShape, Extra, ResponseSpec, Consensus, ExportLine>,
): WireTaskType<Name, SpecShape, AnswerShape, Extra, ResponseSpec, Consensus, ExportLine> {
  return module;
}

/** A non-empty list of schemas as the tuple `z.union` and `z.xor` take (typed as the union of its members). */
export function unionMembers<T extends z.ZodType>(items: readonly T[]): [T, ...T[]] {
  if (items.length === 0) throw new Error("a union needs at least one member");
  return items as unknown as [T, ...T[]];
}

/** Shared response shape of `{question, options}` specs (single choice, multi-label). */
export const optionsSpecResponse = z.strictObject({ question: z.string(), options: z.array(z.string()) });
/** A probability in [0, 1]. */
export const probability = z.number().min(0).max(1);
/** A count (integer >= 0). */
export const count = z.int().nonnegative();
