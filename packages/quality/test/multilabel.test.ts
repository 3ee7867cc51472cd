/** Multi-label consensus (multilabel.ts): properties of the aggregator, recovery on a synthetic crowd, gold, errors. */
import fc from "fast-check";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import {
  aggregateMultiLabel,
  decideParts,
  emptyMultiLabelModel,
  fitMultiLabel,
  type MultiLabelAnswer,
  type MultiLabelModel,
  type MultiLabelTask,
} from "../src/index";
import { rng } from "./helpers";

const K = 4;

/** Answers of distinct labelers "w0".."w9", each a subset of 0..K-1. */
const answersArb = fc
  .uniqueArray(fc.integer({ min: 0, max: 9 }), { minLength: 0, maxLength: 7 })
  .chain((ids) =>
    fc.tuple(
      ...ids.map((i) =>
        fc.uniqueArray(fc.integer({ min: 0, max: K - 1 }), { maxLength: K }).map((chosen) => ({ labelerId: `w${i}`, chosen })),
      ),
    ),
  )
  .map((list): MultiLabelAnswer[] => list);

/**
 * A synthetic crowd: 300 tasks, option j applies with probability prior[j]; labelers w0..w9 each with a
 * sensitivity and specificity per option (w8 and w9 tick at random).
 */
function syntheticCrowd(seed: number): { tasks: MultiLabelTask[]; truth: boolean[][] } {
  const r = rng(seed);
  const prior = [0.5, 0.2, 0.1, 0.3];
  const sens = Array.from({ length: 10 }, (_, w) => (w >= 8 ? 0.5 : 0.6 + 0.04 * w));
  const spec = Array.from({ length: 10 }, (_, w) => (w >= 8 ? 0.5 : 0.9 + 0.01 * w));
  const tasks: MultiLabelTask[] = [];
  const truth: boolean[][] = [];
  for (let t = 0; t < 300; t++) {
    const z = prior.map((p) => uniformFloat64(r) < p);
    truth.push(z);
    const answers: MultiLabelAnswer[] = [];
    for (let w = 0; w < 10; w++) {
      if (uniformFloat64(r) < 0.5) continue;
      const chosen: number[] = [];
      z.forEach((applies, j) => {
        const p = applies ? (sens[w] as number) : 1 - (spec[w] as number);
        if (uniformFloat64(r) < p) chosen.push(j);
      });
      answers.push({ labelerId: `w${w}`, chosen });
    }
    tasks.push({ id: `t${t}`, answers });
  }
  return { tasks, truth };
}

let fitted: MultiLabelModel;
let crowd: ReturnType<typeof syntheticCrowd>;
beforeAll(() => {
  crowd = syntheticCrowd(7);
  fitted = fitMultiLabel(K, crowd.tasks);
});

describe("aggregateMultiLabel properties", () => {
  const models = (): [string, MultiLabelModel][] => [
    ["empty model", emptyMultiLabelModel(K)],
    ["fitted model", fitted],
  ];

  it("gives the same result for any order of the labelers", () => {
    for (const [, model] of models()) {
      fc.assert(
        fc.property(
          answersArb.chain((a) => fc.tuple(fc.constant(a), fc.shuffledSubarray(a, { minLength: a.length, maxLength: a.length }))),
          ([answers, shuffled]) => {
            expect(aggregateMultiLabel(model, shuffled)).toEqual(aggregateMultiLabel(model, answers));
          },
        ),
        { numRuns: 100, seed: 1 },
      );
    }
  });

  it("gives an empty set when every labeler answers the empty set", () => {
    for (const [, model] of models()) {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 8 }), (n) => {
          const r = aggregateMultiLabel(
            model,
            Array.from({ length: n }, (_, i) => ({ labelerId: `w${i}`, chosen: [] })),
          );
          expect(r.chosen).toEqual([]);
          for (const p of r.posterior) expect(p).toBeLessThan(0.5);
        }),
        { numRuns: 20, seed: 2 },
      );
    }
  });

  it("gives the labelers' set back when they agree", () => {
    // the empty model with any number of labelers; the fitted one with three or more of its good labelers
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: K - 1 }), { maxLength: K }), fc.integer({ min: 1, max: 6 }), (set, n) => {
        const answers = Array.from({ length: n }, (_, i) => ({ labelerId: `w${i}`, chosen: set }));
        expect(aggregateMultiLabel(emptyMultiLabelModel(K), answers).chosen).toEqual([...set].sort((a, b) => a - b));
        if (n >= 3) expect(aggregateMultiLabel(fitted, answers).chosen).toEqual([...set].sort((a, b) => a - b));
      }),
      { numRuns: 100, seed: 3 },
    );
  });

  it("reports per option the posterior of the chosen side, and the product as the task confidence", () => {
    const r = aggregateMultiLabel(fitted, [
      { labelerId: "w5", chosen: [0, 2] },
      { labelerId: "w6", chosen: [0] },
    ]);
    r.posterior.forEach((p, j) => {
      expect(r.confidence[j]).toBeCloseTo(Math.max(p, 1 - p), 12);
      expect(r.parts[j]?.posterior).toEqual([1 - p, p]);
    });
    expect(r.parts.map((p) => p.counts)).toEqual([
      [0, 2],
      [2, 0],
      [1, 1],
      [2, 0],
    ]);
    expect(r.taskConfidence).toBeCloseTo(
      r.confidence.reduce((a, b) => a * b, 1),
      12,
    );
  });
});

