/**
 * `pnpm exec tsx packages/quality/bench/prelabel-bound.ts --data <folder> [--datasets dog,rte,web,sentpol] [--seeds 1-3]
 *   [--target 0.95] [--gold-share 0.05] [--prelabel-accuracy 0.8] [--limit N]`
 *
 * How many people's labels a pre-label can save at most under the confidence policy (issue 39), computed offline
 * on a data set's recorded answers, without the gateway. For each set and gold seed, the label space's model is
 * fitted (packages/quality `fit`: Dawid-Skene with the calibration of calibration.ts) on every answer, the gold
 * tasks of the replay's gold draw (`pickGold`, share `--gold-share`) and the votes of the simulated model of
 * `pnpm bench:quality --prelabel-accuracy` (packages/replay `simulatedPrelabel`, same seed, labeler `model:sim`):
 * the end state of a replay, the most the labeler model can know of the crowd and of the model. Then each regular
 * task with gold takes its answers in their recorded order and stops at the first person after whom the
 * calibrated posterior's leader reaches `--target`, else at its last answer (`max_labels` = recorded answers, as
 * in the replay). Three ways to count the model's vote:
 * - `none`: no pre-label;
 * - `fitted`: the model's vote with its fitted confusion row, tempered like anyone's (what the service does,
 *   decisions 0271-0273);
 * - `oracle`: the model's vote at its true confusion (right P of the time, errors uniform over the other options)
 *   added untempered to each calibration component's logits: a vote no estimator can beat, since it knows P and
 *   treats the model's errors as independent of the crowd's (the simulated model's are).
 * Every variant stops as soon as it can, with the end-state model, so each is a lower bound on the labels a live
 * replay spends with it. Also printed: the calibration's mean temperature, hard share and uninformative share,
 * the space's typical labeler's accuracy and the model labeler's fitted accuracy (`estimatedAccuracy`), the
 * confidence after m agreeing typical labelers with and without an agreeing pre-label, and the ECE that a
 * perfectly calibrated forecaster shows on as many tasks (outcomes drawn from the `fitted` confidences, mean of
 * 200 draws, 10 bins: packages/replay `expectedCalibrationError`), the sampling floor of the ECE target.
 * Output: a markdown table on stdout; one JSON line per set and seed on stderr.
 * @throws Error on a missing `--data` or an unreadable set
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { expectedCalibrationError, simulatedPrelabel } from "@labelgate/replay";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import {
  calibrationMap,
  calibrationSummary,
  estimatedAccuracy,
  fit,
  type LabelerParams,
  LabelTable,
  type QualityModel,
  scoreTask,
  taskLogHard,
  taskLogits,
  type Vote,
} from "../src/index";
import { type Dataset, loadDataset } from "./dataset";
import { pickGold } from "./sim-lib";

/** The model labeler's id in the fitted table. */
const MODEL = "model:sim";

/** One set and seed: people's labels on the regular tasks with gold per variant, and the model's figures. */
export interface BoundLine {
  dataset: string;
  seed: number;
  prelabelAccuracy: number;
  tasks: number;
  answers: number;
  labels: { none: number; fitted: number; oracle: number };
  /** tasks whose posterior reaches the target before their answers run out (the others settle at max_labels) */
  reached: { none: number; fitted: number; oracle: number };
  temperature: number;
  hardShare: number;
  uninformativeShare: number;
  typicalAccuracy: number;
  modelFittedAccuracy: number;
  /** [m, confidence after m agreeing typical labelers, the same after an agreeing pre-label] */
  ladder: [number, number, number][];
  /** mean ECE of a perfectly calibrated forecaster on `tasks` tasks */
  eceFloor: number;
}

