/** Decision rules of the two consensus policies and their claim caps (table tests). */
import {
  confidenceClaimCap,
  decideConfidence,
  decideThreshold,
  emptySpace,
  expectedGainOfOneLabel,
  leadingOption,
  optionCounts,
  type SpaceParams,
  scoreTask,
  thresholdClaimCap,
} from "../src/index";

const uniform = (k: number) => new Array<number>(k).fill(1 / k);

describe("decideThreshold", () => {
  it.each([
    // counts, posterior, threshold, max, expected
    [[3, 0], [0.9, 0.1], 3, 7, { settled: true, option: 0, confidence: 0.9, resolution: "consensus" }],
    [[2, 1], [0.6, 0.4], 3, 7, { settled: false, labelsNeeded: 4 }],
    [[1, 0], [0.7, 0.3], 1, 1, { settled: true, option: 0, confidence: 0.7, resolution: "consensus" }], // one label, threshold 1
    [[0, 1], [0.4, 0.6], 2, 1 + 1, { settled: false, labelsNeeded: 1 }],
    [[1, 1], [0.3, 0.7], 2, 2, { settled: true, option: 1, confidence: 0.7, resolution: "max_labels" }], // tie broken by posterior
    [[1, 1], [0.5, 0.5], 2, 2, { settled: true, option: 0, confidence: 0.5, resolution: "max_labels" }], // then option order
    [[2, 3, 2], [0.5, 0.2, 0.3], 4, 7, { settled: true, option: 0, confidence: 0.5, resolution: "max_labels" }], // the leader, not the plurality
    [[3, 1], [0.4, 0.6], 3, 7, { settled: false, labelsNeeded: 3 }], // at the threshold but not leading: keeps collecting
    [[3, 1], [0.4, 0.6], 3, 4, { settled: true, option: 1, confidence: 0.6, resolution: "max_labels" }], // ... up to max_labels
    [[3, 2], [0.5, 0.5], 3, 7, { settled: true, option: 0, confidence: 0.5, resolution: "consensus" }], // posterior tie: more labels
    [[3, 3, 1], [0.2, 0.7, 0.1], 3, 7, { settled: true, option: 1, confidence: 0.7, resolution: "consensus" }], // both reached: posterior
    [[0, 0, 0, 1], uniform(4), 1, 1, { settled: true, option: 3, confidence: 0.25, resolution: "consensus" }], // max_labels = 1
  ])("counts %j posterior %j threshold %i max %i -> %j", (counts, posterior, threshold, max, expected) => {
    expect(decideThreshold({ consensusThreshold: threshold, maxLabels: max }, counts, posterior)).toEqual(expected);
  });

  it("decides at any K from 2 to 50", () => {
    for (const k of [2, 3, 10, 50]) {
      const counts = new Array<number>(k).fill(0);
      counts[k - 1] = 3;
      expect(decideThreshold({ consensusThreshold: 3, maxLabels: 7 }, counts, uniform(k))).toMatchObject({ settled: true, option: k - 1 });
      const spread = new Array<number>(k).fill(0);
      for (let i = 0; i < Math.min(k, 7); i++) spread[i] = 1;
      const max = Math.min(k, 7);
      const d = decideThreshold({ consensusThreshold: Math.min(3, max), maxLabels: max }, spread, uniform(k));
      expect(d).toMatchObject({ settled: true, option: 0, resolution: "max_labels" });
    }
  });

  it("rejects inconsistent input", () => {
    expect(() => decideThreshold({ consensusThreshold: 3, maxLabels: 7 }, [1, 0], [1])).toThrow(RangeError);
    expect(() => decideThreshold({ consensusThreshold: 0, maxLabels: 7 }, [1, 0], [1, 0])).toThrow(RangeError);
    expect(() => decideThreshold({ consensusThreshold: 3, maxLabels: 2 }, [1, 0], [1, 0])).toThrow(RangeError);
  });
});

