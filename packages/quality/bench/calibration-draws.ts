/**
 * `pnpm exec tsx packages/quality/bench/calibration-draws.ts <data set folder> [--seeds 1-5] [--target 0.95]
 *   [--gold-share 0.05] [--reviews 0,38,77,all] [--review-seed 1]`
 *
 * What one gold draw does to a space's calibration, and how many reviews it takes to correct it (issue 36's
 * dog misses; docs/benchmarks.md "Label quality with audits and min_gain"). Offline and in one process: no
 * gateway, no replay timing. For each gold seed (the replay's own draw, sim-lib `pickGold`):
 * 1. the gold map: every answer of the set in one label table (at most 50 per item, the replay's cap), the
 *    seed's gold items marked gold, one fit (packages/quality `fit`); its calibration summarized (`calibrationSummary`:
 *    geometric mean temperature, mean hard share, mean uninformative share);
 * 2. with that model, each non-gold item's answers are taken one by one, in the file's order, until the calibrated
 *    posterior's leader reaches `--target` (the confidence policy's stop, `decideConfidence` with min_labels 1):
 *    those items are the ones "resolved `confidence`", scored against gold (count, accuracy, Wilson 95% interval,
 *    mean confidence); the others are scored on all their answers ("max_labels");
 * 3. for each count R of `--reviews`: R of those non-gold items, drawn uniformly (xoroshiro128+ seeded by
 *    `--review-seed`), are marked reviewed with their gold answer, holding the answers they settled with (the
 *    state a review scores: packages/quality fit.ts `calibrate`); one fit again, and the figures of step 2 on the
 *    items not reviewed, with the gold power the fit chose (calibration.ts `calibrationWithReviews`).
 * One JSON line per (seed, R) on stdout.
 * The end-of-data model stands for the model of a replay, which refits as labels arrive: the figures say what a
 * draw's map is, not when a replay reaches it.
 * @throws Error on a missing folder or a bad option
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { expectedCalibrationError } from "@labelgate/replay";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { calibrationSummary, decideConfidence, fit, LabelTable, type QualityModel, scoreTask, type Vote } from "../src/index";
import { type Dataset, type DatasetItem, loadDataset } from "./dataset";
import { pickGold } from "./sim-lib";

/** Wilson score interval of k successes in n at 95% (Wilson 1927, JASA 22(158)). */
export function wilson(k: number, n: number): [number, number] {
  if (n === 0) return [0, 1];
  const z = 1.959964;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const h = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [c - h, c + h];
}

interface Settled {
  item: DatasetItem;
  option: number;
  confidence: number;
  resolution: "confidence" | "max_labels";
  /** answers held at settlement */
  held: number;
}

/** Settles every item of `items` under `model` with the confidence stop (see the file's docstring, step 2). */
function settleAll(model: QualityModel, k: number, items: readonly DatasetItem[], target: number): Settled[] {
  return items.map((item) => {
    const answers = item.answers.slice(0, 50);
    const counts = new Array<number>(k).fill(0);
    const votes: Vote[] = [];
    for (let i = 0; i < answers.length; i++) {
      const a = answers[i] as { worker: string; option: number };
      votes.push({ labeler: model.labelers.get(a.worker), option: a.option });
      counts[a.option] = (counts[a.option] as number) + 1;
      const { posterior } = scoreTask(model.space, votes);
      const d = decideConfidence({ confidenceTarget: target, minLabels: 1, maxLabels: answers.length }, counts, posterior);
      if (d.settled)
        return {
          item,
          option: d.option,
          confidence: d.confidence,
          resolution: d.resolution === "confidence" ? "confidence" : "max_labels",
          held: i + 1,
        };
    }
    throw new Error(`item ${item.id} did not settle on its ${answers.length} answers`);
  });
}

/** One fit of every answer, `gold` items at their gold option, `reviewed` items at theirs with the answers they hold. */
function fitWith(ds: Dataset, gold: ReadonlySet<string>, reviewed: ReadonlyMap<string, number>): QualityModel {
  const table = new LabelTable(ds.options.length);
  for (const item of ds.items) {
    const held = reviewed.get(item.id);
    for (const a of item.answers.slice(0, held ?? 50)) table.add(item.id, a.worker, a.option);
    if (gold.has(item.id)) table.setGold(item.id, item.gold as number);
    else if (held !== undefined) table.setReviewed(item.id, item.gold as number);
  }
  return fit(table).model;
}

