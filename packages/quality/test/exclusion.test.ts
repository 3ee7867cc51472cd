/** Gold-accuracy exclusion (contract §quality): Beta(1, 1) prior, P(accuracy < floor) >= 0.95 after min_gold_answers. */
import { goldAccuracy, isExcluded, probabilityAccuracyBelow } from "../src/index";

/** I_x(a, b) for integer a, b: P(Binomial(a + b - 1, x) >= a), an independent formula for the Beta CDF. */
function betaCdfInteger(x: number, a: number, b: number): number {
  const n = a + b - 1;
  let p = 0;
  let choose = 1;
  for (let j = 0; j <= n; j++) {
    if (j > 0) choose = (choose * (n - j + 1)) / j;
    if (j >= a) p += choose * x ** j * (1 - x) ** (n - j);
  }
  return p;
}

describe("exclusion", () => {
  it("P(accuracy < floor) is the Beta(1 + correct, 1 + wrong) CDF", () => {
    for (const [correct, answers, floor] of [
      [3, 10, 0.7],
      [0, 10, 0.5],
      [10, 10, 0.9],
      [12, 20, 0.8],
      [45, 60, 0.85],
    ] as const) {
      expect(probabilityAccuracyBelow({ goldAnswers: answers, goldCorrect: correct }, floor)).toBeCloseTo(
        betaCdfInteger(floor, 1 + correct, 1 + answers - correct),
        10,
      );
    }
  });

  it.each([
    // answers, correct, floor, min answers, excluded   (P(accuracy < floor) from the binomial formula)
    [9, 0, 0.7, 10, false], // too few gold answers, however bad
    [10, 0, 0.7, 10, true], // P = 1.0000
    [10, 4, 0.7, 10, true], // P = 0.9784
    [10, 5, 0.7, 10, false], // P = 0.9218
    [20, 10, 0.7, 10, true], // P = 0.9736
    [20, 11, 0.7, 10, false], // P = 0.9324
    [10, 10, 0.7, 10, false], // P = 0.0198
    [3, 0, 0.5, 3, false], // P = 0.9375
    [4, 0, 0.5, 3, true], // P = 0.9688
  ])("%i gold answers, %i correct, floor %f, min %i -> excluded %s", (answers, correct, floor, min, excluded) => {
    const record = { goldAnswers: answers, goldCorrect: correct };
    expect(isExcluded(record, { minLabelerAccuracy: floor, minGoldAnswers: min })).toBe(excluded);
  });

  it("never excludes without min_labeler_accuracy; min_gold_answers defaults to 10", () => {
    expect(isExcluded({ goldAnswers: 50, goldCorrect: 0 }, { minLabelerAccuracy: null })).toBe(false);
    expect(isExcluded({ goldAnswers: 50, goldCorrect: 0 }, { minLabelerAccuracy: undefined })).toBe(false);
    expect(isExcluded({ goldAnswers: 9, goldCorrect: 0 }, { minLabelerAccuracy: 0.8 })).toBe(false);
    expect(isExcluded({ goldAnswers: 10, goldCorrect: 0 }, { minLabelerAccuracy: 0.8 })).toBe(true);
  });

  it("gold accuracy for the dashboard, and bad records are errors", () => {
    expect(goldAccuracy({ goldAnswers: 0, goldCorrect: 0 })).toBeNull();
    expect(goldAccuracy({ goldAnswers: 8, goldCorrect: 6 })).toBe(0.75);
    expect(() => goldAccuracy({ goldAnswers: 2, goldCorrect: 3 })).toThrow(RangeError);
    expect(() => probabilityAccuracyBelow({ goldAnswers: 2, goldCorrect: 1 }, 1.5)).toThrow(RangeError);
  });
});
