/** Box consensus (boxes.ts): IoU, matching, candidates, fusion, aggregator properties, the fit on a generated crowd. */
import fc from "fast-check";
import { CLASSES, generateBoxCrowd, greedyJaccard, summarize } from "../bench/boxes-crowd";
import {
  aggregateBoxes,
  type Box,
  type BoxAnswer,
  type BoxModel,
  candidates,
  canonicalAnswers,
  emptyBoxModel,
  fitBoxes,
  fuseBoxes,
  iou,
  labelerRecall,
  localizationWeight,
  matchBoxes,
  minCostAssignment,
  sizeClass,
} from "../src/index";

const box = (x: number, y: number, w: number, h: number, label = 0): Box => ({ x, y, w, h, label });

describe("iou", () => {
  it("is intersection over union", () => {
    expect(iou(box(0, 0, 10, 10), box(0, 0, 10, 10))).toBe(1);
    expect(iou(box(0, 0, 10, 10), box(5, 0, 10, 10))).toBeCloseTo(50 / 150, 12);
    expect(iou(box(0, 0, 10, 10), box(2, 2, 4, 4))).toBeCloseTo(16 / 100, 12);
  });

  it("is 0 for boxes that only touch or do not meet", () => {
    expect(iou(box(0, 0, 10, 10), box(10, 0, 10, 10))).toBe(0);
    expect(iou(box(0, 0, 10, 10), box(20, 20, 5, 5))).toBe(0);
  });

  it("is symmetric and in [0, 1]", () => {
    const b = fc.record({
      x: fc.double({ min: 0, max: 100, noNaN: true }),
      y: fc.double({ min: 0, max: 100, noNaN: true }),
      w: fc.double({ min: 0.01, max: 50, noNaN: true }),
      h: fc.double({ min: 0.01, max: 50, noNaN: true }),
    });
    fc.assert(
      fc.property(b, b, (p, q) => {
        const v = iou(p, q);
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThanOrEqual(1 + 1e-12);
        expect(iou(q, p)).toBeCloseTo(v, 12);
      }),
      { numRuns: 200, seed: 7 },
    );
  });
});

describe("matchBoxes", () => {
  it("maximizes the summed IoU one-to-one, dropping pairs under the threshold", () => {
    const a = [box(0, 0, 10, 10), box(100, 100, 10, 10)];
    const b = [box(101, 100, 10, 10), box(1, 1, 10, 10), box(300, 300, 5, 5)];
    expect(matchBoxes(a, b).map(([i, j]) => [i, j])).toEqual([
      [0, 1],
      [1, 0],
    ]);
    expect(matchBoxes(a, [box(6, 0, 10, 10)])).toEqual([]);
    expect(matchBoxes([], b)).toEqual([]);
  });

  it("prefers the assignment with the larger total over a greedy first pick", () => {
    // a0 overlaps b0 best, but giving b0 to a0 leaves a1 without a match at 0.5
    const a = [box(0, 0, 10, 10), box(3, 0, 10, 10)];
    const b = [box(2, 0, 10, 10), box(-2, 0, 10, 10)];
    const pairs = matchBoxes(a, b).map(([i, j]) => [i, j]);
    expect(pairs).toEqual([
      [0, 1],
      [1, 0],
    ]);
  });
});

describe("candidates", () => {
  it("clusters matched boxes across labelers, at most one box per labeler", () => {
    const answers = canonicalAnswers([
      { labelerId: "a", boxes: [box(0, 0, 10, 10), box(50, 50, 10, 10)] },
      { labelerId: "b", boxes: [box(1, 0, 10, 10)] },
      { labelerId: "c", boxes: [box(0, 1, 10, 10), box(200, 0, 5, 5)] },
    ]);
    const cands = candidates(answers).map((c) => c.members.map((m) => `${answers[m.answer]?.labelerId}${m.box}`).sort());
    expect(cands).toEqual([["a0", "b0", "c0"], ["a1"], ["c1"]]);
  });

  it("never puts two boxes of one labeler in a cluster, even through a chain", () => {
    // a's two boxes both overlap b's box; only one of them joins it
    const answers = canonicalAnswers([
      { labelerId: "a", boxes: [box(0, 0, 10, 10), box(2, 0, 10, 10)] },
      { labelerId: "b", boxes: [box(1, 0, 10, 10)] },
      { labelerId: "c", boxes: [box(2, 0, 10, 10)] },
    ]);
    for (const c of candidates(answers)) {
      const labelers = c.members.map((m) => m.answer);
      expect(new Set(labelers).size).toBe(labelers.length);
    }
  });
});

