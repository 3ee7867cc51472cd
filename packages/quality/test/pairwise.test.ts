/**
 * The pairwise_comparison quality core (src/types/pairwise_comparison, decision 0285): the Bradley-Terry-Davidson
 * ranking (recovery of known scores, coverage of its 95% intervals, ties, disconnected graphs, degenerate input),
 * the labeler weights, and the per-task consensus and stopping, on seeded generated crowds.
 */
import fc from "fast-check";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";
import { sampleRankCorrelation } from "simple-statistics";
import { generatePairwiseCrowd, MIXED_CROWD, normal, type PairwiseCrowdParams } from "../bench/pairwise-gen";
import {
  aggregatePairwise,
  type Comparison,
  decidePairwise,
  emptyPairwiseModel,
  fitPairwise,
  fitRanking,
  labelWeight,
  type Ranking,
  rankPairwise,
  Z95,
} from "../src/types/pairwise_comparison";
import { rng } from "./helpers";

/** n items "x<i>" with centered scores ~ Normal(0, 1). */
function trueScores(r: RandomGenerator, n: number): number[] {
  const raw = Array.from({ length: n }, () => normal(r));
  const m = raw.reduce((a, b) => a + b, 0) / n;
  return raw.map((s) => s - m);
}

/** `count` comparisons of uniform random pairs, outcomes by Bradley-Terry-Davidson with tie parameter nu. */
function comparisons(r: RandomGenerator, scores: readonly number[], count: number, nu = 0): Comparison[] {
  const out: Comparison[] = [];
  const n = scores.length;
  for (let c = 0; c < count; c++) {
    const i = Math.min(n - 1, Math.floor(uniformFloat64(r) * n));
    let j = Math.min(n - 2, Math.floor(uniformFloat64(r) * (n - 1)));
    if (j >= i) j++;
    const pa = Math.exp(scores[i] as number);
    const pb = Math.exp(scores[j] as number);
    const pt = nu * Math.sqrt(pa * pb);
    const u = uniformFloat64(r) * (pa + pb + pt);
    out.push({ a: `x${i}`, b: `x${j}`, outcome: u < pa ? "a" : u < pa + pb ? "b" : "tie" });
  }
  return out;
}

function scoreOf(ranking: Ranking, item: string): number {
  const found = ranking.items.find((i) => i.item === item);
  if (!found) throw new Error(`no item ${item}`);
  return found.score;
}

function rho(ranking: Ranking, scores: readonly number[]): number {
  return sampleRankCorrelation(
    ranking.items.map((i) => i.score),
    ranking.items.map((i) => scores[Number(i.item.slice(1))] as number),
  );
}

