/**
 * The three reserved task types of DESIGN §12, as a small registry the API layer can wire in: per type, its
 * `label_spec` schema, its answer schema (zod: structure and meaning, so an invalid answer is a 400 `validation
 * failed` with details like every other body), its canonical answer, its model (empty, fit) and its aggregator.
 * Every other `type` value is single choice (model.ts / decision.ts), exactly as before.
 *
 * Wire shapes (DESIGN §12):
 * - `multi_label_classification`: label_spec `{question, options}`; answer `{labels: [option, ...]}` (a set, may
 *   be empty);
 * - `bounding_box`: label_spec `{question, classes}`; answer `{boxes: [{label, x, y, w, h}]}` in pixels of the item
 *   (may be empty);
 * - `text_span`: label_spec `{question, entity_types}`; answer `{spans: [{start, end, label}]}`, offsets in
 *   Unicode code points of the text, end exclusive.
 * Limits: at most MAX_CHOICES options, classes or entity types; at most MAX_PARTS boxes or spans per answer; a
 * text of at most MAX_TEXT_CODE_POINTS. Invalid: an unknown option, class or type; a box outside the item when
 * its size is known; spans out of range or overlapping; a repeated option.
 *
 * The consensus of a task (`TypedConsensus`): `consensus` (the answer shape, each part with its confidence),
 * `consensusLabel` (the canonical JSON of `consensus` without the confidences: keys sorted, no spaces; DESIGN §12
 * `consensus_label`), `confidence` (P(the whole consensus is right): see each aggregator's module for its
 * definition), `parts` (for `decideParts`) and, for multi-label, the posterior per option.
 */
import { z } from "zod";
import { type Box, type BoxModel, emptyBoxModel, fitBoxes, aggregateBoxes as runBoxes } from "./boxes";
import { emptyMultiLabelModel, fitMultiLabel, type MultiLabelModel, aggregateMultiLabel as runMultiLabel } from "./multilabel";
import type { Part } from "./parts";
import { codePointLength, emptySpanModel, fitSpans, aggregateSpans as runSpans, type SpanModel, type Token, tokenize } from "./spans";

/** The reserved `type` values (DESIGN §12). */
export const RESERVED_TYPES = ["multi_label_classification", "bounding_box", "text_span"] as const;
export type ReservedType = (typeof RESERVED_TYPES)[number];

/** Whether a task `type` is one of the reserved types (every other value is single choice). */
export function isReservedType(type: string): type is ReservedType {
  return (RESERVED_TYPES as readonly string[]).includes(type);
}

/** At most this many options, classes or entity types in a label_spec. */
export const MAX_CHOICES = 50;
/** At most this many boxes or spans in one answer. */
export const MAX_PARTS = 500;
/** At most this many code points in a `text_span` task's text. */
export const MAX_TEXT_CODE_POINTS = 100_000;
/** An answer body larger than this is refused before parsing (413; enforced by the HTTP layer). */
export const MAX_ANSWER_BYTES = 256 * 1024;

const question = z.string().trim().min(1).max(2000);
const choices = (what: string) =>
  z
    .array(z.string().trim().min(1).max(200))
    .min(1)
    .max(MAX_CHOICES)
    .refine((o) => new Set(o).size === o.length, `${what} must be unique`);

/** label_spec of multi_label_classification: a question and 1..50 unique options. */
export const multiLabelSpec = z.object({ question, options: choices("options") }).strict();
export type MultiLabelSpec = z.output<typeof multiLabelSpec>;
/** label_spec of bounding_box: a question and 1..50 unique object classes. */
export const boundingBoxSpec = z.object({ question, classes: choices("classes") }).strict();
export type BoundingBoxSpec = z.output<typeof boundingBoxSpec>;
/** label_spec of text_span: a question and 1..50 unique entity types. */
export const textSpanSpec = z.object({ question, entity_types: choices("entity_types") }).strict();
export type TextSpanSpec = z.output<typeof textSpanSpec>;

