/**
 * The text of the text-span widget, as pure functions. Every offset here is in Unicode code points (what the
 * answer carries: `start` inclusive, `end` exclusive), not in UTF-16 units: an emoji outside the BMP is one
 * code point but two units of a JavaScript string.
 */

/** A span of an answer: code points [start, end) of the text and its entity type. */
export interface Span {
  start: number;
  end: number;
  label: string;
}

/** A token of the text (a word or one punctuation mark), code points [start, end). */
export interface Token {
  start: number;
  end: number;
}

/** A run of the text between two boundaries (token or span edges), code points [start, end). */
export interface Segment {
  start: number;
  end: number;
  /** the token it is part of, or -1 (white space) */
  token: number;
  /** the span it is part of, or -1 */
  span: number;
}

/** What the keyboard moves over: a word or one punctuation mark (\w is ASCII under the `u` flag). */
export const TOKEN_PATTERN = /\w+|[^\w\s]/gu;

/** The code points of `text` (a surrogate pair is one element). */
export function codePointsOf(text: string): string[] {
  return Array.from(text);
}

/**
 * The code-point offset of UTF-16 offset `unit` in `text` (a DOM selection's offset within a text node).
 * An offset inside a surrogate pair counts that code point as selected (rounds up). Clamped to the text.
 */
export function codePointOffset(text: string, unit: number): number {
  let cp = 0;
  let i = 0;
  const stop = Math.min(unit, text.length);
  while (i < stop) {
    const c = text.codePointAt(i) as number;
    i += c > 0xffff ? 2 : 1;
    cp++;
  }
  return cp;
}

/** The tokens of `text` ({@link TOKEN_PATTERN}), in order, as code-point ranges. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let unit = 0;
  let cp = 0;
  for (const m of text.matchAll(TOKEN_PATTERN)) {
    cp += codePointOffset(text.slice(unit, m.index), m.index - unit);
    unit = m.index;
    const length = codePointOffset(m[0], m[0].length);
    tokens.push({ start: cp, end: cp + length });
    cp += length;
    unit += m[0].length;
  }
  return tokens;
}

/**
 * [start, end) shrunk to exclude white space at either end (code points of `chars`), or null when nothing
 * but white space (or nothing) is left.
 */
export function trimRange(chars: readonly string[], start: number, end: number): [number, number] | null {
  let s = Math.max(0, Math.min(start, end));
  let e = Math.min(chars.length, Math.max(start, end));
  while (s < e && /\s/u.test(chars[s] as string)) s++;
  while (e > s && /\s/u.test(chars[e - 1] as string)) e--;
  return s < e ? [s, e] : null;
}

/** Whether [a.start, a.end) and [b.start, b.end) share a code point. */
export function overlaps(a: { start: number; end: number }, b: { start: number; end: number }): boolean {
  return a.start < b.end && b.start < a.end;
}

/**
 * `spans` with `span` added: every span it overlaps is replaced by it (an answer's spans never overlap),
 * sorted by start. A span with end <= start is not added.
 */
export function addSpan(spans: readonly Span[], span: Span): Span[] {
  if (span.end <= span.start) return [...spans];
  return [...spans.filter((s) => !overlaps(s, span)), span].sort((a, b) => a.start - b.start);
}

/** `spans` without those overlapping [start, end) (for a caret, its token's range). */
export function removeSpans(spans: readonly Span[], start: number, end: number): Span[] {
  return spans.filter((s) => !overlaps(s, { start, end: Math.max(end, start + 1) }));
}

/** The tokens from `from` to `to` (token indexes, either order) as one code-point range. */
export function tokenRange(tokens: readonly Token[], from: number, to: number): [number, number] | null {
  const a = tokens[Math.min(from, to)];
  const b = tokens[Math.max(from, to)];
  return a && b ? [a.start, b.end] : null;
}

/**
 * The text cut at every token and span edge: the runs to render, each in one token (or white space) and in
 * one span (or none), covering [0, length) in order.
 */
export function segmentsOf(length: number, tokens: readonly Token[], spans: readonly Span[]): Segment[] {
  return segmentsIn({ start: 0, end: length, firstToken: 0 }, tokens, spans);
}

/**
 * {@link segmentsOf} of the code points [range.start, range.end) only (a {@link Chunk}): the runs covering
 * that range in order, cut at the edges of `tokens` (searched from index `range.firstToken`, whose indexes
 * the runs carry) and of `spans` (clipped to the range; a run's `span` indexes `spans`).
 */
