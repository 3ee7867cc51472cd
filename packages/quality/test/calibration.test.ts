/** Calibration: temperature fit, posterior over calibration maps, and the fit's gold / prequential calibration. */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import {
  CalibrationSamples,
  calibrationPosterior,
  calibrationSummary,
  calibrationWithReviews,
  fit,
  fitTemperature,
  GOLD_POWER_GRID,
  LabelTable,
  MIN_GOLD_TASKS,
  PRIOR_HARD_SHARE,
  scoreTask,
  softmax,
} from "../src/index";
import { draw, rng } from "./helpers";

/** Samples whose true option is drawn from (1 - h) softmax(z / tau) + h * prior. */
function temperedSamples(seed: number, n: number, tau: number, h: number, prior: number[]): CalibrationSamples {
  const r = rng(seed);
  const k = prior.length;
  const samples = new CalibrationSamples(k);
  for (let s = 0; s < n; s++) {
    const z = Array.from({ length: k }, () => 8 * (uniformFloat64(r) - 0.5));
    const p = softmax(z, tau).map((v, j) => (1 - h) * v + h * (prior[j] as number));
    const target = new Array<number>(k).fill(0);
    target[draw(r, p)] = 1;
    samples.push(z, target, 1);
    samples.tasks++;
  }
  return samples;
}

describe("calibration", () => {
  it("fitTemperature recovers the temperature that generated the outcomes", () => {
    for (const tau of [0.7, 1, 2.5]) {
      const t = fitTemperature(temperedSamples(1, 4000, tau, 0, [1 / 3, 1 / 3, 1 / 3]));
      expect(Math.abs(Math.log(t / tau))).toBeLessThan(0.12);
    }
  });

  it("the posterior over maps concentrates on the generating map, and spreads with few samples", () => {
    const prior = [0.5, 0.3, 0.2];
    const many = calibrationPosterior(temperedSamples(2, 6000, 2, 0.1, prior), prior);
    expect(many.reduce((a, c) => a + c.weight, 0)).toBeCloseTo(1, 12);
    const summary = calibrationSummary({
      source: "gold",
      components: many,
      prequentialTemperature: null,
      goldTasks: 0,
      prequentialTasks: 0,
    });
    expect(Math.abs(Math.log(summary.temperature / 2))).toBeLessThan(0.15);
    expect(Math.abs(summary.hardShare - 0.1)).toBeLessThan(0.04);
    const few = calibrationPosterior(temperedSamples(3, 20, 2, 0.1, prior), prior);
    expect((few[0] as { weight: number }).weight).toBeLessThan((many[0] as { weight: number }).weight);
  });

  it("with 5 gold tasks the posterior stays wide: every (temperature, share) pair is kept with its mean hard share", () => {
    // a flat posterior over 1,302 maps once lost every map below 1e-3 and scored every option 0
    const prior = [0.5, 0.5];
    const few = calibrationPosterior(temperedSamples(4, 5, 1, 0, prior), prior);
    expect(few.length).toBeGreaterThan(16);
    expect(few.reduce((a, c) => a + c.weight, 0)).toBeCloseTo(1, 12);
    // five samples do not rule out that the crowd errs together: the averaged hard share stays near its prior mean
    const { hardShare } = calibrationSummary({
      source: "gold",
      components: few,
      prequentialTemperature: null,
      goldTasks: 5,
      prequentialTasks: 0,
    });
    expect(hardShare).toBeGreaterThan(0.05);
    for (const c of few) expect(c.hardShare).toBeGreaterThan(0);
  });

  function crowdTable(seed: number, hardShare: number, goldTasks: number): LabelTable {
    // 8 labelers of accuracy 0.75 on K = 2, 1,500 tasks x 5 labels; on a hard task the crowd errs together:
    // every labeler is right with probability 0.25 only
    const r = rng(seed);
    const table = new LabelTable(2);
    for (let t = 0; t < 1500; t++) {
      const truth = uniformFloat64(r) < 0.5 ? 0 : 1;
      const hard = uniformFloat64(r) < hardShare;
      const start = Math.floor(uniformFloat64(r) * 8);
      for (let j = 0; j < 5; j++) {
        const right = uniformFloat64(r) < (hard ? 0.25 : 0.75);
        table.add(`t${t}`, `w${(start + j) % 8}`, right ? truth : 1 - truth);
      }
      if (t < goldTasks) table.setGold(`t${t}`, truth);
    }
    return table;
  }

  it("prequential: about 1 when labelers err independently; never sharpens the model", () => {
    const independent = fit(crowdTable(4, 0, 0)).model.space.calibration;
    expect(independent.source).toBe("prequential");
    expect(Math.abs(Math.log(independent.prequentialTemperature as number))).toBeLessThan(0.15);
    expect(calibrationSummary(independent).temperature).toBe(Math.max(1, independent.prequentialTemperature as number));
    // votes cannot show shared errors: without gold the hard share is its prior mean
    expect(calibrationSummary(independent).hardShare).toBe(PRIOR_HARD_SHARE);
  });

  it("gold: scored out of sample, a correct model is left about as it is, a misspecified one is flattened", () => {
    const correct = fit(crowdTable(5, 0, 300)).model.space.calibration;
    expect(correct.source).toBe("gold");
    expect(correct.goldTasks).toBe(300);
    const c = calibrationSummary(correct);
    expect(Math.abs(Math.log(c.temperature))).toBeLessThan(0.25);
    expect(c.hardShare).toBeLessThan(0.05);
    // when the crowd errs together on 30% of the tasks, unanimity is no proof: only gold shows it
    const { model } = fit(crowdTable(5, 0.3, 300));
    const hard = calibrationSummary(model.space.calibration);
    expect(hard.temperature > 1.5 || hard.hardShare > 0.1).toBe(true);
    const unanimous = [0, 1, 2, 3, 4].map((j) => ({ labeler: model.labelers.get(`w${j}`), option: 0 }));
    const score = scoreTask(model.space, unanimous);
    expect(score.posterior[0]).toBeLessThan((score.rawPosterior[0] as number) - 0.05);
  });

  it("gold tasks are scored without their own labels: a crowd of spammers is not mistaken for experts", () => {
    // 400 gold tasks x 3 random labels from 300 labelers (4 labels each): each labeler's row is mostly its
    // gold answers, so in-sample every vote would look like it agrees with the truth
    const r = rng(7);
    const table = new LabelTable(2);
    for (let t = 0; t < 400; t++) {
      for (let j = 0; j < 3; j++) table.add(`t${t}`, `w${(t * 3 + j) % 300}`, uniformFloat64(r) < 0.5 ? 0 : 1);
      table.setGold(`t${t}`, uniformFloat64(r) < 0.5 ? 0 : 1);
    }
    const { model } = fit(table);
    expect(model.space.calibration.source).toBe("gold");
    const votes = [0, 1, 2].map((j) => ({ labeler: model.labelers.get(`w${j}`), option: 0 }));
    const { posterior } = scoreTask(model.space, votes);
    expect(posterior[0]).toBeLessThan(0.7);
  });

  it(`needs ${MIN_GOLD_TASKS} gold tasks before it calibrates on gold`, () => {
    expect(fit(crowdTable(6, 0, MIN_GOLD_TASKS - 1)).model.space.calibration.source).toBe("prequential");
    expect(fit(crowdTable(6, 0, MIN_GOLD_TASKS)).model.space.calibration.source).toBe("gold");
  });
});

