/** The decision rule and the one-coin model (../shared/DESIGN.md §3): pure functions, no infrastructure. */
import {
  type AccuracyPrior,
  countVotes,
  DEFAULT_PRIOR,
  decide as decideRule,
  labelerAccuracy,
  oneCoinPosterior as posterior,
  type Vote,
} from "../src/decision";

type LabelVote = Vote;

/** The rule with the one-coin model over an accuracy map, in the shape these cases compare. */
function decide(
  task: { options: readonly string[]; consensusThreshold: number; maxLabels: number; votes: readonly Vote[] },
  accuracy: ReadonlyMap<string, number>,
  prior: AccuracyPrior = DEFAULT_PRIOR,
) {
  const d = decideRule(task, task.votes, { posterior: (options, vs) => posterior(options, vs, accuracy, prior) });
  return d.done
    ? { settle: true as const, label: d.label, confidence: d.confidence, resolution: d.resolution, counts: d.counts }
    : { settle: false as const };
}

const ABC = ["a", "b", "c"];

/** votes by labelers l0, l1, ... in order */
function votes(...values: string[]): LabelVote[] {
  return values.map((value, i) => ({ labelerId: `l${i}`, value }));
}

/** the same accuracy for every labeler of `vs` */
function uniform(vs: readonly LabelVote[], q: number): Map<string, number> {
  return new Map(vs.map((v) => [v.labelerId, q]));
}

function sum(record: Record<string, number>): number {
  return Object.values(record).reduce((a, b) => a + b, 0);
}

describe("posterior", () => {
  it.each([
    ["no votes", ABC, votes(), 0.8],
    ["one vote", ABC, votes("a"), 0.8],
    ["split votes", ABC, votes("a", "b", "c", "a"), 0.7],
    ["two options", ["yes", "no"], votes("yes", "no", "no"), 0.9],
    ["many options", ["o1", "o2", "o3", "o4", "o5", "o6"], votes("o1", "o3", "o3", "o6", "o1"), 0.55],
    ["300 near-certain votes (no underflow)", ABC, Array.from({ length: 300 }, (_, i) => ({ labelerId: `l${i}`, value: "b" })), 0.999],
  ])("sums to 1 and covers every option: %s", (_name, options, vs, q) => {
    const post = posterior(options, vs, uniform(vs, q));
    expect(Object.keys(post).sort()).toEqual([...options].sort());
    expect(sum(post)).toBeCloseTo(1, 12);
    for (const p of Object.values(post)) {
      expect(Number.isFinite(p)).toBe(true);
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThanOrEqual(1);
    }
  });

  it("matches the hand-computed one-coin example: q = 0.8, votes a, a, b over [a, b, c]", () => {
    // Y = 3, a wrong answer picks each other option with (1 − 0.8) / 2 = 0.1.
    // L(a) = 0.8·0.8·0.1 = 0.064, L(b) = 0.1·0.1·0.8 = 0.008, L(c) = 0.1³ = 0.001; total 0.073.
    const vs = votes("a", "a", "b");
    const post = posterior(ABC, vs, uniform(vs, 0.8));
    expect(post.a).toBeCloseTo(0.064 / 0.073, 12);
    expect(post.b).toBeCloseTo(0.008 / 0.073, 12);
    expect(post.c).toBeCloseTo(0.001 / 0.073, 12);
  });

  it("is uniform without votes", () => {
    const post = posterior(ABC, [], new Map());
    for (const o of ABC) expect(post[o]).toBeCloseTo(1 / 3, 12);
  });

  it("gives a labeler missing from the accuracy map the prior mean", () => {
    const vs = votes("a", "a", "b");
    expect(posterior(ABC, vs, new Map())).toEqual(posterior(ABC, vs, uniform(vs, 0.8)));
    const prior = { correct: 9, wrong: 1 };
    expect(posterior(ABC, vs, new Map(), prior)).toEqual(posterior(ABC, vs, uniform(vs, 0.9)));
  });

  it("weighs each labeler by its own accuracy", () => {
    // l0 (q = 0.95) says a; l1 (q = 0.6) says b: a must be the more likely option.
    const vs = votes("a", "b");
    const post = posterior(
      ABC,
      vs,
      new Map([
        ["l0", 0.95],
        ["l1", 0.6],
      ]),
    );
    // L(a) = 0.95·0.2, L(b) = 0.025·0.6, L(c) = 0.025·0.2
    const la = 0.95 * 0.2;
    const lb = 0.025 * 0.6;
    const lc = 0.025 * 0.2;
    expect(post.a).toBeCloseTo(la / (la + lb + lc), 12);
    expect(post.b).toBeCloseTo(lb / (la + lb + lc), 12);
    expect(post.a as number).toBeGreaterThan(post.b as number);
  });
});

