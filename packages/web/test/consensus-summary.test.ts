/**
 * The console's consensus summaries (app/console/task-types/summary.ts): what the Tasks list shows for a
 * task of a reserved type instead of its canonical JSON, read from `consensus` or from `consensus_label`;
 * a single-choice label unchanged.
 */
import { consensusSummary, partConfidences, SUMMARY_NAMES_MAX, summarizeParts } from "../app/console/task-types/summary";

const box = (label: string) => ({ label, x: 1, y: 2, w: 3, h: 4 });
const span = (label: string, start: number) => ({ start, end: start + 2, label });

describe("summarizeParts", () => {
  it("lists a multi-label consensus's labels", () => {
    expect(summarizeParts({ labels: ["red", "round"] })).toBe("red, round");
    expect(summarizeParts({ labels: [] })).toBe("no labels");
  });

  it("counts boxes by class, most frequent first", () => {
    expect(summarizeParts({ boxes: [box("person"), box("car"), box("car")] })).toBe("3 boxes: car ×2, person");
    expect(summarizeParts({ boxes: [box("car")] })).toBe("1 box: car");
    expect(summarizeParts({ boxes: [] })).toBe("no boxes");
  });

  it("counts spans by entity type, ties by name whatever the spans' order", () => {
    expect(summarizeParts({ spans: [span("DRUG", 0), span("PERSON", 5)] })).toBe("2 spans: DRUG, PERSON");
    expect(summarizeParts({ spans: [span("PERSON", 0), span("DRUG", 5)] })).toBe("2 spans: DRUG, PERSON");
    expect(summarizeParts({ spans: [span("LOC", 0), span("PER", 3), span("PER", 9)] })).toBe("3 spans: PER ×2, LOC");
    expect(summarizeParts({ spans: [] })).toBe("no spans");
  });

  it("cuts a long list with +N more", () => {
    const labels = Array.from({ length: SUMMARY_NAMES_MAX + 3 }, (_, i) => `o${i}`);
    expect(summarizeParts({ labels })).toBe(`${labels.slice(0, SUMMARY_NAMES_MAX).join(", ")} +3 more`);
  });

  it("is null for a value of no reserved shape", () => {
    expect(summarizeParts({})).toBeNull();
  });
});

describe("consensusSummary", () => {
  it("leaves a single-choice label as it is, even when it looks like JSON", () => {
    expect(consensusSummary({ task_type: "classification", consensus_label: "cat" })).toBe("cat");
    expect(consensusSummary({ task_type: "sentiment", consensus_label: '{"labels":["a"]}' })).toBe('{"labels":["a"]}');
  });

  it("is null without a consensus", () => {
    expect(consensusSummary({ task_type: "bounding_box", consensus_label: null, consensus: null })).toBeNull();
  });

  it("reads the typed consensus when sent", () => {
    expect(
      consensusSummary({
        task_type: "multi_label_classification",
        consensus_label: '{"labels":["red","round"]}',
        consensus: { labels: ["red", "round"], confidence: { red: 0.9, round: 0.8 } },
      }),
    ).toBe("red, round");
  });

  it("parses the canonical JSON when the consensus is not sent", () => {
    const boxes = [box("car"), box("person"), box("car")];
    expect(consensusSummary({ task_type: "bounding_box", consensus_label: JSON.stringify({ boxes }) })).toBe("3 boxes: car ×2, person");
    const spans = [span("DRUG", 0), span("PERSON", 4)];
    expect(consensusSummary({ task_type: "text_span", consensus_label: JSON.stringify({ spans }) })).toBe("2 spans: DRUG, PERSON");
  });

  it("shows a reserved type's label unchanged when it is not JSON of its shape", () => {
    expect(consensusSummary({ task_type: "text_span", consensus_label: "not json" })).toBe("not json");
    expect(consensusSummary({ task_type: "text_span", consensus_label: "[1,2]" })).toBe("[1,2]");
  });
});

describe("partConfidences (shown beside a typed task's whole-answer confidence)", () => {
  it("reads the boxes', spans' or options' confidences", () => {
    expect(
      partConfidences({
        boxes: [
          { ...box("cat"), confidence: 0.9 },
          { ...box("dog"), confidence: 0.5 },
        ],
      }),
    ).toEqual({
      parts: 2,
      lowest: 0.5,
      mean: 0.7,
    });
    expect(partConfidences({ spans: [{ ...span("PER", 0), confidence: 0.8 }] })).toEqual({ parts: 1, lowest: 0.8, mean: 0.8 });
    expect(partConfidences({ labels: ["a"], confidence: { a: 0.6, b: 1 } })).toEqual({ parts: 2, lowest: 0.6, mean: 0.8 });
  });
  it("is null without confidences (no parts, a gold answer, nothing sent)", () => {
    expect(partConfidences({ spans: [] })).toBeNull();
    expect(partConfidences({ boxes: [box("cat")] })).toBeNull();
    expect(partConfidences(null)).toBeNull();
  });
});