describe("fitRanking", () => {
  test("recovers known Bradley-Terry scores", () => {
    const r = rng(11);
    const scores = trueScores(r, 30);
    const ranking = fitRanking(comparisons(r, scores, 6000));
    expect(ranking.converged).toBe(true);
    expect(ranking.tieParameter).toBe(0);
    expect(rho(ranking, scores)).toBeGreaterThan(0.97);
    let error = 0;
    for (const item of ranking.items) error += Math.abs(item.score - (scores[Number(item.item.slice(1))] as number));
    expect(error / 30).toBeLessThan(0.15);
    // ranks follow scores, 1 first
    ranking.items.forEach((item, i) => {
      expect(item.rank).toBe(i + 1);
      expect(item.ciLow).toBeLessThan(item.score);
      expect(item.ciHigh).toBeGreaterThan(item.score);
      expect(item.comparisons).toBeGreaterThan(0);
    });
  });

  test("95% intervals cover the true scores about 95% of the time", () => {
    const r = rng(5);
    let covered = 0;
    let total = 0;
    for (let rep = 0; rep < 40; rep++) {
      const scores = trueScores(r, 20);
      const ranking = fitRanking(comparisons(r, scores, 600));
      for (const item of ranking.items) {
        const s = scores[Number(item.item.slice(1))] as number;
        if (s >= item.ciLow && s <= item.ciHigh) covered++;
        total++;
      }
    }
    const coverage = covered / total;
    // 800 intervals: a binomial 95% band around 0.95 is about +-0.015; the prior's shrinkage adds a little bias
    expect(coverage).toBeGreaterThan(0.92);
    expect(coverage).toBeLessThan(0.98);
  });

  test("ties: Davidson's nu is recovered and scores stay right", () => {
    const r = rng(21);
    const scores = trueScores(r, 20);
    const ranking = fitRanking(comparisons(r, scores, 8000, 0.8));
    expect(ranking.tieParameter).toBeGreaterThan(0.65);
    expect(ranking.tieParameter).toBeLessThan(0.95);
    expect(rho(ranking, scores)).toBeGreaterThan(0.95);
  });

  test("two items that only ever tie get equal scores; a tie counts half a win", () => {
    const ties = Array.from({ length: 10 }, (): Comparison => ({ a: "p", b: "q", outcome: "tie" }));
    const ranking = fitRanking(ties);
    expect(ranking.converged).toBe(true);
    // nu's Exponential(1) prior: nu = -1 + sqrt(1 + 2 T) with T = 10 ties of two equal items
    expect(ranking.tieParameter).toBeCloseTo(-1 + Math.sqrt(21), 6);
    expect(scoreOf(ranking, "p")).toBeCloseTo(scoreOf(ranking, "q"), 9);
    expect(ranking.items.map((i) => i.rank)).toEqual([1, 1]);
    expect(ranking.tieParameter).toBeGreaterThan(1);
    const mixed = fitRanking([...ties, { a: "p", b: "q", outcome: "a" }]);
    expect(scoreOf(mixed, "p")).toBeGreaterThan(scoreOf(mixed, "q"));
  });

  test("disconnected graphs, unbeaten items and items without comparisons get finite scores on one scale", () => {
    const games: Comparison[] = [];
    for (let g = 0; g < 10; g++) games.push({ a: "A", b: "B", outcome: "a" }, { a: "C", b: "D", outcome: "a" });
    const ranking = fitRanking(games, { items: ["E"] });
    for (const item of ranking.items) {
      expect(Number.isFinite(item.score)).toBe(true);
      expect(Number.isFinite(item.ciLow) && Number.isFinite(item.ciHigh)).toBe(true);
    }
    // the two components are mirror images: same scores, the prior alone places them
    expect(scoreOf(ranking, "A")).toBeCloseTo(scoreOf(ranking, "C"), 6);
    expect(scoreOf(ranking, "B")).toBeCloseTo(scoreOf(ranking, "D"), 6);
    expect(scoreOf(ranking, "A")).toBeGreaterThan(1);
    expect(scoreOf(ranking, "B")).toBeLessThan(-1);
    expect(scoreOf(ranking, "A")).toBeCloseTo(-scoreOf(ranking, "B"), 6);
    const e = ranking.items.find((i) => i.item === "E");
    const a = ranking.items.find((i) => i.item === "A");
    // no comparisons: the average item's score, the widest interval (the prior's alone)
    expect(e?.comparisons).toBe(0);
    expect(e?.score).toBeCloseTo(0, 6);
    expect((e?.ciHigh ?? 0) - (e?.ciLow ?? 0)).toBeGreaterThan((a?.ciHigh ?? 0) - (a?.ciLow ?? 0));
    expect(
      ranking.items
        .slice(0, 2)
        .map((i) => i.item)
        .sort(),
    ).toEqual(["A", "C"]);
    expect(e?.rank).toBe(3);
  });

  test("a weaker prior spreads the scores of a lopsided pair further", () => {
    const games = Array.from({ length: 5 }, (): Comparison => ({ a: "A", b: "B", outcome: "a" }));
    const strong = fitRanking(games, { priorGames: 1 });
    const weak = fitRanking(games, { priorGames: 0.1 });
    expect(scoreOf(weak, "A")).toBeGreaterThan(scoreOf(strong, "A"));
  });

  test("weights: a weight-0 label changes nothing; doubling every weight and the prior keeps the scores", () => {
    const r = rng(3);
    const scores = trueScores(r, 8);
    const data = comparisons(r, scores, 400);
    const base = fitRanking(data);
    const withZero = fitRanking([...data, { a: "x0", b: "x1", outcome: "b", weight: 0 }]);
    for (const item of base.items) {
      expect(scoreOf(withZero, item.item)).toBeCloseTo(item.score, 9);
    }
    // doubling the weights and the prior's games doubles the likelihood: the same scores; the sandwich intervals
    // stay but for the prior's share of J (its games count once), so a little narrower
    const doubled = fitRanking(
      data.map((c) => ({ ...c, weight: 2 })),
      { priorGames: 2 },
    );
    for (const item of base.items) {
      const d = doubled.items.find((i) => i.item === item.item);
      expect(d?.score).toBeCloseTo(item.score, 6);
      const ratio = ((d?.ciHigh ?? 0) - (d?.score ?? 0)) / (item.ciHigh - item.score);
      expect(ratio).toBeLessThanOrEqual(1);
      expect(ratio).toBeGreaterThan(0.97);
    }
  });

  test("deterministic, and the order of the comparisons does not change the fit", () => {
    const r = rng(8);
    const scores = trueScores(r, 12);
    const data = comparisons(r, scores, 500, 0.3);
    const one = fitRanking(data);
    expect(fitRanking(data)).toEqual(one);
    const reversed = fitRanking([...data].reverse());
    for (const item of one.items) expect(scoreOf(reversed, item.item)).toBeCloseTo(item.score, 6);
    expect(reversed.tieParameter).toBeCloseTo(one.tieParameter, 6);
  });

  test("any small input: finite centered scores inside their intervals, ranks that follow the scores", () => {
    const comparison = fc
      .record({
        a: fc.constantFrom("p", "q", "r", "s", "t"),
        b: fc.constantFrom("p", "q", "r", "s", "t"),
        outcome: fc.constantFrom("a" as const, "b" as const, "tie" as const),
        weight: fc.double({ min: 0, max: 2, noNaN: true }),
      })
      .filter((c) => c.a !== c.b);
    fc.assert(
      fc.property(fc.array(comparison, { maxLength: 40 }), (data) => {
        const ranking = fitRanking(data, { items: ["p"] });
        expect(ranking.converged).toBe(true);
        expect(Number.isFinite(ranking.tieParameter) && ranking.tieParameter >= 0).toBe(true);
        const sum = ranking.items.reduce((acc, i) => acc + i.score, 0);
        expect(Math.abs(sum)).toBeLessThan(1e-9 * ranking.items.length + 1e-12);
        ranking.items.forEach((item, k) => {
          expect(Number.isFinite(item.score)).toBe(true);
          expect(item.ciLow).toBeLessThanOrEqual(item.score + 1e-12);
          expect(item.ciHigh).toBeGreaterThanOrEqual(item.score - 1e-12);
          const previous = ranking.items[k - 1];
          if (previous) {
            expect(previous.score).toBeGreaterThanOrEqual(item.score);
            expect(item.rank).toBe(previous.score > item.score ? k + 1 : previous.rank);
          } else expect(item.rank).toBe(1);
        });
      }),
      { numRuns: 100, seed: 37 },
    );
  });

  test("degenerate input: nothing to rank, or bad comparisons and options are refused", () => {
    expect(fitRanking([])).toMatchObject({ items: [], tieParameter: 0, converged: true });
    // one item is the average item: score 0, nothing uncertain about its distance to itself
    expect(fitRanking([], { items: ["only"] }).items).toEqual([{ item: "only", score: 0, rank: 1, ciLow: 0, ciHigh: 0, comparisons: 0 }]);
    // two items never compared: the prior's interval of their difference from the average
    const apart = fitRanking([], { items: ["p", "q"] }).items;
    expect(apart.map((i) => i.rank)).toEqual([1, 1]);
    expect(apart[0]?.ciHigh).toBeCloseTo(Z95, 9);
    expect(() => fitRanking([{ a: "x", b: "x", outcome: "a" }])).toThrow(RangeError);
    expect(() => fitRanking([{ a: "x", b: "y", outcome: "a", weight: -1 }])).toThrow(RangeError);
    expect(() => fitRanking([{ a: "x", b: "y", outcome: "a", weight: Number.NaN }])).toThrow(RangeError);
    expect(() => fitRanking([{ a: "x", b: "y", outcome: "a", weight: Number.POSITIVE_INFINITY }])).toThrow(RangeError);
    expect(() => fitRanking([{ a: "x", b: "y", outcome: "c" as "a" }])).toThrow(RangeError);
    expect(() => fitRanking([], { priorGames: 0 })).toThrow(RangeError);
    expect(() => fitRanking([], { maxIterations: 0 })).toThrow(RangeError);
    expect(() => fitRanking([], { tolerance: 0 })).toThrow(RangeError);
  });
});