describe("labelerAccuracy", () => {
  it("is the prior mean 4/5 = 0.8 for a newcomer under the default prior (a = 4, b = 1)", () => {
    expect(DEFAULT_PRIOR).toEqual({ correct: 4, wrong: 1 });
    expect(labelerAccuracy({ settled: 0, agreed: 0 })).toBeCloseTo(0.8, 15);
    expect(labelerAccuracy({ settled: 0, agreed: 0 }, DEFAULT_PRIOR)).toBeCloseTo(0.8, 15);
  });

  it.each([
    [1, 1],
    [1, 0],
    [10, 9],
    [10, 2],
    [100, 100],
    [250, 7],
  ])("is (4 + agreed) / (5 + settled) after %i settled labels, %i agreeing", (settled, agreed) => {
    expect(labelerAccuracy({ settled, agreed })).toBeCloseTo((4 + agreed) / (5 + settled), 15);
  });

  it("uses a custom prior", () => {
    expect(labelerAccuracy({ settled: 4, agreed: 3 }, { correct: 1, wrong: 1 })).toBeCloseTo(4 / 6, 15);
  });

  it("is clamped to [0.001, 0.999]", () => {
    expect(labelerAccuracy({ settled: 10, agreed: 10 }, { correct: 1, wrong: 0 })).toBe(0.999);
    expect(labelerAccuracy({ settled: 10, agreed: 0 }, { correct: 0, wrong: 1 })).toBe(0.001);
    expect(labelerAccuracy({ settled: 1_000_000, agreed: 1_000_000 })).toBe(0.999);
    expect(labelerAccuracy({ settled: 1_000_000, agreed: 0 })).toBe(0.001);
    // a clamped labeler is never decisive: the posterior stays finite and below 1
    const vs = votes("a");
    const post = posterior(ABC, vs, uniform(vs, labelerAccuracy({ settled: 10, agreed: 10 }, { correct: 1, wrong: 0 })));
    expect(post.a as number).toBeLessThan(1);
    expect(post.b as number).toBeGreaterThan(0);
  });
});

describe("countVotes", () => {
  it("counts every option, zeros included", () => {
    expect(countVotes(ABC, votes("b", "b", "c"))).toEqual({ a: 0, b: 2, c: 1 });
    expect(countVotes(ABC, [])).toEqual({ a: 0, b: 0, c: 0 });
  });
});

