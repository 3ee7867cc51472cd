/**
 * `pnpm bench:quality [--data <folder>] [--datasets dog,rte,...] [--seeds 1-5] [--target 0.95] [--gold-share 0.05]
 *   [--limit N] [--no-write] [--from runs.jsonl]`
 *
 * Label quality as a customer meets it (issue 27): what the service's labels are worth against what the same
 * number of labels would buy with a fixed overlap. Each data set of `--data` (default: the repository's
 * data/crowd, which ships `dog`; a folder of more sets in the same layout can be given) is replayed through
 * the real gateway and consensus worker processes with the protocol of `pnpm replay` (packages/replay
 * `runReplay`):
 * - the threshold policy (consensus_threshold 3, no gold), the spec's default, once;
 * - the confidence policy at T = `--target` with a gold share S = `--gold-share`, once per gold seed.
 * Beside each run, the uniform-overlap baseline at the run's label share (packages/quality/bench/sim-lib.ts
 * `uniformOverlap`): max(majority vote, Dawid-Skene) fitted offline on the first k answers of every item, k
 * interpolated, scored on the same items (the run's gold tasks left out). The references on all labels
 * (majority vote, Dawid-Skene) are computed offline too.
 *
 * Writes the tables and the targets met to docs/benchmarks.md (section "Label quality (`pnpm bench:quality`)",
 * replaced on each run) and the accuracy-against-share plot, the policies' points beside the uniform-overlap
 * curves, to docs/quality-replay.png. Every run has a database and Redis prefix of its own, dropped at the end.
 * Progress on stderr, one JSON line per replay on stdout. `--from FILE` replays nothing: it rebuilds the tables
 * and the plot from such lines recorded by an earlier run (a run cut short keeps the replays it finished), with
 * the references and the uniform-overlap curves computed again from `--data`.
 */

import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { type Dataset, loadDataset as loadQualityDataset } from "@labelgate/quality/bench/dataset";
import {
  type OverlapPoint,
  overlapAccuracyAt,
  pickGold,
  references,
  uniformOverlap,
  workerSortedItems,
} from "@labelgate/quality/bench/sim-lib";
import { type ReplaySummary, runReplay } from "@labelgate/replay";
import { migrateDatabase } from "@labelgate/store";
import { benchTarget, ROOT, type Started, startServices, tearDown } from "./bench-lib";

