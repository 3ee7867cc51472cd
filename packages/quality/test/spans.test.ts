/** Text-span consensus (spans.ts): tokenizer, BIO conversion, aggregator properties, recovery, errors. */
import fc from "fast-check";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import {
  aggregateSpans,
  bioTags,
  codePointLength,
  emptySpanModel,
  fitSpans,
  type SpanAnswer,
  type SpanModel,
  type SpanTask,
  spanTokens,
  TAG_B,
  TAG_I,
  TAG_O,
  type Token,
  tagsToRanges,
  tokenize,
} from "../src/index";
import { rng } from "./helpers";

const words = (text: string) => tokenize(text).map((t) => Array.from(text).slice(t.start, t.end).join(""));

describe("tokenize", () => {
  it("cuts runs of word characters and every other non-space character (Python's \\w+|[^\\w\\s])", () => {
    expect(words("Patients (n=231) aged 25-70, e.g. adults.")).toEqual([
      "Patients",
      "(",
      "n",
      "=",
      "231",
      ")",
      "aged",
      "25",
      "-",
      "70",
      ",",
      "e",
      ".",
      "g",
      ".",
      "adults",
      ".",
    ]);
    expect(words("snake_case x²")).toEqual(["snake_case", "x²"]);
  });

  it("counts offsets in code points, not UTF-16 units", () => {
    const text = "a 😀 𝐀b c";
    const tokens = tokenize(text);
    expect(words(text)).toEqual(["a", "😀", "𝐀b", "c"]);
    expect(tokens.map((t) => [t.start, t.end])).toEqual([
      [0, 1],
      [2, 3],
      [4, 6],
      [7, 8],
    ]);
    expect(codePointLength(text)).toBe(8);
  });

  it("treats Python's whitespace as space (\\x1c-\\x1f, \\x85) and a BOM as a token", () => {
    expect(words("a\x1cb\x85c\u3000d")).toEqual(["a", "b", "c", "d"]);
    expect(words("a\ufeffb")).toEqual(["a", "\ufeff", "b"]);
  });

  it("keeps combining marks out of words, as Python's \\w does", () => {
    expect(words("e\u0301t")).toEqual(["e", "\u0301", "t"]);
  });
});

describe("BIO conversion", () => {
  const tokens = tokenize("Adults with type 2 diabetes and children");
  // tokens: Adults(0-6) with(7-11) type(12-16) 2(17-18) diabetes(19-27) and(28-31) children(32-40)

  it("maps a span to the tokens it overlaps by at least one code point", () => {
    expect(spanTokens(tokens, { start: 0, end: 27 })).toEqual({ first: 0, last: 4 });
    expect(spanTokens(tokens, { start: 3, end: 8 })).toEqual({ first: 0, last: 1 });
    expect(spanTokens(tokens, { start: 6, end: 7 })).toBeNull();
    expect(spanTokens(tokens, { start: 40, end: 41 })).toBeNull();
  });

  it("tags B on a span's first token, I on the rest, per entity type", () => {
    const tags = bioTags(
      tokens,
      [
        { start: 0, end: 27, type: 0 },
        { start: 32, end: 40, type: 1 },
      ],
      2,
    );
    expect(Array.from(tags[0] as Uint8Array)).toEqual([TAG_B, TAG_I, TAG_I, TAG_I, TAG_I, TAG_O, TAG_O]);
    expect(Array.from(tags[1] as Uint8Array)).toEqual([TAG_O, TAG_O, TAG_O, TAG_O, TAG_O, TAG_O, TAG_B]);
  });

  it("keeps touching spans apart with a B", () => {
    const tags = bioTags(
      tokens,
      [
        { start: 12, end: 18, type: 0 },
        { start: 19, end: 27, type: 0 },
      ],
      1,
    );
    expect(Array.from(tags[0] as Uint8Array)).toEqual([TAG_O, TAG_O, TAG_B, TAG_I, TAG_B, TAG_O, TAG_O]);
    expect(tagsToRanges(tags[0] as Uint8Array)).toEqual([
      { first: 2, last: 3 },
      { first: 4, last: 4 },
    ]);
  });

  it("reads tags back to ranges, an I after O starting a span", () => {
    expect(tagsToRanges([TAG_O, TAG_I, TAG_I, TAG_O, TAG_B, TAG_B, TAG_I])).toEqual([
      { first: 1, last: 2 },
      { first: 4, last: 4 },
      { first: 5, last: 6 },
    ]);
    expect(tagsToRanges([])).toEqual([]);
  });

  it("refuses an entity type out of range", () => {
    expect(() => bioTags(tokens, [{ start: 0, end: 3, type: 2 }], 2)).toThrow(RangeError);
  });
});

const TEXT = "Forty adults with asthma and twelve children were enrolled in Boston between 2001 and 2003 .";
const TOKENS = tokenize(TEXT);

