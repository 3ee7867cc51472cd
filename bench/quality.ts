/**
 * `pnpm bench:quality [--data <folder>] [--datasets dog,rte,...] [--seeds 1-5] [--target 0.95] [--gold-share 0.05]
 *   [--audit-rate R] [--min-gain G] [--limit N] [--no-write] [--from runs.jsonl] [--prelabel-accuracy 0.8,chance]`
 *
 * With `--audit-rate R` and/or `--min-gain G` (issue 36) only the confidence policy runs, with the customer's
 * `quality.audit_rate` at R (the replay answers each audit from gold as soon as it sees it: accept when the
 * consensus is right, else reject with the gold answer; packages/replay `runReplay`) and every task's `min_gain`
 * at G; the figures score each task's first settlement, and the section written is "Label quality with audits
 * and min_gain", with the targets of issue 36, beside the unchanged "Label quality" section.
 * With `--prelabel-accuracy`, the pre-label bench instead (bench/quality-prelabels.ts, issue 39).
 * With `--spammers R [--qualification N,A] [--min-labeler-accuracy M]`, the qualification bench instead
 * (bench/quality-qualification.ts, issue 39).
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
import { existsSync, readdirSync, readFileSync } from "node:fs";
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
import { benchTarget, quotedArgs, ROOT, type Started, startServices, tearDown, writeBenchmarksSection } from "./bench-lib";
import { parsePrelabelLevels, readPrelabelLines, renderPrelabelSection, runPrelabelBench } from "./quality-prelabels";
import { parseQualification, readQualificationLines, renderQualificationSection, runQualificationBench } from "./quality-qualification";

const SECTION = "## Label quality (`pnpm bench:quality`)";
/** The section of a run with `--audit-rate` or `--min-gain`. */
const ISSUE36_SECTION = "## Label quality with audits and min_gain (`pnpm bench:quality --audit-rate R --min-gain G`)";

/** What a run with `--audit-rate` / `--min-gain` sets (absent: not set). */
export interface Issue36Options {
  auditRate?: number;
  minGain?: number;
}
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
  /** the threshold policy's run (null in a run with `--audit-rate` or `--min-gain`) */
  threshold: Run | null;
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
  const thresholds = results.flatMap((r) => (r.threshold ? [{ dataset: r.dataset, run: r.threshold }] : []));
  if (thresholds.length === 0) return out;
  const notLeader = thresholds.reduce((a, r) => a + r.run.summary.not_leader, 0);
  add(`threshold policy: no result whose label is not the posterior's leader (${notLeader})`, notLeader === 0);
  const tDelta = thresholds.map((r) => ({ name: r.dataset, d: (r.run.summary.accuracy ?? 0) - r.run.overlap }));
  add(
    `threshold policy accuracy ≥ the uniform-overlap baseline at its share − 1 pt on every set (${tDelta.map((t) => `${t.name} ${signed(t.d)}`).join(", ")})`,
    tDelta.every((t) => t.d >= -0.01),
  );
  const tEce = thresholds.map((r) => r.run.summary.ece ?? 1);
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
    if (t)
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

