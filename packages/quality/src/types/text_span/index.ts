/**
 * `text_span` (contract §task-types): spans aggregated per token (spans.ts: one Dawid-Skene model of BIO tags per
 * entity type over the text's tokens); parts are the candidate spans; labeled on its text (`needsText`: a task
 * without `data_text` waits for its item); a gold answer matches on equal canonical answers; the model is
 * stored one sub-space per entity type.
 */
import { type ItemContext, spanAnswer as spanAnswerShape, type TextSpanSpec, textSpanSpec } from "@labelgate/api";
import { canonicalJson } from "@labelgate/canonical-json";
import type { z } from "zod";
import { emptySpanModel, fitSpans, aggregateSpans as runSpans, type SpanModel, type Token, tokenize } from "../../spans";
import { indexer, partsRows, refinedAnswer, type TaskTypeDefinition, typedTaskType } from "../module";

export interface SpanAnswerBody {
  spans: { start: number; end: number; label: string }[];
}
export interface SpanConsensusBody {
  spans: { start: number; end: number; label: string; confidence: number }[];
}

/**
 * The answer schema of a span task: `{spans}`, at most MAX_PARTS, each of a known entity type, integer offsets
 * 0 <= start < end (<= the text's length in code points when the text is known), no two overlapping.
 */
export function spanAnswer(spec: TextSpanSpec, item: ItemContext = {}): z.ZodType<SpanAnswerBody> {
  return refinedAnswer("text_span", spanAnswerShape, spec, item);
}

const byStartEndLabel = (a: { start: number; end: number; label: string }, b: { start: number; end: number; label: string }) =>
  a.start - b.start || a.end - b.end || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0);

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

export const textSpanQuality = typedTaskType({
  definition: textSpanType,
  rows: partsRows<SpanModel>(
    (m) => m.perType,
    (spec, perType) => ({ types: (spec as TextSpanSpec).entity_types.length, perType }),
  ),
  needsText: true,
  namesOf: (answer) => answer.spans.map((s) => s.label),
  reviewed: (_spec, answer) => ({ posterior: {}, consensus: { spans: answer.spans.map((x) => ({ ...x, confidence: 1 })) } }),
});
