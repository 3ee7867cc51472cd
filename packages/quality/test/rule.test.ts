/**
 * The decision rule (contract §lifecycle, §quality) over a label space's Dawid-Skene model: pure functions, no
 * infrastructure. The model's own tests are packages/quality/test; these check the rule's policies, ties,
 * claim caps, gold tasks and errors.
 */
import {
  countVotes,
  type DecisionTask,
  decide,
  emptySpace,
  GOLD_CLAIM_CAP,
  initialClaimCap,
  type LabelerParams,
  type Policy,
  priorModel,
  type ScoringModel,
  scoreTask,
  taskPosterior,
  type LabelVote as Vote,
} from "../src";

const ABC = ["a", "b", "c"];

/** votes by labelers l0, l1, ... in order */
function votes(...values: string[]): Vote[] {
  return values.map((value, i) => ({ labelerId: `l${i}`, value }));
}

/** A labeler row of `labels` labels spread evenly over the k true options, right with probability `accuracy`. */
function labeler(id: string, k: number, accuracy: number, labels = 200): LabelerParams {
  const perRow = labels / k;
  const counts = Array.from({ length: k }, (_, z) =>
    Array.from({ length: k }, (_, l) => (z === l ? accuracy * perRow : ((1 - accuracy) * perRow) / (k - 1))),
  );
  return { labelerId: id, counts, labels, goldAnswers: 0, goldCorrect: 0 };
}

/** A model of k options knowing the labelers of `accuracy` (labeler id → accuracy). */
function model(k: number, accuracy: Record<string, number>): ScoringModel {
  return { space: emptySpace(k), labelers: new Map(Object.entries(accuracy).map(([id, q]) => [id, labeler(id, k, q)])) };
}

const threshold = (consensusThreshold: number, maxLabels: number, options = ABC): DecisionTask => ({
  options,
  policy: { kind: "threshold", consensusThreshold, maxLabels },
});

function sum(record: Record<string, number>): number {
  return Object.values(record).reduce((a, b) => a + b, 0);
}

describe("countVotes", () => {
  it("counts every option, zeros included", () => {
    expect(countVotes(ABC, votes("b", "b", "c"))).toEqual({ a: 0, b: 2, c: 1 });
    expect(countVotes(ABC, [])).toEqual({ a: 0, b: 0, c: 0 });
  });
});

describe("taskPosterior", () => {
  it("is the model's calibrated posterior by option, summing to 1", () => {
    const m = model(3, { l0: 0.9, l1: 0.6 });
    const vs = votes("a", "b");
    const post = taskPosterior(threshold(3, 7), vs, m);
    expect(Object.keys(post)).toEqual(ABC);
    expect(sum(post)).toBeCloseTo(1, 12);
    const raw = scoreTask(m.space, [
      { labeler: m.labelers.get("l0"), option: 0 },
      { labeler: m.labelers.get("l1"), option: 1 },
    ]).posterior;
    expect(post).toEqual({ a: raw[0], b: raw[1], c: raw[2] });
    expect(post.a as number).toBeGreaterThan(post.b as number);
  });
});

