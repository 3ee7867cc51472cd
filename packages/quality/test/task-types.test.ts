/** The type registry (task-types.ts): label_spec and answer validation, canonical forms, fit and aggregate by type. */
import {
  boundingBoxSpec,
  boundingBoxType,
  boxAnswer,
  canonicalJson,
  isReservedType,
  MAX_PARTS,
  multiLabelAnswer,
  multiLabelSpec,
  multiLabelType,
  RESERVED_TYPES,
  spanAnswer,
  TASK_TYPES,
  textSpanSpec,
  textSpanType,
} from "../src/index";

/** zod issues as contract §wire details: dotted path and message. */
function details(result: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) {
  return (result.error?.issues ?? []).map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
}

const boxSpec = boundingBoxSpec.parse({ question: "Mark the animals", classes: ["cat", "dog"] });
const spanSpec = textSpanSpec.parse({ question: "Mark the people", entity_types: ["PER", "ORG"] });
const mlSpec = multiLabelSpec.parse({ question: "Which apply?", options: ["red", "round", "ripe"] });

describe("reserved types", () => {
  it("names the reserved types of contract §task-types; every other type is single choice", () => {
    expect(RESERVED_TYPES).toEqual(["multi_label_classification", "bounding_box", "text_span", "free_text", "pairwise_comparison"]);
    expect(Object.keys(TASK_TYPES)).toEqual([...RESERVED_TYPES]);
    expect(isReservedType("bounding_box")).toBe(true);
    expect(isReservedType("image_classification")).toBe(false);
    expect(isReservedType("multi_label")).toBe(false);
  });
});

describe("label_spec schemas", () => {
  it("take 1..50 unique classes, options or entity types and reject unknown fields", () => {
    expect(boundingBoxSpec.safeParse({ question: "q", classes: [] }).success).toBe(false);
    expect(boundingBoxSpec.safeParse({ question: "q", classes: Array.from({ length: 51 }, (_, i) => `c${i}`) }).success).toBe(false);
    expect(details(textSpanSpec.safeParse({ question: "q", entity_types: ["A", "A"] }))).toEqual([
      { path: "entity_types", message: "entity_types must be unique" },
    ]);
    expect(multiLabelSpec.safeParse({ question: "q", options: ["a"], extra: 1 }).success).toBe(false);
    expect(multiLabelSpec.safeParse({ question: " ", options: ["a"] }).success).toBe(false);
  });
});