describe("fuseBoxes", () => {
  it("is the weighted mean of each edge", () => {
    const fused = fuseBoxes([box(10, 10, 20, 20), box(12, 10, 20, 24)], [3, 1]);
    expect(fused.x).toBeCloseTo(10.5, 12);
    expect(fused.y).toBeCloseTo(10, 12);
    expect(fused.x + fused.w).toBeCloseTo((3 * 30 + 32) / 4, 12);
    expect(fused.y + fused.h).toBeCloseTo((3 * 30 + 34) / 4, 12);
  });

  it("gives identical boxes back exactly, and a lightly weighted outlier moves little", () => {
    const b = box(0.1, 0.2, 0.3, 0.7);
    expect(fuseBoxes([b, b, b], [0.3, 7, 1])).toEqual({ x: 0.1, y: 0.2, w: 0.3, h: 0.7 });
    const fused = fuseBoxes([box(10, 10, 20, 20), box(10, 10, 20, 20), box(80, 90, 5, 5)], [100, 100, 1]);
    expect(fused.x).toBeLessThan(10.5);
    expect(() => fuseBoxes([], [])).toThrow(RangeError);
  });
});

describe("sizeClass", () => {
  it("uses COCO's area thresholds", () => {
    expect(sizeClass({ w: 31, h: 32 })).toBe(0);
    expect(sizeClass({ w: 32, h: 32 })).toBe(1);
    expect(sizeClass({ w: 96, h: 95 })).toBe(1);
    expect(sizeClass({ w: 96, h: 96 })).toBe(2);
  });
});

const answersArb = fc
  .uniqueArray(fc.integer({ min: 0, max: 9 }), { maxLength: 6 })
  .chain((ids) =>
    fc.tuple(
      ...ids.map((i) =>
        fc
          .array(
            fc.record({
              x: fc.integer({ min: 0, max: 90 }),
              y: fc.integer({ min: 0, max: 90 }),
              w: fc.integer({ min: 2, max: 30 }),
              h: fc.integer({ min: 2, max: 30 }),
              label: fc.integer({ min: 0, max: 2 }),
            }),
            { maxLength: 5 },
          )
          .map((boxes) => ({ labelerId: `L${String(i * 3).padStart(3, "0")}`, boxes })),
      ),
    ),
  )
  .map((list): BoxAnswer[] => list);

let fitted: BoxModel;
let crowd: ReturnType<typeof generateBoxCrowd>;
beforeAll(() => {
  crowd = generateBoxCrowd(3, 150);
  fitted = fitBoxes(
    CLASSES.length,
    crowd.images.map((m, i) => ({ id: m.id, answers: m.answers, gold: i % 10 === 0 ? m.truth : undefined })),
  );
});

describe("aggregateBoxes properties", () => {
  it("gives the same result for any order of the labelers and of their boxes", () => {
    for (const model of [emptyBoxModel(3), fitted]) {
      fc.assert(
        fc.property(
          answersArb.chain((a) =>
            fc.tuple(
              fc.constant(a),
              fc
                .shuffledSubarray(a, { minLength: a.length, maxLength: a.length })
                .map((s) => s.map((x) => ({ ...x, boxes: [...x.boxes].reverse() }))),
            ),
          ),
          ([answers, shuffled]) => {
            expect(aggregateBoxes(model, shuffled)).toEqual(aggregateBoxes(model, answers));
          },
        ),
        { numRuns: 80, seed: 8 },
      );
    }
  });

  it("gives no box when every labeler answers no box", () => {
    for (const model of [emptyBoxModel(3), fitted]) {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 6 }), (n) => {
          const r = aggregateBoxes(
            model,
            Array.from({ length: n }, (_, i) => ({ labelerId: `w${i}`, boxes: [] })),
          );
          expect(r.boxes).toEqual([]);
          expect(r.candidates).toEqual([]);
        }),
        { numRuns: 10, seed: 9 },
      );
    }
  });

  it("gives the labelers' boxes back when they agree", () => {
    fc.assert(
      fc.property(answersArb, fc.integer({ min: 1, max: 5 }), (sample, n) => {
        const boxes = sample[0]?.boxes ?? [];
        const answers = Array.from({ length: n }, (_, i) => ({ labelerId: `w${i}`, boxes }));
        const strip = (r: ReturnType<typeof aggregateBoxes>) => r.boxes.map(({ x, y, w, h, label }) => ({ x, y, w, h, label }));
        const sorted = [...boxes].sort((a, b) => a.x - b.x || a.y - b.y || a.w - b.w || a.h - b.h || a.label - b.label);
        expect(strip(aggregateBoxes(emptyBoxModel(3), answers))).toEqual(sorted);
      }),
      { numRuns: 100, seed: 10 },
    );
  });

  it("reports support, confidence = P(object) x P(class), and the parts of the stopping rule", () => {
    const r = aggregateBoxes(emptyBoxModel(2), [
      { labelerId: "a", boxes: [box(0, 0, 10, 10, 0)] },
      { labelerId: "b", boxes: [box(1, 0, 10, 10, 1)] },
      { labelerId: "c", boxes: [box(0, 1, 10, 10, 0), box(50, 50, 10, 10, 1)] },
    ]);
    expect(r.candidates).toHaveLength(2);
    const [kept, lone] = r.candidates as [(typeof r.candidates)[0], (typeof r.candidates)[0]];
    expect(kept.support).toBe(3);
    expect(kept.label).toBe(0);
    expect(kept.confidence).toBeCloseTo(kept.objectPosterior * (kept.classPosterior[0] as number), 12);
    expect(lone.support).toBe(1);
    expect(lone.objectPosterior).toBeLessThan(0.5);
    expect(r.boxes).toEqual([kept]);
    // parts: object of each candidate, class of the kept one, none missed
    expect(r.parts.map((p) => p.counts)).toEqual([[0, 3], [2, 1], [2, 1], null]);
    expect(r.noneMissed).toBeGreaterThan(0);
    expect(r.noneMissed).toBeLessThan(1);
  });
});