describe("decide: threshold policy", () => {
  it("does not decide before an option reaches the threshold, and decides with resolution consensus when one does", () => {
    const m = priorModel(3);
    for (const partial of [votes(), votes("a"), votes("a", "a"), votes("a", "b", "a", "c", "b")]) {
      expect(decide(threshold(3, 7), partial, m)).toMatchObject({ done: false });
    }
    expect(decide(threshold(3, 7), votes("a", "b", "a", "c", "a"), m)).toMatchObject({
      done: true,
      label: "a",
      resolution: "consensus",
      counts: { a: 3, b: 1, c: 1 },
      labelsNeeded: 0,
      claimCap: 0,
    });
  });

  it("answers labels_needed = the most labels the task may still take, and the claim cap = the fewest that could decide it", () => {
    const m = priorModel(3);
    expect(decide(threshold(3, 7), votes(), m)).toMatchObject({ labelsNeeded: 7, claimCap: 3 });
    expect(decide(threshold(3, 7), votes("a", "a"), m)).toMatchObject({ labelsNeeded: 5, claimCap: 1 });
    expect(decide(threshold(3, 4), votes("a", "b", "c"), m)).toMatchObject({ labelsNeeded: 1, claimCap: 1 });
  });

  it("reports consensus, not max_labels, when the threshold is reached with the last allowed label", () => {
    expect(decide(threshold(2, 3), votes("b", "a", "b"), priorModel(3))).toMatchObject({ done: true, label: "b", resolution: "consensus" });
  });

  it("decides at max_labels with the plurality label and resolution max_labels", () => {
    const vs = votes("b", "a", "b", "c");
    expect(decide(threshold(3, 4), vs.slice(0, 3), priorModel(3))).toMatchObject({ done: false });
    expect(decide(threshold(3, 4), vs, priorModel(3))).toMatchObject({
      done: true,
      label: "b",
      resolution: "max_labels",
      counts: { a: 1, b: 2, c: 1 },
    });
  });

  it("breaks a plurality tie at max_labels by the posterior: the more accurate labeler's option wins", () => {
    const vs = votes("a", "b");
    expect(decide(threshold(2, 2), vs, model(3, { l0: 0.6, l1: 0.95 }))).toMatchObject({
      done: true,
      label: "b",
      resolution: "max_labels",
    });
    expect(decide(threshold(2, 2), vs, model(3, { l0: 0.95, l1: 0.6 }))).toMatchObject({ done: true, label: "a" });
  });

  it("breaks a tie of equal posteriors by option order, whatever the vote order", () => {
    for (const order of ["cat,cat,dog,dog,bird,bird", "bird,dog,cat,cat,dog,bird", "dog,bird,dog,cat,bird,cat"]) {
      const decision = decide(threshold(3, 6, ["cat", "dog", "bird"]), votes(...order.split(",")), priorModel(3));
      expect(decision).toMatchObject({ done: true, label: "cat", resolution: "max_labels" });
      if (decision.done) expect(decision.confidence).toBeCloseTo(1 / 3, 9);
    }
  });

  it("settles at max_labels with the posterior's leader, even against a plurality (contract §quality, issue 27)", () => {
    const decision = decide(threshold(3, 3), votes("b", "b", "a"), model(3, { l0: 0.4, l1: 0.4, l2: 0.99 }));
    expect(decision).toMatchObject({ done: true, label: "a", resolution: "max_labels" });
    if (decision.done) expect(decision.confidence).toBe(Math.max(...Object.values(decision.posterior)));
  });

  it("keeps collecting while the option at the threshold does not lead: agreeing spammers do not settle it", () => {
    // two labelers the model knows as spammers (accuracy 1/3 on 3 options) agree on b; a reliable one said a
    const m = model(3, { l0: 0.99, l1: 1 / 3, l2: 1 / 3 });
    const open = decide(threshold(2, 5), votes("a", "b", "b"), m);
    expect(open).toMatchObject({ done: false, labelsNeeded: 2, claimCap: 1 });
    // labelers the model knows nothing about who agree still settle at the threshold
    const fresh = ["n0", "n1", "n2"].map((labelerId) => ({ labelerId, value: "c" }));
    expect(decide(threshold(3, 7), fresh, m)).toMatchObject({ done: true, label: "c", resolution: "consensus" });
  });

  it("gives the calibrated posterior of the chosen label as confidence, and the posterior with it", () => {
    const m = model(3, { l0: 0.9, l1: 0.7, l2: 0.8 });
    const vs = votes("a", "b", "a", "a");
    const decision = decide(threshold(3, 7), vs, m);
    if (!decision.done) throw new Error("expected a decision");
    expect(decision.posterior).toEqual(taskPosterior(threshold(3, 7), vs, m));
    expect(decision.confidence).toBe(decision.posterior.a);
  });

  it("trusts three agreeing spammers less than three agreeing experts", () => {
    const vs = votes("a", "a", "a");
    const spammers = decide(threshold(3, 7), vs, model(3, { l0: 0.34, l1: 0.34, l2: 0.34 }));
    const experts = decide(threshold(3, 7), vs, model(3, { l0: 0.95, l1: 0.95, l2: 0.95 }));
    if (!spammers.done || !experts.done) throw new Error("expected decisions");
    expect(spammers.confidence).toBeLessThan(0.5);
    expect(experts.confidence).toBeGreaterThan(0.99);
  });
});

