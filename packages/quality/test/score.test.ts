/** Scoring of one task (`scoreTask`) against the formulas of model.ts, and the dashboard accuracy. */
import {
  type CalibrationComponent,
  confusionMatrix,
  emptySpace,
  estimatedAccuracy,
  type LabelerParams,
  type SpaceParams,
  scoreTask,
} from "../src/index";
import { at } from "./helpers";

function space(components: CalibrationComponent[] = [{ temperature: 1, hardShare: 0, weight: 1 }]): SpaceParams {
  const s = emptySpace(3);
  s.classPrior = [0.5, 0.3, 0.2];
  s.population = [
    [4, 1, 1],
    [1, 3, 2],
    [1, 1, 2],
  ];
  s.calibration = { ...s.calibration, components };
  return s;
}

const alice: LabelerParams = {
  labelerId: "alice",
  counts: [
    [10, 0, 2],
    [1, 8, 1],
    [0, 0, 6],
  ],
  labels: 28,
  goldAnswers: 0,
  goldCorrect: 0,
};

describe("scoreTask", () => {
  it("is the product of the class prior and the labelers' posterior-mean confusion rows (Dirichlet tree), normalized", () => {
    const s = space();
    s.errorPrecision = 2;
    // alice, row k: accuracy (n_kk + alpha_kk) / (N_k + alpha0_k); a wrong answer l:
    // (1 - accuracy) * (n_kl + 2 * alpha_kl / (alpha0_k - alpha_kk)) / (N_k - n_kk + 2)
    const alpha0 = [6, 6, 4];
    const totals = [12, 10, 6];
    const aliceRow = (k: number, l: number) => {
      const acc = (at(alice.counts[k], k) + at(s.population[k], k)) / (at(totals, k) + at(alpha0, k));
      if (l === k) return acc;
      const mErr = at(s.population[k], l) / (at(alpha0, k) - at(s.population[k], k));
      return ((1 - acc) * (at(alice.counts[k], l) + 2 * mErr)) / (at(totals, k) - at(alice.counts[k], k) + 2);
    };
    // the unknown labeler: the population mean alpha / alpha0
    const popRow = (k: number, l: number) => at(s.population[k], l) / at(alpha0, k);
    const unnormalized = [0, 1, 2].map((k) => (s.classPrior[k] as number) * aliceRow(k, 0) * popRow(k, 2));
    const total = unnormalized.reduce((a, b) => a + b, 0);
    const { posterior, rawPosterior } = scoreTask(s, [
      { labeler: alice, option: 0 },
      { labeler: undefined, option: 2 },
    ]);
    unnormalized.forEach((u, k) => {
      expect(rawPosterior[k]).toBeCloseTo(u / total, 12);
      expect(posterior[k]).toBeCloseTo(u / total, 12);
    });
    // row 0 of alice: accuracy 14/18; errors: 0 and 2 of option 1 and 2, error means 1/2 each, precision 2
    const row0 = confusionMatrix(s, alice)[0] as number[];
    expect(row0[0]).toBeCloseTo(14 / 18, 12);
    expect(row0[1]).toBeCloseTo((4 / 18) * (1 / 4), 12);
    expect(row0[2]).toBeCloseTo((4 / 18) * (3 / 4), 12);
    expect(row0.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });

  it("with K = 2 the row is the plain Beta posterior mean", () => {
    const s = emptySpace(2);
    s.population = [
      [3, 1],
      [1, 2],
    ];
    const bob: LabelerParams = {
      labelerId: "bob",
      counts: [
        [5, 1],
        [2, 4],
      ],
      labels: 12,
      goldAnswers: 0,
      goldCorrect: 0,
    };
    const expected = [
      [8 / 10, 2 / 10],
      [3 / 9, 6 / 9],
    ];
    confusionMatrix(s, bob).forEach((row, k) => {
      row.forEach((v, l) => {
        expect(v).toBeCloseTo(at(expected[k], l), 12);
      });
    });
  });

  it("with no vote is the class prior", () => {
    scoreTask(space(), []).posterior.forEach((p, k) => {
      expect(p).toBeCloseTo(at([0.5, 0.3, 0.2], k), 12);
    });
  });

  it("applies the calibration mixture: weights, temperatures and the hard share toward the class prior", () => {
    const comps = [
      { temperature: 2, hardShare: 0.1, weight: 0.25 },
      { temperature: 1, hardShare: 0, weight: 0.75 },
    ];
    const votes = [{ labeler: alice, option: 1 }];
    const raw = scoreTask(space(), votes).rawPosterior;
    const tempered = raw.map((p) => Math.sqrt(p));
    const z = tempered.reduce((a, b) => a + b, 0);
    const prior = [0.5, 0.3, 0.2];
    const expected = raw.map((p, k) => 0.25 * ((0.9 * (tempered[k] as number)) / z + 0.1 * (prior[k] as number)) + 0.75 * p);
    const { posterior } = scoreTask(space(comps), votes);
    posterior.forEach((p, k) => {
      expect(p).toBeCloseTo(at(expected, k), 12);
    });
    expect(posterior.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    // tempering and the hard share only lower the top option's probability here
    expect(posterior[1]).toBeLessThan(raw[1] as number);
  });

  it("rejects an option outside the label space", () => {
    expect(() => scoreTask(space(), [{ labeler: alice, option: 3 }])).toThrow(RangeError);
    expect(() => scoreTask(space(), [{ labeler: alice, option: 1.5 }])).toThrow(RangeError);
  });

  it("estimated accuracy is sum_k prior_k * confusion[k][k]", () => {
    const s = space();
    const c = confusionMatrix(s, alice);
    expect(estimatedAccuracy(s, alice)).toBeCloseTo(0.5 * at(c[0], 0) + 0.3 * at(c[1], 1) + 0.2 * at(c[2], 2), 12);
    // an unknown labeler gets the population's
    expect(estimatedAccuracy(s, undefined)).toBeCloseTo(0.5 * (4 / 6) + 0.3 * (3 / 6) + 0.2 * (2 / 4), 12);
  });

  it("the empty space starts from the hyperprior: accuracy 2/3, uniform class prior", () => {
    for (const k of [2, 7, 50]) {
      const s = emptySpace(k);
      expect(estimatedAccuracy(s, undefined)).toBeCloseTo(2 / 3, 12);
      expect(scoreTask(s, [{ labeler: undefined, option: 0 }]).posterior[0]).toBeCloseTo(2 / 3, 12);
    }
    expect(() => emptySpace(1)).toThrow(RangeError);
    expect(() => emptySpace(51)).toThrow(RangeError);
  });
});