/** A small mixed crowd (the benchmark's, a third of its size). */
function smallCrowd(seed: number, overrides: Partial<PairwiseCrowdParams> = {}) {
  return generatePairwiseCrowd({ ...MIXED_CROWD, items: 80, tasks: 1200, labelers: 40, seed, ...overrides });
}

describe("pairwise consensus and weights", () => {
  const crowd = smallCrowd(1);
  const model = fitPairwise(crowd.tasks);

  test("the model finds the spammers (weight about 0) and reverses the adversaries", () => {
    for (const [labeler, kind] of crowd.kinds) {
      const w = labelWeight(model, labeler, "a");
      if (kind === "spammer") expect(w.weight).toBeLessThan(0.2);
      if (kind === "adversary") expect(w.outcome).toBe("b");
      if (kind === "honest") expect(w.outcome).toBe("a");
    }
    const honest = [...crowd.kinds].filter(([, k]) => k === "honest").map(([id]) => labelWeight(model, id, "b").weight);
    expect(Math.min(...honest)).toBeGreaterThan(0.2);
    // a labeler the model does not know: the population's weight, outcome as given
    expect(labelWeight(model, "new", "b")).toMatchObject({ outcome: "b" });
    expect(labelWeight(model, "new", "b").weight).toBeGreaterThan(0);
    expect(() => labelWeight(model, "new", "tie")).toThrow(RangeError);
  });

  test("per-task accuracy at least majority vote's, ranking better weighted than unweighted", () => {
    let right = 0;
    let majority = 0;
    for (const task of crowd.tasks) {
      const truth = crowd.truth.get(task.id);
      if (aggregatePairwise(model, task.answers).winner === truth) right++;
      const a = task.answers.filter((x) => x.winner === "a").length;
      if ((a * 2 > task.answers.length ? "a" : "b") === truth) majority++;
    }
    expect(right).toBeGreaterThanOrEqual(majority);
    const items = [...crowd.scores.keys()];
    const truth = (r: Ranking) =>
      sampleRankCorrelation(
        r.items.map((i) => i.score),
        r.items.map((i) => crowd.scores.get(i.item) as number),
      );
    const weighted = truth(rankPairwise(crowd.tasks, model, { items }));
    const unweighted = truth(rankPairwise(crowd.tasks, undefined, { items }));
    expect(weighted).toBeGreaterThanOrEqual(unweighted + 0.01);
    expect(weighted).toBeGreaterThan(0.9);
  });

  test("aggregate: a posterior over the options, answer order does not matter, bad answers refused", () => {
    const answers = [
      { labelerId: "w30", winner: "a" as const },
      { labelerId: "w31", winner: "b" as const },
      { labelerId: "w32", winner: "a" as const },
    ];
    const one = aggregatePairwise(model, answers);
    expect(one.posterior.a + one.posterior.b).toBeCloseTo(1, 12);
    expect(one.confidence).toBe(one.posterior[one.winner]);
    expect(one.counts).toEqual({ a: 2, b: 1 });
    expect(aggregatePairwise(model, [...answers].reverse())).toEqual(one);
    expect(aggregatePairwise(model, []).counts).toEqual({ a: 0, b: 0 });
    expect(() => aggregatePairwise(model, [{ labelerId: "w1", winner: "tie" }])).toThrow(RangeError);
    expect(() => aggregatePairwise(model, [...answers, { labelerId: "w30", winner: "b" }])).toThrow(RangeError);
    expect(() => fitPairwise([{ id: "t", itemA: "x", itemB: "y", answers: [{ labelerId: "w", winner: "tie" }] }])).toThrow(RangeError);
  });

  test("stopping: three agreeing new labelers settle under the threshold policy; the confidence policy at its target", () => {
    const empty = emptyPairwiseModel(true);
    const threshold = { kind: "threshold", consensusThreshold: 3, maxLabels: 5 } as const;
    const votes = ["u1", "u2", "u3"].map((labelerId) => ({ labelerId, winner: "tie" as const }));
    expect(decidePairwise(threshold, empty, votes.slice(0, 2))).toEqual({ settled: false, labelsNeeded: 3 });
    expect(decidePairwise(threshold, empty, votes)).toMatchObject({ settled: true, winner: "tie", resolution: "consensus" });
    const confidence = { kind: "confidence", confidenceTarget: 0.6, minLabels: 1, maxLabels: 5 } as const;
    const honest = [...crowd.kinds].filter(([, k]) => k === "honest").map(([id]) => id);
    const agreeing = honest.slice(0, 3).map((labelerId) => ({ labelerId, winner: "b" as const }));
    let settledAt = 0;
    for (let n = 1; n <= agreeing.length && settledAt === 0; n++) {
      const d = decidePairwise(confidence, model, agreeing.slice(0, n));
      if (d.settled) {
        settledAt = n;
        expect(d).toMatchObject({ winner: "b", resolution: "confidence" });
        expect(d.confidence).toBeGreaterThanOrEqual(0.6);
      }
    }
    expect(settledAt).toBeGreaterThan(0);
    const strict = { ...confidence, confidenceTarget: 0.999, maxLabels: 2 };
    expect(decidePairwise(strict, model, agreeing.slice(0, 2))).toMatchObject({ settled: true, resolution: "max_labels", winner: "b" });
    expect(() => decidePairwise({ ...confidence, confidenceTarget: 2 }, model, agreeing)).toThrow(RangeError);
  });

  test("gold tasks enter the fit at their known winner; ties allowed give three options", () => {
    const tied = smallCrowd(2, { allowTie: true, tasks: 600 });
    const withGold = tied.tasks.map((t, i) => (i < 60 ? { ...t, gold: tied.truth.get(t.id) } : t));
    const m = fitPairwise(withGold, { allowTie: true });
    expect(m.space.k).toBe(3);
    expect(m.space.counts.goldTasks).toBe(60);
    const c = aggregatePairwise(m, tied.tasks[100]?.answers ?? []);
    expect(c.posterior.a + c.posterior.b + c.posterior.tie).toBeCloseTo(1, 12);
    const ranking = rankPairwise(tied.tasks, m);
    expect(ranking.tieParameter).toBeGreaterThan(0);
  });
});
