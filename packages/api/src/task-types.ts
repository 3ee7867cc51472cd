/**
 * The wire half of the task types (docs/contract.md, DESIGN §12): per type, its `label_spec` and its answer
 * body (`POST /v1/labeling/claims/{id}/label`), as zod schemas of their structure and limits. What an answer
 * means for one task (an option of its spec, a box inside the item, spans inside the text) is checked by the
 * type's entry of the registry in @labelgate/quality (`taskTypeOf`), where the task is known.
 *
 * | `type`                        | `label_spec`                | answer                                   |
 * |-------------------------------|-----------------------------|------------------------------------------|
 * | any other value (single choice) | `{question, options}`     | `{label}`                                |
 * | `multi_label_classification`  | `{question, options}`       | `{labels: [option, ...]}` (a set)        |
 * | `bounding_box`                | `{question, classes}`       | `{boxes: [{label, x, y, w, h}]}` (pixels) |
 * | `text_span`                   | `{question, entity_types}`  | `{spans: [{start, end, label}]}` (code points, end exclusive) |
 *
 * Limits: at most MAX_CHOICES options, classes or entity types; at most MAX_PARTS boxes or spans per answer;
 * a `data_text` of at most MAX_TEXT_CODE_POINTS; an answer body of at most MAX_ANSWER_BYTES (413 beyond).
 */
import { z } from "zod";

/** The reserved `type` values; every other value is single choice. */
export const RESERVED_TASK_TYPES = ["multi_label_classification", "bounding_box", "text_span"] as const;
export type ReservedTaskType = (typeof RESERVED_TASK_TYPES)[number];

/** Whether `type` is a reserved type (every other value is single choice). */
export function isReservedTaskType(type: string): type is ReservedTaskType {
  return (RESERVED_TASK_TYPES as readonly string[]).includes(type);
}

/** At most this many options, classes or entity types in a label_spec. */
export const MAX_CHOICES = 50;
/** At most this many boxes or spans in one answer. */
export const MAX_PARTS = 500;
/** At most this many code points in a `text_span` task's `data_text`. */
export const MAX_TEXT_CODE_POINTS = 100_000;
/** A label request body larger than this (bytes) is refused before parsing: 413. */
export const MAX_ANSWER_BYTES = 256 * 1024;

const question = z.string().trim().min(1).max(2000);
const choice = z.string().trim().min(1).max(200);
const choices = (what: string, min: number) =>
  z
    .array(choice)
    .min(min)
    .max(MAX_CHOICES)
    .refine((o) => new Set(o).size === o.length, `${what} must be unique`);

/** Single choice: the question and its answer options (2..50 unique strings). */
export const labelSpec = z.object({ question, options: choices("options", 2) }).strict();
/** The question and its answer options (2..50 unique strings). */
export type LabelSpec = z.output<typeof labelSpec>;

/** `multi_label_classification`: the question and the options that may apply (1..50 unique). */
export const multiLabelSpec = z.object({ question, options: choices("options", 1) }).strict();
export type MultiLabelSpec = z.output<typeof multiLabelSpec>;
/** `bounding_box`: the question and the object classes (1..50 unique). */
export const boundingBoxSpec = z.object({ question, classes: choices("classes", 1) }).strict();
export type BoundingBoxSpec = z.output<typeof boundingBoxSpec>;
/** `text_span`: the question and the entity types (1..50 unique). */
export const textSpanSpec = z.object({ question, entity_types: choices("entity_types", 1) }).strict();
export type TextSpanSpec = z.output<typeof textSpanSpec>;

/** Any task's label_spec. */
export type AnyLabelSpec = LabelSpec | MultiLabelSpec | BoundingBoxSpec | TextSpanSpec;

/** The label_spec schema of a task type. */
export function labelSpecSchemaOf(type: string): z.ZodType<AnyLabelSpec> {
  if (type === "multi_label_classification") return multiLabelSpec;
  if (type === "bounding_box") return boundingBoxSpec;
  if (type === "text_span") return textSpanSpec;
  return labelSpec;
}

/**
 * The label_spec of a stored task, job or label space: a reserved type's as stored (its `label_spec` column),
 * else single choice's question and options (the column is null for single choice).
 */
export function storedLabelSpec(stored: { labelSpec: unknown; question: string; options: string[] }): AnyLabelSpec {
  return (stored.labelSpec as AnyLabelSpec | null) ?? { question: stored.question, options: stored.options };
}

/** The names a label_spec offers: its options, classes or entity types. */
export function choicesOf(spec: AnyLabelSpec): string[] {
  if ("classes" in spec) return spec.classes;
  if ("entity_types" in spec) return spec.entity_types;
  return spec.options;
}

/** `{label}`: a single-choice answer. */
export const singleChoiceAnswer = z.object({ label: z.string().min(1).max(200) }).strict();
/** `{labels}`: a multi-label answer, the set of options that apply (may be empty). */
export const multiLabelAnswer = z.object({ labels: z.array(z.string().min(1).max(200)).max(MAX_CHOICES) }).strict();
const coordinate = z.number().finite();
/** One box of an answer: its class and its rectangle in pixels of the item (x, y: top left; w, h > 0). */
export const answerBox = z
  .object({
    label: z.string().min(1).max(200),
    x: coordinate.min(0),
    y: coordinate.min(0),
    w: coordinate.positive(),
    h: coordinate.positive(),
  })
  .strict();
