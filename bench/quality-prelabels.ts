/**
 * `pnpm bench:quality --prelabel-accuracy P[,P...] [--datasets ...] [--seeds 1-5] [--target 0.95] [--from runs.jsonl]`
 *
 * Pre-labels (issue 39, contract §prelabels) measured as a customer meets them: each data set is replayed through
 * the real gateway and consensus worker (packages/replay `runReplay`) under the confidence policy at T =
 * `--target` with the gold share of `--gold-share`, once per gold seed without pre-labels and once per seed and P
 * with the pre-labels of a simulated model right P of the time, its errors uniform over the other options
 * (`simulatedPrelabel`; `chance` = 1/k of the set's k options). The model answers every item with gold, gold
 * tasks included (gold is how the labeler model learns the model labeler's confusion, as a person's).
 *
 * The issue's targets, checked per P against the runs without pre-labels of the same sets and seeds:
 * - P = 0.8: people's labels summed over the sets ≤ 0.7 × those without; mean accuracy ≥ without − 0.5 pt, no
 *   set below − 2 pt; mean ECE ≤ 0.05;
 * - P = chance: mean accuracy ≥ without − 0.5 pt; people's labels ≤ without + 5%.
 * Writes the section "Pre-labels (`pnpm bench:quality --prelabel-accuracy`)" of docs/benchmarks.md (unless
 * `--no-write`); one JSON line per replay on stdout (`--from` rebuilds the section from such lines).
 */

import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { type ReplaySummary, runReplay } from "@labelgate/replay";
import { migrateDatabase } from "@labelgate/store";
import { benchTarget, type Started, startServices, tearDown } from "./bench-lib";

const SECTION = "## Pre-labels (`pnpm bench:quality --prelabel-accuracy`)";

/** A value of `--prelabel-accuracy`: a share in 0..1, or `chance` (1/k of each set). */
export type PrelabelLevel = number | "chance";

/** "0.8,chance" → [0.8, "chance"]. @throws Error on a value that is neither */
export function parsePrelabelLevels(value: string): PrelabelLevel[] {
  return value.split(",").map((v) => {
    if (v.trim() === "chance") return "chance";
    const p = Number(v);
    if (!(p >= 0 && p <= 1)) throw new Error(`--prelabel-accuracy: a share in 0..1 or "chance", got "${v}"`);
    return p;
  });
}

/** The options (k) of a data set's answers: its distinct labels. */
function optionCount(dir: string): number {
  const lines = readFileSync(path.join(dir, "answers.csv"), "utf8").trim().split("\n").slice(1);
  return new Set(lines.map((l) => l.split(",")[2]?.trim())).size;
}

/** A replay line of this bench: the summary, and the level it ran at (`none` without pre-labels). */
export type PrelabelLine = ReplaySummary & { level: PrelabelLevel | "none" };

interface Options {
  folder: string;
  names: string[];
  seeds: number[];
  target: number;
  goldShare: number;
  levels: PrelabelLevel[];
  limit?: number;
  log: (line: string) => void;
}

/** Runs the replays (without pre-labels, then each level, per set and seed). @returns their lines */
export async function runPrelabelBench(opts: Options): Promise<PrelabelLine[]> {
  const db = benchTarget("quality-prelabels");
  const children: ChildProcess[] = [];
  const lines: PrelabelLine[] = [];
  try {
    await migrateDatabase(db.databaseUrl);
    const services = await startServices(db, ["gateway", "consensus-worker"], { LOG_LEVEL: "warn" });
    children.push(...[...services.values()].map((s) => s.child));
    const baseUrl = `http://127.0.0.1:${(services.get("gateway") as Started).port}`;
    for (const name of opts.names) {
      const dir = path.join(opts.folder, name);
      const k = optionCount(dir);
      for (const seed of opts.seeds) {
        for (const level of ["none", ...opts.levels] as const) {
          const accuracy = level === "none" ? undefined : level === "chance" ? 1 / k : level;
          opts.log(`${name}: seed ${seed}, ${level === "none" ? "no pre-labels" : `pre-labels right ${accuracy?.toFixed(3)}`}`);
          const summary = await runReplay({
            dataset: dir,
            baseUrl,
            adminToken: db.adminToken,
            limit: opts.limit,
            confidenceTarget: opts.target,
            goldShare: opts.goldShare,
            seed,
            prelabelAccuracy: accuracy,
            log: (l: string) => opts.log(`  ${name}: ${l}`),
          });
          const line: PrelabelLine = { ...summary, level };
          process.stdout.write(`${JSON.stringify(line)}\n`);
          lines.push(line);
        }
      }
    }
  } finally {
    await tearDown(db, children);
  }
  return lines;
}

