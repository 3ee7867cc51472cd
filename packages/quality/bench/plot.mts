/**
 * Accuracy against label share, one line per dataset, one point per confidence target T: a Vega-Lite spec
 * compiled with vega-lite, rendered to SVG by vega's headless View (`renderer: "none"`, `toSVG()`), and
 * rasterized to PNG by @resvg/resvg-js (system fonts; DejaVu Sans here).
 *
 * An ES module (.mts) because vega and vega-lite are published as ES modules only.
 * As a script: `pnpm exec tsx packages/quality/bench/plot.mts <simulate.jsonl>... --out docs/quality-sim.png`
 * plots the confidence-policy lines of simulate.ts output (one point per dataset and target; runs of the same
 * dataset, target and R are averaged; R = 200 unless `--refit` says otherwise; `--seed N` keeps one gold draw).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { Resvg } from "@resvg/resvg-js";
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";

/** One point of the chart. */
export interface AccuracyPoint {
  dataset: string;
  /** confidence target T of the run */
  target: number;
  /** labels accepted / recorded answers, 0..1 */
  labelShare: number;
  /** accuracy against gold, 0..1 */
  accuracy: number;
}

/** The Vega-Lite spec of the chart (exported for tests and other renderers). */
export function accuracyChartSpec(points: readonly AccuracyPoint[], title = "Confidence policy: accuracy vs label share"): TopLevelSpec {
  const values = points.map((p) => ({ ...p, label: `T=${p.target}` }));
  const x = {
    field: "labelShare",
    type: "quantitative" as const,
    title: "label share (labels used / recorded answers)",
    scale: { zero: false },
  };
  const y = { field: "accuracy", type: "quantitative" as const, title: "accuracy vs gold", scale: { zero: false } };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title,
    width: 560,
    height: 360,
    background: "white",
    config: { legend: { orient: "bottom" } },
    data: { values },
    encoding: { x, y, color: { field: "dataset", type: "nominal", title: "dataset" } },
    layer: [
      { mark: { type: "line", point: { size: 60, filled: true } }, encoding: { order: { field: "target", type: "quantitative" } } },
      { mark: { type: "text", dx: 6, dy: -8, align: "left", fontSize: 10 }, encoding: { text: { field: "label", type: "nominal" } } },
    ],
  };
}

/**
 * Renders the chart of `points` to a PNG file at `outPath` (overwritten). Returns the PNG's size in bytes.
 * @throws Error when there are no points, or from vega / resvg / the file system
 */
export async function renderAccuracyChart(points: readonly AccuracyPoint[], outPath: string, title?: string): Promise<number> {
  if (points.length === 0) throw new Error("no points to plot");
  return renderSpec(accuracyChartSpec(points, title), outPath);
}

/** A policy's run of `pnpm bench:quality`. */
export interface PolicyPoint {
  dataset: string;
  /** "threshold 3", "confidence T=0.95", ... */
  policy: string;
  labelShare: number;
  accuracy: number;
}

/** A point of a data set's uniform-overlap curve: every item's first k answers, the best of MV and DS. */
export interface CurvePoint {
  dataset: string;
  labelShare: number;
  accuracy: number;
}

/**
 * The chart of `pnpm bench:quality`: one panel per data set (accuracy scales differ), the uniform-overlap curve
 * as a line and each policy run as a point, so a point above the line beat a fixed overlap at its cost.
 */