const SECTION = "## Label quality (`pnpm bench:quality`)";
/** The order of the shared sets in the tables; other sets follow by name. */
const KNOWN_ORDER = ["dog", "rte", "web", "sentpol", "relevance"];

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** "1-5" or "1,3,5" → [1, 2, 3, 4, 5] / [1, 3, 5]. */
export function parseSeeds(value: string): number[] {
  const range = /^(\d+)-(\d+)$/.exec(value);
  const out = range
    ? Array.from({ length: Number(range[2]) - Number(range[1]) + 1 }, (_, i) => Number(range[1]) + i)
    : value.split(",").map(Number);
  if (out.length === 0 || out.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--seeds: expected "1-5" or "1,2,3", got "${value}"`);
  return out;
}

/** One replay with its baseline. */
export interface Run {
  summary: ReplaySummary;
  /** the uniform-overlap baseline's accuracy at the run's label share */
  overlap: number;
}

/** One data set's results. */
export interface DatasetResult {
  dataset: string;
  majorityVote: number;
  dawidSkene: number;
  threshold: Run;
  confidence: Run[];
  /** the uniform-overlap curve on every item with gold (the threshold run's baseline; no gold tasks) */
  curve: OverlapPoint[];
  /** items (of those with 2+ answers) whose recorded answers are in ascending worker-id order (sim-lib `workerSortedItems`) */
  workerSorted: { sorted: number; items: number };
}

interface Stat {
  mean: number;
  min: number;
  max: number;
}

function stat(values: readonly number[]): Stat {
  return { mean: values.reduce((a, b) => a + b, 0) / values.length, min: Math.min(...values), max: Math.max(...values) };
}

const pt = (v: number) => `${(v * 100).toFixed(1)}%`;
const signed = (v: number) => `${v >= 0 ? "+" : "−"}${Math.abs(v * 100).toFixed(1)}`;
const f3 = (v: number) => v.toFixed(3);
const range = (s: Stat, f: (v: number) => string) => `${f(s.mean)} [${f(s.min)}–${f(s.max)}]`;

/** The targets of issue 27, checked on the results; each line "target: met / missed (figures)". */
export function checkTargets(results: readonly DatasetResult[]): { line: string; met: boolean }[] {
  const out: { line: string; met: boolean }[] = [];
  const add = (line: string, met: boolean) => out.push({ line: `${met ? "met" : "**missed**"}: ${line}`, met });
  const conf = results.map((r) => {
    const runs = r.confidence;
    const acc = (x: Run) => x.summary.accuracy ?? 0;
    return {
      r,
      delta: stat(runs.map((x) => acc(x) - x.overlap)),
      vsBest: stat(runs.map((x) => acc(x) - Math.max(r.majorityVote, r.dawidSkene))),
      ece: stat(runs.map((x) => x.summary.ece ?? 1)),
      unsettled: runs.reduce((a, x) => a + (x.summary.tasks - x.summary.settled), 0),
    };
  });
  if (conf.length > 0 && conf.every((c) => c.r.confidence.length > 0)) {
    const mean = (f: (c: (typeof conf)[number]) => number) => conf.reduce((a, c) => a + f(c), 0) / conf.length;
    add(
      `confidence policy accuracy ≥ the uniform-overlap baseline − 0.5 pt on every set (${conf.map((c) => `${c.r.dataset} ${signed(c.delta.mean)}`).join(", ")})`,
      conf.every((c) => c.delta.mean >= -0.005),
    );
    add(`… and + 1.5 pt on average (${signed(mean((c) => c.delta.mean))})`, mean((c) => c.delta.mean) >= 0.015);
    add(
      `accuracy ≥ max(MV, DS on all labels) − 3 pt on every set (${conf.map((c) => `${c.r.dataset} ${signed(c.vsBest.mean)}`).join(", ")})`,
      conf.every((c) => c.vsBest.mean >= -0.03),
    );
    add(`… and − 1 pt on average (${signed(mean((c) => c.vsBest.mean))})`, mean((c) => c.vsBest.mean) >= -0.01);
    add(
      `ECE ≤ 0.08 on every set and seed (worst: ${conf.map((c) => `${c.r.dataset} ${f3(c.ece.max)}`).join(", ")})`,
      conf.every((c) => c.ece.max <= 0.08),
    );
    add(`… and ≤ 0.05 on average (${f3(mean((c) => c.ece.mean))})`, mean((c) => c.ece.mean) <= 0.05);
    add(
      `no task left unsettled (${conf.reduce((a, c) => a + c.unsettled, 0)})`,
      conf.every((c) => c.unsettled === 0),
    );
    add(
      `no run below the uniform-overlap baseline − 2 pt (lowest: ${conf.map((c) => `${c.r.dataset} ${signed(c.delta.min)}`).join(", ")})`,
      conf.every((c) => c.delta.min >= -0.02),
    );
  }
  const notLeader = results.reduce((a, r) => a + r.threshold.summary.not_leader, 0);
  add(`threshold policy: no result whose label is not the posterior's leader (${notLeader})`, notLeader === 0);
  const tDelta = results.map((r) => ({ name: r.dataset, d: (r.threshold.summary.accuracy ?? 0) - r.threshold.overlap }));
  add(
    `threshold policy accuracy ≥ the uniform-overlap baseline at its share − 1 pt on every set (${tDelta.map((t) => `${t.name} ${signed(t.d)}`).join(", ")})`,
    tDelta.every((t) => t.d >= -0.01),
  );
  const tEce = results.map((r) => r.threshold.summary.ece ?? 1);
  const meanEce = tEce.reduce((a, b) => a + b, 0) / Math.max(1, tEce.length);
  add(`threshold policy mean ECE ≤ 0.10 (${f3(meanEce)})`, meanEce <= 0.1);
  return out;
}

/** The markdown section of the results. */
export function renderSection(
  results: readonly DatasetResult[],
  opts: { target: number; goldShare: number; seeds: number[]; seconds: number },
): string {
  const lines = [
    SECTION,
    "",
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "cpu"}), ` +
      `${(opts.seconds / 60).toFixed(0)} min, \`pnpm bench:quality\`. Real gateway and consensus worker, the protocol of \`pnpm replay\`. ` +
      `Confidence policy: T = ${opts.target}, gold share S = ${opts.goldShare}, gold seeds ${opts.seeds.join(", ")} (mean [min–max]); ` +
      "threshold policy: consensus_threshold 3, max_labels 7, no gold, one run. Accuracy on the non-gold items against gold.csv; " +
      "label share = labels accepted (gold answers included) / rows of answers.csv; ECE over 10 equal-width bins of `confidence`. " +
      "Uniform overlap: max(majority vote, Dawid-Skene) fitted offline on the first k answers of every item, at the run's label share " +
      "(k interpolated), on the same items. Plot: [docs/quality-replay.png](quality-replay.png).",
    "",
    "| data set | policy | accuracy | label share | ECE | uniform overlap at that share | Δ vs overlap | MV / DS on all labels | resolutions | not the leader |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of results) {
    const t = r.threshold;
    const refs = `${pt(r.majorityVote)} / ${pt(r.dawidSkene)}`;
    const res = (s: ReplaySummary) =>
      Object.entries(s.resolutions)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ");
    lines.push(
      `| ${r.dataset} | threshold 3 | ${pt(t.summary.accuracy ?? 0)} | ${f3(t.summary.label_share)} | ${f3(t.summary.ece ?? 0)} | ${pt(t.overlap)} | ${signed((t.summary.accuracy ?? 0) - t.overlap)} | ${refs} | ${res(t.summary)} | ${t.summary.not_leader} |`,
    );
    if (r.confidence.length > 0) {
      const acc = stat(r.confidence.map((x) => x.summary.accuracy ?? 0));
      const share = stat(r.confidence.map((x) => x.summary.label_share));
      const ece = stat(r.confidence.map((x) => x.summary.ece ?? 0));
      const overlap = stat(r.confidence.map((x) => x.overlap));
      const delta = stat(r.confidence.map((x) => (x.summary.accuracy ?? 0) - x.overlap));
      const resolutions = new Map<string, number>();
      for (const x of r.confidence)
        for (const [k, v] of Object.entries(x.summary.resolutions)) resolutions.set(k, (resolutions.get(k) ?? 0) + v);
      const resText = [...resolutions].map(([k, v]) => `${k} ${(v / r.confidence.length).toFixed(0)}`).join(", ");
      lines.push(
        `| ${r.dataset} | confidence T=${opts.target}${r.confidence.length < opts.seeds.length ? ` (${r.confidence.length} of ${opts.seeds.length} seeds)` : ""} | ${range(acc, pt)} | ${range(share, f3)} | ${range(ece, f3)} | ${range(overlap, pt)} | ${range(delta, signed)} | ${refs} | ${resText} (mean) | – |`,
      );
    }
  }
  const sortedSets = results.filter((r) => r.workerSorted.items > 0 && r.workerSorted.sorted >= 0.9 * r.workerSorted.items);
  for (const r of sortedSets)
    lines.push(
      "",
      `Recorded order of ${r.dataset}: the answers of ${r.workerSorted.sorted} of its ${r.workerSorted.items} items with two or more answers are in ascending worker-id order, a sort rather than an arrival order. The replay and the uniform overlap take "the first k answers" as the first to arrive; here they are the k lowest worker ids, so the baseline picks workers by id. \`packages/quality/bench/shuffle-answers.ts\` writes a copy with each item's answers in a random order (docs/notes/quality.md section 0).`,
    );
  lines.push("", "Targets (issue 27):", "");
  for (const t of checkTargets(results)) lines.push(`- ${t.line}`);
  lines.push("");
  return lines.join("\n");
}