/** The targets of issue 36 on a run with `--audit-rate` / `--min-gain`; each line "met / missed: target (figures)". */
export function checkIssue36Targets(
  results: readonly DatasetResult[],
  opts: { target: number } & Issue36Options,
): { line: string; met: boolean }[] {
  const out: { line: string; met: boolean }[] = [];
  const add = (line: string, met: boolean) => out.push({ line: `${met ? "met" : "**missed**"}: ${line}`, met });
  const runs = results.flatMap((r) => r.confidence.map((x) => ({ dataset: r.dataset, x })));
  if (runs.length === 0) return out;
  if ((opts.auditRate ?? 0) > 0) {
    const second = runs.map((r) => ({ dataset: r.dataset, ece: r.x.summary.ece_second_half ?? 1 }));
    const mean = second.reduce((a, r) => a + r.ece, 0) / second.length;
    const worst = second.reduce((a, r) => (r.ece > a.ece ? r : a));
    add(`ECE of the tasks settled in the second half ≤ 0.05 on average over sets × seeds (${f3(mean)})`, mean <= 0.05);
    add(`… and ≤ 0.10 at worst (${worst.dataset} ${f3(worst.ece)})`, worst.ece <= 0.1);
    const floor = opts.target - 0.05;
    const big = runs.filter((r) => r.x.summary.confidence_resolved.tasks >= 100);
    add(
      `tasks resolved \`confidence\` (runs with 100 or more) right ≥ T − 0.05 = ${floor.toFixed(2)} (${
        big.length === 0
          ? "no run has 100"
          : results
              .map((r) => {
                const mine = big.filter((b) => b.dataset === r.dataset).map((b) => b.x.summary.confidence_resolved.accuracy ?? 0);
                return mine.length === 0 ? `${r.dataset} –` : `${r.dataset} ${pt(Math.min(...mine))} (lowest of ${mine.length})`;
              })
              .join(", ")
      })`,
      big.every((b) => (b.x.summary.confidence_resolved.accuracy ?? 0) >= floor - 1e-9),
    );
  }
  if (opts.minGain !== undefined) {
    const perSet = results
      .filter((r) => r.confidence.length > 0)
      .map((r) => ({ dataset: r.dataset, delta: stat(r.confidence.map((x) => (x.summary.accuracy ?? 0) - x.overlap)) }));
    const mean = perSet.reduce((a, r) => a + r.delta.mean, 0) / perSet.length;
    add(`accuracy over the uniform overlap at the same label share ≥ +1.5 pt on average (${signed(mean)})`, mean >= 0.015);
    add(
      `no set below −1.0 pt (${perSet.map((r) => `${r.dataset} ${signed(r.delta.mean)}`).join(", ")})`,
      perSet.every((r) => r.delta.mean >= -0.01),
    );
    const ece = runs.reduce((a, r) => a + (r.x.summary.ece ?? 1), 0) / runs.length;
    add(`ECE ≤ 0.06 on average (${f3(ece)})`, ece <= 0.06);
  }
  return out;
}

