/**
 * Identifiability of the fit and the refit that keeps it (issue 27): a warm refit on the inverted side of
 * Dawid-Skene's label-switching symmetry is detected and replaced; the same crowd refitted in any order and at
 * any cadence ends on the same side.
 */
import { fit, LabelTable, type QualityModel, refit, scoreTask } from "../src/index";
import { draw, rng } from "./helpers";

interface Label {
  task: number;
  labeler: string;
  option: number;
}

/**
 * A crowd with two symmetric readings: 4 good labelers (accuracy 0.9) and 3 adversaries (accuracy 0.1) label
 * every one of 40 binary tasks. Both the true reading and the inverted one (the adversaries right, the good
 * labelers wrong) are fixed points of EM; only "labelers are better than chance on average" tells them apart.
 * The adversaries' labels come first.
 */
function symmetricCrowd(seed: number): { labels: Label[]; truth: number[] } {
  const r = rng(seed);
  const truth = Array.from({ length: 40 }, () => draw(r, [0.5, 0.5]));
  const labels: Label[] = [];
  const answer = (t: number, accuracy: number) => draw(r, truth[t] === 0 ? [accuracy, 1 - accuracy] : [1 - accuracy, accuracy]);
  for (let j = 0; j < 3; j++) for (let t = 0; t < 40; t++) labels.push({ task: t, labeler: `a${j}`, option: answer(t, 0.1) });
  for (let j = 0; j < 4; j++) for (let t = 0; t < 40; t++) labels.push({ task: t, labeler: `g${j}`, option: answer(t, 0.9) });
  return { labels, truth };
}

/** Share of tasks whose posterior leader under `model` is the truth. */
function accuracy(model: QualityModel, labels: readonly Label[], truth: readonly number[]): number {
  let right = 0;
  truth.forEach((z, t) => {
    const votes = labels.filter((l) => l.task === t).map((l) => ({ labeler: model.labelers.get(l.labeler), option: l.option }));
    const p = scoreTask(model.space, votes).posterior;
    if (((p[1] as number) > (p[0] as number) ? 1 : 0) === z) right++;
  });
  return right / truth.length;
}

/** Feeds `labels` in order, refitting after every `every` labels (and at the end) with `step`. */
function replay(labels: readonly Label[], every: number, step: (table: LabelTable, previous: QualityModel | undefined) => QualityModel) {
  const table = new LabelTable(2);
  let model: QualityModel | undefined;
  labels.forEach((l, i) => {
    table.add(`t${l.task}`, l.labeler, l.option);
    if ((i + 1) % every === 0 || i === labels.length - 1) model = step(table, model);
  });
  return model as QualityModel;
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const r = rng(seed);
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = draw(
      r,
      Array.from({ length: i + 1 }, () => 1),
    );
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

describe("identification", () => {
  it("a fit whose labelers agree with it on every option is identified; its inversion is not", () => {
    const { labels } = symmetricCrowd(1);
    const table = new LabelTable(2);
    for (const l of labels) table.add(`t${l.task}`, l.labeler, l.option);
    const right = fit(table);
    expect(right.identification.ok).toBe(true);
    expect(right.identification.lift.every((v) => v > 1)).toBe(true);
    // the inverted fixed point, reached by warm refits that saw the adversaries first: not identified
    const locked = replay(labels, 50, (t, previous) => fit(t, previous ? { previous } : {}).model);
    const warm = fit(table, { previous: locked });
    expect(warm.identification.ok).toBe(false);
    expect(warm.identification.failing).toEqual([0, 1]);
    expect(warm.identification.lift.every((v) => v < 1)).toBe(true);
  });

  it("gold anchors an option the crowd is below chance on", () => {
    // option 2 is labeled "2" less often on its own tasks (20%) than on the others' (25%): the crowd confuses it
    // with 0; 12 gold tasks (4 of each option) show it, so the fit keeps that reading
    const r = rng(5);
    const rows = [
      [0.8, 0, 0.2],
      [0, 0.7, 0.3],
      [0.8, 0, 0.2],
    ];
    const table = new LabelTable(3);
    for (let t = 0; t < 90; t++) {
      const truth = t % 3;
      if (t < 12) table.setGold(`t${t}`, truth);
      for (let j = 0; j < 6; j++) table.add(`t${t}`, `w${j}`, draw(r, rows[truth] as number[]));
    }
    const result = fit(table);
    expect(result.identification.lift[2]).toBeLessThan(1);
    expect(result.identification.ok).toBe(true);
    expect(result.identification.failing).toEqual([]);
  });
});

describe("refit", () => {
  it("never keeps the inverted fixed point that warm refits reach", () => {
    const { labels, truth } = symmetricCrowd(2);
    const unguarded = replay(labels, 50, (table, previous) => fit(table, previous ? { previous } : {}).model);
    expect(accuracy(unguarded, labels, truth)).toBeLessThan(0.1); // the lock-in this guards against
    const guarded = replay(labels, 50, (table, previous) => refit(table, previous).model);
    expect(accuracy(guarded, labels, truth)).toBeGreaterThan(0.9);
  });

  it("keeps the previous model when no fit is identified", () => {
    // two labelers who always disagree: every reading has a labeler below chance, lift is exactly 1
    const table = new LabelTable(2);
    for (let t = 0; t < 20; t++) {
      table.add(`t${t}`, "x", t % 2);
      table.add(`t${t}`, "y", 1 - (t % 2));
    }
    const previous = fit(table).model;
    const result = refit(table, previous);
    if (result.outcome === "refused") {
      expect(result.model.labelers).toBe(previous.labelers);
      expect(result.model.space.version).toBe(previous.space.version + 1);
    } else expect(result.cold?.ok ?? result.warm?.ok).toBe(true);
  });

  it.each([13, 50, 140])("ends on the true side whatever the order of the labels (refit every %i labels)", (every) => {
    const { labels, truth } = symmetricCrowd(3);
    const orders = [labels, labels.slice().reverse(), shuffled(labels, 11)];
    for (const order of orders) {
      const model = replay(order, every, (table, previous) => refit(table, previous).model);
      expect(accuracy(model, labels, truth)).toBeGreaterThan(0.9);
    }
  });
});
