/** Dawid-Skene EM (`fit`): recovery of known confusion matrices, gold clamping, warm start, determinism. */
import { calibrationSummary, confusionMatrix, fit, LabelTable, type QualityModel } from "../src/index";
import { at, crowd } from "./helpers";

const CONFUSIONS = [
  [
    [0.9, 0.05, 0.05],
    [0.1, 0.8, 0.1],
    [0.05, 0.15, 0.8],
  ],
  [
    [0.7, 0.2, 0.1],
    [0.2, 0.7, 0.1],
    [0.1, 0.1, 0.8],
  ],
  [
    [0.34, 0.33, 0.33],
    [0.33, 0.34, 0.33],
    [0.33, 0.33, 0.34],
  ],
  [
    [0.1, 0.8, 0.1],
    [0.1, 0.1, 0.8],
    [0.8, 0.1, 0.1],
  ],
  [
    [0.95, 0.03, 0.02],
    [0.02, 0.95, 0.03],
    [0.03, 0.02, 0.95],
  ],
  [
    [0.8, 0.1, 0.1],
    [0.1, 0.8, 0.1],
    [0.1, 0.1, 0.8],
  ],
];

function maxDiff(a: readonly number[][], b: readonly number[][]): number {
  let d = 0;
  a.forEach((row, i) => {
    row.forEach((v, j) => {
      d = Math.max(d, Math.abs(v - ((b[i] as number[])[j] as number)));
    });
  });
  return d;
}

describe("fit", () => {
  it("recovers each labeler's confusion matrix and the class prior from 2,000 tasks", () => {
    const { table, truth } = crowd(1, 2000, [0.5, 0.3, 0.2], CONFUSIONS);
    const { model, taskPosteriors } = fit(table);
    expect(model.space.converged).toBe(true);
    CONFUSIONS.forEach((m, j) => {
      expect(maxDiff(confusionMatrix(model.space, model.labelers.get(`w${j}`)), m)).toBeLessThan(0.05);
    });
    expect(maxDiff([model.space.classPrior], [[0.5, 0.3, 0.2]])).toBeLessThan(0.04);
    // the spammer's and the adversary's votes are discounted: DS beats majority vote
    let correct = 0;
    truth.forEach((z, t) => {
      const p = Array.from(taskPosteriors.subarray(t * 3, t * 3 + 3));
      if (p.indexOf(Math.max(...p)) === z) correct++;
    });
    expect(correct / truth.length).toBeGreaterThan(0.97);
  });

  it("shrinks a labeler with few labels toward the population", () => {
    const { table } = crowd(
      2,
      500,
      [0.5, 0.5],
      [
        [
          [0.8, 0.2],
          [0.2, 0.8],
        ],
        [
          [0.85, 0.15],
          [0.15, 0.85],
        ],
        [
          [0.8, 0.2],
          [0.25, 0.75],
        ],
      ],
    );
    table.add("t0", "newcomer", 0);
    const { model } = fit(table);
    const newcomer = confusionMatrix(model.space, model.labelers.get("newcomer"));
    const population = confusionMatrix(model.space, undefined);
    // one label moves the row a little, never to certainty
    expect(maxDiff(newcomer, population)).toBeLessThan(0.25);
    expect((newcomer[0] as number[])[0]).toBeLessThan(0.95);
  });

  it("clamps gold tasks to their truth and counts gold answers", () => {
    const table = new LabelTable(2);
    for (let t = 0; t < 50; t++) {
      table.add(`t${t}`, "a", t % 2);
      table.add(`t${t}`, "b", t % 2);
      table.add(`t${t}`, "c", t % 2);
    }
    // all three labelers answer 0 on a task whose gold is 1
    table.add("g", "a", 0);
    table.add("g", "b", 0);
    table.add("g", "c", 1);
    table.setGold("g", 1);
    const { model, taskPosteriors } = fit(table);
    const g = table.taskIndexOf("g") as number;
    expect(taskPosteriors[g * 2 + 1]).toBe(1);
    expect(model.labelers.get("a")).toMatchObject({ labels: 51, goldAnswers: 1, goldCorrect: 0 });
    expect(model.labelers.get("c")).toMatchObject({ labels: 51, goldAnswers: 1, goldCorrect: 1 });
    // the gold answer enters a's row at the truth: a said 0 on a true-1 task
    expect(at(at(model.labelers.get("a")?.counts, 1), 0)).toBeGreaterThan(0.99);
    expect(model.space.counts).toMatchObject({ goldTasks: 1, goldAnswers: 3, labels: 153 });
  });

  it("a warm start from the previous model reaches the cold fit's fixed point", () => {
    const { table } = crowd(3, 1500, [0.4, 0.35, 0.25], CONFUSIONS);
    const first = new LabelTable(3);
    const cols = table.columns();
    const half = Math.floor(table.length * 0.9);
    for (let n = 0; n < half; n++) first.add(`t${cols.task[n]}`, `w${cols.labeler[n]}`, cols.option[n] as number);
    const previous = fit(first, { tolerance: 1e-10, maxIterations: 5000 }).model;
    const all = new LabelTable(3);
    for (let n = 0; n < table.length; n++) all.add(`t${cols.task[n]}`, `w${cols.labeler[n]}`, cols.option[n] as number);
    const cold = fit(all, { tolerance: 1e-10, maxIterations: 5000 });
    const warm = fit(all, { previous, tolerance: 1e-10, maxIterations: 5000 });
    expect(warm.model.space.converged).toBe(true);
    expect(cold.model.space.converged).toBe(true);
    expect(warm.model.space.version).toBe(previous.space.version + 1);
    expect(maxDiff(warm.model.space.population, cold.model.space.population)).toBeLessThan(1e-4);
    expect(maxDiff([warm.model.space.classPrior], [cold.model.space.classPrior])).toBeLessThan(1e-6);
    let d = 0;
    for (let i = 0; i < cold.taskPosteriors.length; i++)
      d = Math.max(d, Math.abs((cold.taskPosteriors[i] as number) - (warm.taskPosteriors[i] as number)));
    expect(d).toBeLessThan(1e-6);
    expect(
      Math.abs(calibrationSummary(warm.model.space.calibration).temperature - calibrationSummary(cold.model.space.calibration).temperature),
    ).toBeLessThan(1e-3);
    // and after a few new labels the warm start needs fewer iterations than a cold fit
    const few = fit(all, { previous: warm.model });
    const coldDefault = fit(all);
    expect(few.model.space.iterations).toBeLessThan(coldDefault.model.space.iterations);
  });

  it("is deterministic: the same table gives the same model", () => {
    const { table } = crowd(4, 300, [0.5, 0.3, 0.2], CONFUSIONS);
    const a = fit(table);
    const b = fit(table);
    const plain = (m: QualityModel) => ({ space: m.space, labelers: [...m.labelers.entries()] });
    expect(plain(b.model)).toEqual(plain(a.model));
    expect(Array.from(b.taskPosteriors)).toEqual(Array.from(a.taskPosteriors));
  });

  it("rejects a previous model with another number of options", () => {
    const { table } = crowd(5, 50, [0.5, 0.3, 0.2], CONFUSIONS);
    const other = new LabelTable(2);
    other.add("t", "w", 1);
    expect(() => fit(table, { previous: fit(other).model })).toThrow(RangeError);
  });

  it("fits an empty table to the hyperprior", () => {
    const { model } = fit(new LabelTable(4));
    expect(model.labelers.size).toBe(0);
    expect(model.space.classPrior).toEqual([0.25, 0.25, 0.25, 0.25]);
    expect(model.space.calibration.source).toBe("default");
  });
});