describe("answer validation", () => {
  it("multi-label: known options, no repeats, the empty set allowed", () => {
    const schema = multiLabelAnswer(mlSpec);
    expect(schema.parse({ labels: [] })).toEqual({ labels: [] });
    expect(schema.parse({ labels: ["ripe", "red"] })).toEqual({ labels: ["ripe", "red"] });
    expect(details(schema.safeParse({ labels: ["red", "blue", "red"] }))).toEqual([
      { path: "labels.1", message: 'unknown option "blue"' },
      { path: "labels.2", message: 'option "red" is repeated' },
    ]);
    expect(schema.safeParse({ labels: "red" }).success).toBe(false);
    expect(schema.safeParse({ label: "red" }).success).toBe(false);
  });

  it("boxes: known class, positive size, inside the item when its size is known", () => {
    const schema = boxAnswer(boxSpec, { width: 100, height: 50 });
    expect(schema.parse({ boxes: [] })).toEqual({ boxes: [] });
    expect(schema.parse({ boxes: [{ label: "cat", x: 0, y: 0, w: 100, h: 50 }] }).boxes).toHaveLength(1);
    expect(details(schema.safeParse({ boxes: [{ label: "cow", x: 0, y: 0, w: 10, h: 10 }] }))).toEqual([
      { path: "boxes.0.label", message: 'unknown class "cow"' },
    ]);
    expect(details(schema.safeParse({ boxes: [{ label: "cat", x: 95, y: 45, w: 10, h: 10 }] }))).toEqual([
      { path: "boxes.0", message: "box ends at x = 105, outside the item (width 100)" },
      { path: "boxes.0", message: "box ends at y = 55, outside the item (height 50)" },
    ]);
    expect(schema.safeParse({ boxes: [{ label: "cat", x: -1, y: 0, w: 10, h: 10 }] }).success).toBe(false);
    expect(schema.safeParse({ boxes: [{ label: "cat", x: 0, y: 0, w: 0, h: 10 }] }).success).toBe(false);
    expect(schema.safeParse({ boxes: [{ label: "cat", x: 0, y: 0, w: 10, h: 10, score: 1 }] }).success).toBe(false);
    // without a known size, only the origin and the size are checked
    expect(boxAnswer(boxSpec).safeParse({ boxes: [{ label: "cat", x: 950, y: 0, w: 100, h: 10 }] }).success).toBe(true);
  });

  it("boxes: at most 500 per answer (a 10,000-box answer is a validation error)", () => {
    const schema = boxAnswer(boxSpec);
    const many = (n: number) => ({ boxes: Array.from({ length: n }, () => ({ label: "dog", x: 1, y: 1, w: 2, h: 2 })) });
    expect(schema.safeParse(many(MAX_PARTS)).success).toBe(true);
    expect(details(schema.safeParse(many(MAX_PARTS + 1)))[0]?.path).toBe("boxes");
    expect(schema.safeParse(many(10_000)).success).toBe(false);
  });

  it("spans: known type, integer offsets in range, end after start, no overlaps", () => {
    const text = "Dr 😀 Smith met ACME";
    const schema = spanAnswer(spanSpec, { text });
    expect(schema.parse({ spans: [{ start: 5, end: 10, label: "PER" }] }).spans).toHaveLength(1);
    // the text is 19 code points (the emoji is one)
    expect(schema.safeParse({ spans: [{ start: 15, end: 19, label: "ORG" }] }).success).toBe(true);
    expect(details(schema.safeParse({ spans: [{ start: 15, end: 20, label: "ORG" }] }))).toEqual([
      { path: "spans.0.end", message: "end 20 is past the end of the text (19 code points)" },
    ]);
    expect(details(schema.safeParse({ spans: [{ start: 3, end: 3, label: "PER" }] }))).toEqual([
      { path: "spans.0", message: "end must be greater than start" },
    ]);
    expect(details(schema.safeParse({ spans: [{ start: 0, end: 2, label: "LOC" }] }))).toEqual([
      { path: "spans.0.label", message: 'unknown entity type "LOC"' },
    ]);
    expect(
      details(
        schema.safeParse({
          spans: [
            { start: 5, end: 10, label: "PER" },
            { start: 0, end: 6, label: "ORG" },
          ],
        }),
      ),
    ).toEqual([{ path: "spans.0", message: "overlaps span 1 (0..6)" }]);
    // touching spans do not overlap
    expect(
      schema.safeParse({
        spans: [
          { start: 0, end: 5, label: "PER" },
          { start: 5, end: 10, label: "PER" },
        ],
      }).success,
    ).toBe(true);
    expect(schema.safeParse({ spans: [{ start: -1, end: 2, label: "PER" }] }).success).toBe(false);
    expect(schema.safeParse({ spans: [{ start: 0.5, end: 2, label: "PER" }] }).success).toBe(false);
    expect(
      spanAnswer(spanSpec).safeParse({ spans: Array.from({ length: 501 }, (_, i) => ({ start: i, end: i + 1, label: "PER" })) }).success,
    ).toBe(false);
  });
});

describe("canonical forms", () => {
  it("canonicalJson sorts keys at every depth and has no spaces", () => {
    expect(canonicalJson({ b: [{ z: 1, a: "x" }], a: null, c: true })).toBe('{"a":null,"b":[{"a":"x","z":1}],"c":true}');
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(TypeError);
  });

  it("canonical answers put the parts in a fixed order", () => {
    expect(multiLabelType.canonicalAnswer(mlSpec, { labels: ["ripe", "red"] })).toEqual({ labels: ["red", "ripe"] });
    expect(
      boundingBoxType
        .canonicalAnswer(boxSpec, {
          boxes: [
            { label: "dog", x: 5, y: 0, w: 1, h: 1 },
            { label: "cat", x: 1, y: 0, w: 1, h: 1 },
          ],
        })
        .boxes.map((b) => b.x),
    ).toEqual([1, 5]);
    expect(
      textSpanType
        .canonicalAnswer(spanSpec, {
          spans: [
            { start: 9, end: 10, label: "PER" },
            { start: 0, end: 3, label: "ORG" },
          ],
        })
        .spans.map((s) => s.start),
    ).toEqual([0, 9]);
  });
});

