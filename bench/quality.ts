/**
 * `pnpm bench:quality [--datasets dog,rte,web] [--targets 0.8,0.9,0.95,0.99] [--gold-share 0.05] [--seed 1]
 *   [--limit N] [--no-write]`
 *
 * Label quality on the shared crowd datasets (../shared/data/crowd), through the real gateway and consensus
 * worker processes, with the protocol of `pnpm replay` (scripts/replay-lib.ts `runReplay`):
 * - the threshold policy (consensus_threshold 3, no gold): today's default;
 * - the confidence policy at each target T with gold share S (default 0.05), seed N;
 * - references computed offline on all recorded labels: majority vote (ties: 1/k credit) and Dawid-Skene
 *   (packages/quality `fit`, the same EM the service runs; Dawid & Skene 1979).
 * Writes the table to docs/benchmarks.md (section "Label quality (`pnpm bench:quality`)", replaced on each
 * run) and the curve of accuracy against label share over T to docs/quality-replay.png (Vega-Lite rendered
 * to PNG, packages/quality/bench/plot.mts). Every run has a database and Redis prefix of its own, dropped at
 * the end. Progress on stderr, one JSON line per replay on stdout.
 */

import type { ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { migrateDatabase } from "@labelgate/store";
import { loadDataset as loadQualityDataset } from "../packages/quality/bench/dataset";
import { references } from "../packages/quality/bench/sim-lib";
import { type ReplaySummary, runReplay } from "../scripts/replay-lib";
import { benchTarget, type Started, startServices, tearDown } from "./bench-lib";

const ROOT = path.resolve(__dirname, "..");
const CROWD = path.resolve(ROOT, "../shared/data/crowd");
const SECTION = "## Label quality (`pnpm bench:quality`)";

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function numbers(value: string, name: string): number[] {
  const out = value.split(",").map(Number);
  if (out.some((n) => !Number.isFinite(n))) throw new Error(`--${name}: expected numbers, got "${value}"`);
  return out;
}

/** plot.mts `renderAccuracyChart`: points (label share and accuracy in 0..1) to a PNG file; its size in bytes. */
type RenderChart = (
  points: readonly { dataset: string; target: number; labelShare: number; accuracy: number }[],
  outPath: string,
  title?: string,
) => Promise<number>;

interface Row {
  dataset: string;
  majorityVote: number;
  dawidSkene: number;
  runs: ReplaySummary[];
}

const pct = (v: number | null) => (v === null ? "–" : `${(v * 100).toFixed(1)}%`);
const num = (v: number | null, d = 3) => (v === null ? "–" : v.toFixed(d));

/** The markdown section of the results (machine, date, one table per dataset, targets checked). */
export function renderSection(rows: readonly Row[], goldShare: number, seed: number, seconds: number): string {
  const lines = [
    SECTION,
    "",
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "cpu"}), ` +
      `${seconds.toFixed(0)} s. Real gateway and consensus worker, the protocol of \`pnpm replay\`: gold share S = ${goldShare}, ` +
      `seed ${seed}; accuracy on the non-gold items against gold.csv; label share = labels accepted (gold answers included) / ` +
      "rows of answers.csv; ECE over 10 equal-width bins of `confidence`. References on all recorded labels, offline. " +
      "Targets at T = 0.95: accuracy ≥ max(MV, DS) − 0.5 pt, label share ≤ 0.60 (dog, rte) / 0.70 (web), ECE ≤ 0.05; " +
      "threshold policy: ECE ≤ 0.05. Plot: [docs/quality-replay.png](quality-replay.png).",
    "",
  ];
  for (const row of rows) {
    lines.push(`### ${row.dataset}`, "");
    lines.push(`References: majority vote ${pct(row.majorityVote)}, Dawid-Skene ${pct(row.dawidSkene)}.`, "");
    lines.push("| policy | accuracy | label share | labels/task | mean confidence | ECE | resolutions | target met |");
    lines.push("|---|---|---|---|---|---|---|---|");
    for (const r of row.runs) {
      const name = r.policy === "threshold" ? `threshold ${r.target}` : `confidence T=${r.target}, S=${r.gold_share}`;
      const res = Object.entries(r.resolutions)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ");
      let met = "";
      if (r.policy === "threshold") met = r.ece !== null && r.ece <= 0.05 ? "ECE yes" : "ECE no";
      else if (r.target === 0.95) {
        const floor = Math.max(row.majorityVote, row.dawidSkene) - 0.005;
        const shareCap = row.dataset === "web" ? 0.7 : 0.6;
        met = [
          `accuracy ${r.accuracy !== null && r.accuracy >= floor ? "yes" : "no"}`,
          `share ${r.label_share <= shareCap ? "yes" : "no"}`,
          `ECE ${r.ece !== null && r.ece <= 0.05 ? "yes" : "no"}`,
        ].join(", ");
      }
      lines.push(
        `| ${name} | ${pct(r.accuracy)} | ${num(r.label_share)} | ${num(r.labels_per_task, 2)} | ${num(r.mean_confidence)} | ${num(r.ece)} | ${res} | ${met} |`,
      );
    }
    lines.push("");
  }
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

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      datasets: { type: "string", default: "dog,rte,web" },
      targets: { type: "string", default: "0.8,0.9,0.95,0.99" },
      "gold-share": { type: "string", default: "0.05" },
      seed: { type: "string", default: "1" },
      limit: { type: "string" },
      "no-write": { type: "boolean", default: false },
    },
    strict: true,
  });
  const datasets = (values.datasets as string).split(",");
  const targets = numbers(values.targets as string, "targets");
  const goldShare = Number(values["gold-share"]);
  const seed = Number(values.seed);
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  const started = Date.now();

  const target = benchTarget("quality");
  const children: ChildProcess[] = [];
  const rows: Row[] = [];
  try {
    await migrateDatabase(target.databaseUrl);
    const services = await startServices(target, ["gateway", "consensus-worker"], { LOG_LEVEL: "warn" });
    children.push(...[...services.values()].map((s) => s.child));
    const baseUrl = `http://127.0.0.1:${(services.get("gateway") as Started).port}`;
    for (const name of datasets) {
      const dir = path.join(CROWD, name);
      const refs = references(loadQualityDataset(dir));
      const row: Row = { dataset: name, majorityVote: refs.majority_vote, dawidSkene: refs.dawid_skene, runs: [] };
      const common = { dataset: dir, baseUrl, adminToken: target.adminToken, limit, log: (l: string) => log(`  ${name}: ${l}`) };
      log(`${name}: threshold policy`);
      row.runs.push(await runReplay({ ...common, threshold: 3 }));
      process.stdout.write(`${JSON.stringify(row.runs.at(-1))}\n`);
      for (const t of targets) {
        log(`${name}: confidence policy T=${t}`);
        row.runs.push(await runReplay({ ...common, confidenceTarget: t, goldShare, seed }));
        process.stdout.write(`${JSON.stringify(row.runs.at(-1))}\n`);
      }
      rows.push(row);
    }
  } finally {
    await tearDown(target, children);
  }
  const seconds = (Date.now() - started) / 1000;
  const section = renderSection(rows, goldShare, seed, seconds);
  process.stderr.write(`${section}\n`);
  if (!values["no-write"]) {
    writeSection(section);
    // plot.mts is an ES module (vega is ESM-only): loaded at run time by path, typed by its type-only import
    const plotPath = "../packages/quality/bench/plot.mts";
    const { renderAccuracyChart } = (await import(plotPath)) as { renderAccuracyChart: RenderChart };
    const points = rows.flatMap((row) =>
      row.runs
        .filter((r) => r.policy === "confidence" && r.accuracy !== null)
        .map((r) => ({ dataset: row.dataset, target: r.target, labelShare: r.label_share, accuracy: r.accuracy as number })),
    );
    await renderAccuracyChart(points, path.join(ROOT, "docs/quality-replay.png"), "pnpm bench:quality: accuracy vs label share over T");
    log("wrote docs/benchmarks.md and docs/quality-replay.png");
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(`bench:quality failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