/** Replaces the section in docs/benchmarks.md (or appends it). */
function writeSection(section: string): void {
  const file = path.join(ROOT, "docs/benchmarks.md");
  const text = readFileSync(file, "utf8");
  const start = text.indexOf(SECTION);
  if (start < 0) {
    writeFileSync(file, `${text.trimEnd()}\n\n${section}\n`);
    return;
  }
  const next = text.indexOf("\n## ", start + SECTION.length);
  writeFileSync(file, `${text.slice(0, start)}${section}\n${next < 0 ? "" : text.slice(next + 1)}`);
}

/** plot.mts `renderQualityChart` (an ES module, loaded at run time by path). */
type RenderQualityChart = (
  points: readonly { dataset: string; policy: string; labelShare: number; accuracy: number }[],
  curves: readonly { dataset: string; labelShare: number; accuracy: number }[],
  outPath: string,
  title?: string,
) => Promise<number>;

/** The data sets of a folder: its subfolders with an answers.csv, the shared sets first. */
function datasetsIn(folder: string): string[] {
  const names = readdirSync(folder, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(folder, d.name, "answers.csv")))
    .map((d) => d.name);
  const rank = (n: string) => (KNOWN_ORDER.includes(n) ? KNOWN_ORDER.indexOf(n) : KNOWN_ORDER.length);
  return names.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      data: { type: "string", default: path.join(ROOT, "data/crowd") },
      datasets: { type: "string" },
      seeds: { type: "string", default: "1-5" },
      target: { type: "string", default: "0.95" },
      "gold-share": { type: "string", default: "0.05" },
      limit: { type: "string" },
      "no-write": { type: "boolean", default: false },
      from: { type: "string" },
    },
    strict: true,
  });
  const folder = path.resolve(values.data as string);
  const names = values.datasets ? (values.datasets as string).split(",") : datasetsIn(folder);
  if (names.length === 0) throw new Error(`no data set (a folder with answers.csv) in ${folder}`);
  const seeds = parseSeeds(values.seeds as string);
  const target = Number(values.target);
  const goldShare = Number(values["gold-share"]);
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  const started = Date.now();
  if (values.from !== undefined) {
    const recorded = fromRecorded(readFileSync(values.from as string, "utf8"), folder, names, limit);
    const seconds = recorded.flatMap((r) => [r.threshold, ...r.confidence]).reduce((a, x) => a + x.summary.seconds, 0);
    await publish(recorded, { target, goldShare, seeds, seconds }, values["no-write"] === true);
    return;
  }

  const db = benchTarget("quality");
  const children: ChildProcess[] = [];
  const results: DatasetResult[] = [];
  try {
    await migrateDatabase(db.databaseUrl);
    const services = await startServices(db, ["gateway", "consensus-worker"], { LOG_LEVEL: "warn" });
    children.push(...[...services.values()].map((s) => s.child));
    const baseUrl = `http://127.0.0.1:${(services.get("gateway") as Started).port}`;
    for (const name of names) {
      const dir = path.join(folder, name);
      const ds: Dataset = loadQualityDataset(dir);
      const items = limit === undefined ? ds.items : ds.items.slice(0, limit);
      const limited: Dataset = limit === undefined ? ds : { ...ds, items, answerRows: items.reduce((a, it) => a + it.answers.length, 0) };
      const refs = references(limited);
      const common = { dataset: dir, baseUrl, adminToken: db.adminToken, limit, log: (l: string) => log(`  ${name}: ${l}`) };
      const curve = uniformOverlap(limited);
      log(`${name}: threshold policy`);
      const thresholdSummary = await runReplay({ ...common, threshold: 3 });
      process.stdout.write(`${JSON.stringify(thresholdSummary)}\n`);
      const result: DatasetResult = {
        dataset: name,
        majorityVote: refs.majority_vote,
        dawidSkene: refs.dawid_skene,
        threshold: { summary: thresholdSummary, overlap: overlapAccuracyAt(curve, thresholdSummary.label_share, ds.options.length) },
        confidence: [],
        curve,
        workerSorted: workerSortedItems(limited),
      };
      for (const seed of seeds) {
        log(`${name}: confidence policy T=${target}, seed ${seed}`);
        const summary = await runReplay({ ...common, confidenceTarget: target, goldShare, seed });
        const seedCurve = uniformOverlap(limited, pickGold(limited, goldShare, seed));
        const overlap = overlapAccuracyAt(seedCurve, summary.label_share, ds.options.length);
        process.stdout.write(`${JSON.stringify({ ...summary, uniform_overlap: overlap })}\n`);
        result.confidence.push({ summary, overlap });
      }
      results.push(result);
    }
  } finally {
    await tearDown(db, children);
  }
  await publish(results, { target, goldShare, seeds, seconds: (Date.now() - started) / 1000 }, values["no-write"] === true);
}