describe("decideConfidence", () => {
  const policy = { confidenceTarget: 0.9, minLabels: 1, maxLabels: 5 };
  it.each([
    [[1, 0], [0.95, 0.05], policy, { settled: true, option: 0, confidence: 0.95, resolution: "confidence" }], // one label is enough
    [[1, 0], [0.95, 0.05], { ...policy, minLabels: 2 }, { settled: false, labelsNeeded: 4 }], // min_labels
    [[1, 1], [0.3, 0.7], policy, { settled: false, labelsNeeded: 3 }],
    [[3, 2], [0.6, 0.4], policy, { settled: true, option: 0, confidence: 0.6, resolution: "max_labels" }],
    [[2, 3], [0.92, 0.08], policy, { settled: true, option: 0, confidence: 0.92, resolution: "confidence" }], // reaches T at max: confidence
    [[1, 1], [0.5, 0.5], { ...policy, maxLabels: 2 }, { settled: true, option: 0, confidence: 0.5, resolution: "max_labels" }], // tie: order
    [[1, 2], [0.5, 0.5], { ...policy, maxLabels: 3 }, { settled: true, option: 1, confidence: 0.5, resolution: "max_labels" }], // tie: counts
    [[0, 1], [0.2, 0.8], { ...policy, maxLabels: 1 }, { settled: true, option: 1, confidence: 0.8, resolution: "max_labels" }], // max_labels = 1
    [[1, 0], [0.9, 0.1], policy, { settled: true, option: 0, confidence: 0.9, resolution: "confidence" }], // exactly T
  ])("counts %j posterior %j policy %j -> %j", (counts, posterior, p, expected) => {
    expect(decideConfidence(p, counts, posterior)).toEqual(expected);
  });

  it("uses the most probable option at any K", () => {
    for (const k of [2, 5, 50]) {
      // the last option leads with 0.6, the others share 0.4
      const post = uniform(k).map((_, i) => (i === k - 1 ? 0.6 : 0.4 / (k - 1)));
      const counts = new Array<number>(k).fill(0);
      counts[0] = 1;
      expect(decideConfidence({ confidenceTarget: 0.999, minLabels: 1, maxLabels: 1 }, counts, post)).toMatchObject({
        settled: true,
        option: k - 1,
        resolution: "max_labels",
      });
    }
    expect(leadingOption([0.2, 0.4, 0.4], [0, 1, 2])).toBe(2);
    expect(leadingOption([0.2, 0.4, 0.4])).toBe(1);
  });

  it("rejects policies outside their bounds", () => {
    expect(() => decideConfidence({ confidenceTarget: 0.49, minLabels: 1, maxLabels: 5 }, [1, 0], [1, 0])).toThrow(RangeError);
    expect(() => decideConfidence({ confidenceTarget: 1, minLabels: 1, maxLabels: 5 }, [1, 0], [1, 0])).toThrow(RangeError);
    expect(() => decideConfidence({ confidenceTarget: 0.9, minLabels: 0, maxLabels: 5 }, [1, 0], [1, 0])).toThrow(RangeError);
    expect(() => decideConfidence({ confidenceTarget: 0.9, minLabels: 3, maxLabels: 2 }, [1, 0], [1, 0])).toThrow(RangeError);
    // no upper bound on maxLabels: a task's rule may take more votes than a request's max_labels (a pre-label, decision 0272)
    expect(decideConfidence({ confidenceTarget: 0.9, minLabels: 1, maxLabels: 51 }, [1, 0], [0.5, 0.5]).settled).toBe(false);
  });
});

describe("claim caps", () => {
  it.each([
    [[0, 0], 3, 7, 3],
    [[2, 1], 3, 7, 1],
    [[1, 1], 3, 3, 1],
    [[0, 0, 0], 1, 1, 1],
    [[3, 0], 3, 7, 1], // at the threshold without the lead: one more label could settle it
    [[1, 1], 2, 2, 0], // full
  ])("threshold: counts %j threshold %i max %i -> %i", (counts, threshold, max, cap) => {
    expect(thresholdClaimCap({ consensusThreshold: threshold, maxLabels: max }, counts)).toBe(cap);
  });

  function space(k: number): SpaceParams {
    return emptySpace(k); // population accuracy 2/3, identity calibration
  }

  it("confidence: the fewest population-mean labels for the target, within [max(1, min - n), max - n]", () => {
    // K = 2, accuracy 2/3: each agreeing label doubles the odds: 1 -> 0.667, 2 -> 0.8, 3 -> 0.889, 4 -> 0.941, 5 -> 0.970
    const s = space(2);
    const p = (target: number, minLabels: number, maxLabels: number) => ({ confidenceTarget: target, minLabels, maxLabels });
    expect(confidenceClaimCap(s, [], p(0.95, 1, 10))).toBe(5);
    expect(confidenceClaimCap(s, [], p(0.95, 1, 3))).toBe(3); // at most max - n
    expect(confidenceClaimCap(s, [], p(0.6, 1, 10))).toBe(1);
    expect(confidenceClaimCap(s, [], p(0.6, 4, 10))).toBe(4); // min_labels
    const twoFor0 = [
      { labeler: undefined, option: 0 },
      { labeler: undefined, option: 0 },
    ];
    expect(scoreTask(s, twoFor0).posterior[0]).toBeCloseTo(0.8, 12);
    expect(confidenceClaimCap(s, twoFor0, p(0.95, 1, 10))).toBe(3); // 0.8 -> 5 agreeing labels in all
    const split = [
      { labeler: undefined, option: 0 },
      { labeler: undefined, option: 1 },
    ];
    expect(confidenceClaimCap(s, split, p(0.95, 1, 10))).toBe(5);
    expect(confidenceClaimCap(s, split, p(0.95, 1, 2))).toBe(0); // no label left
    // K = 50: one agreeing label of a 2/3-accurate labeler is already strong evidence
    expect(confidenceClaimCap(space(50), [], p(0.95, 1, 10))).toBe(2);
  });

  it("optionCounts counts and validates", () => {
    expect(optionCounts(3, [0, 2, 2])).toEqual([1, 0, 2]);
    expect(() => optionCounts(3, [3])).toThrow(RangeError);
  });
});