const mean = (xs: readonly number[]) => (xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
const pt = (v: number) => `${(v * 100).toFixed(1)}%`;
const signed = (v: number) => `${v >= 0 ? "+" : "−"}${Math.abs(v * 100).toFixed(1)}`;

/** The section: a table per level against the runs without pre-labels, and the targets met or missed. */
export function renderPrelabelSection(
  lines: readonly PrelabelLine[],
  opts: { target: number; goldShare: number; seconds: number },
): string {
  const sets = [...new Set(lines.map((l) => l.dataset))];
  const levels = [...new Set(lines.map((l) => l.level).filter((l) => l !== "none"))] as PrelabelLevel[];
  const seeds = [...new Set(lines.map((l) => l.seed))].sort((a, b) => a - b);
  const of = (set: string, level: PrelabelLevel | "none") => lines.filter((l) => l.dataset === set && l.level === level);
  const out: string[] = [
    SECTION,
    "",
    `Confidence policy T = ${opts.target}, gold share ${opts.goldShare}, gold seeds ${seeds.join(", ")}; each set replayed through the ` +
      "real gateway and consensus worker without pre-labels and with the pre-labels of a simulated model right P of the time " +
      "(errors uniform over the other options; `chance` = 1/k), on every item with gold, gold tasks included. " +
      "Labels are people's labels (gold answers included): a pre-label is never one. Accuracy and ECE on the regular tasks " +
      `with gold, means over the seeds. Wall time ${(opts.seconds / 60).toFixed(1)} min.`,
    "",
  ];
  const checks: string[] = [];
  for (const level of levels) {
    out.push(`### Pre-labels right ${level === "chance" ? "at chance (1/k)" : pt(level)}`, "");
    out.push(
      "| set | tasks | seeds | labels without | labels with | ratio | accuracy without | accuracy with | Δ | ECE without | ECE with |",
    );
    out.push("|---|---|---|---|---|---|---|---|---|---|---|");
    let labelsWithout = 0;
    let labelsWith = 0;
    const deltas: number[] = [];
    const eces: number[] = [];
    const accWithout: number[] = [];
    const accWith: number[] = [];
    for (const set of sets) {
      // paired by seed: only the seeds run both ways count
      const withRuns = of(set, level);
      const pairs = withRuns.flatMap((w) => {
        const base = of(set, "none").find((b) => b.seed === w.seed);
        return base ? [{ w, base }] : [];
      });
      if (pairs.length === 0) continue;
      const lw = pairs.reduce((a, p) => a + p.w.labels, 0);
      const lb = pairs.reduce((a, p) => a + p.base.labels, 0);
      labelsWith += lw;
      labelsWithout += lb;
      const aw = mean(pairs.map((p) => p.w.accuracy ?? 0));
      const ab = mean(pairs.map((p) => p.base.accuracy ?? 0));
      const ece = mean(pairs.map((p) => p.w.ece ?? 1));
      const eceWithout = mean(pairs.map((p) => p.base.ece ?? 1));
      deltas.push(aw - ab);
      eces.push(ece);
      accWithout.push(ab);
      accWith.push(aw);
      out.push(
        `| ${set} | ${pairs[0]?.w.tasks} | ${pairs.length} | ${lb} | ${lw} | ${(lw / lb).toFixed(3)} | ${pt(ab)} | ${pt(aw)} | ${signed(aw - ab)} | ${eceWithout.toFixed(3)} | ${ece.toFixed(3)} |`,
      );
    }
    if (deltas.length === 0) continue;
    const ratio = labelsWith / labelsWithout;
    const meanDelta = mean(accWith) - mean(accWithout);
    out.push(
      `| **all** | | | ${labelsWithout} | ${labelsWith} | ${ratio.toFixed(3)} | ${pt(mean(accWithout))} | ${pt(mean(accWith))} | ${signed(meanDelta)} | | ${mean(eces).toFixed(3)} |`,
      "",
    );
    const add = (line: string, met: boolean) => checks.push(`- ${met ? "met" : "**missed**"}: ${line}`);
    const name = level === "chance" ? "chance" : `P ${level}`;
    if (level === "chance") {
      add(`${name}: mean accuracy ≥ without − 0.5 pt (${signed(meanDelta)} pt)`, meanDelta >= -0.005);
      add(`${name}: people's labels ≤ without + 5% (× ${ratio.toFixed(3)})`, ratio <= 1.05);
    } else {
      add(`${name}: people's labels summed over the sets ≤ 0.7 × without (× ${ratio.toFixed(3)})`, ratio <= 0.7);
      add(`${name}: mean accuracy ≥ without − 0.5 pt (${signed(meanDelta)} pt)`, meanDelta >= -0.005);
      add(`${name}: no set below − 2 pt (worst ${signed(Math.min(...deltas))} pt)`, Math.min(...deltas) >= -0.02);
      add(`${name}: mean ECE ≤ 0.05 (${mean(eces).toFixed(3)})`, mean(eces) <= 0.05);
    }
  }
  out.push("Targets (issue 39):", "", ...checks, "");
  return out.join("\n");
}

/** Reads the lines of an earlier run (`--from`), a repeated line once. */
export function readPrelabelLines(text: string): PrelabelLine[] {
  return [...new Set(text.split("\n").filter((l) => l.trim() !== ""))]
    .map((l) => JSON.parse(l) as PrelabelLine)
    .filter((l) => "level" in l);
}