function figures(settled: readonly Settled[]) {
  const scored = settled.filter((s) => s.item.gold !== undefined);
  const right = (s: Settled) => s.option === s.item.gold;
  const conf = scored.filter((s) => s.resolution === "confidence");
  const confRight = conf.filter(right).length;
  const r4 = (v: number) => Math.round(v * 1e4) / 1e4;
  return {
    tasks: scored.length,
    accuracy: r4(scored.filter(right).length / Math.max(1, scored.length)),
    mean_confidence: r4(scored.reduce((a, s) => a + s.confidence, 0) / Math.max(1, scored.length)),
    ece: r4(expectedCalibrationError(scored.map((s) => ({ confidence: s.confidence, correct: right(s) }))).ece ?? 0),
    confidence_resolved: conf.length,
    confidence_right: r4(confRight / Math.max(1, conf.length)),
    confidence_right_wilson95: wilson(confRight, conf.length).map(r4),
    confidence_mean_confidence: r4(conf.reduce((a, s) => a + s.confidence, 0) / Math.max(1, conf.length)),
    /** answers held by the tasks resolved `confidence`: count of tasks and share right, by answers held */
    confidence_by_answers: Object.fromEntries(
      [...new Set(conf.map((s) => s.held))]
        .sort((a, b) => a - b)
        .map((h) => {
          const at = conf.filter((s) => s.held === h);
          return [h, { tasks: at.length, right: r4(at.filter(right).length / at.length) }];
        }),
    ),
  };
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      seeds: { type: "string", default: "1-5" },
      target: { type: "string", default: "0.95" },
      "gold-share": { type: "string", default: "0.05" },
      reviews: { type: "string", default: "0,38,77,all" },
      "review-seed": { type: "string", default: "1" },
    },
  });
  const folder = positionals[0];
  if (folder === undefined) throw new Error("usage: calibration-draws.ts <data set folder> [options]");
  const ds = loadDataset(path.resolve(folder));
  const range = /^(\d+)-(\d+)$/.exec(values.seeds as string);
  const seeds = range
    ? Array.from({ length: Number(range[2]) - Number(range[1]) + 1 }, (_, i) => Number(range[1]) + i)
    : (values.seeds as string).split(",").map(Number);
  const target = Number(values.target);
  const share = Number(values["gold-share"]);
  const k = ds.options.length;
  for (const seed of seeds) {
    const gold = pickGold(ds, share, seed);
    const regular = ds.items.filter((it) => !gold.has(it.id));
    const goldModel = fitWith(ds, gold, new Map());
    const settled = settleAll(goldModel, k, regular, target);
    const eligible = settled.filter((s) => s.item.gold !== undefined && (s.item.gold as number) >= 0);
    for (const spec of (values.reviews as string).split(",")) {
      const r = spec === "all" ? eligible.length : Number(spec);
      // a uniform draw of r settled items (partial Fisher-Yates)
      const rng = xoroshiro128plus(Number(values["review-seed"]) * 1000 + seed);
      const pool = [...eligible];
      for (let i = 0; i < Math.min(r, pool.length); i++) {
        const j = i + Math.floor(uniformFloat64(rng) * (pool.length - i));
        [pool[i], pool[j]] = [pool[j] as Settled, pool[i] as Settled];
      }
      const reviewed = new Map(pool.slice(0, r).map((s) => [s.item.id, s.held]));
      const model = r === 0 ? goldModel : fitWith(ds, gold, reviewed);
      const rest = r === 0 ? settled : settleAll(model, k, regular, target).filter((s) => !reviewed.has(s.item.id));
      const cal = model.space.calibration;
      const sum = calibrationSummary(cal);
      const r4 = (v: number) => Math.round(v * 1e4) / 1e4;
      process.stdout.write(
        `${JSON.stringify({
          dataset: ds.name,
          seed,
          gold_tasks: cal.goldTasks,
          reviews: cal.reviewTasks ?? 0,
          gold_power: cal.goldPower ?? null,
          temperature: r4(sum.temperature),
          hard_share: r4(sum.hardShare),
          uninformative_share: r4(sum.uninformativeShare),
          ...(r === eligible.length ? { scored_on: "items not reviewed (none left: the reviewed map's own fit)" } : {}),
          ...figures(r === eligible.length ? settleAll(model, k, regular, target) : rest),
        })}\n`,
      );
    }
  }
}

if (require.main === module) main();