/** What is known of the item when an answer is checked or aggregated. */
export interface ItemContext {
  /** image size in pixels, when known: boxes must lie inside it */
  width?: number;
  height?: number;
  /** the task's text (text_span): spans must lie inside it, and the consensus needs its tokens */
  text?: string;
}

export interface MultiLabelAnswerBody {
  labels: string[];
}
export interface BoxAnswerBody {
  boxes: { label: string; x: number; y: number; w: number; h: number }[];
}
export interface SpanAnswerBody {
  spans: { start: number; end: number; label: string }[];
}

/** The answer schema of a multi-label task: `{labels}`, each one of `spec.options`, no repeats. */
export function multiLabelAnswer(spec: MultiLabelSpec): z.ZodType<MultiLabelAnswerBody> {
  const known = new Set(spec.options);
  return z
    .object({ labels: z.array(z.string()).max(MAX_CHOICES) })
    .strict()
    .superRefine((a, ctx) => {
      const seen = new Set<string>();
      a.labels.forEach((l, i) => {
        if (!known.has(l)) ctx.addIssue({ code: "custom", path: ["labels", i], message: `unknown option "${l}"` });
        else if (seen.has(l)) ctx.addIssue({ code: "custom", path: ["labels", i], message: `option "${l}" is repeated` });
        seen.add(l);
      });
    });
}

const coordinate = z.number().finite();

/** The answer schema of a box task: `{boxes}`, at most MAX_PARTS, each of a known class, w and h > 0, inside the item when its size is known. */
export function boxAnswer(spec: BoundingBoxSpec, item: ItemContext = {}): z.ZodType<BoxAnswerBody> {
  const known = new Set(spec.classes);
  const box = z
    .object({ label: z.string(), x: coordinate.min(0), y: coordinate.min(0), w: coordinate.positive(), h: coordinate.positive() })
    .strict();
  return z
    .object({ boxes: z.array(box).max(MAX_PARTS) })
    .strict()
    .superRefine((a, ctx) => {
      a.boxes.forEach((b, i) => {
        if (!known.has(b.label)) ctx.addIssue({ code: "custom", path: ["boxes", i, "label"], message: `unknown class "${b.label}"` });
        if (item.width !== undefined && b.x + b.w > item.width) {
          ctx.addIssue({
            code: "custom",
            path: ["boxes", i],
            message: `box ends at x = ${b.x + b.w}, outside the item (width ${item.width})`,
          });
        }
        if (item.height !== undefined && b.y + b.h > item.height) {
          ctx.addIssue({
            code: "custom",
            path: ["boxes", i],
            message: `box ends at y = ${b.y + b.h}, outside the item (height ${item.height})`,
          });
        }
      });
    });
}

/**
 * The answer schema of a span task: `{spans}`, at most MAX_PARTS, each of a known entity type, integer offsets
 * 0 <= start < end (<= the text's length in code points when the text is known), no two overlapping.
 */
export function spanAnswer(spec: TextSpanSpec, item: ItemContext = {}): z.ZodType<SpanAnswerBody> {
  const known = new Set(spec.entity_types);
  const length = item.text === undefined ? undefined : codePointLength(item.text);
  const span = z.object({ start: z.number().int().min(0), end: z.number().int().min(1), label: z.string() }).strict();
  return z
    .object({ spans: z.array(span).max(MAX_PARTS) })
    .strict()
    .superRefine((a, ctx) => {
      a.spans.forEach((s, i) => {
        if (!known.has(s.label)) ctx.addIssue({ code: "custom", path: ["spans", i, "label"], message: `unknown entity type "${s.label}"` });
        if (s.end <= s.start) ctx.addIssue({ code: "custom", path: ["spans", i], message: "end must be greater than start" });
        if (length !== undefined && s.end > length) {
          ctx.addIssue({
            code: "custom",
            path: ["spans", i, "end"],
            message: `end ${s.end} is past the end of the text (${length} code points)`,
          });
        }
      });
      const order = a.spans.map((_, i) => i).sort((p, q) => (a.spans[p]?.start ?? 0) - (a.spans[q]?.start ?? 0) || p - q);
      for (let k = 1; k < order.length; k++) {
        const prev = a.spans[order[k - 1] as number] as SpanAnswerBody["spans"][number];
        const cur = a.spans[order[k] as number] as SpanAnswerBody["spans"][number];
        if (cur.start < prev.end) {
          ctx.addIssue({
            code: "custom",
            path: ["spans", order[k] as number],
            message: `overlaps span ${order[k - 1]} (${prev.start}..${prev.end})`,
          });
        }
      }
    });
}