/**
 * Rebuilds the results of a run from its stdout lines (`--from`): the threshold line and the confidence lines of
 * each data set of `names` that has any (a repeated line is read once). References and curves are computed
 * again from `folder`.
 * @throws Error when a data set with lines has no threshold line
 */
function fromRecorded(text: string, folder: string, names: readonly string[], limit: number | undefined): DatasetResult[] {
  const lines = [...new Set(text.split("\n").filter((l) => l.trim() !== ""))].map(
    (l) => JSON.parse(l) as ReplaySummary & { uniform_overlap?: number },
  );
  const results: DatasetResult[] = [];
  for (const name of names) {
    const mine = lines.filter((l) => l.dataset === name);
    if (mine.length === 0) continue;
    const threshold = mine.find((l) => l.policy === "threshold");
    if (!threshold) throw new Error(`--from: no threshold run of ${name}`);
    const ds = loadQualityDataset(path.join(folder, name));
    const items = limit === undefined ? ds.items : ds.items.slice(0, limit);
    const limited: Dataset = limit === undefined ? ds : { ...ds, items, answerRows: items.reduce((a, it) => a + it.answers.length, 0) };
    const refs = references(limited);
    const curve = uniformOverlap(limited);
    results.push({
      dataset: name,
      majorityVote: refs.majority_vote,
      dawidSkene: refs.dawid_skene,
      threshold: { summary: threshold, overlap: overlapAccuracyAt(curve, threshold.label_share, ds.options.length) },
      confidence: mine
        .filter((l) => l.policy === "confidence" && l.uniform_overlap !== undefined)
        .map((l) => ({ summary: l, overlap: l.uniform_overlap as number })),
      curve,
      workerSorted: workerSortedItems(limited),
    });
  }
  return results;
}

