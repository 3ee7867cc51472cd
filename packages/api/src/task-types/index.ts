/**
 * The wire half of the task types (contract §task-types): per type, its `label_spec` and its answer
 * body (`POST /v1/labeling/claims/{id}/label`), as zod schemas of their structure and limits, its answer checks
 * and its canonical form. Each type is one module, task-types/<type>/index.ts (module.ts: the interface),
 * collected in registry.ts; the functions here walk the registry. What an answer means for one task's
 * consensus is the type's module in @labelgate/quality (`qualityTaskTypeOf`).
 *
 * | `type`                        | `label_spec`                | answer                                   |
 * |-------------------------------|-----------------------------|------------------------------------------|
 * | any other value (single choice) | `{question, options}`     | `{label}`                                |
 * | `multi_label_classification`  | `{question, options}`       | `{labels: [option, ...]}` (a set)        |
 * | `bounding_box`                | `{question, classes}`       | `{boxes: [{label, x, y, w, h}]}` (pixels) |
 * | `text_span`                   | `{question, entity_types}`  | `{spans: [{start, end, label}]}` (code points, end exclusive) |
 * | `free_text`                   | `{question, max_length?, normalize?}` | `{text}`                       |
 *
 * Limits: at most MAX_CHOICES options, classes or entity types; at most MAX_PARTS boxes or spans per answer;
 * a `data_text` of at most MAX_TEXT_CODE_POINTS; an answer body of at most MAX_ANSWER_BYTES (413 beyond).
 */
import type { z } from "zod";
import type { AnswerIssue, AnyWireTaskType, ItemContext } from "./module";
import { type WIRE_TASK_TYPE_LIST, WIRE_TASK_TYPES, wireTaskTypeOf } from "./registry";

export {
  type AnswerIssue,
  type AnyWireTaskType,
  codePointLength,
  defineWireTaskType,
  type ItemContext,
  MAX_ANSWER_BYTES,
  MAX_CHOICES,
  MAX_PARTS,
  MAX_TEXT_CODE_POINTS,
  type TaskBodyParts,
  unionMembers,
  type WireTaskType,
} from "./module";
export * from "./registry";

type WireModule = (typeof WIRE_TASK_TYPE_LIST)[number];
/** Any task's label_spec (the union of the registry's `labelSpec`s). */
export type AnyLabelSpec = z.output<WireModule["labelSpec"]>;
/** Any answer body (the union of the registry's `answer`s). */
export type AnswerBody = z.output<WireModule["answer"]>;

const MODULES = Object.values(WIRE_TASK_TYPES) as readonly AnyWireTaskType[];

/** The label_spec schema of a task type. */
export function labelSpecSchemaOf(type: string): z.ZodType<AnyLabelSpec> {
  return wireTaskTypeOf(type).labelSpec as z.ZodType<AnyLabelSpec>;
}

/**
 * The label_spec of a stored task, job or label space: a reserved type's as stored (its `label_spec` column),
 * else single choice's question and options (the column is null for single choice).
 */
export function storedLabelSpec(stored: { labelSpec: unknown; question: string; options: string[] }): AnyLabelSpec {
  return (stored.labelSpec as AnyLabelSpec | null) ?? { question: stored.question, options: stored.options };
}

/**
 * The names a task's label_spec offers, by its `type`'s module: the options, classes or entity types (the
 * module's `choicesField`), else the module's `choices` of the spec (pairwise: a, b[, tie]); empty for a type
 * whose answers name none (free text). The type is given, never guessed from the spec's fields.
 */
export function choicesOf(type: string, spec: AnyLabelSpec): string[] {
  const module = wireTaskTypeOf(type) as AnyWireTaskType;
  if (module.choicesField !== null) return (spec as unknown as Record<string, string[]>)[module.choicesField] ?? [];
  return module.choices?.(spec) ?? [];
}

/** The label_spec field that holds a task type's choices (`options`, `classes`, `entity_types`), null for none. */
export function choicesFieldOf(type: string): "options" | "classes" | "entity_types" | null {
  return wireTaskTypeOf(type).choicesField;
}

/** The answer schema of a task type (structure and limits only). */
export function answerSchemaOf(type: string): z.ZodType<AnswerBody> {
  return wireTaskTypeOf(type).answer as z.ZodType<AnswerBody>;
}

/** How the answer of each type is written, for messages. */
export const ANSWER_SHAPES = Object.fromEntries(MODULES.map((m) => [m.name, m.answerShape])) as Record<
  keyof typeof WIRE_TASK_TYPES,
  string
>;

/** The shape name of a task type's answer (ANSWER_SHAPES). */
export function answerShapeOf(type: string): string {
  return wireTaskTypeOf(type).answerShape;
}

/**
 * What is wrong with an answer of the right shape (the type's answer schema) for one task: the type module's
 * `answerIssues` (an option, class or entity type not in `spec`; a repeated option; a box past the item's size
 * when it is known; a span with `end <= start`, past the text when it is known, or overlapping another), or,
 * for an answer of another type's shape, that shape's message. Empty when the answer is fine.
 */
export function answerIssues(type: string, spec: AnyLabelSpec, answer: AnswerBody, item: ItemContext = {}): AnswerIssue[] {
  const module = wireTaskTypeOf(type) as AnyWireTaskType;
  if (!(module.answerKey in answer)) return [{ path: [], message: `a ${module.title} task's answer is ${module.answerShape}` }];
  return module.answerIssues(spec, answer, item);
}

/** The answer with its parts in canonical order (the type module's `canonicalAnswer`). */
export function canonicalAnswerOf(type: string, spec: AnyLabelSpec, answer: AnswerBody): AnswerBody {
  return (wireTaskTypeOf(type) as AnyWireTaskType).canonicalAnswer(spec, answer) as AnswerBody;
}

/**
 * The item fields a manifest line of a job of `type` carries (the type module's `task.lineFields`, e.g. pairwise's
 * `data_text`, `data_url_b`, `data_text_b`; docs/decisions/0305), checked as a task body's: each by its schema, then
 * the body's `issues` over `data_url` and them. A field absent or null is not given.
 * @returns the fields given (strings, as the task's columns of the same names store them) and the problems, each with
 * its path in the line; both empty for a type whose lines carry no such fields
 */
export function manifestLineItems(
  type: string,
  dataUrl: string,
  line: Record<string, unknown>,
): { items: Record<string, string>; issues: AnswerIssue[] } {
  const task = (wireTaskTypeOf(type) as AnyWireTaskType).task;
  const items: Record<string, string> = {};
  const issues: AnswerIssue[] = [];
  if (!task?.lineFields) return { items, issues };
  const names: readonly string[] = task.lineFields;
  for (const name of names) {
    const given = line[name];
    if (given === undefined || given === null) continue;
    const parsed = (task.fields[name] as z.ZodType).safeParse(given);
    if (!parsed.success)
      for (const issue of parsed.error.issues) issues.push({ path: [name, ...issue.path.map(String)], message: issue.message });
    else items[name] = parsed.data as string;
  }
  if (issues.length === 0 && task.issues)
    for (const issue of task.issues({ data_url: dataUrl, ...items })) issues.push({ path: issue.path, message: issue.message });
  return { items, issues };
}

/**
 * The item fields a task body of `type` takes beside `data_url` (the type module's `task.fields`): `data_text` for
 * text_span; `data_text`, `data_url_b` and `data_text_b` for pairwise_comparison; none for the others.
 */
export function itemFieldsOf(type: string): string[] {
  return Object.keys((wireTaskTypeOf(type) as AnyWireTaskType).task?.fields ?? {});
}