describe("decide", () => {
  it("does not settle before an option reaches the threshold, and settles with resolution consensus when one does", () => {
    const task = (vs: LabelVote[]) => ({ options: ABC, consensusThreshold: 3, maxLabels: 7, votes: vs });
    for (const partial of [votes(), votes("a"), votes("a", "a"), votes("a", "b", "a", "c", "b")]) {
      expect(decide(task(partial), uniform(partial, 0.8))).toEqual({ settle: false });
    }
    const vs = votes("a", "b", "a", "c", "a");
    const decision = decide(task(vs), uniform(vs, 0.8));
    expect(decision).toMatchObject({ settle: true, label: "a", resolution: "consensus", counts: { a: 3, b: 1, c: 1 } });
  });

  it("settles on a threshold of 1 with the first label", () => {
    const vs = votes("c");
    expect(decide({ options: ABC, consensusThreshold: 1, maxLabels: 3, votes: vs }, new Map())).toMatchObject({
      settle: true,
      label: "c",
      resolution: "consensus",
    });
  });

  it("reports consensus, not max_labels, when the threshold is reached with the last allowed label", () => {
    const vs = votes("b", "a", "b");
    expect(decide({ options: ABC, consensusThreshold: 2, maxLabels: 3, votes: vs }, uniform(vs, 0.8))).toMatchObject({
      settle: true,
      label: "b",
      resolution: "consensus",
    });
  });

  it("settles at max_labels with the plurality label and resolution max_labels", () => {
    const vs = votes("b", "a", "b", "c");
    const task = { options: ABC, consensusThreshold: 3, maxLabels: 4, votes: vs };
    expect(decide({ ...task, votes: vs.slice(0, 3) }, uniform(vs, 0.8))).toEqual({ settle: false });
    const decision = decide(task, uniform(vs, 0.8));
    expect(decision).toMatchObject({ settle: true, label: "b", resolution: "max_labels", counts: { a: 1, b: 2, c: 1 } });
  });

  it("breaks a plurality tie at max_labels by the posterior: the more accurate labeler's option wins", () => {
    // a comes first in option order, but b's labeler is far more accurate.
    const vs = votes("a", "b");
    const accuracy = new Map([
      ["l0", 0.6],
      ["l1", 0.95],
    ]);
    const decision = decide({ options: ABC, consensusThreshold: 2, maxLabels: 2, votes: vs }, accuracy);
    expect(decision).toMatchObject({ settle: true, label: "b", resolution: "max_labels", counts: { a: 1, b: 1, c: 0 } });
    // and the other way round
    const swapped = new Map([
      ["l0", 0.95],
      ["l1", 0.6],
    ]);
    expect(decide({ options: ABC, consensusThreshold: 2, maxLabels: 2, votes: vs }, swapped)).toMatchObject({ label: "a" });
  });

  it("breaks a tie with equal posteriors by option order", () => {
    const options = ["x", "y", "z"];
    const vs = votes("z", "y");
    expect(decide({ options, consensusThreshold: 2, maxLabels: 2, votes: vs }, uniform(vs, 0.8))).toMatchObject({
      settle: true,
      label: "y",
      resolution: "max_labels",
    });
    const three = votes("bird", "dog", "cat");
    const decision = decide({ options: ["cat", "dog", "bird"], consensusThreshold: 2, maxLabels: 3, votes: three }, uniform(three, 0.8));
    expect(decision).toMatchObject({ settle: true, label: "cat", resolution: "max_labels" });
    if (decision.settle) expect(decision.confidence).toBeCloseTo(1 / 3, 12);
  });

  it.each([
    ["cat,cat,dog,dog,bird,bird"],
    ["cat,dog,bird,cat,dog,bird"],
    ["bird,dog,cat,cat,dog,bird"],
    ["cat,cat,bird,bird,dog,dog"],
    ["dog,bird,dog,cat,bird,cat"],
  ])("breaks a three-way tie of equally accurate labelers by option order, whatever the vote order (%s)", (order) => {
    // Mathematically the three posteriors are equal (1/3 each), so the option order must decide: cat.
    const vs = votes(...order.split(","));
    const decision = decide({ options: ["cat", "dog", "bird"], consensusThreshold: 3, maxLabels: 6, votes: vs }, uniform(vs, 0.8));
    expect(decision).toMatchObject({ settle: true, label: "cat", resolution: "max_labels", counts: { cat: 2, dog: 2, bird: 2 } });
    if (decision.settle) expect(decision.confidence).toBeCloseTo(1 / 3, 12);
  });

  it("never lets the posterior override a plurality with more votes", () => {
    // b has two votes from weak labelers, a one vote from a strong one: b is the plurality.
    const vs = votes("b", "b", "a");
    const accuracy = new Map([
      ["l0", 0.4],
      ["l1", 0.4],
      ["l2", 0.999],
    ]);
    const decision = decide({ options: ABC, consensusThreshold: 3, maxLabels: 3, votes: vs }, accuracy);
    expect(decision).toMatchObject({ settle: true, label: "b", resolution: "max_labels" });
  });

  it("gives a higher confidence when a labeler is more accurate", () => {
    const vs = votes("a", "a", "a");
    const task = { options: ABC, consensusThreshold: 3, maxLabels: 7, votes: vs };
    const base = decide(task, uniform(vs, 0.8));
    const better = decide(task, new Map([...uniform(vs, 0.8), ["l0", 0.95]]));
    const worse = decide(task, new Map([...uniform(vs, 0.8), ["l0", 0.5]]));
    if (!base.settle || !better.settle || !worse.settle) throw new Error("expected settlements");
    expect(better.confidence).toBeGreaterThan(base.confidence);
    expect(worse.confidence).toBeLessThan(base.confidence);
    // three newcomers: 0.512 / (0.512 + 0.001 + 0.001)
    expect(base.confidence).toBeCloseTo(0.512 / 0.514, 12);
  });

  it.each([
    ["consensus", votes("a", "b", "a", "a"), 3, 7],
    ["max_labels", votes("a", "b", "c", "b"), 3, 4],
    ["tie", votes("c", "a"), 2, 2],
  ])("gives the posterior of the chosen label as confidence (%s)", (_name, vs, consensusThreshold, maxLabels) => {
    const accuracy = new Map(vs.map((v, i) => [v.labelerId, 0.55 + 0.1 * i]));
    const decision = decide({ options: ABC, consensusThreshold, maxLabels, votes: vs }, accuracy);
    if (!decision.settle) throw new Error("expected a settlement");
    expect(decision.confidence).toBe(posterior(ABC, vs, accuracy)[decision.label]);
    expect(decision.confidence).toBeGreaterThan(0);
    expect(decision.confidence).toBeLessThanOrEqual(1);
  });

  it("uses the given prior for labelers without an accuracy", () => {
    const vs = votes("a", "a");
    const task = { options: ABC, consensusThreshold: 2, maxLabels: 3, votes: vs };
    const weakPrior = decide(task, new Map(), { correct: 1, wrong: 1 });
    const strongPrior = decide(task, new Map(), { correct: 19, wrong: 1 });
    if (!weakPrior.settle || !strongPrior.settle) throw new Error("expected settlements");
    expect(strongPrior.confidence).toBeGreaterThan(weakPrior.confidence);
    expect(weakPrior.confidence).toBe(posterior(ABC, vs, uniform(vs, 0.5))["a"]);
  });
});