/** The markdown section of a run with `--audit-rate` / `--min-gain`. */
export function renderIssue36Section(
  results: readonly DatasetResult[],
  opts: { target: number; goldShare: number; seeds: number[]; seconds: number } & Issue36Options,
): string {
  const settings = [`audit_rate ${opts.auditRate ?? 0}`, opts.minGain === undefined ? "no min_gain" : `min_gain ${opts.minGain}`].join(
    ", ",
  );
  const lines = [
    ISSUE36_SECTION,
    "",
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${os.cpus().length} cores, ${(opts.seconds / 60).toFixed(0)} min of replays. ` +
      `Confidence policy T = ${opts.target}, gold share ${opts.goldShare}, ${settings}; gold seeds ${opts.seeds.join(", ")} (mean [min–max]). ` +
      "Each audit is answered from gold as soon as the replay sees it (accept when the consensus is right, else reject with the gold answer); " +
      "every figure scores each task's first settlement. ECE 2nd half: the tasks settled in the later half of the replay (by settled_at). " +
      "`confidence` right: accuracy of the tasks resolved `confidence` (their mean count).",
    "",
    "| data set | seeds | accuracy | label share | ECE | ECE 2nd half | Δ vs overlap | `confidence` right | reviews (rejections) | resolutions (mean) |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of results) {
    const runs = r.confidence;
    if (runs.length === 0) continue;
    const acc = stat(runs.map((x) => x.summary.accuracy ?? 0));
    const share = stat(runs.map((x) => x.summary.label_share));
    const ece = stat(runs.map((x) => x.summary.ece ?? 0));
    const second = stat(runs.map((x) => x.summary.ece_second_half ?? 0));
    const delta = stat(runs.map((x) => (x.summary.accuracy ?? 0) - x.overlap));
    const conf = stat(runs.map((x) => x.summary.confidence_resolved.accuracy ?? 0));
    const confN = runs.reduce((a, x) => a + x.summary.confidence_resolved.tasks, 0) / runs.length;
    const reviews = runs.reduce((a, x) => a + x.summary.reviews, 0) / runs.length;
    const rejections = runs.reduce((a, x) => a + x.summary.rejections, 0) / runs.length;
    const resolutions = new Map<string, number>();
    for (const x of runs) for (const [k, v] of Object.entries(x.summary.resolutions)) resolutions.set(k, (resolutions.get(k) ?? 0) + v);
    const resText = [...resolutions].map(([k, v]) => `${k} ${(v / runs.length).toFixed(0)}`).join(", ");
    lines.push(
      `| ${r.dataset} | ${runs.map((x) => x.summary.seed).join(",")} | ${range(acc, pt)} | ${range(share, f3)} | ${range(ece, f3)} | ${range(second, f3)} | ${range(delta, signed)} | ${range(conf, pt)} (${confN.toFixed(0)}) | ${reviews.toFixed(0)} (${rejections.toFixed(0)}) | ${resText} |`,
    );
  }
  lines.push("", "Targets (issue 36):", "");
  for (const t of checkIssue36Targets(results, opts)) lines.push(`- ${t.line}`);
  lines.push("");
  return lines.join("\n");
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
      "audit-rate": { type: "string" },
      "min-gain": { type: "string" },
      limit: { type: "string" },
      "no-write": { type: "boolean", default: false },
      from: { type: "string" },
      "prelabel-accuracy": { type: "string" },
      spammers: { type: "string" },
      qualification: { type: "string" },
      "min-labeler-accuracy": { type: "string", default: "0.5" },
      "no-clean": { type: "boolean", default: false },
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
  const issue36: Issue36Options = {
    ...(values["audit-rate"] === undefined ? {} : { auditRate: Number(values["audit-rate"]) }),
    ...(values["min-gain"] === undefined ? {} : { minGain: Number(values["min-gain"]) }),
  };
  const withIssue36 = issue36.auditRate !== undefined || issue36.minGain !== undefined;
  const started = Date.now();
  if (values["prelabel-accuracy"] !== undefined) {
    // pre-labels (issue 39): a bench of its own, bench/quality-prelabels.ts
    const levels = parsePrelabelLevels(values["prelabel-accuracy"] as string);
    const lines =
      values.from !== undefined
        ? readPrelabelLines(readFileSync(values.from as string, "utf8"))
        : await runPrelabelBench({ folder, names, seeds, target, goldShare, levels, limit, log });
    const seconds = lines.reduce((a, l) => a + l.seconds, 0);
    const section = renderPrelabelSection(lines, { target, goldShare, seconds });
    process.stderr.write(`${section}\n`);
    if (values["no-write"] !== true) writeBenchmarksSection(section);
    return;
  }
  if (values.spammers !== undefined) {
    // spammers and the qualification exam (issue 39): a bench of its own, bench/quality-qualification.ts
    const options = {
      spammers: Number(values.spammers),
      ...(values.qualification === undefined ? {} : { exam: parseQualification(values.qualification as string) }),
      minLabelerAccuracy: Number(values["min-labeler-accuracy"]),
      skipClean: values["no-clean"] === true,
    };
    const lines =
      values.from !== undefined
        ? readQualificationLines(readFileSync(values.from as string, "utf8"))
        : await runQualificationBench({ folder, names, seeds, target, goldShare, options, log });
    const args = quotedArgs("<crowd data folder>");
    const command = `pnpm bench:quality ${args.filter((a, i) => a !== "--from" && args[i - 1] !== "--from" && a !== "--no-write").join(" ")}`;
    const section = renderQualificationSection(lines, { target, goldShare, options, command });
    process.stderr.write(`${section}\n`);
    if (values["no-write"] !== true) writeBenchmarksSection(section);
    return;
  }
  if (values.from !== undefined) {
    const recorded = fromRecorded(readFileSync(values.from as string, "utf8"), folder, names, limit, withIssue36);
    const seconds = recorded
      .flatMap((r) => [...(r.threshold ? [r.threshold] : []), ...r.confidence])
      .reduce((a, x) => a + x.summary.seconds, 0);
    await publish(recorded, { target, goldShare, seeds, seconds, ...issue36 }, values["no-write"] === true);
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
      let threshold: Run | null = null;
      if (!withIssue36) {
        log(`${name}: threshold policy`);
        const thresholdSummary = await runReplay({ ...common, threshold: 3 });
        process.stdout.write(`${JSON.stringify(thresholdSummary)}\n`);
        threshold = { summary: thresholdSummary, overlap: overlapAccuracyAt(curve, thresholdSummary.label_share, ds.options.length) };
      }
      const result: DatasetResult = {
        dataset: name,
        majorityVote: refs.majority_vote,
        dawidSkene: refs.dawid_skene,
        threshold,
        confidence: [],
        curve,
        workerSorted: workerSortedItems(limited),
      };
      for (const seed of seeds) {
        log(`${name}: confidence policy T=${target}, seed ${seed}`);
        const summary = await runReplay({ ...common, confidenceTarget: target, goldShare, seed, ...issue36 });
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
  await publish(results, { target, goldShare, seeds, seconds: (Date.now() - started) / 1000, ...issue36 }, values["no-write"] === true);
}

/**
 * Rebuilds the results of a run from its stdout lines (`--from`): the threshold line and the confidence lines of
 * each data set of `names` that has any (a repeated line is read once). References and curves are computed
 * again from `folder`.
 * @throws Error when a data set with lines has no threshold line
 */
function fromRecorded(
  text: string,
  folder: string,
  names: readonly string[],
  limit: number | undefined,
  withoutThreshold = false,
): DatasetResult[] {
  const lines = [...new Set(text.split("\n").filter((l) => l.trim() !== ""))].map(
    (l) => JSON.parse(l) as ReplaySummary & { uniform_overlap?: number },
  );
  const results: DatasetResult[] = [];
  for (const name of names) {
    const mine = lines.filter((l) => l.dataset === name);
    if (mine.length === 0) continue;
    const threshold = mine.find((l) => l.policy === "threshold");
    if (!threshold && !withoutThreshold) throw new Error(`--from: no threshold run of ${name}`);
    const ds = loadQualityDataset(path.join(folder, name));
    const items = limit === undefined ? ds.items : ds.items.slice(0, limit);
    const limited: Dataset = limit === undefined ? ds : { ...ds, items, answerRows: items.reduce((a, it) => a + it.answers.length, 0) };
    const refs = references(limited);
    const curve = uniformOverlap(limited);
    results.push({
      dataset: name,
      majorityVote: refs.majority_vote,
      dawidSkene: refs.dawid_skene,
      threshold: threshold ? { summary: threshold, overlap: overlapAccuracyAt(curve, threshold.label_share, ds.options.length) } : null,
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
  opts: { target: number; goldShare: number; seeds: number[]; seconds: number } & Issue36Options,
  noWrite: boolean,
): Promise<void> {
  const { target } = opts;
  if (opts.auditRate !== undefined || opts.minGain !== undefined) {
    // a run of issue 36's settings: its own section, the plot of the default run kept
    const section = renderIssue36Section(results, opts);
    process.stderr.write(`${section}\n`);
    if (!noWrite) writeBenchmarksSection(section);
    return;
  }
  const section = renderSection(results, opts);
  process.stderr.write(`${section}\n`);
  if (!noWrite) {
    writeBenchmarksSection(section);
    const plotPath = "../packages/quality/bench/plot.mts";
    const { renderQualityChart } = (await import(plotPath)) as { renderQualityChart: RenderQualityChart };
    const points = results.flatMap((r) =>
      [...(r.threshold ? [r.threshold] : []), ...r.confidence].map((x) => ({
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