export function qualityChartSpec(points: readonly PolicyPoint[], curves: readonly CurvePoint[], title: string): TopLevelSpec {
  const values = [
    ...curves.map((c) => ({ ...c, kind: "uniform overlap (best of MV, DS on the first k answers)" })),
    ...points.map((p) => ({ ...p, kind: p.policy })),
  ];
  const x = { field: "labelShare", type: "quantitative" as const, title: "label share", scale: { domain: [0, 1] } };
  const y = { field: "accuracy", type: "quantitative" as const, title: "accuracy vs gold", scale: { zero: false } };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title,
    background: "white",
    data: { values },
    facet: { field: "dataset", type: "nominal", title: null },
    columns: 3,
    resolve: { scale: { y: "independent" } },
    config: { legend: { orient: "bottom" } },
    spec: {
      width: 260,
      height: 190,
      layer: [
        {
          transform: [{ filter: "datum.kind === 'uniform overlap (best of MV, DS on the first k answers)'" }],
          mark: { type: "line", point: { size: 18 }, strokeDash: [4, 3], color: "#888" },
          encoding: { x, y, order: { field: "labelShare", type: "quantitative" } },
        },
        {
          transform: [{ filter: "datum.kind !== 'uniform overlap (best of MV, DS on the first k answers)'" }],
          mark: { type: "point", filled: true, size: 70 },
          encoding: {
            x,
            y,
            color: { field: "kind", type: "nominal", title: "policy" },
            shape: { field: "kind", type: "nominal", title: "policy" },
          },
        },
      ],
    },
  };
}

/**
 * Renders `qualityChartSpec` to a PNG file at `outPath` (overwritten). Returns the PNG's size in bytes.
 * @throws Error when there are no points, or from vega / resvg / the file system
 */
export async function renderQualityChart(
  points: readonly PolicyPoint[],
  curves: readonly CurvePoint[],
  outPath: string,
  title = "accuracy vs label share",
): Promise<number> {
  if (points.length === 0) throw new Error("no points to plot");
  return renderSpec(qualityChartSpec(points, curves, title), outPath);
}

async function renderSpec(spec: TopLevelSpec, outPath: string): Promise<number> {
  const vegaSpec = compile(spec).spec;
  const view = new vega.View(vega.parse(vegaSpec), { renderer: "none" });
  const svg = await view.toSVG(2);
  view.finalize();
  const png = new Resvg(svg, { background: "white", font: { loadSystemFonts: true } }).render().asPng();
  writeFileSync(outPath, png);
  return png.length;
}

interface SimLine {
  dataset: string;
  seed: number;
  policy: string;
  target: number | null;
  refit_every: number;
  accuracy: number;
  label_share: number;
}

/**
 * Points of simulate.ts output lines: confidence policy at refit cadence `refit` (and gold seed `seed` when
 * given), averaged per (dataset, target).
 */
export function pointsFromSimulation(lines: readonly SimLine[], refit = 200, seed?: number): AccuracyPoint[] {
  const groups = new Map<string, SimLine[]>();
  for (const l of lines) {
    if (l.policy !== "confidence" || l.target === null || l.refit_every !== refit) continue;
    if (seed !== undefined && l.seed !== seed) continue;
    const key = `${l.dataset}\u0000${l.target}`;
    const list = groups.get(key);
    if (list) list.push(l);
    else groups.set(key, [l]);
  }
  return [...groups.values()].map((list) => {
    const first = list[0] as SimLine;
    const mean = (f: (l: SimLine) => number) => list.reduce((a, l) => a + f(l), 0) / list.length;
    return {
      dataset: first.dataset,
      target: first.target as number,
      labelShare: mean((l) => l.label_share),
      accuracy: mean((l) => l.accuracy),
    };
  });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const outIndex = args.indexOf("--out");
  const refitIndex = args.indexOf("--refit");
  const seedIndex = args.indexOf("--seed");
  const out = outIndex >= 0 ? args[outIndex + 1] : undefined;
  if (!out) throw new Error("usage: plot.mts <simulate.jsonl>... --out <file.png> [--refit 200] [--seed 1]");
  const refit = refitIndex >= 0 ? Number(args[refitIndex + 1]) : 200;
  const seed = seedIndex >= 0 ? Number(args[seedIndex + 1]) : undefined;
  const skip = new Set([outIndex, outIndex + 1, refitIndex, refitIndex + 1, seedIndex, seedIndex + 1].filter((i) => i >= 0));
  const files = args.filter((_, i) => !skip.has(i));
  const lines = files.flatMap((f) =>
    readFileSync(f, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as SimLine)
      .filter((l) => typeof l.policy === "string"),
  );
  const bytes = await renderAccuracyChart(pointsFromSimulation(lines, refit, seed), out);
  console.log(`${out}: ${bytes} bytes`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
