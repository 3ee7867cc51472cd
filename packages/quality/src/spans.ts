/**
 * Consensus of `text_span` tasks (contract §task-types): each labeler answers spans `{start, end, label}` of a text, offsets in
 * Unicode code points, end exclusive. The consensus is token-level Dawid-Skene (the "DS" aggregate of Nguyen,
 * Wallace, Li, Nenkova & Lease 2017, "Aggregating and predicting sequence labels from crowd annotations", ACL):
 *
 * 1. The text is cut into tokens: runs of word characters (Unicode letters, numbers, `_`) and every other
 *    non-space character on its own: Python's `\w+|[^\w\s]`, the tokenization of the PICO crowd data's README, so
 *    that the benchmark measures what the data's reference figures measure.
 * 2. Each answer becomes BIO tags per entity type (Ramshaw & Marcus 1995, "Text chunking using transformation-based
 *    learning"): B on the first token a span of type e overlaps, I on its later tokens, O elsewhere; a token is
 *    inside a span when they share at least one code point (`bioTags`).
 * 3. Per entity type, a Dawid-Skene space over the tokens with two options, inside (B or I) and outside (O):
 *    fit.ts and model.ts, with their hierarchical shrinkage of each labeler's confusion matrix to the population and
 *    their calibration. Why inside/outside and not B/I/O as three options: where labelers disagree is the
 *    boundaries, and there a labeler whose span starts one token earlier says I where another says B. Both say the
 *    token is inside; as three options that counts as a disagreement, in the token's posterior and in both
 *    labelers' matrices. On the PICO crowd (crowd-spans, 191 abstracts) the three-option space gave exact-span F1
 *    49.2 against 53.1 for inside/outside, at the same token F1 (74.3; docs/notes/types.md). The B tags still
 *    decide where touching spans split (step 4). One space per type (binary relevance over types, as for
 *    multi-label) keeps each space at two options for any number of types. A task enters the fit of type e only
 *    when one of its labelers (or its gold) used e; then with all its tokens, since the tokens every labeler leaves
 *    outside carry each labeler's specificity (fitting only the tokens some labeler marked fell to token F1 70.4).
 * 4. Decoding: each token goes to the type with the largest P(inside), when that is above 0.5; a run of tokens of
 *    one type is a span, split before a token that more of the labelers who have it inside mark B than I (they
 *    start a span there). Offsets are the first token's start and the last token's end: consensus spans lie on
 *    token boundaries.
 * 5. `confidence` of a span = (1 - P(inside) of the token before) x prod P(inside) of its tokens x (1 - P(inside)
 *    of the token after), with tokens independent given the model: the probability that its token extent is
 *    exactly right (a neighbour that belongs to a touching consensus span of the same type counts 1: the split is
 *    taken from the labelers' B tags, not modelled). `taskConfidence` = the product over every token and type of
 *    the posterior of its decoded side.
 */
import { byLabeler } from "./answers";
import { refit } from "./fit";
import { emptySpace, type QualityModel, scoreTask, type Vote } from "./model";
import type { Part } from "./parts";
import { LabelTable } from "./table";

/** BIO tags of `bioTags`. */
export const TAG_O = 0;
export const TAG_B = 1;
export const TAG_I = 2;

/** Options of a type's token space: outside (O) and inside (B or I). */
export const OUTSIDE = 0;
export const INSIDE = 1;

/** A token: code-point offsets [start, end) into the text. */
export interface Token {
  start: number;
  end: number;
}

/** A span with its entity type as an index into the label space's `entity_types`. Offsets in code points, end exclusive. */
export interface TypedSpan {
  start: number;
  end: number;
  type: number;
}

/** One labeler's answer to a span task. */
export interface SpanAnswer {
  labelerId: string;
  spans: readonly TypedSpan[];
}

/** A task for the fit: its tokens and answers, and its gold spans when it is a gold task. */
export interface SpanTask {
  id: string;
  tokens: readonly Token[];
  answers: readonly SpanAnswer[];
  gold?: readonly TypedSpan[];
}

