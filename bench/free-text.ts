/**
 * `pnpm bench:free-text --data DIR [--sets a,b] [--gold-share 0.05] [--seed 1]
 *   [--targets 0.8,0.9] [--thresholds 2,3] [--no-write]` (also run by `pnpm bench:types`)
 *
 * The free_text consensus on the crowd-text sets (method and sources: packages/quality/bench/free-text.ts, header):
 * corpus WER with every answer against the shipped ROVER and T5, and WER, label share and whole-text ECE under
 * both stopping policies. Pure computation, no services; about 10 minutes on 2 loaded cores. Writes the section
 * "Task types: free_text consensus quality" of docs/benchmarks.md unless --no-write; one JSON line on stdout.
 * `--data` is the crowd-text folder of the shared data (default: CROWD_TEXT_DIR; one of them is needed); a set that
 * is not there is skipped.
 */
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { FREE_TEXT_SETS, type FreeTextOptions, renderFreeText, runFreeText } from "@labelgate/quality/bench/free-text";
import { quotedArgs, writeBenchmarksSection } from "./bench-lib";

const SECTION = "## Task types: free_text consensus quality (`pnpm bench:types`)";
/** The crowd-text folder from the environment (CROWD_TEXT_DIR), if set. */
export const DEFAULT_CROWD_TEXT: string | undefined = process.env.CROWD_TEXT_DIR;

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function numbers(value: string, name: string): number[] {
  const out = value.split(",").map(Number);
  if (out.length === 0 || out.some((n) => !Number.isFinite(n))) throw new Error(`--${name}: expected numbers, got "${value}"`);
  return out;
}

/**
 * Runs the free_text bench and writes its section (unless `noWrite`); returns the results (empty when no set is
 * found under `options.dir`, and nothing is written then). `command` is the command line quoted in the section.
 */
export function freeTextSection(options: FreeTextOptions, noWrite: boolean, command: string): unknown[] {
  const started = performance.now();
  const results = runFreeText(options, log);
  const seconds = (performance.now() - started) / 1000;
  if (results.length === 0) {
    log(`free_text: no crowd-text set found under ${options.dir}; nothing written`);
    return results;
  }
  const body = [
    SECTION,
    "",
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "cpu"}), ` +
      `Node ${process.version}, ${seconds.toFixed(0)} s: \`${command}\`. Method: packages/quality/bench/free-text.ts (header), decision 0280.`,
    "",
    ...renderFreeText(results, options),
  ].join("\n");
  if (noWrite) {
    log(body);
    return results;
  }
  writeBenchmarksSection(body, SECTION);
  log(`wrote ${SECTION} to docs/benchmarks.md`);
  return results;
}

/** Default options of the bench (the ones `pnpm bench:types` uses). */
export function defaultFreeTextOptions(dir: string): FreeTextOptions {
  return { dir: path.resolve(dir), sets: [...FREE_TEXT_SETS], goldShare: 0.05, seed: 1, targets: [0.8, 0.9], thresholds: [2, 3] };
}

function main(): void {
  const { values } = parseArgs({
    options: {
      data: { type: "string" },
      sets: { type: "string", default: FREE_TEXT_SETS.join(",") },
      "gold-share": { type: "string", default: "0.05" },
      seed: { type: "string", default: "1" },
      targets: { type: "string", default: "0.8,0.9" },
      thresholds: { type: "string", default: "2,3" },
      "no-write": { type: "boolean", default: false },
    },
    strict: true,
  });
  const data = values.data ?? DEFAULT_CROWD_TEXT;
  if (!data) throw new Error("--data DIR (the crowd-text folder) or CROWD_TEXT_DIR is needed");
  const options: FreeTextOptions = {
    dir: path.resolve(data),
    sets: values.sets.split(",").map((s) => s.trim()),
    goldShare: numbers(values["gold-share"], "gold-share")[0] as number,
    seed: numbers(values.seed, "seed")[0] as number,
    targets: numbers(values.targets, "targets"),
    thresholds: numbers(values.thresholds, "thresholds"),
  };
  const results = freeTextSection(
    options,
    values["no-write"],
    `pnpm bench:free-text ${quotedArgs("<crowd-text folder>").join(" ")}`.trim(),
  );
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

if (require.main === module) main();
