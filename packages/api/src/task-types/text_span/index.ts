/**
 * `text_span` (contract §task-types): label_spec `{question, entity_types}` (1..50 unique); answer
 * `{spans: [{start, end, label}]}`, offsets in Unicode code points of the task's text, `end` exclusive (at most
 * MAX_PARTS; may be empty), each of a known entity type, 0 <= start < end <= the text's length when it is known,
 * no two overlapping; canonical form: spans sorted by start, end, label. The task's text is `data_text` (at most
 * MAX_TEXT_CODE_POINTS) or the body of its `data_url` (docs/decisions/0194).
 */
import { z } from "zod";
import {
  type AnswerIssue,
  choices,
  codePointLength,
  count,
  defineWireTaskType,
  MAX_PARTS,
  MAX_TEXT_CODE_POINTS,
  probability,
  question,
} from "../module";
import { textSpanExportRows } from "./export";

export { tagTokens } from "./export";

/** `text_span`: the question and the entity types (1..50 unique). */
export const textSpanSpec = z.object({ question, entity_types: choices("entity_types", 1) }).strict();
export type TextSpanSpec = z.output<typeof textSpanSpec>;

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
export type SpanAnswer = z.output<typeof spanAnswer>;

const byStartEndLabel = (a: { start: number; end: number; label: string }, b: { start: number; end: number; label: string }) =>
  a.start - b.start || a.end - b.end || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0);

export const textSpanWire = defineWireTaskType({
  name: "text_span",
  title: "text_span",
  labelSpec: textSpanSpec,
  choicesField: "entity_types",
  answer: spanAnswer,
  answerKey: "spans",
  answerShape: "{spans: [{start, end, label}, ...]}",
  answerIssues: (spec, answer, item) => {
    const known = new Set(spec.entity_types);
    const issues: AnswerIssue[] = [];
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
    return issues;
  },
  canonicalAnswer: (_spec, answer) => ({ spans: [...answer.spans].sort(byStartEndLabel) }),
  exportLine: {},
  exportRows: textSpanExportRows,
  responseSpec: z.strictObject({ question: z.string(), entity_types: z.array(z.string()) }),
  consensus: z.strictObject({
    spans: z.array(
      z.strictObject({
        start: count,
        end: count,
        label: z.string(),
        confidence: probability.describe("P(this exact extent and type)"),
      }),
    ),
  }),
  task: {
    fields: {
      data_text: z
        .string()
        .min(1)
        .max(4 * MAX_TEXT_CODE_POINTS)
        .refine((text) => codePointLength(text) <= MAX_TEXT_CODE_POINTS, `must be at most ${MAX_TEXT_CODE_POINTS} code points`)
        .optional()
        .describe("the text to label; without it, the body of an http(s) `data_url` (UTF-8, fetched once; the task is claimable after)"),
    },
    goldDescription: "a gold task's true spans",
    description: "A text-span task: the labeler marks every entity of the types in the text (possibly none).",
    // the text of an object URL is read only with a manifest job's credentials (docs/decisions/0194)
    issues: (t) =>
      t.data_text === undefined && /^(s3|gs):/i.test(t.data_url)
        ? [{ path: ["data_text"], message: "required when data_url is s3:// or gs:// (no credentials read it)" }]
        : [],
  },
});