/** The model of a span space: one Dawid-Skene space (inside / outside) per entity type. */
export interface SpanModel {
  types: number;
  perType: QualityModel[];
}

/** A consensus span (code points, end exclusive) with its confidence. */
export interface ConsensusSpan extends TypedSpan {
  /** P(this exact token extent), tokens independent given the model (module doc, step 5) */
  confidence: number;
  /** the span's first and last token indexes (inclusive) */
  firstToken: number;
  lastToken: number;
}

/** The consensus of one span task. */
export interface SpanConsensus {
  spans: ConsensusSpan[];
  /** P(every token's decoded side is right, for every type), tokens and types independent given the model */
  taskConfidence: number;
  /** the parts of the stopping rule (parts.ts): per type, each token some labeler marked, plus one for the rest */
  parts: Part[];
  /** per type, per token: calibrated P(inside) */
  insidePosteriors: Float64Array[];
}

// Python 3's \s for str patterns (str.isspace): differs from JavaScript's \s by \x1c-\x1f and \x85 (in) and \ufeff (out).
const PY_SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
// Python 3's \w for str patterns: letters, numbers (Nd, Nl, No) and the underscore.
const TOKEN = new RegExp(`[\\p{L}\\p{N}_]+|[^\\p{L}\\p{N}_${PY_SPACE}]`, "gu");

/**
 * The tokens of a text (code-point offsets): Python's `\w+|[^\w\s]` over Unicode text, i.e. runs of letters,
 * numbers and `_`, and every other non-whitespace character alone.
 */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  // offsets in code points: count the code points between matches (a surrogate pair is one)
  let unit = 0;
  let point = 0;
  for (const m of text.matchAll(TOKEN)) {
    point += codePointCount(text, unit, m.index);
    const length = codePointCount(m[0], 0, m[0].length);
    tokens.push({ start: point, end: point + length });
    point += length;
    unit = m.index + m[0].length;
  }
  return tokens;
}