/** The calibrated posterior of `votes` plus one untempered vote `option` of a labeler right `p` of the time. */
function posteriorWithOracleVote(model: QualityModel, votes: readonly Vote[], option: number, p: number): number[] {
  const { space } = model;
  const k = space.k;
  const logits = taskLogits(space, votes);
  const logHard = taskLogHard(space, votes);
  const out = new Array<number>(k).fill(0);
  for (const c of space.calibration.components) {
    const tau = c.temperature;
    const tempered = logits.map((v, z) => v / tau + Math.log(z === option ? p : (1 - p) / (k - 1)));
    // the simulated model's marginal: sum_z prior_z theta[z][option]
    let marginal = 0;
    for (let z = 0; z < k; z++) marginal += (space.classPrior[z] as number) * (z === option ? p : (1 - p) / (k - 1));
    const map = calibrationMap(space.classPrior, tempered, { ...c, temperature: 1 }, logHard / tau + Math.log(marginal));
    for (let z = 0; z < k; z++) out[z] = (out[z] as number) + c.weight * (map[z] as number);
  }
  return out;
}

/** Computes one set's line for one seed. */
export function prelabelBound(ds: Dataset, opts: { seed: number; target: number; goldShare: number; p: number }): BoundLine {
  const k = ds.options.length;
  const gold = pickGold(ds, opts.goldShare, opts.seed);
  const table = new LabelTable(k);
  const prelabel = new Map<string, number>();
  for (const item of ds.items) {
    if (gold.has(item.id)) table.setGold(item.id, item.gold as number);
    if (item.gold !== undefined && item.gold >= 0) {
      const answer = simulatedPrelabel(item.id, ds.options[item.gold] as string, ds.options, opts.p, opts.seed);
      const option = ds.options.indexOf(answer);
      prelabel.set(item.id, option);
      table.add(item.id, MODEL, option);
    }
    for (const a of item.answers.slice(0, 50)) table.add(item.id, a.worker, a.option);
  }
  const { model } = fit(table);
  const modelRow: LabelerParams | undefined = model.labelers.get(MODEL);
  const labels = { none: 0, fitted: 0, oracle: 0 };
  const reached = { none: 0, fitted: 0, oracle: 0 };
  const fittedConfidences: number[] = [];
  let tasks = 0;
  let answers = 0;
  for (const item of ds.items) {
    const pre = prelabel.get(item.id);
    if (gold.has(item.id) || pre === undefined) continue;
    tasks++;
    const people = item.answers.slice(0, 50);
    answers += people.length;
    const walk = (first: Vote[], posterior: (votes: Vote[]) => number[]) => {
      const votes = [...first];
      let last = 0;
      for (let i = 0; i < people.length; i++) {
        const a = people[i] as { worker: string; option: number };
        votes.push({ labeler: model.labelers.get(a.worker), option: a.option });
        last = Math.max(...posterior(votes));
        if (last >= opts.target) return { labels: i + 1, reached: true, confidence: last };
      }
      return { labels: people.length, reached: false, confidence: last };
    };
    const none = walk([], (v) => scoreTask(model.space, v).posterior);
    const fitted = walk([{ labeler: modelRow, option: pre }], (v) => scoreTask(model.space, v).posterior);
    const oracle = walk([], (v) => posteriorWithOracleVote(model, v, pre, opts.p));
    for (const [name, r] of [
      ["none", none],
      ["fitted", fitted],
      ["oracle", oracle],
    ] as const) {
      labels[name] += r.labels;
      if (r.reached) reached[name]++;
    }
    fittedConfidences.push(fitted.confidence);
  }
  const ladder: [number, number, number][] = [1, 2, 3, 4, 5, 6, 8, 10].map((m) => {
    const typical: Vote[] = Array.from({ length: m }, () => ({ labeler: undefined, option: 0 }));
    const without = Math.max(...scoreTask(model.space, typical).posterior);
    const withModel = Math.max(...scoreTask(model.space, [{ labeler: modelRow, option: 0 }, ...typical]).posterior);
    return [m, without, withModel];
  });
  const rng = xoroshiro128plus(opts.seed);
  let eceSum = 0;
  const draws = 200;
  for (let d = 0; d < draws; d++) {
    const predictions = fittedConfidences.map((confidence) => ({ confidence, correct: uniformFloat64(rng) < confidence }));
    eceSum += expectedCalibrationError(predictions).ece ?? 0;
  }
  const cal = calibrationSummary(model.space.calibration);
  return {
    dataset: ds.name,
    seed: opts.seed,
    prelabelAccuracy: opts.p,
    tasks,
    answers,
    labels,
    reached,
    temperature: cal.temperature,
    hardShare: cal.hardShare,
    uninformativeShare: cal.uninformativeShare,
    typicalAccuracy: estimatedAccuracy(model.space, undefined),
    modelFittedAccuracy: estimatedAccuracy(model.space, modelRow),
    ladder,
    eceFloor: eceSum / draws,
  };
}