/** `{boxes}`: a box answer (may be empty). */
export const boxAnswer = z.object({ boxes: z.array(answerBox).max(MAX_PARTS) }).strict();
/** One span of an answer: code points of the text, `end` exclusive, and its entity type. */
export const answerSpan = z
  .object({
    start: z.int().min(0).max(MAX_TEXT_CODE_POINTS),
    end: z.int().min(1).max(MAX_TEXT_CODE_POINTS),
    label: z.string().min(1).max(200),
  })
  .strict();
/** `{spans}`: a span answer (may be empty). */
export const spanAnswer = z.object({ spans: z.array(answerSpan).max(MAX_PARTS) }).strict();

export type SingleChoiceAnswer = z.output<typeof singleChoiceAnswer>;
export type MultiLabelAnswer = z.output<typeof multiLabelAnswer>;
export type BoxAnswer = z.output<typeof boxAnswer>;
export type SpanAnswer = z.output<typeof spanAnswer>;
/** Any answer body. */
export type AnswerBody = SingleChoiceAnswer | MultiLabelAnswer | BoxAnswer | SpanAnswer;

/** The answer schema of a task type (structure and limits only). */
export function answerSchemaOf(type: string): z.ZodType<AnswerBody> {
  if (type === "multi_label_classification") return multiLabelAnswer;
  if (type === "bounding_box") return boxAnswer;
  if (type === "text_span") return spanAnswer;
  return singleChoiceAnswer;
}

/** How the answer of each type is written, for messages. */
export const ANSWER_SHAPES: Record<ReservedTaskType | "single_choice", string> = {
  single_choice: "{label}",
  multi_label_classification: "{labels: [option, ...]}",
  bounding_box: "{boxes: [{label, x, y, w, h}, ...]}",
  text_span: "{spans: [{start, end, label}, ...]}",
};

/** The shape name of a task type's answer (ANSWER_SHAPES). */
export function answerShapeOf(type: string): string {
  return isReservedTaskType(type) ? ANSWER_SHAPES[type] : ANSWER_SHAPES.single_choice;
}

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

/**
 * What is wrong with an answer of the right shape (the type's answer schema) for one task: an option, class or
 * entity type not in `spec`; a repeated option; a box past the item's size when it is known; a span with
 * `end <= start`, past the text when it is known, or overlapping another. Empty when the answer is fine.
 */
export function answerIssues(type: string, spec: AnyLabelSpec, answer: AnswerBody, item: ItemContext = {}): AnswerIssue[] {
  if (answerShapeOf(type) !== answerShapeOfBody(answer))
    return [{ path: [], message: `a ${isReservedTaskType(type) ? type : "single choice"} task's answer is ${answerShapeOf(type)}` }];
  const known = new Set(choicesOf(spec));
  const issues: AnswerIssue[] = [];
  if ("label" in answer) {
    if (!known.has(answer.label))
      issues.push({ path: ["label"], message: `must be one of the task's options: ${choicesOf(spec).join(", ")}` });
  } else if ("labels" in answer) {
    const seen = new Set<string>();
    answer.labels.forEach((l, i) => {
      if (!known.has(l)) issues.push({ path: ["labels", i], message: `unknown option "${l}"` });
      else if (seen.has(l)) issues.push({ path: ["labels", i], message: `option "${l}" is repeated` });
      seen.add(l);
    });
  } else if ("boxes" in answer) {
    answer.boxes.forEach((b, i) => {
      if (!known.has(b.label)) issues.push({ path: ["boxes", i, "label"], message: `unknown class "${b.label}"` });
      if (item.width !== undefined && b.x + b.w > item.width)
        issues.push({ path: ["boxes", i], message: `box ends at x = ${b.x + b.w}, outside the item (width ${item.width})` });
      if (item.height !== undefined && b.y + b.h > item.height)
        issues.push({ path: ["boxes", i], message: `box ends at y = ${b.y + b.h}, outside the item (height ${item.height})` });
    });
  } else {
    const length = item.text === undefined ? undefined : codePointLength(item.text);
    answer.spans.forEach((s, i) => {
      if (!known.has(s.label)) issues.push({ path: ["spans", i, "label"], message: `unknown entity type "${s.label}"` });
      if (s.end <= s.start) issues.push({ path: ["spans", i], message: "end must be greater than start" });
      if (length !== undefined && s.end > length)
        issues.push({ path: ["spans", i, "end"], message: `end ${s.end} is past the end of the text (${length} code points)` });
    });
    const order = answer.spans.map((_, i) => i).sort((p, q) => (answer.spans[p]?.start ?? 0) - (answer.spans[q]?.start ?? 0) || p - q);
    for (let k = 1; k < order.length; k++) {
      const prev = answer.spans[order[k - 1] as number] as SpanAnswer["spans"][number];
      const cur = answer.spans[order[k] as number] as SpanAnswer["spans"][number];
      if (cur.start < prev.end)
        issues.push({ path: ["spans", order[k] as number], message: `overlaps span ${order[k - 1]} (${prev.start}..${prev.end})` });
    }
  }
  return issues;
}

/** The shape name (ANSWER_SHAPES) of an answer body. */
function answerShapeOfBody(answer: AnswerBody): string {
  if ("label" in answer) return ANSWER_SHAPES.single_choice;
  if ("labels" in answer) return ANSWER_SHAPES.multi_label_classification;
  if ("boxes" in answer) return ANSWER_SHAPES.bounding_box;
  return ANSWER_SHAPES.text_span;
}