describe("aggregate through the registry", () => {
  it("multi-label: the chosen options, their confidence, the posterior, the canonical consensus label", () => {
    const model = multiLabelType.emptyModel(mlSpec);
    const r = multiLabelType.aggregate(mlSpec, model, [
      { labelerId: "a", answer: { labels: ["ripe", "red"] } },
      { labelerId: "b", answer: { labels: ["red"] } },
      { labelerId: "c", answer: { labels: ["red", "ripe"] } },
    ]);
    expect(r.consensus.labels).toEqual(["red", "ripe"]);
    expect(r.consensusLabel).toBe('{"labels":["red","ripe"]}');
    expect(Object.keys(r.posterior ?? {})).toEqual(["red", "round", "ripe"]);
    expect(r.consensus.confidence.round).toBeCloseTo(1 - (r.posterior?.round as number), 12);
    expect(r.confidence).toBeCloseTo(
      Object.values(r.consensus.confidence).reduce((a, b) => a * b, 1),
      12,
    );
  });

  it("boxes: class names, support and confidence per box; the consensus label without them", () => {
    const answers = ["a", "b", "c"].map((labelerId) => ({ labelerId, answer: { boxes: [{ label: "dog", x: 10, y: 10, w: 20, h: 20 }] } }));
    const r = boundingBoxType.aggregate(boxSpec, boundingBoxType.emptyModel(boxSpec), answers);
    expect(r.consensus.boxes).toHaveLength(1);
    expect(r.consensus.boxes[0]).toMatchObject({ label: "dog", x: 10, y: 10, w: 20, h: 20, support: 3 });
    expect(r.consensusLabel).toBe('{"boxes":[{"h":20,"label":"dog","w":20,"x":10,"y":10}]}');
    const fitted = boundingBoxType.fit(boxSpec, [{ id: "t1", answers }]);
    // a 20 x 20 box is small (COCO): the one candidate is in the small objects' space
    expect(fitted.objects[0]?.space.counts.tasks).toBe(1);
  });

  it("spans: entity type names and confidence per span; needs the text", () => {
    const text = "Dr Smith met ACME staff";
    const answers = [
      { labelerId: "a", answer: { spans: [{ start: 0, end: 8, label: "PER" }] } },
      { labelerId: "b", answer: { spans: [{ start: 3, end: 8, label: "PER" }] } },
      { labelerId: "c", answer: { spans: [{ start: 0, end: 8, label: "PER" }] } },
    ];
    const model = textSpanType.emptyModel(spanSpec);
    const r = textSpanType.aggregate(spanSpec, model, answers, { text });
    expect(r.consensus.spans.map(({ start, end, label }) => ({ start, end, label }))).toEqual([{ start: 0, end: 8, label: "PER" }]);
    expect(r.consensusLabel).toBe('{"spans":[{"end":8,"label":"PER","start":0}]}');
    expect(r.consensus.spans[0]?.confidence).toBeGreaterThan(0);
    expect(() => textSpanType.aggregate(spanSpec, model, answers)).toThrow(/needs its text/);
    const fitted = textSpanType.fit(spanSpec, [{ id: "t", answers, item: { text } }]);
    expect(fitted.perType[0]?.space.counts.labels).toBe(3 * 5);
  });

  it("refuses names outside the label_spec (answers must be validated first)", () => {
    expect(() =>
      multiLabelType.aggregate(mlSpec, multiLabelType.emptyModel(mlSpec), [{ labelerId: "a", answer: { labels: ["blue"] } }]),
    ).toThrow(/unknown option "blue"/);
  });
});
