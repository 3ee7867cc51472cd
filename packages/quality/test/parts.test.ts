/** The multi-part decision rule (parts.ts): both policies, parts without counts, bounds. */
import { decideParts, type Part, partConfidence, wholeConfidence } from "../src/index";

const part = (p: number, counts: number[] | null): Part => ({ posterior: [1 - p, p], counts });
const threshold = { kind: "threshold" as const, consensusThreshold: 3, maxLabels: 7 };
const confidence = { kind: "confidence" as const, confidenceTarget: 0.9, minLabels: 2, maxLabels: 7 };

describe("decideParts", () => {
  it("threshold policy: settles when every counted part has one side at the threshold", () => {
    expect(decideParts(threshold, 3, [part(0.9, [0, 3]), part(0.1, [3, 0])])).toEqual({ settled: true, resolution: "consensus" });
    expect(decideParts(threshold, 3, [part(0.9, [0, 3]), part(0.4, [2, 1])])).toEqual({ settled: false, labelsNeeded: 4 });
    // parts without counts do not take part in the threshold policy
    expect(decideParts(threshold, 3, [part(0.9, [0, 3]), part(0.2, null)])).toEqual({ settled: true, resolution: "consensus" });
    // as decision.ts decideThreshold: the side that holds the threshold settles the part, whatever the posterior
    expect(decideParts(threshold, 7, [part(0.4, [4, 3])])).toEqual({ settled: true, resolution: "consensus" });
    expect(decideParts(threshold, 6, [part(0.5, [3, 3])])).toEqual({ settled: true, resolution: "consensus" });
  });

  it("threshold policy: settles at max_labels otherwise", () => {
    expect(decideParts(threshold, 7, [part(0.5, [2, 2])])).toEqual({ settled: true, resolution: "max_labels" });
  });

  it("confidence policy: every part's leading posterior at the target after min_labels", () => {
    expect(decideParts(confidence, 2, [part(0.95, [0, 2]), part(0.05, [2, 0]), part(0.92, null)])).toEqual({
      settled: true,
      resolution: "confidence",
    });
    expect(decideParts(confidence, 2, [part(0.95, [0, 2]), part(0.85, [1, 1])])).toEqual({ settled: false, labelsNeeded: 5 });
    expect(decideParts(confidence, 1, [part(0.99, [0, 1])])).toEqual({ settled: false, labelsNeeded: 6 });
    expect(decideParts(confidence, 7, [part(0.6, [3, 4])])).toEqual({ settled: true, resolution: "max_labels" });
    expect(decideParts(confidence, 7, [part(0.95, [0, 7])])).toEqual({ settled: true, resolution: "confidence" });
  });

  it("a task without parts settles once it has its labels", () => {
    expect(decideParts(confidence, 2, [])).toEqual({ settled: true, resolution: "confidence" });
    expect(decideParts(threshold, 3, [])).toEqual({ settled: true, resolution: "consensus" });
    expect(decideParts(threshold, 2, [])).toEqual({ settled: false, labelsNeeded: 5 });
  });

  it("refuses policies out of bounds", () => {
    expect(() => decideParts({ ...confidence, confidenceTarget: 0.4 }, 1, [])).toThrow(RangeError);
    expect(() => decideParts({ ...confidence, minLabels: 8 }, 1, [])).toThrow(RangeError);
    expect(() => decideParts({ ...threshold, maxLabels: 0 }, 1, [])).toThrow(RangeError);
    // no upper bound: a task's rule may take more votes than a request's max_labels (a pre-label, decision 0272)
    expect(() => decideParts({ ...threshold, maxLabels: 51 }, 1, [])).not.toThrow();
  });

  it("partConfidence and wholeConfidence", () => {
    expect(partConfidence(part(0.2, [3, 1]))).toBeCloseTo(0.8, 12);
    expect(wholeConfidence([part(0.2, null), part(0.9, null)])).toBeCloseTo(0.72, 12);
    expect(wholeConfidence([])).toBe(1);
  });
});