/** An answer of token-aligned, non-overlapping spans of types 0..1 (at most 4). */
function spansArb(tokens: readonly Token[]) {
  return fc
    .uniqueArray(fc.integer({ min: 0, max: tokens.length - 1 }), { maxLength: 8 })
    .chain((cuts) => {
      const sorted = [...cuts].sort((a, b) => a - b);
      const pairs: [number, number][] = [];
      for (let i = 0; i + 1 < sorted.length; i += 2) pairs.push([sorted[i] as number, sorted[i + 1] as number]);
      return fc.tuple(...pairs.map(([a, b]) => fc.integer({ min: 0, max: 1 }).map((type) => ({ a, b, type }))));
    })
    .map((list) => list.map(({ a, b, type }) => ({ start: (tokens[a] as Token).start, end: (tokens[b] as Token).end, type })));
}

const answersArb = fc
  .uniqueArray(fc.integer({ min: 0, max: 9 }), { maxLength: 6 })
  .chain((ids) => fc.tuple(...ids.map((i) => spansArb(TOKENS).map((spans) => ({ labelerId: `w${i}`, spans })))))
  .map((list): SpanAnswer[] => list);

/**
 * A synthetic crowd over TEXT-like sentences: 120 tasks with 1-2 true spans; labelers w0..w7 find a span with
 * probability 0.6 + 0.05 i, shift a boundary by one token with probability 0.2, add a false span with
 * probability 0.1 (w7: 0.6).
 */
function syntheticCrowd(seed: number): { tasks: SpanTask[]; truth: { start: number; end: number; type: number }[][] } {
  const r = rng(seed);
  const tasks: SpanTask[] = [];
  const truth: { start: number; end: number; type: number }[][] = [];
  const T = TOKENS.length;
  for (let t = 0; t < 120; t++) {
    const gold = [{ a: 0, b: 4 }];
    if (uniformFloat64(r) < 0.5) gold.push({ a: 6, b: 7 });
    const toSpan = (a: number, b: number) => ({ start: (TOKENS[a] as Token).start, end: (TOKENS[b] as Token).end, type: 0 });
    truth.push(gold.map((g) => toSpan(g.a, g.b)));
    const answers: SpanAnswer[] = [];
    for (let w = 0; w < 8; w++) {
      if (uniformFloat64(r) < 0.4) continue;
      const spans = [];
      for (const g of gold) {
        if (uniformFloat64(r) >= 0.6 + 0.05 * w) continue;
        let { a, b } = g;
        if (uniformFloat64(r) < 0.2) b = Math.min(T - 1, b + 1);
        if (uniformFloat64(r) < 0.2) a = Math.max(0, a + 1);
        spans.push(toSpan(a, b));
      }
      if (uniformFloat64(r) < (w === 7 ? 0.6 : 0.1)) spans.push(toSpan(12, 14));
      answers.push({ labelerId: `w${w}`, spans });
    }
    tasks.push({ id: `t${t}`, tokens: TOKENS, answers });
  }
  return { tasks, truth };
}

let fitted: SpanModel;
let crowd: ReturnType<typeof syntheticCrowd>;
beforeAll(() => {
  crowd = syntheticCrowd(11);
  fitted = fitSpans(2, crowd.tasks);
});

describe("aggregateSpans properties", () => {
  it("gives the same result for any order of the labelers", () => {
    for (const model of [emptySpanModel(2), fitted]) {
      fc.assert(
        fc.property(
          answersArb.chain((a) => fc.tuple(fc.constant(a), fc.shuffledSubarray(a, { minLength: a.length, maxLength: a.length }))),
          ([answers, shuffled]) => {
            expect(aggregateSpans(model, TOKENS, shuffled)).toEqual(aggregateSpans(model, TOKENS, answers));
          },
        ),
        { numRuns: 60, seed: 4 },
      );
    }
  });

  it("gives no span when every labeler answers no span", () => {
    for (const model of [emptySpanModel(2), fitted]) {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 7 }), (n) => {
          const r = aggregateSpans(
            model,
            TOKENS,
            Array.from({ length: n }, (_, i) => ({ labelerId: `w${i}`, spans: [] })),
          );
          expect(r.spans).toEqual([]);
        }),
        { numRuns: 10, seed: 5 },
      );
    }
  });

  it("gives the labelers' spans back when they agree (token-aligned spans)", () => {
    fc.assert(
      fc.property(spansArb(TOKENS), fc.integer({ min: 1, max: 5 }), (spans, n) => {
        const answers = Array.from({ length: n }, (_, i) => ({ labelerId: `w${i}`, spans }));
        const expected = [...spans].sort((a, b) => a.start - b.start);
        const strip = (r: ReturnType<typeof aggregateSpans>) => r.spans.map(({ start, end, type }) => ({ start, end, type }));
        expect(strip(aggregateSpans(emptySpanModel(2), TOKENS, answers))).toEqual(expected);
      }),
      { numRuns: 100, seed: 6 },
    );
  });

  it("snaps spans to token boundaries", () => {
    // "adults" is 6..12; a span 7..9 inside it gives the whole token
    const r = aggregateSpans(emptySpanModel(1), TOKENS, [{ labelerId: "a", spans: [{ start: 7, end: 9, type: 0 }] }]);
    expect(r.spans.map((s) => [s.start, s.end])).toEqual([[6, 12]]);
  });

  it("gives each span the probability of its exact extent, and the task the product over tokens", () => {
    const answers = [
      { labelerId: "a", spans: [{ start: 0, end: 12, type: 0 }] },
      { labelerId: "b", spans: [{ start: 0, end: 12, type: 0 }] },
      { labelerId: "c", spans: [{ start: 0, end: 5, type: 0 }] },
    ];
    const r = aggregateSpans(emptySpanModel(1), TOKENS, answers);
    const post = r.insidePosteriors[0] as Float64Array;
    expect(r.spans).toHaveLength(1);
    expect(r.spans[0]?.confidence).toBeCloseTo((post[0] as number) * (post[1] as number) * (1 - (post[2] as number)), 12);
    let whole = 1;
    for (let t = 0; t < TOKENS.length; t++) whole *= t <= 1 ? (post[t] as number) : 1 - (post[t] as number);
    expect(r.taskConfidence).toBeCloseTo(whole, 12);
    // parts: the two marked tokens and one part for the tokens nobody marked
    expect(r.parts).toHaveLength(3);
    expect(r.parts.map((p) => p.counts)).toEqual([
      [0, 3],
      [1, 2],
      [3, 0],
    ]);
  });

  it("splits touching consensus spans where the labelers start one", () => {
    const spans = [
      { start: 0, end: 5, type: 0 },
      { start: 6, end: 12, type: 0 },
    ];
    const r = aggregateSpans(emptySpanModel(1), TOKENS, [
      { labelerId: "a", spans },
      { labelerId: "b", spans },
      { labelerId: "c", spans: [{ start: 0, end: 12, type: 0 }] },
    ]);
    expect(r.spans.map((s) => [s.start, s.end])).toEqual([
      [0, 5],
      [6, 12],
    ]);
  });
});

