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
import {
  answerIssues,
  type BoundingBoxSpec,
  boundingBoxSpec,
  boxAnswer as boxAnswerShape,
  type ItemContext,
  MAX_ANSWER_BYTES,
  MAX_CHOICES,
  MAX_PARTS,
  MAX_TEXT_CODE_POINTS,
  type MultiLabelSpec,
  multiLabelAnswer as multiLabelAnswerShape,
  multiLabelSpec,
  RESERVED_TASK_TYPES,
  type ReservedTaskType,
  spanAnswer as spanAnswerShape,
  type TextSpanSpec,
  textSpanSpec,
} from "@labelgate/api";
import { canonicalJson } from "@labelgate/canonical-json";
import type { z } from "zod";
import { type Box, type BoxModel, emptyBoxModel, fitBoxes, aggregateBoxes as runBoxes } from "./boxes";
import { emptyMultiLabelModel, fitMultiLabel, type MultiLabelModel, aggregateMultiLabel as runMultiLabel } from "./multilabel";
import type { Part } from "./parts";
import { emptySpanModel, fitSpans, aggregateSpans as runSpans, type SpanModel, type Token, tokenize } from "./spans";

export type { BoundingBoxSpec, ItemContext, MultiLabelSpec, TextSpanSpec };
export { boundingBoxSpec, canonicalJson, MAX_ANSWER_BYTES, MAX_CHOICES, MAX_PARTS, MAX_TEXT_CODE_POINTS, multiLabelSpec, textSpanSpec };

/** The reserved `type` values (DESIGN §12). */
export const RESERVED_TYPES = RESERVED_TASK_TYPES;
export type ReservedType = ReservedTaskType;

/** Whether a task `type` is one of the reserved types (every other value is single choice). */
export function isReservedType(type: string): type is ReservedType {
  return (RESERVED_TYPES as readonly string[]).includes(type);
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

/** The wire shape (@labelgate/api) refined with the meaning of an answer for one task (`answerIssues`). */
function refined<A extends object>(
  type: ReservedType,
  shape: z.ZodType<A>,
  spec: MultiLabelSpec | BoundingBoxSpec | TextSpanSpec,
  item: ItemContext,
) {
  return shape.superRefine((answer, ctx) => {
    for (const issue of answerIssues(type, spec, answer as never, item))
      ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  });
}

/** The answer schema of a multi-label task: `{labels}`, each one of `spec.options`, no repeats. */
export function multiLabelAnswer(spec: MultiLabelSpec): z.ZodType<MultiLabelAnswerBody> {
  return refined("multi_label_classification", multiLabelAnswerShape, spec, {});
}

/** The answer schema of a box task: `{boxes}`, at most MAX_PARTS, each of a known class, w and h > 0, inside the item when its size is known. */
export function boxAnswer(spec: BoundingBoxSpec, item: ItemContext = {}): z.ZodType<BoxAnswerBody> {
  return refined("bounding_box", boxAnswerShape, spec, item);
}

/**
 * The answer schema of a span task: `{spans}`, at most MAX_PARTS, each of a known entity type, integer offsets
 * 0 <= start < end (<= the text's length in code points when the text is known), no two overlapping.
 */
export function spanAnswer(spec: TextSpanSpec, item: ItemContext = {}): z.ZodType<SpanAnswerBody> {
  return refined("text_span", spanAnswerShape, spec, item);
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
