/**
 * The text-span widget's text (app/label/spans.ts): code-point offsets, tokens, overlapping spans, and the
 * chunks the widget renders a long text in (each re-rendered only when its spans, selection or caret change).
 */
import fc from "fast-check";
import {
  addSpan,
  CHUNK_SIZES,
  chunksOf,
  clipRange,
  codePointOffset,
  codePointsOf,
  removeSpans,
  type Span,
  sameRange,
  sameSpans,
  segmentsIn,
  segmentsOf,
  spansIn,
  tokenAt,
  tokenize,
  tokenRange,
  trimRange,
} from "../app/label/spans";

const EMOJI = "😀"; // U+1F600: one code point, two UTF-16 units

describe("codePointOffset", () => {
  it("counts code points, not UTF-16 units", () => {
    const text = `a${EMOJI}b`;
    expect(text.length).toBe(4);
    expect(codePointOffset(text, 0)).toBe(0);
    expect(codePointOffset(text, 1)).toBe(1);
    expect(codePointOffset(text, 3)).toBe(2);
    expect(codePointOffset(text, 4)).toBe(3);
  });

  it("counts a code point whose surrogate pair the offset splits, and clamps past the end", () => {
    expect(codePointOffset(`a${EMOJI}b`, 2)).toBe(2);
    expect(codePointOffset("ab", 10)).toBe(2);
  });
});

describe("tokenize", () => {
  it("splits words and punctuation marks, in code points", () => {
    const text = `Hi ${EMOJI}, Bob!`;
    const tokens = tokenize(text);
    const chars = codePointsOf(text);
    expect(tokens.map((t) => chars.slice(t.start, t.end).join(""))).toEqual(["Hi", EMOJI, ",", "Bob", "!"]);
    expect(tokens).toEqual([
      { start: 0, end: 2 },
      { start: 3, end: 4 },
      { start: 4, end: 5 },
      { start: 6, end: 9 },
      { start: 9, end: 10 },
    ]);
  });

  it("has no tokens in white space only", () => {
    expect(tokenize("  \n\t")).toEqual([]);
  });
});

describe("ranges", () => {
  it("trims white space off a selection, null when nothing else is left", () => {
    const chars = codePointsOf(" Ann  Lee ");
    expect(trimRange(chars, 0, 10)).toEqual([1, 9]);
    expect(trimRange(chars, 9, 1)).toEqual([1, 9]);
    expect(trimRange(chars, 4, 6)).toBeNull();
  });

  it("joins the tokens between two token indexes", () => {
    const tokens = tokenize("New York City");
    expect(tokenRange(tokens, 2, 0)).toEqual([0, 13]);
    expect(tokenRange(tokens, 1, 1)).toEqual([4, 8]);
    expect(tokenRange(tokens, 0, 5)).toBeNull();
  });

  it("finds the token at or after an offset", () => {
    const tokens = tokenize("ab cd");
    expect(tokenAt(tokens, 0)).toBe(0);
    expect(tokenAt(tokens, 2)).toBe(1);
    expect(tokenAt(tokens, 99)).toBe(1);
    expect(tokenAt([], 0)).toBe(-1);
  });
});

describe("spans", () => {
  const ann = { start: 0, end: 3, label: "PER" };
  const paris = { start: 10, end: 15, label: "LOC" };

  it("adds spans in order of start", () => {
    expect(addSpan([paris], ann)).toEqual([ann, paris]);
  });

  it("replaces the spans a new span overlaps, keeping those that only touch it", () => {
    expect(addSpan([ann, paris], { start: 2, end: 12, label: "ORG" })).toEqual([{ start: 2, end: 12, label: "ORG" }]);
    expect(addSpan([ann, paris], { start: 3, end: 10, label: "ORG" })).toEqual([ann, { start: 3, end: 10, label: "ORG" }, paris]);
  });

  it("ignores an empty span", () => {
    expect(addSpan([ann], { start: 5, end: 5, label: "ORG" })).toEqual([ann]);
  });

  it("removes the spans under a range or a caret", () => {
    expect(removeSpans([ann, paris], 1, 2)).toEqual([paris]);
    expect(removeSpans([ann, paris], 3, 10)).toEqual([ann, paris]);
    expect(removeSpans([ann, paris], 12, 12)).toEqual([ann]);
  });
});