describe("decide: confidence policy with min_gain", () => {
  // a calibration that caps every confidence near 0.9 (a hard share of 0.2 on 2 options): T = 0.95 is out of reach
  const capped = (): ScoringModel => {
    const space = emptySpace(2);
    return {
      space: { ...space, calibration: { ...space.calibration, components: [{ temperature: 1, hardShare: 0.2, weight: 1 }] } },
      labelers: new Map(),
    };
  };
  const task = (minGain: number | null): DecisionTask => ({
    options: ["a", "b"],
    policy: { kind: "confidence", consensusThreshold: 3, maxLabels: 12, confidenceTarget: 0.95, minLabels: 1, minGain },
  });

  it("settles with no_gain once the best next label cannot raise the confidence by min_gain, below the target", () => {
    const m = capped();
    let n = 1;
    for (; n <= 12; n++) {
      const d = decide(task(0.05), votes(...new Array<string>(n).fill("a")), m);
      if (d.done) {
        expect(d).toMatchObject({ label: "a", resolution: "no_gain", labelsNeeded: 0 });
        expect(d.confidence).toBeLessThan(0.95);
        break;
      }
    }
    expect(n).toBeLessThan(12);
    // without min_gain the same labels keep the task open until max_labels
    expect(decide(task(null), votes(...new Array<string>(n).fill("a")), m)).toMatchObject({ done: false });
  });

  it("keeps the initial claim cap of the policy without min_gain apart (remembered by the whole policy)", () => {
    expect(initialClaimCap(task(0.05))).toBe(1);
    expect(initialClaimCap(task(null))).toBe(1);
  });
});

describe("decide: confidence policy", () => {
  const confident = (target: number, minLabels: number, maxLabels: number): DecisionTask => ({
    options: ABC,
    policy: { kind: "confidence", consensusThreshold: 3, maxLabels, confidenceTarget: target, minLabels },
  });

  it("decides as soon as the leading option's posterior reaches the target, with resolution confidence", () => {
    const m = model(3, { l0: 0.97, l1: 0.97 });
    const one = decide(confident(0.95, 1, 5), votes("a"), m);
    expect(one).toMatchObject({ done: true, label: "a", resolution: "confidence", labelsNeeded: 0, claimCap: 0 });
    if (one.done) expect(one.confidence).toBeGreaterThanOrEqual(0.95);
  });

  it("waits for min_labels even when the target is reached earlier", () => {
    const m = model(3, { l0: 0.97, l1: 0.97, l2: 0.97 });
    expect(decide(confident(0.95, 2, 5), votes("a"), m)).toMatchObject({ done: false, labelsNeeded: 4 });
    expect(decide(confident(0.95, 2, 5), votes("a", "a"), m)).toMatchObject({ done: true, resolution: "confidence" });
  });

  it("keeps collecting while weak labelers agree, and decides at max_labels with the most probable option", () => {
    const m = model(3, { l0: 0.4, l1: 0.4, l2: 0.4 });
    expect(decide(confident(0.95, 1, 3), votes("a", "a"), m)).toMatchObject({ done: false, labelsNeeded: 1, claimCap: 1 });
    const decision = decide(confident(0.95, 1, 3), votes("a", "a", "b"), m);
    expect(decision).toMatchObject({ done: true, label: "a", resolution: "max_labels" });
    if (decision.done) expect(decision.confidence).toBeLessThan(0.95);
  });

  it("resolves as confidence when the label that fills max_labels also reaches the target", () => {
    const m = model(3, { l0: 0.97, l1: 0.97 });
    expect(decide(confident(0.9, 2, 2), votes("a", "a"), m)).toMatchObject({ done: true, resolution: "confidence" });
  });

  it("lets consensus_threshold size nothing but the quota: three agreeing labels do not decide below the target", () => {
    const m = model(3, { l0: 0.5, l1: 0.5, l2: 0.5 });
    expect(decide(confident(0.999, 1, 7), votes("a", "a", "a"), m)).toMatchObject({ done: false });
  });
});

describe("decide: gold tasks", () => {
  it("never decides a gold task, takes any number of labels and any number of claims", () => {
    const task = { ...threshold(1, 1), gold: true };
    const many = Array.from({ length: 30 }, (_, i) => ({ labelerId: `g${i}`, value: "a" }));
    expect(decide(task, many, priorModel(3))).toEqual({
      done: false,
      counts: { a: 30, b: 0, c: 0 },
      labelsNeeded: 1,
      claimCap: GOLD_CLAIM_CAP,
    });
  });
});

describe("decide: errors", () => {
  it("refuses more votes than max_labels, a value that is not an option, and a model of another size", () => {
    expect(() => decide(threshold(3, 3), votes("a", "b", "c", "a"), priorModel(3))).toThrow(/exceed max_labels/);
    expect(() => decide(threshold(3, 7), votes("z"), priorModel(3))).toThrow(/not an option/);
    expect(() => decide(threshold(3, 7), votes("a"), priorModel(2))).toThrow(/options/);
    expect(() => decide(threshold(3, 7, ["a"]), [], priorModel(2))).toThrow(/at least 2 options/);
  });
});