describe("calibration from 0, 5 and 40 gold tasks on a crowd that errs together (issue 27)", () => {
  // 800 binary tasks x 5 labels from 8 labelers (accuracy 0.8); on 15% of the tasks the crowd errs together
  // (accuracy 0.25). No vote shows those tasks; only gold does.
  function run(seed: number, gold: number) {
    const r = rng(seed);
    const table = new LabelTable(2);
    const truth: number[] = [];
    const votes: { w: string; o: number }[][] = [];
    for (let t = 0; t < 800; t++) {
      const z = uniformFloat64(r) < 0.5 ? 0 : 1;
      const hard = uniformFloat64(r) < 0.15;
      const start = Math.floor(uniformFloat64(r) * 8);
      const vs: { w: string; o: number }[] = [];
      for (let j = 0; j < 5; j++) {
        const o = uniformFloat64(r) < (hard ? 0.25 : 0.8) ? z : 1 - z;
        const w = `w${(start + j) % 8}`;
        table.add(`t${t}`, w, o);
        vs.push({ w, o });
      }
      truth.push(z);
      votes.push(vs);
      if (t < gold) table.setGold(`t${t}`, z);
    }
    const { model } = fit(table);
    // every state in which a decision may be taken: each non-gold task after 1..5 of its votes
    let confidence = 0;
    let correct = 0;
    let sharper = 0;
    let broken = 0;
    const states: { confidence: number; correct: boolean }[] = [];
    for (let t = gold; t < 800; t++) {
      for (let n = 1; n <= 5; n++) {
        const score = scoreTask(
          model.space,
          (votes[t] as { w: string; o: number }[]).slice(0, n).map((v) => ({ labeler: model.labelers.get(v.w), option: v.o })),
        );
        const lead = (score.posterior[1] as number) > (score.posterior[0] as number) ? 1 : 0;
        const c = score.posterior[lead] as number;
        // never sharper than the model: at most its own posterior, or the class prior it shrinks toward
        if (c > Math.max(...score.rawPosterior, model.space.classPrior[lead] as number) + 1e-9) sharper++;
        // a posterior (it once came back all zeros with few gold tasks)
        if (Math.abs((score.posterior[0] as number) + (score.posterior[1] as number) - 1) > 1e-9 || c < 0.5) broken++;
        confidence += c;
        if (lead === truth[t]) correct++;
        states.push({ confidence: c, correct: lead === truth[t] });
      }
    }
    return {
      overconfidence: (confidence - correct) / states.length,
      sharper,
      broken,
      ece: eceOf(states),
      source: model.space.calibration.source,
    };
  }

  function eceOf(states: { confidence: number; correct: boolean }[]): number {
    const bins = Array.from({ length: 10 }, () => ({ n: 0, c: 0, a: 0 }));
    for (const s of states) {
      const b = bins[Math.min(9, Math.floor(s.confidence * 10))] as { n: number; c: number; a: number };
      b.n++;
      b.c += s.confidence;
      if (s.correct) b.a++;
    }
    return bins.reduce((e, b) => e + (b.n === 0 ? 0 : (b.n / states.length) * Math.abs(b.a / b.n - b.c / b.n)), 0);
  }

  it("never reports more than the model, nor more than gold shows: bounded by the hard share without gold", () => {
    const seeds = [1, 2, 3, 4];
    const ece40: number[] = [];
    for (const seed of seeds) {
      const none = run(seed, 0);
      expect(none.source).toBe("prequential");
      expect(none.sharper).toBe(0);
      // without gold the crowd's shared errors are invisible: overconfidence is bounded by their share
      expect(none.overconfidence).toBeLessThan(0.15);
      for (const gold of [5, 40]) {
        const result = run(seed, gold);
        expect(result.source).toBe("gold");
        expect(result.sharper).toBe(0);
        expect(result.broken).toBe(0);
        expect(result.overconfidence).toBeLessThan(0.05);
        if (gold === 40) ece40.push(result.ece);
      }
    }
    expect(ece40.reduce((a, b) => a + b, 0) / ece40.length).toBeLessThan(0.08);
  }, 120_000);
});