describe("segmentsOf", () => {
  it("cuts the text at token and span edges, each run in one token and one span", () => {
    const text = `Ann ${EMOJI}x`;
    const tokens = tokenize(text); // Ann, 😀, x
    const segments = segmentsOf(codePointsOf(text).length, tokens, [{ start: 1, end: 5, label: "PER" }]);
    expect(segments).toEqual([
      { start: 0, end: 1, token: 0, span: -1 },
      { start: 1, end: 3, token: 0, span: 0 },
      { start: 3, end: 4, token: -1, span: 0 },
      { start: 4, end: 5, token: 1, span: 0 },
      { start: 5, end: 6, token: 2, span: -1 },
    ]);
  });
});

/** Non-overlapping spans from `cuts` (code points, any order) over a text of `length` code points. */
function spansFrom(cuts: readonly number[], length: number): Span[] {
  const edges = [...new Set(cuts.map((c) => c % (length + 1)))].sort((a, b) => a - b);
  const spans: Span[] = [];
  for (let i = 0; i + 1 < edges.length; i += 2) spans.push({ start: edges[i] as number, end: edges[i + 1] as number, label: `T${i % 3}` });
  return spans;
}

/** The runs of every chunk, their span as its label (a chunk's runs index the chunk's own spans). */
function chunkedRuns(text: string, spans: readonly Span[], min: number) {
  const chars = codePointsOf(text);
  const tokens = tokenize(text);
  return chunksOf(chars, tokens, { paragraph: min, sentence: min * 2, max: min * 3 }).flatMap((c) => {
    const mine = spansIn(spans, c);
    return segmentsIn(c, tokens, mine).map((r) => ({ ...r, span: mine[r.span]?.label ?? null }));
  });
}