describe("initialClaimCap", () => {
  it("answers the threshold rule's cap, or min_labels under the confidence policy, remembered by option count and policy", () => {
    const policies: Policy[] = [
      { kind: "threshold", consensusThreshold: 3, maxLabels: 5 },
      { kind: "threshold", consensusThreshold: 1, maxLabels: 1 },
      { kind: "confidence", consensusThreshold: 3, maxLabels: 10, confidenceTarget: 0.95, minLabels: 2 },
      { kind: "confidence", consensusThreshold: 3, maxLabels: 10, confidenceTarget: 0.6, minLabels: 1 },
      { kind: "confidence", consensusThreshold: 3, maxLabels: 10, confidenceTarget: 0.999, minLabels: 1 },
    ];
    for (const options of [["a", "b"], ABC, ["w", "x", "y", "z"]]) {
      for (const policy of policies) {
        const task = { options, policy };
        const fresh = decide(task, [], priorModel(options.length));
        expect(fresh.done).toBe(false);
        // the confidence policy admits min_labels claims at first (at least 1); the threshold policy the rule's cap
        const expected = fresh.done ? -1 : policy.kind === "confidence" ? Math.max(1, policy.minLabels) : fresh.claimCap;
        // twice: the first call computes, the second is remembered; both equal the rule's answer
        expect([initialClaimCap(task), initialClaimCap(task)]).toEqual([expected, expected]);
      }
    }
  });
});

describe("decide: options excluded by a review (reopened task)", () => {
  const reopened = (extra: Partial<DecisionTask> & { consensusThreshold?: number }): DecisionTask => {
    const { consensusThreshold = 2, ...rest } = extra;
    return { ...threshold(consensusThreshold, 5), excludedOptions: ["a"], ...rest };
  };

  it("never settles on a rejected option, however many labels it holds", () => {
    const d = decide(reopened({}), votes("a", "a", "a"), priorModel(3));
    expect(d.done).toBe(false);
    // the rejected option's labels stay counted: 3 of the 5 labels are spent
    expect(d.labelsNeeded).toBe(2);
  });

  it("settles on the quorum of another option, its posterior renormalized without the rejected one", () => {
    const d = decide(reopened({}), votes("a", "a", "b", "b"), priorModel(3));
    expect(d.done).toBe(true);
    if (!d.done) return;
    expect(d.label).toBe("b");
    expect(d.posterior.a).toBe(0);
    expect((d.posterior.b ?? 0) + (d.posterior.c ?? 0)).toBeCloseTo(1, 12);
    expect(d.confidence).toBe(d.posterior.b);
    expect(d.counts.a).toBe(2);
  });

  it("decides at max_labels with the leader among the options left", () => {
    const d = decide(reopened({ consensusThreshold: 3 }), votes("a", "a", "a", "c", "b"), priorModel(3));
    expect(d.done).toBe(true);
    if (d.done) expect(["b", "c"]).toContain(d.label);
    if (d.done) expect(d.resolution).toBe("max_labels");
  });

  it("under the confidence policy, settles on the only option left once min_labels are reached", () => {
    const d = decide(
      {
        options: ["yes", "no"],
        policy: { kind: "confidence", consensusThreshold: 3, maxLabels: 6, confidenceTarget: 0.95, minLabels: 1 },
        excludedOptions: ["yes"],
      },
      votes("yes", "yes", "yes", "no"),
      priorModel(2),
    );
    expect(d).toMatchObject({ done: true, label: "no", confidence: 1, resolution: "confidence" });
  });

  it("refuses an exclusion of every option or of an unknown option", () => {
    expect(() => decide(reopened({ excludedOptions: ["a", "b", "c"] }), votes(), priorModel(3))).toThrow(/every option/);
    expect(() => decide(reopened({ excludedOptions: ["z"] }), votes(), priorModel(3))).toThrow(/not an option/);
  });
});

describe("decide: a reopened round spent on the rejected option", () => {
  it("settles at max_labels on the leader among the other options", () => {
    const d = decide({ ...threshold(1, 3), excludedOptions: ["b"] }, votes("b", "b", "b"), priorModel(3));
    expect(d.done).toBe(true);
    if (!d.done) return;
    expect(d.resolution).toBe("max_labels");
    expect(d.label).not.toBe("b");
    expect(d.posterior.b).toBe(0);
  });
});

describe("decide: the label that fills a reopened round", () => {
  it("settles by the quorum when it reaches it, not at max_labels", () => {
    const d = decide({ ...threshold(1, 3), excludedOptions: ["a"] }, votes("a", "a", "c"), priorModel(3));
    expect(d).toMatchObject({ done: true, label: "c", resolution: "consensus" });
  });
});