describe("fitSpans", () => {
  it("recovers the spans better than a per-token majority vote and down-weights the labeler who adds spans", () => {
    let exactModel = 0;
    let exactMajority = 0;
    crowd.tasks.forEach((task, t) => {
      const truth = new Set((crowd.truth[t] ?? []).map((s) => `${s.start}:${s.end}`));
      const r = aggregateSpans(fitted, TOKENS, task.answers);
      exactModel +=
        r.spans.filter((s) => truth.has(`${s.start}:${s.end}`)).length - r.spans.filter((s) => !truth.has(`${s.start}:${s.end}`)).length;
      // majority: a token is inside when more than half the labelers have it inside
      const tags = task.answers.map((a) => bioTags(TOKENS, a.spans, 1)[0] as Uint8Array);
      const inside = TOKENS.map((_, k) => (tags.filter((row) => row[k] !== TAG_O).length * 2 > tags.length ? TAG_I : TAG_O));
      const ranges = tagsToRanges(inside);
      const mv = ranges.map((g) => `${(TOKENS[g.first] as Token).start}:${(TOKENS[g.last] as Token).end}`);
      exactMajority += mv.filter((k) => truth.has(k)).length - mv.filter((k) => !truth.has(k)).length;
    });
    expect(exactModel).toBeGreaterThan(exactMajority);
    const accuracy = (id: string) => {
      const c = fitted.perType[0]?.labelers.get(id)?.counts as number[][];
      return ((c[0] as number[])[0] as number) / (((c[0] as number[])[0] as number) + ((c[0] as number[])[1] as number));
    };
    expect(accuracy("w7")).toBeLessThan(accuracy("w6"));
  });

  it("leaves a type out of a task's fit when nobody used it there", () => {
    // type 1 is never used by the crowd: its space has no labels
    expect(fitted.perType[1]?.space.counts.labels).toBe(0);
    const used = crowd.tasks.filter((t) => t.answers.some((a) => a.spans.length > 0));
    expect(used.length).toBeLessThan(crowd.tasks.length);
    expect(fitted.perType[0]?.space.counts.labels).toBe(used.reduce((n, t) => n + t.answers.length * TOKENS.length, 0));
  });

  it("clamps gold tasks' tokens to their gold spans", () => {
    const tasks: SpanTask[] = [{ ...(crowd.tasks[0] as SpanTask), id: "gold", gold: crowd.truth[0] }, ...crowd.tasks.slice(1, 40)];
    const model = fitSpans(2, tasks);
    expect(model.perType[0]?.space.counts.goldTasks).toBe(TOKENS.length);
    expect(model.perType[1]?.space.counts.goldTasks).toBe(0);
  });

  it("refuses a previous model of another number of types and two answers of one labeler", () => {
    expect(() => fitSpans(1, [], { previous: fitted })).toThrow(/previous model has 2 types/);
    expect(() => fitSpans(0, [])).toThrow(/1..50 entity types/);
    expect(() =>
      aggregateSpans(fitted, TOKENS, [
        { labelerId: "a", spans: [] },
        { labelerId: "a", spans: [] },
      ]),
    ).toThrow(/two answers of labeler a/);
  });
});