/** Prints the section on stderr and, unless `noWrite`, writes it to docs/benchmarks.md with the plot. */
async function publish(
  results: readonly DatasetResult[],
  opts: { target: number; goldShare: number; seeds: number[]; seconds: number },
  noWrite: boolean,
): Promise<void> {
  const { target } = opts;
  const section = renderSection(results, opts);
  process.stderr.write(`${section}\n`);
  if (!noWrite) {
    writeSection(section);
    const plotPath = "../packages/quality/bench/plot.mts";
    const { renderQualityChart } = (await import(plotPath)) as { renderQualityChart: RenderQualityChart };
    const points = results.flatMap((r) =>
      [r.threshold, ...r.confidence].map((x) => ({
        dataset: r.dataset,
        policy: x.summary.policy === "threshold" ? "threshold 3" : `confidence T=${target}`,
        labelShare: x.summary.label_share,
        accuracy: x.summary.accuracy ?? 0,
      })),
    );
    const curves = results.flatMap((r) => r.curve.map((p) => ({ dataset: r.dataset, labelShare: p.share, accuracy: p.best })));
    await renderQualityChart(points, curves, path.join(ROOT, "docs/quality-replay.png"), "pnpm bench:quality: accuracy vs label share");
    log("wrote docs/benchmarks.md and docs/quality-replay.png");
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      log(`bench:quality failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      process.exit(1);
    },
  );
}