/** A labeler's answer as the aggregators take it. */
export interface LabeledAnswer<A> {
  labelerId: string;
  answer: A;
}

/** The consensus of a task of a reserved type. */
export interface TypedConsensus<C> {
  /** the consensus answer, each part with its `confidence` */
  consensus: C;
  /** canonical JSON of `consensus` without the confidences (DESIGN §12 `consensus_label`) */
  consensusLabel: string;
  /** P(the whole consensus is right) under the type's model */
  confidence: number;
  /** parts of the stopping rule (parts.ts `decideParts`) */
  parts: Part[];
  /** multi-label: calibrated P(option applies) per option */
  posterior?: Record<string, number>;
}

/**
 * JSON with object keys sorted and no spaces (the canonical form that settlement hashes). Numbers as JSON.stringify
 * writes them. @throws TypeError on a value JSON cannot hold (undefined, a function, a non-finite number)
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot hold ${value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  throw new TypeError(`canonical JSON cannot hold a ${typeof value}`);
}

/** One task for a type's fit: its answers, its gold answer if it is a gold task, its item. */
export interface TypedTask<A> {
  id: string;
  answers: readonly LabeledAnswer<A>[];
  gold?: A;
  item?: ItemContext;
}

/** A registry entry: everything the gateway, store and worker need of a reserved type. */
export interface TaskTypeDefinition<Spec, A, Model, C> {
  type: ReservedType;
  labelSpec: z.ZodType<Spec>;
  answerSchema(spec: Spec, item?: ItemContext): z.ZodType<A>;
  /** the answer with its parts in canonical order (what a gold answer is compared and hashed as) */
  canonicalAnswer(spec: Spec, answer: A): A;
  emptyModel(spec: Spec): Model;
  /** refit of the space's model on every task (gold tasks clamped), warm-started from `previous` */
  fit(spec: Spec, tasks: readonly TypedTask<A>[], previous?: Model): Model;
  /** consensus of one task; answers must be valid (answerSchema) */
  aggregate(spec: Spec, model: Model, answers: readonly LabeledAnswer<A>[], item?: ItemContext): TypedConsensus<C>;
}

/** Consensus shapes. */
export interface MultiLabelConsensusBody {
  labels: string[];
  /** per option: the posterior of its decided side (chosen or not) */
  confidence: Record<string, number>;
}
export interface BoxConsensusBody {
  boxes: { label: string; x: number; y: number; w: number; h: number; confidence: number; support: number }[];
}
export interface SpanConsensusBody {
  spans: { start: number; end: number; label: string; confidence: number }[];
}

function indexer(names: readonly string[], what: string): (name: string) => number {
  const index = new Map(names.map((n, i) => [n, i]));
  return (name) => {
    const i = index.get(name);
    if (i === undefined) throw new RangeError(`unknown ${what} "${name}"`);
    return i;
  };
}

const byStartEndLabel = (a: { start: number; end: number; label: string }, b: { start: number; end: number; label: string }) =>
  a.start - b.start || a.end - b.end || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0);

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

function toBoxes(spec: BoundingBoxSpec, answer: BoxAnswerBody): Box[] {
  const cls = indexer(spec.classes, "class");
  return answer.boxes.map((b) => ({ x: b.x, y: b.y, w: b.w, h: b.h, label: cls(b.label) }));
}