describe("calibration held to reviews (decision 0266)", () => {
  const prior = [0.5, 0.3, 0.2];
  const summaryOf = (components: ReturnType<typeof calibrationPosterior>) =>
    calibrationSummary({ source: "gold", components, prequentialTemperature: null, goldTasks: 0, prequentialTasks: 0 });

  it("without reviews it is the gold posterior; without gold, the reviews' own", () => {
    const gold = temperedSamples(11, 300, 2, 0.05, prior);
    const none = new CalibrationSamples(3);
    expect(calibrationWithReviews(gold, none, prior)).toEqual({ components: calibrationPosterior(gold, prior), goldPower: null });
    const reviews = temperedSamples(12, 300, 3, 0.2, prior);
    expect(calibrationWithReviews(new CalibrationSamples(3), reviews, prior)).toEqual({
      components: calibrationPosterior(reviews, prior),
      goldPower: null,
    });
  });

  it("a few reviews leave gold in charge; many that disagree discount it and decide the map", () => {
    // gold says the crowd is sharp (tau 1, no hard share); what settled is much less reliable (tau 3, h 0.2)
    const gold = temperedSamples(13, 200, 1, 0, prior);
    const few = calibrationWithReviews(gold, temperedSamples(14, 3, 3, 0.2, prior), prior);
    expect(few.goldPower).toBe(1);
    const many = calibrationWithReviews(gold, temperedSamples(15, 600, 3, 0.2, prior), prior);
    expect(many.goldPower).toBeLessThan(1);
    const fitted = summaryOf(many.components);
    expect(Math.abs(Math.log(fitted.temperature / 3))).toBeLessThan(0.25);
    expect(Math.abs(fitted.hardShare - 0.2)).toBeLessThan(0.08);
    // gold alone says the opposite: no hard share, temperature 1
    const goldOnly = summaryOf(calibrationPosterior(gold, prior));
    expect(goldOnly.hardShare).toBeLessThan(0.05);
    // pooled at full weight, the 200 gold tasks would pull the map toward theirs
    expect(GOLD_POWER_GRID).toContain(1);
  });

  it("reviews that agree with gold keep gold at full weight", () => {
    const gold = temperedSamples(16, 200, 2, 0.1, prior);
    const reviews = temperedSamples(17, 200, 2, 0.1, prior);
    expect(calibrationWithReviews(gold, reviews, prior).goldPower).toBe(1);
  });

  it("the fit scores a reviewed result once, in the state it holds, apart from gold tasks", () => {
    const table = new LabelTable(2);
    const r = rng(18);
    for (let t = 0; t < 60; t++) {
      const truth = t % 2;
      for (let i = 0; i < 5; i++) table.add(`t${t}`, `w${i}`, uniformFloat64(r) < 0.8 ? truth : 1 - truth);
      if (t < 10) table.setGold(`t${t}`, truth);
      else if (t < 16) table.setReviewed(`t${t}`, truth);
    }
    expect(table.goldTaskCount).toBe(16);
    const { calibration } = fit(table).model.space;
    expect(calibration.source).toBe("gold");
    expect(calibration.goldTasks).toBe(10);
    expect(calibration.reviewTasks).toBe(6);
    expect(calibration.goldPower).not.toBeNull();
  });
});