/** Number of code points of `text` between UTF-16 offsets from and to. */
function codePointCount(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Length of a text in Unicode code points (the contract's count, @labelgate/api). */
export { codePointLength } from "@labelgate/api";

/** Index of the first token whose end is after `offset` (binary search; tokens sorted, disjoint). */
function firstTokenEndingAfter(tokens: readonly Token[], offset: number): number {
  let lo = 0;
  let hi = tokens.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((tokens[mid] as Token).end > offset) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The token range [first, last] (inclusive) a span overlaps by at least one code point, or null when none. */
export function spanTokens(tokens: readonly Token[], span: { start: number; end: number }): { first: number; last: number } | null {
  const first = firstTokenEndingAfter(tokens, span.start);
  if (first >= tokens.length || (tokens[first] as Token).start >= span.end) return null;
  let last = first;
  while (last + 1 < tokens.length && (tokens[last + 1] as Token).start < span.end) last++;
  return { first, last };
}

/**
 * BIO tags of one answer, per entity type (`types` arrays of one tag per token): the first token a span of type
 * e overlaps is B, its later tokens I, every other token O. Where spans of one type overlap (not a valid answer,
 * but tolerated here), a token that begins any of them is B.
 * @throws RangeError for a type outside 0..types-1
 */
export function bioTags(tokens: readonly Token[], spans: readonly TypedSpan[], types: number): Uint8Array[] {
  const tags = Array.from({ length: types }, () => new Uint8Array(tokens.length));
  const sorted = [...spans].sort((a, b) => a.start - b.start || a.end - b.end || a.type - b.type);
  for (const span of sorted) {
    if (!Number.isInteger(span.type) || span.type < 0 || span.type >= types)
      throw new RangeError(`entity type index must be in 0..${types - 1}, got ${span.type}`);
    const range = spanTokens(tokens, span);
    if (!range) continue;
    const row = tags[span.type] as Uint8Array;
    row[range.first] = TAG_B;
    for (let t = range.first + 1; t <= range.last; t++) if (row[t] !== TAG_B) row[t] = TAG_I;
  }
  return tags;
}

/**
 * The spans of one type's tag sequence, as inclusive token ranges: a span starts at B, or at I after O (a lenient
 * reading of an I with no B), and runs over the I tokens that follow.
 */
export function tagsToRanges(tags: ArrayLike<number>): { first: number; last: number }[] {
  const out: { first: number; last: number }[] = [];
  let open = -1;
  for (let t = 0; t < tags.length; t++) {
    const tag = tags[t] as number;
    if (tag === TAG_B || (tag === TAG_I && open < 0)) {
      if (open >= 0) out.push({ first: open, last: t - 1 });
      open = t;
    } else if (tag === TAG_O && open >= 0) {
      out.push({ first: open, last: t - 1 });
      open = -1;
    }
  }
  if (open >= 0) out.push({ first: open, last: tags.length - 1 });
  return out;
}

function checkTypes(types: number): void {
  if (!Number.isInteger(types) || types < 1 || types > 50) throw new RangeError(`a span space has 1..50 entity types, got ${types}`);
}

/** The model of a span space with no labels yet. */
export function emptySpanModel(types: number): SpanModel {
  checkTypes(types);
  return { types, perType: Array.from({ length: types }, () => ({ space: emptySpace(2), labelers: new Map() })) };
}

/** Options of `fitSpans`. */
export interface SpanFitOptions {
  /** the previous model (same number of types), to warm-start each type's fit */
  previous?: SpanModel;
  /** EM iteration limit per type (fit.ts) */
  maxIterations?: number;
}

/** Whether a BIO tag is inside a span. */
const inside = (tag: number): number => (tag === TAG_O ? OUTSIDE : INSIDE);

/**
 * Fits the per-type token Dawid-Skene models to every answer of the space (module doc, step 3); a gold task's
 * tokens are clamped to the side of its gold spans. Deterministic for a given task order.
 * @throws RangeError on a type index out of range, two answers of one labeler in a task, or a `previous` of
 *   another number of types
 */
export function fitSpans(types: number, tasks: readonly SpanTask[], options: SpanFitOptions = {}): SpanModel {
  checkTypes(types);
  if (options.previous && options.previous.types !== types)
    throw new RangeError(`previous model has ${options.previous.types} types, expected ${types}`);
  const tables = Array.from({ length: types }, () => new LabelTable(2));
  for (const task of tasks) {
    const answers = byLabeler(task.answers);
    const tags = answers.map((a) => bioTags(task.tokens, a.spans, types));
    const gold = task.gold ? bioTags(task.tokens, task.gold, types) : null;
    for (let e = 0; e < types; e++) {
      const used = (rows: readonly Uint8Array[] | null) => rows !== null && (rows[e] as Uint8Array).some((tag) => tag !== TAG_O);
      if (!tags.some(used) && !used(gold)) continue;
      const table = tables[e] as LabelTable;
      for (let t = 0; t < task.tokens.length; t++) {
        const id = `${task.id}\u0000${t}`;
        answers.forEach((a, i) => {
          table.add(id, a.labelerId, inside(((tags[i] as Uint8Array[])[e] as Uint8Array)[t] as number));
        });
        if (gold) table.setGold(id, inside((gold[e] as Uint8Array)[t] as number));
      }
    }
  }
  return {
    types,
    perType: tables.map((table, e) => refit(table, options.previous?.perType[e], { maxIterations: options.maxIterations }).model),
  };
}

/**
 * The consensus of one span task from its tokens, its answers (one per labeler) and the space's model. Labelers
 * the model does not know count at the population mean. The answers are taken in labeler-id order, so their order
 * does not change the result.
 * @throws RangeError on a type out of range or two answers of one labeler
 */
export function aggregateSpans(model: SpanModel, tokens: readonly Token[], input: readonly SpanAnswer[]): SpanConsensus {
  const { types } = model;
  const answers = byLabeler(input);
  const tags = answers.map((a) => bioTags(tokens, a.spans, types));
  const T = tokens.length;
  const parts: Part[] = [];
  const insidePosteriors: Float64Array[] = [];
  for (let e = 0; e < types; e++) {
    const typeModel = model.perType[e] as QualityModel;
    const labelers = answers.map((a) => typeModel.labelers.get(a.labelerId));
    const post = new Float64Array(T);
    // every labeler says outside: one posterior for all those tokens
    const quiet = scoreTask(
      typeModel.space,
      labelers.map((labeler) => ({ labeler, option: OUTSIDE })),
    ).posterior;
    let quietTokens = 0;
    if (!answers.some((a) => a.spans.some((sp) => sp.type === e))) {
      // nobody used this type: every token is quiet (a text of 20,000 tokens and 50 types stays cheap)
      post.fill(quiet[INSIDE] as number);
      if (T > 0) parts.push({ posterior: quiet, counts: [answers.length, 0] });
      insidePosteriors.push(post);
      continue;
    }
    for (let t = 0; t < T; t++) {
      let marked = 0;
      const votes: Vote[] = answers.map((_, i) => {
        const option = inside(((tags[i] as Uint8Array[])[e] as Uint8Array)[t] as number);
        marked += option;
        return { labeler: labelers[i], option };
      });
      if (marked === 0) {
        post[t] = quiet[INSIDE] as number;
        quietTokens++;
        continue;
      }
      const p = scoreTask(typeModel.space, votes).posterior;
      post[t] = p[INSIDE] as number;
      parts.push({ posterior: p, counts: [answers.length - marked, marked] });
    }
    if (quietTokens > 0) parts.push({ posterior: quiet, counts: [answers.length, 0] });
    insidePosteriors.push(post);
  }
  const spans = decode(tokens, insidePosteriors, tags);
  const decodedType = new Int32Array(T).fill(-1);
  for (const s of spans) for (let t = s.firstToken; t <= s.lastToken; t++) decodedType[t] = s.type;
  let logWhole = 0;
  for (let e = 0; e < types; e++) {
    const post = insidePosteriors[e] as Float64Array;
    for (let t = 0; t < T; t++) logWhole += Math.log(decodedType[t] === e ? (post[t] as number) : 1 - (post[t] as number));
  }
  return { spans, taskConfidence: Math.exp(logWhole), parts, insidePosteriors };
}

/** Posterior decoding of the tokens (module doc, step 4) and each span's confidence (step 5). */
function decode(tokens: readonly Token[], posteriors: readonly Float64Array[], tags: readonly Uint8Array[][]): ConsensusSpan[] {
  const T = tokens.length;
  const typeOf = new Int32Array(T).fill(-1);
  for (let t = 0; t < T; t++) {
    let best = -1;
    let bestInside = 0.5;
    posteriors.forEach((post, e) => {
      if ((post[t] as number) > bestInside) {
        bestInside = post[t] as number;
        best = e;
      }
    });
    typeOf[t] = best;
  }
  // a token starts a new span of type e inside a run when more labelers mark it B than I
  const startsHere = (t: number, e: number): boolean => {
    let b = 0;
    let i = 0;
    for (const row of tags) {
      const tag = (row[e] as Uint8Array)[t] as number;
      if (tag === TAG_B) b++;
      else if (tag === TAG_I) i++;
    }
    return b > i;
  };
  const spans: ConsensusSpan[] = [];
  let t = 0;
  while (t < T) {
    const e = typeOf[t] as number;
    if (e < 0) {
      t++;
      continue;
    }
    let last = t;
    while (last + 1 < T && typeOf[last + 1] === e && !startsHere(last + 1, e)) last++;
    const post = posteriors[e] as Float64Array;
    let confidence = 1;
    for (let u = t; u <= last; u++) confidence *= post[u] as number;
    if (t > 0 && typeOf[t - 1] !== e) confidence *= 1 - (post[t - 1] as number);
    if (last + 1 < T && typeOf[last + 1] !== e) confidence *= 1 - (post[last + 1] as number);
    spans.push({
      start: (tokens[t] as Token).start,
      end: (tokens[last] as Token).end,
      type: e,
      confidence,
      firstToken: t,
      lastToken: last,
    });
    t = last + 1;
  }
  return spans;
}