describe("expectedGainOfOneLabel (Chen, Lin & Zhou 2015 knowledge gradient, one step)", () => {
  // K = 2, population accuracy 2/3, identity calibration: each agreeing label doubles the odds
  const s = emptySpace(2);
  const votes = (...options: number[]) => options.map((option) => ({ labeler: undefined, option }));

  it("optimistic = the best outcome's gain; expected = 0 when one label cannot change the leader", () => {
    // no votes: 0.5; one label either way makes 2/3
    const none = expectedGainOfOneLabel(s, []);
    expect(none.optimistic).toBeCloseTo(2 / 3 - 1 / 2, 12);
    expect(none.expected).toBeCloseTo(2 / 3 - 1 / 2, 12);
    // two for option 0: 0.8; an agreeing label makes 8/9, a dissenting one 2/3 (option 0 still leads)
    const two = expectedGainOfOneLabel(s, votes(0, 0));
    expect(two.optimistic).toBeCloseTo(8 / 9 - 0.8, 12);
    expect(two.expected).toBeCloseTo(0, 12);
    // a split task: the next label decides the leader
    const split = expectedGainOfOneLabel(s, votes(0, 1));
    expect(split.expected).toBeCloseTo(2 / 3 - 1 / 2, 12);
  });

  it("is never negative and the optimistic gain bounds the expected one", () => {
    for (const k of [2, 3, 5]) {
      const space = emptySpace(k);
      for (const vs of [votes(), votes(0), votes(0, 1), votes(1, 1, 0), votes(0, 0, 0, 0, 0, 0)]) {
        const g = expectedGainOfOneLabel(space, vs);
        expect(g.expected).toBeGreaterThanOrEqual(0);
        expect(g.optimistic).toBeGreaterThanOrEqual(g.expected - 1e-12);
        expect(g.optimistic).toBeLessThanOrEqual(1);
      }
    }
  });
});

describe("decideConfidence with minGain (resolution no_gain, contract §quality)", () => {
  const policy = { confidenceTarget: 0.95, minLabels: 2, maxLabels: 9, minGain: 0.05 };

  it.each([
    // counts, posterior, gain, expected
    [[3, 0], [0.96, 0.04], 0, { settled: true, option: 0, confidence: 0.96, resolution: "confidence" }], // the target first
    [[2, 0], [0.8, 0.2], 0.04, { settled: true, option: 0, confidence: 0.8, resolution: "no_gain" }], // the best label adds < 0.05
    [[2, 0], [0.8, 0.2], 0.05, { settled: false, labelsNeeded: 7 }], // exactly min_gain: worth a label
    [[1, 0], [0.7, 0.3], 0, { settled: false, labelsNeeded: 8 }], // before min_labels, no stop
    [[5, 4], [0.6, 0.4], 0, { settled: true, option: 0, confidence: 0.6, resolution: "max_labels" }], // max_labels before no_gain
  ] as const)("counts %j posterior %j gain %d -> %j", (counts, post, gain, expected) => {
    expect(decideConfidence(policy, counts, post, () => gain)).toEqual(expected);
  });

  it("asks for the gain only when min_gain is set and the task could take another label", () => {
    let asked = 0;
    const gain = () => {
      asked++;
      return 0;
    };
    decideConfidence({ ...policy, minGain: null }, [2, 0], [0.8, 0.2], gain);
    decideConfidence(policy, [3, 0], [0.96, 0.04], gain);
    decideConfidence(policy, [1, 0], [0.7, 0.3], gain);
    expect(asked).toBe(0);
    decideConfidence(policy, [2, 0], [0.8, 0.2], gain);
    expect(asked).toBe(1);
  });

  it("refuses a min_gain outside 0.001..0.5", () => {
    expect(() => decideConfidence({ ...policy, minGain: 0.0005 }, [1, 0], [0.6, 0.4])).toThrow(RangeError);
    expect(() => decideConfidence({ ...policy, minGain: 0.6 }, [1, 0], [0.6, 0.4])).toThrow(RangeError);
  });
});

describe("expectedGainOfOneLabel with excluded options", () => {
  it("renormalizes over the options left, as the decision sees them", () => {
    const s = emptySpace(3);
    const votes = [
      { labeler: undefined, option: 0 },
      { labeler: undefined, option: 1 },
    ];
    const all = expectedGainOfOneLabel(s, votes);
    const without = expectedGainOfOneLabel(s, votes, [0]);
    // with option 0 excluded, option 1 already leads alone: the best label only sharpens what is near 1
    expect(without.optimistic).toBeLessThan(all.optimistic);
    expect(without.optimistic).toBeGreaterThanOrEqual(0);
  });
});