describe("fitBoxes on a generated crowd", () => {
  it("learns who finds objects and who draws loosely", () => {
    const byKind = (f: (id: string) => number) => {
      const sums = new Map<string, number[]>();
      for (const [id, kind] of crowd.kinds) {
        if (!fitted.objects[1]?.labelers.has(id)) continue;
        const list = sums.get(kind) ?? [];
        list.push(f(id));
        sums.set(kind, list);
      }
      return Object.fromEntries([...sums].map(([k, v]) => [k, v.reduce((a, b) => a + b, 0) / v.length]));
    };
    const recall = byKind((id) => labelerRecall(fitted, id, 1));
    expect(recall.careful).toBeGreaterThan(recall.average as number);
    expect(recall.average).toBeGreaterThan(recall.sloppy as number);
    expect(recall.sloppy).toBeGreaterThan(recall.spammer as number);
    const weight = byKind((id) => localizationWeight(fitted, id));
    expect(weight.careful).toBeGreaterThan(weight.sloppy as number);
  });

  it("has better recall than the greedy baseline at a precision close to it", () => {
    const rows = crowd.images.filter((_, i) => i % 10 !== 0);
    const ours = summarize(rows.map((m) => ({ truth: m.truth, detections: aggregateBoxes(fitted, m.answers).boxes })));
    const greedy = summarize(rows.map((m) => ({ truth: m.truth, detections: greedyJaccard(m.answers) })));
    expect(ours.recall).toBeGreaterThan(greedy.recall + 0.05);
    expect(ours.precision).toBeGreaterThan(greedy.precision - 0.05);
    expect(ours.meanIou).toBeGreaterThan(greedy.meanIou - 0.01);
    expect(ours.ece).toBeLessThan(0.1);
  });

  it("estimates the objects per item from the gold tasks", () => {
    const gold = crowd.images.filter((_, i) => i % 10 === 0);
    expect(fitted.objectsPerItem).toBeCloseTo(gold.reduce((n, m) => n + m.truth.length, 0) / gold.length, 12);
  });

  it("refuses class indexes out of range, two answers of one labeler, a previous model of other classes", () => {
    expect(() => aggregateBoxes(emptyBoxModel(2), [{ labelerId: "a", boxes: [box(0, 0, 1, 1, 2)] }])).toThrow(RangeError);
    expect(() =>
      aggregateBoxes(emptyBoxModel(2), [
        { labelerId: "a", boxes: [] },
        { labelerId: "a", boxes: [] },
      ]),
    ).toThrow(/two answers of labeler a/);
    expect(() => fitBoxes(2, [], { previous: fitted })).toThrow(/previous model has 5 classes/);
    expect(() => fitBoxes(51, [])).toThrow(/1..50 classes/);
  });
});

describe("matchBoxes by components", () => {
  it("reaches the summed IoU of one assignment over all boxes", () => {
    const boxArb = fc.record({
      x: fc.integer({ min: 0, max: 60 }),
      y: fc.integer({ min: 0, max: 60 }),
      w: fc.integer({ min: 4, max: 30 }),
      h: fc.integer({ min: 4, max: 30 }),
      label: fc.constant(0),
    });
    fc.assert(
      fc.property(fc.array(boxArb, { maxLength: 9 }), fc.array(boxArb, { maxLength: 9 }), (a, b) => {
        const pairs = matchBoxes(a, b);
        // reference: one Hungarian assignment on the whole matrix
        let reference = 0;
        if (a.length > 0 && b.length > 0) {
          const overlaps = a.map((p) => b.map((q) => iou(p, q)));
          minCostAssignment(overlaps.map((row) => row.map((v) => (v >= 0.5 ? 1 - v : 1)))).forEach((j, i) => {
            const v = j >= 0 ? ((overlaps[i] as number[])[j] as number) : 0;
            if (v >= 0.5) reference += v;
          });
        }
        expect(pairs.reduce((s, p) => s + p[2], 0)).toBeCloseTo(reference, 9);
        expect(new Set(pairs.map((p) => p[0])).size).toBe(pairs.length);
        expect(new Set(pairs.map((p) => p[1])).size).toBe(pairs.length);
        for (const [i, j, v] of pairs) expect(v).toBeCloseTo(iou(a[i] as Box, b[j] as Box), 12);
      }),
      { numRuns: 300, seed: 12 },
    );
  });
});