describe("fitMultiLabel", () => {
  it("beats per-option majority vote on a crowd with random tickers", () => {
    let right = 0;
    let mv = 0;
    crowd.tasks.forEach((task, t) => {
      const r = aggregateMultiLabel(fitted, task.answers);
      for (let j = 0; j < K; j++) {
        const truth = crowd.truth[t]?.[j] as boolean;
        if (r.chosen.includes(j) === truth) right++;
        const votes = task.answers.filter((a) => a.chosen.includes(j)).length;
        if (votes * 2 > task.answers.length === truth) mv++;
      }
    });
    expect(right).toBeGreaterThan(mv);
    expect(right / (crowd.tasks.length * K)).toBeGreaterThan(0.93);
  });

  it("learns a sensitivity and specificity per labeler and option", () => {
    // w7 (sens 0.88, spec 0.97) against the random w9 on option 0
    const good = fitted.options[0]?.labelers.get("w7")?.counts as number[][];
    const random = fitted.options[0]?.labelers.get("w9")?.counts as number[][];
    // odds of ticking the option when it applies
    const rate = (c: number[][], z: number) => ((c[z] as number[])[1] as number) / ((c[z] as number[])[0] as number);
    expect(rate(good, 1)).toBeGreaterThan(3);
    expect(rate(random, 1)).toBeLessThan(2);
  });

  it("clamps gold options to their truth, option by option", () => {
    const tasks: MultiLabelTask[] = [
      { id: "g", answers: [{ labelerId: "a", chosen: [] }], gold: [true, null, null, false] },
      ...crowd.tasks.slice(0, 50),
    ];
    const model = fitMultiLabel(K, tasks);
    expect(model.options[0]?.space.counts.goldTasks).toBe(1);
    expect(model.options[1]?.space.counts.goldTasks).toBe(0);
    expect(model.options[3]?.space.counts.goldTasks).toBe(1);
    // labeler "a" missed the gold option 0: one gold answer, wrong
    expect(model.options[0]?.labelers.get("a")?.goldCorrect).toBe(0);
    expect(model.options[3]?.labelers.get("a")?.goldCorrect).toBe(1);
  });

  it("warm-starts from a previous model", () => {
    const warm = fitMultiLabel(K, crowd.tasks, { previous: fitted });
    expect(warm.options[0]?.space.version).toBe(2);
    crowd.tasks.slice(0, 20).forEach((task) => {
      const a = aggregateMultiLabel(warm, task.answers).posterior;
      const b = aggregateMultiLabel(fitted, task.answers).posterior;
      a.forEach((p, j) => {
        expect(p).toBeCloseTo(b[j] as number, 3);
      });
    });
  });

  it("refuses option indexes out of range, gold of another length, a previous model of another k", () => {
    expect(() => fitMultiLabel(K, [{ id: "t", answers: [{ labelerId: "a", chosen: [K] }] }])).toThrow(RangeError);
    expect(() => fitMultiLabel(K, [{ id: "t", answers: [], gold: [true] }])).toThrow(/gold has 1 entries/);
    expect(() => fitMultiLabel(3, [], { previous: fitted })).toThrow(/previous model has 4 options/);
    expect(() => fitMultiLabel(0, [])).toThrow(/1..50 options/);
    expect(() => aggregateMultiLabel(fitted, [{ labelerId: "a", chosen: [-1] }])).toThrow(RangeError);
    expect(() =>
      aggregateMultiLabel(fitted, [
        { labelerId: "a", chosen: [] },
        { labelerId: "a", chosen: [1] },
      ]),
    ).toThrow(/two answers of labeler a/);
  });
});

describe("decideParts on a multi-label task", () => {
  it("settles when every option is decided at the target, not on the product", () => {
    const answers = Array.from({ length: 5 }, (_, i) => ({ labelerId: `w${i + 3}`, chosen: [0] }));
    const r = aggregateMultiLabel(fitted, answers);
    const policy = { kind: "confidence" as const, confidenceTarget: 0.9, minLabels: 1, maxLabels: 10 };
    expect(Math.min(...r.confidence)).toBeGreaterThanOrEqual(0.9);
    expect(decideParts(policy, 5, r.parts)).toEqual({ settled: true, resolution: "confidence" });
    const one = aggregateMultiLabel(fitted, answers.slice(0, 1));
    expect(decideParts(policy, 1, one.parts)).toEqual({ settled: false, labelsNeeded: 9 });
  });
});
