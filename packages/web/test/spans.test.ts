/** The text-span widget's text (app/label/spans.ts): code-point offsets, tokens, overlapping spans. */
import {
  addSpan,
  codePointOffset,
  codePointsOf,
  removeSpans,
  segmentsOf,
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