export const boundingBoxType: TaskTypeDefinition<BoundingBoxSpec, BoxAnswerBody, BoxModel, BoxConsensusBody> = {
  type: "bounding_box",
  labelSpec: boundingBoxSpec,
  answerSchema: (spec, item) => boxAnswer(spec, item),
  canonicalAnswer: (_spec, answer) => ({
    boxes: [...answer.boxes].sort(
      (a, b) => a.x - b.x || a.y - b.y || a.w - b.w || a.h - b.h || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0),
    ),
  }),
  emptyModel: (spec) => emptyBoxModel(spec.classes.length),
  fit: (spec, tasks, previous) =>
    fitBoxes(
      spec.classes.length,
      tasks.map((t) => ({
        id: t.id,
        answers: t.answers.map((a) => ({ labelerId: a.labelerId, boxes: toBoxes(spec, a.answer) })),
        gold: t.gold ? toBoxes(spec, t.gold) : undefined,
      })),
      { previous },
    ),
  aggregate: (spec, model, answers) => {
    const r = runBoxes(
      model,
      answers.map((a) => ({ labelerId: a.labelerId, boxes: toBoxes(spec, a.answer) })),
    );
    const boxes = r.boxes.map((b) => ({
      label: spec.classes[b.label] as string,
      x: b.x,
      y: b.y,
      w: b.w,
      h: b.h,
      confidence: b.confidence,
      support: b.support,
    }));
    return {
      consensus: { boxes },
      consensusLabel: canonicalJson({ boxes: boxes.map(({ label, x, y, w, h }) => ({ label, x, y, w, h })) }),
      confidence: r.taskConfidence,
      parts: r.parts,
    };
  },
};

function toSpans(spec: TextSpanSpec, answer: SpanAnswerBody) {
  const type = indexer(spec.entity_types, "entity type");
  return answer.spans.map((s) => ({ start: s.start, end: s.end, type: type(s.label) }));
}

function tokensOf(item: ItemContext | undefined): Token[] {
  if (item?.text === undefined) throw new RangeError("a text_span task needs its text (item.text) to be aggregated");
  return tokenize(item.text);
}

export const textSpanType: TaskTypeDefinition<TextSpanSpec, SpanAnswerBody, SpanModel, SpanConsensusBody> = {
  type: "text_span",
  labelSpec: textSpanSpec,
  answerSchema: (spec, item) => spanAnswer(spec, item),
  canonicalAnswer: (_spec, answer) => ({ spans: [...answer.spans].sort(byStartEndLabel) }),
  emptyModel: (spec) => emptySpanModel(spec.entity_types.length),
  fit: (spec, tasks, previous) =>
    fitSpans(
      spec.entity_types.length,
      tasks.map((t) => ({
        id: t.id,
        tokens: tokensOf(t.item),
        answers: t.answers.map((a) => ({ labelerId: a.labelerId, spans: toSpans(spec, a.answer) })),
        gold: t.gold ? toSpans(spec, t.gold) : undefined,
      })),
      { previous },
    ),
  aggregate: (spec, model, answers, item) => {
    const r = runSpans(
      model,
      tokensOf(item),
      answers.map((a) => ({ labelerId: a.labelerId, spans: toSpans(spec, a.answer) })),
    );
    const spans = r.spans.map((s) => ({
      start: s.start,
      end: s.end,
      label: spec.entity_types[s.type] as string,
      confidence: s.confidence,
    }));
    return {
      consensus: { spans },
      consensusLabel: canonicalJson({ spans: spans.map(({ start, end, label }) => ({ end, label, start })) }),
      confidence: r.taskConfidence,
      parts: r.parts,
    };
  },
};

/** The registry: one entry per reserved type. */
export const TASK_TYPES = {
  multi_label_classification: multiLabelType,
  bounding_box: boundingBoxType,
  text_span: textSpanType,
} as const;