export function segmentsIn(
  range: { start: number; end: number; firstToken: number },
  tokens: readonly Token[],
  spans: readonly Span[],
): Segment[] {
  const { start: from, end: to } = range;
  if (to <= from) return [];
  const clamp = (n: number) => Math.max(from, Math.min(n, to));
  const cuts = new Set<number>([from, to]);
  let first = Math.max(0, Math.min(range.firstToken, tokens.length));
  while (first > 0 && (tokens[first - 1] as Token).end > from) first--;
  for (let i = first; i < tokens.length && (tokens[i] as Token).start < to; i++) {
    const t = tokens[i] as Token;
    cuts.add(clamp(t.start)).add(clamp(t.end));
  }
  for (const s of spans) if (s.start < to && s.end > from) cuts.add(clamp(s.start)).add(clamp(s.end));
  const edges = [...cuts].sort((a, b) => a - b);
  const segments: Segment[] = [];
  let ti = first;
  let si = 0;
  const sorted = spans.map((s, i) => ({ s, i })).sort((a, b) => a.s.start - b.s.start);
  for (let k = 1; k < edges.length; k++) {
    const start = edges[k - 1] as number;
    const end = edges[k] as number;
    while (ti < tokens.length && (tokens[ti] as Token).end <= start) ti++;
    while (si < sorted.length && (sorted[si] as { s: Span }).s.end <= start) si++;
    const t = tokens[ti];
    const s = sorted[si];
    segments.push({
      start,
      end,
      token: t && t.start <= start && end <= t.end ? ti : -1,
      span: s && s.s.start <= start && end <= s.s.end ? s.i : -1,
    });
  }
  return segments;
}

/**
 * A piece of the text rendered (and re-rendered) as one unit: code points [start, end), holding the tokens
 * [firstToken, endToken). Chunks end at a token's start, never inside a token.
 */
export interface Chunk {
  start: number;
  end: number;
  firstToken: number;
  endToken: number;
}

/** Where {@link chunksOf} cuts, in code points of the chunk so far. */
export interface ChunkSizes {
  /** at a paragraph break (white space with a line feed) once the chunk has this many */
  paragraph: number;
  /** at a sentence's end (".", "!", "?" or "…" then white space) once it has this many */
  sentence: number;
  /** at the next token once it has this many (a token longer than this is one chunk) */
  max: number;
}

/** The widget's chunk sizes: a chunk is a paragraph, a few sentences, or at most about 3,000 code points. */
export const CHUNK_SIZES: ChunkSizes = { paragraph: 400, sentence: 1000, max: 3000 };

const SENTENCE_END = new Set([".", "!", "?", "…"]);

/**
 * The text (`chars`, its `tokens` from {@link tokenize}) cut into chunks covering [0, chars.length) in order,
 * each ending at a token's start ({@link ChunkSizes}: at a paragraph break, else at a sentence's end, else
 * anywhere between tokens). The widget draws each chunk as its own block and re-renders it only when its
 * spans, selection or caret change: a key press in a text of 100,000 code points then lays out one or two
 * chunks, not the whole text. An empty text has no chunk.
 */
export function chunksOf(chars: readonly string[], tokens: readonly Token[], sizes: ChunkSizes = CHUNK_SIZES): Chunk[] {
  const length = chars.length;
  if (length === 0) return [];
  const chunks: Chunk[] = [];
  let start = 0;
  let firstToken = 0;
  for (let i = 1; i < tokens.length; i++) {
    const previous = tokens[i - 1] as Token;
    const at = (tokens[i] as Token).start;
    const size = at - start;
    if (size < Math.min(sizes.paragraph, sizes.sentence, sizes.max)) continue;
    let cut = size >= sizes.max;
    if (!cut && size >= sizes.paragraph) for (let c = previous.end; c < at && !cut; c++) cut = chars[c] === "\n";
    if (!cut && size >= sizes.sentence)
      cut =
        previous.end > previous.start &&
        previous.end - previous.start === 1 &&
        SENTENCE_END.has(chars[previous.start] as string) &&
        at > previous.end;
    if (!cut) continue;
    chunks.push({ start, end: at, firstToken, endToken: i });
    start = at;
    firstToken = i;
  }
  chunks.push({ start, end: length, firstToken, endToken: tokens.length });
  return chunks;
}

/** The spans of `spans` that share a code point with `chunk`, in their order. */
export function spansIn(spans: readonly Span[], chunk: { start: number; end: number }): Span[] {
  return spans.filter((s) => overlaps(s, chunk));
}

/** `range` clipped to `chunk`, or null when they share no code point (or `range` is null). */
export function clipRange(range: readonly [number, number] | null, chunk: { start: number; end: number }): [number, number] | null {
  if (!range || range[0] >= chunk.end || range[1] <= chunk.start) return null;
  return [Math.max(range[0], chunk.start), Math.min(range[1], chunk.end)];
}

/** Whether two lists of spans are equal, span by span (start, end and label). */
export function sameSpans(a: readonly Span[], b: readonly Span[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  return a.every((s, i) => {
    const t = b[i] as Span;
    return s.start === t.start && s.end === t.end && s.label === t.label;
  });
}

/** Whether two ranges (or nulls) are equal. */
export function sameRange(a: readonly [number, number] | null, b: readonly [number, number] | null): boolean {
  return a === b || (a !== null && b !== null && a[0] === b[0] && a[1] === b[1]);
}

/** The token at or after code point `offset` (for placing the caret), or the last token; -1 without tokens. */
export function tokenAt(tokens: readonly Token[], offset: number): number {
  if (tokens.length === 0) return -1;
  const i = tokens.findIndex((t) => offset < t.end);
  return i === -1 ? tokens.length - 1 : i;
}