describe("chunksOf", () => {
  const piece = fc.constantFrom("word", "Zürich", EMOJI, " ", "  ", "\n", "\n\n", ".", ",", "👩‍💻");
  const texts = fc.array(piece, { maxLength: 300 }).map((parts) => parts.join(""));

  it("covers the text in order, each chunk ending at a token's start, never inside a token", () => {
    fc.assert(
      fc.property(texts, fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 120 }), (text, min, extra) => {
        const chars = codePointsOf(text);
        const tokens = tokenize(text);
        const chunks = chunksOf(chars, tokens, { paragraph: min, sentence: min + (extra >> 1), max: min + extra });
        if (chars.length === 0) return expect(chunks).toEqual([]);
        expect(chunks[0]?.start).toBe(0);
        expect(chunks.at(-1)?.end).toBe(chars.length);
        expect(chunks.at(-1)?.endToken).toBe(tokens.length);
        for (const [i, c] of chunks.entries()) {
          expect(c.end).toBeGreaterThan(c.start);
          if (i > 0) {
            expect(c.start).toBe(chunks[i - 1]?.end);
            expect(c.firstToken).toBe(chunks[i - 1]?.endToken);
            expect(tokens[c.firstToken]?.start).toBe(c.start);
          }
          for (let t = c.firstToken; t < c.endToken; t++) {
            expect(tokens[t]?.start).toBeGreaterThanOrEqual(c.start);
            expect(tokens[t]?.end).toBeLessThanOrEqual(c.end);
          }
        }
      }),
    );
  });

  it("cuts the same runs as the whole text (token and span edges, spans across chunks)", () => {
    fc.assert(
      fc.property(texts, fc.array(fc.nat(), { maxLength: 20 }), fc.integer({ min: 1, max: 30 }), (text, cuts, min) => {
        const chars = codePointsOf(text);
        const spans = spansFrom(cuts, chars.length);
        const whole = segmentsOf(chars.length, tokenize(text), spans).map((r) => ({ ...r, span: spans[r.span]?.label ?? null }));
        // a run crossing a chunk's edge is cut there: compare the code points each run covers
        const label = (runs: { start: number; end: number; token: number; span: string | null }[]) =>
          runs.flatMap((r) => Array.from({ length: r.end - r.start }, (_, k) => `${r.start + k}:${r.token}:${r.span}`));
        expect(label(chunkedRuns(text, spans, min))).toEqual(label(whole));
      }),
    );
  });

  it("prefers a paragraph break, then a sentence's end, then any token", () => {
    const sizes = { paragraph: 10, sentence: 20, max: 40 };
    const cuts = (text: string) => chunksOf(codePointsOf(text), tokenize(text), sizes).map((c) => [c.start, c.end]);
    const para = `${"ab ".repeat(5)}\n\n${"cd ".repeat(5)}`;
    expect(cuts(para)).toEqual([
      [0, 17],
      [17, 32],
    ]);
    // no line feed: at the first sentence's end past 20 code points ("ab ab ab ab. " is 13)
    const sentences = "ab ab ab ab. ".repeat(4);
    expect(cuts(sentences)).toEqual([
      [0, 26],
      [26, 52],
    ]);
    // a period not followed by white space is no sentence's end; none at all: cut once 40 are reached
    expect(cuts("ab.cd ".repeat(10)).map(([a, b]) => (b as number) - (a as number))).toEqual([42, 18]);
    expect(cuts("ab ".repeat(20)).map(([a, b]) => (b as number) - (a as number))).toEqual([42, 18]);
  });

  it("cuts a text of 100,000 code points into chunks of at most CHUNK_SIZES.max and a token, offsets in code points", () => {
    const unit = `words ${EMOJI} `; // 8 code points, the emoji at 6
    const text = unit.repeat(12_500);
    const chars = codePointsOf(text);
    expect(chars.length).toBe(100_000);
    const tokens = tokenize(text);
    const chunks = chunksOf(chars, tokens);
    expect(chunks.length).toBe(Math.ceil(100_000 / (CHUNK_SIZES.max + unit.length)));
    for (const c of chunks) expect(c.end - c.start).toBeLessThanOrEqual(CHUNK_SIZES.max + unit.length);
    // a span on the 5,000th emoji is drawn in the chunk holding code point 40,006 only
    const span = { start: 4999 * 8 + 6, end: 4999 * 8 + 7, label: "A" };
    const holding = chunks.filter((c) => spansIn([span], c).length > 0);
    expect(holding).toHaveLength(1);
    const runs = segmentsIn(holding[0] as (typeof chunks)[number], tokens, [span]).filter((r) => r.span === 0);
    expect(runs).toEqual([{ start: span.start, end: span.end, token: 4999 * 2 + 1, span: 0 }]);
    expect(chars.slice(span.start, span.end).join("")).toBe(EMOJI);
  });

  it("has one chunk for a text of one long token", () => {
    const text = "x".repeat(5000);
    expect(chunksOf(codePointsOf(text), tokenize(text))).toEqual([{ start: 0, end: 5000, firstToken: 0, endToken: 1 }]);
  });
});

describe("a chunk's props", () => {
  const chunk = { start: 10, end: 20 };

  it("clips the keyboard's range to the chunk, null outside it", () => {
    expect(clipRange([5, 15], chunk)).toEqual([10, 15]);
    expect(clipRange([12, 30], chunk)).toEqual([12, 20]);
    expect(clipRange([20, 30], chunk)).toBeNull();
    expect(clipRange([0, 10], chunk)).toBeNull();
    expect(clipRange(null, chunk)).toBeNull();
  });

  it("keeps the spans sharing a code point with the chunk", () => {
    const spans = [
      { start: 0, end: 10, label: "A" },
      { start: 8, end: 12, label: "B" },
      { start: 19, end: 25, label: "C" },
      { start: 20, end: 22, label: "D" },
    ];
    expect(spansIn(spans, chunk).map((s) => s.label)).toEqual(["B", "C"]);
  });

  it("compares spans and ranges by value", () => {
    expect(sameSpans([{ start: 1, end: 2, label: "A" }], [{ start: 1, end: 2, label: "A" }])).toBe(true);
    expect(sameSpans([{ start: 1, end: 2, label: "A" }], [{ start: 1, end: 2, label: "B" }])).toBe(false);
    expect(sameSpans([], [{ start: 1, end: 2, label: "A" }])).toBe(false);
    expect(sameRange([1, 2], [1, 2])).toBe(true);
    expect(sameRange([1, 2], null)).toBe(false);
    expect(sameRange(null, null)).toBe(true);
  });
});