function seedsOf(value: string): number[] {
  const range = /^(\d+)-(\d+)$/.exec(value);
  if (range) return Array.from({ length: Number(range[2]) - Number(range[1]) + 1 }, (_, i) => Number(range[1]) + i);
  return value.split(",").map(Number);
}

function main(): void {
  const { values } = parseArgs({
    options: {
      data: { type: "string" },
      datasets: { type: "string", default: "dog,rte,web,sentpol" },
      seeds: { type: "string", default: "1-3" },
      target: { type: "string", default: "0.95" },
      "gold-share": { type: "string", default: "0.05" },
      "prelabel-accuracy": { type: "string", default: "0.8" },
      limit: { type: "string" },
    },
  });
  if (!values.data) throw new Error("--data <folder of data sets> is required");
  const target = Number(values.target);
  const goldShare = Number(values["gold-share"]);
  const p = Number(values["prelabel-accuracy"]);
  const limit = values.limit ? Number(values.limit) : undefined;
  const f3 = (v: number) => v.toFixed(3);
  const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(0)}%`;
  const rows: string[] = [
    "| set | seeds | tasks | labels none | fitted | ratio | oracle | ratio | at max_labels none / fitted / oracle | τ | h | u | typical acc. | model fitted acc. | ECE floor |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  const total = { none: 0, fitted: 0, oracle: 0 };
  for (const name of (values.datasets as string).split(",")) {
    const full = loadDataset(path.join(values.data, name));
    const ds = limit ? { ...full, items: full.items.slice(0, limit) } : full;
    const lines = seedsOf(values.seeds as string).map((seed) => prelabelBound(ds, { seed, target, goldShare, p }));
    for (const line of lines) process.stderr.write(`${JSON.stringify(line)}\n`);
    const sum = (f: (l: BoundLine) => number) => lines.reduce((a, l) => a + f(l), 0);
    const mean = (f: (l: BoundLine) => number) => sum(f) / lines.length;
    const labels = { none: sum((l) => l.labels.none), fitted: sum((l) => l.labels.fitted), oracle: sum((l) => l.labels.oracle) };
    total.none += labels.none;
    total.fitted += labels.fitted;
    total.oracle += labels.oracle;
    const tasks = sum((l) => l.tasks);
    const atMax = (f: (l: BoundLine) => number) => pct(tasks - sum(f), tasks);
    rows.push(
      `| ${name} | ${lines.length} | ${lines[0]?.tasks} | ${labels.none} | ${labels.fitted} | ${f3(labels.fitted / labels.none)} | ${labels.oracle} | ${f3(labels.oracle / labels.none)} | ` +
        `${atMax((l) => l.reached.none)} / ${atMax((l) => l.reached.fitted)} / ${atMax((l) => l.reached.oracle)} | ${mean((l) => l.temperature).toFixed(2)} | ` +
        `${f3(mean((l) => l.hardShare))} | ${f3(mean((l) => l.uninformativeShare))} | ${f3(mean((l) => l.typicalAccuracy))} | ${f3(mean((l) => l.modelFittedAccuracy))} | ${f3(mean((l) => l.eceFloor))} |`,
    );
    const ladder = lines[0]?.ladder.map(([m, a, b]) => `${m}: ${a.toFixed(3)} / ${b.toFixed(3)}`).join(", ");
    process.stderr.write(
      `${name} seed ${lines[0]?.seed}: confidence after m agreeing typical labelers, without / with an agreeing pre-label: ${ladder}\n`,
    );
  }
  rows.push(
    `| **all** | | | ${total.none} | ${total.fitted} | ${f3(total.fitted / total.none)} | ${total.oracle} | ${f3(total.oracle / total.none)} | | | | | | | |`,
  );
  process.stdout.write(`${rows.join("\n")}\n`);
}

main();
