/**
 * `pnpm bench:types [--spans DIR] [--multilabel DIR] [--box-images 600] [--box-seeds 1,2,3] [--gold-share 0.05]
 *   [--seed 1] [--pairwise-seeds 1,2,3,4,5] [--throughput-only | --no-throughput] [--seconds 5] [--runs 3] [--confidence-runs 1] [--labelers 100]
 *   [--types single_choice,multi_label_classification,bounding_box,text_span] [--log-level warn] [--no-write]
 *   [--text DIR]`
 *
 * Two parts, each writing its own section of docs/benchmarks.md (replaced on each run) unless --no-write; one
 * JSON line of results on stdout ({quality, throughput}), progress on stderr.
 *
 * 1. Consensus quality of the contract §task-types task types (packages/quality/bench/types-quality.ts): text_span on a
 *    crowd-spans folder, multi_label_classification on a crowd-multilabel folder (each only when its folder is
 *    given; there is no default), bounding_box on a generated crowd (always; `--box-images 0` skips it). Pure
 *    computation, no services. Section "Task types: consensus quality (`pnpm bench:types`)". Then
 *    pairwise_comparison on generated Bradley-Terry crowds (packages/quality/bench/pairwise.ts, one run per seed of
 *    `--pairwise-seeds`, "" skips it): section "Task types: pairwise comparison (`pnpm bench:types`)". Then
 *    free_text on a crowd-text folder (`--text DIR` or CROWD_TEXT_DIR; skipped without one): bench/free-text.ts,
 *    its own section. `--throughput-only` skips this part.
 * 2. Throughput (bench/types-throughput.ts, method in its header): answers/s of single_choice,
 *    multi_label_classification, bounding_box and text_span through the gateway, the label transaction's decision and
 *    the consensus worker's settlement, `--labelers` labelers in a closed loop, `--seconds` measured per phase;
 *    `--runs` runs through every type of `--types` (single_choice always: the floor) under the threshold policy and
 *    `--confidence-runs` under the confidence policy (0 skips either), single_choice before and after each run; each
 *    type's ratio to single_choice at its time (interpolated between the single_choice phases around it); then the
 *    decision's CPU per answer of each type. Needs Postgres and Redis (BENCH_PG_URL, BENCH_REDIS_URL);
 *    about 4 minutes with the defaults. Section "Task types: throughput (`pnpm bench:types`)". `--no-throughput`
 *    skips this part.
 */
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { renderPairwise, runPairwise } from "@labelgate/quality/bench/pairwise";
import { renderTypesQuality, runTypesQuality, type TypesQualityOptions } from "@labelgate/quality/bench/types-quality";
import { writeBenchmarksSection } from "./bench-lib";
import { DEFAULT_CROWD_TEXT, defaultFreeTextOptions, freeTextSection } from "./free-text";
import { positiveInt } from "./measure";
import { renderTypesThroughput, runTypesThroughput, THROUGHPUT_TYPES, type ThroughputType } from "./types-throughput";

const SECTION = "## Task types: consensus quality (`pnpm bench:types`)";
const THROUGHPUT_SECTION = "## Task types: throughput (`pnpm bench:types`)";
const PAIRWISE_SECTION = "## Task types: pairwise comparison (`pnpm bench:types`)";

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function numbers(value: string, name: string): number[] {
  const out = value.split(",").map(Number);
  if (out.some((n) => !Number.isFinite(n))) throw new Error(`--${name}: expected numbers, got "${value}"`);
  return out;
}

function machineLine(seconds: number, command: string): string {
  return (
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "cpu"}), ` +
    `Node ${process.version}, ${seconds.toFixed(0)} s: \`${command}\`.`
  );
}

/** Writes `body` as the section `heading` of docs/benchmarks.md, or logs it with --no-write. */
function writeSection(heading: string, body: string, noWrite: boolean): void {
  if (noWrite) {
    log(body);
    return;
  }
  writeBenchmarksSection(body, heading);
  log(`wrote ${heading} to docs/benchmarks.md`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      spans: { type: "string" },
      multilabel: { type: "string" },
      text: { type: "string" },
      "box-images": { type: "string", default: "600" },
      "box-seeds": { type: "string", default: "1,2,3" },
      "gold-share": { type: "string", default: "0.05" },
      seed: { type: "string", default: "1" },
      "pairwise-seeds": { type: "string", default: "1,2,3,4,5" },
      "throughput-only": { type: "boolean", default: false },
      "no-throughput": { type: "boolean", default: false },
      seconds: { type: "string", default: "5" },
      runs: { type: "string", default: "3" },
      labelers: { type: "string", default: "100" },
      "confidence-runs": { type: "string", default: "1" },
      types: { type: "string", default: THROUGHPUT_TYPES.join(",") },
      "log-level": { type: "string", default: "warn" },
      "no-write": { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values["throughput-only"] && values["no-throughput"]) throw new Error("--throughput-only and --no-throughput exclude each other");
  const noWrite = values["no-write"];
  const out: { quality?: unknown; pairwise?: unknown; freeText?: unknown; throughput?: unknown } = {};
  if (!values["throughput-only"]) {
    out.quality = quality(values, noWrite);
    if (values["pairwise-seeds"].trim() !== "") out.pairwise = pairwise(values["pairwise-seeds"], noWrite);
    const text = values.text ?? DEFAULT_CROWD_TEXT;
    if (text) out.freeText = freeTextSection(defaultFreeTextOptions(text), noWrite, "pnpm bench:types --text DIR");
    else log("free_text: no --text folder (or CROWD_TEXT_DIR), skipped");
  }
  if (!values["no-throughput"]) {
    const types = values.types.split(",").map((t) => t.trim());
    for (const t of types)
      if (!(THROUGHPUT_TYPES as readonly string[]).includes(t))
        throw new Error(`--types: one of ${THROUGHPUT_TYPES.join(", ")}, got "${t}"`);
    const options = {
      seconds: positiveInt(values.seconds, "seconds"),
      runs: { threshold: count(values.runs, "runs"), confidence: count(values["confidence-runs"], "confidence-runs") },
      labelers: positiveInt(values.labelers, "labelers"),
      types: types as ThroughputType[],
      logLevel: values["log-level"],
    };
    const result = await runTypesThroughput(options, log);
    out.throughput = result;
    const command = [
      "pnpm bench:types",
      values["throughput-only"] ? "--throughput-only" : "",
      values.seconds !== "5" ? `--seconds ${values.seconds}` : "",
      values.runs !== "3" ? `--runs ${values.runs}` : "",
      values.labelers !== "100" ? `--labelers ${values.labelers}` : "",
      values["confidence-runs"] !== "1" ? `--confidence-runs ${values["confidence-runs"]}` : "",
      values.types !== THROUGHPUT_TYPES.join(",") ? `--types ${values.types}` : "",
      values["log-level"] !== "warn" ? `--log-level ${values["log-level"]}` : "",
    ]
      .filter((s) => s !== "")
      .join(" ");
    const body = [
      THROUGHPUT_SECTION,
      "",
      `${machineLine(result.seconds, command)} Method: bench/types-throughput.ts (header).`,
      "",
      ...renderTypesThroughput(result),
    ].join("\n");
    writeSection(THROUGHPUT_SECTION, body, noWrite);
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

/** A `--name` option that must be an integer >= 0. @throws Error naming the option */
function count(value: string, name: string): number {
  if (!/^\d+$/.test(value.trim())) throw new Error(`--${name} must be an integer >= 0, got "${value}"`);
  return Number(value);
}

/** The consensus-quality part: runs it and writes its section. */
function quality(
  values: { spans?: string; multilabel?: string; "box-images": string; "box-seeds": string; "gold-share": string; seed: string },
  noWrite: boolean,
): unknown {
  const options: TypesQualityOptions = {
    spans: values.spans ? path.resolve(values.spans) : undefined,
    multilabel: values.multilabel ? path.resolve(values.multilabel) : undefined,
    boxImages: numbers(values["box-images"], "box-images")[0] as number,
    boxSeeds: numbers(values["box-seeds"], "box-seeds"),
    goldShare: numbers(values["gold-share"], "gold-share")[0] as number,
    seed: numbers(values.seed, "seed")[0] as number,
  };
  const started = performance.now();
  const result = runTypesQuality(options, log);
  const seconds = (performance.now() - started) / 1000;
  const command = [
    "pnpm bench:types",
    values.spans ? `--spans ${values.spans}` : "",
    values.multilabel ? `--multilabel ${values.multilabel}` : "",
    values["box-images"] !== "600" ? `--box-images ${values["box-images"]}` : "",
    values["box-seeds"] !== "1,2,3" ? `--box-seeds ${values["box-seeds"]}` : "",
    values["gold-share"] !== "0.05" ? `--gold-share ${values["gold-share"]}` : "",
    values.seed !== "1" ? `--seed ${values.seed}` : "",
  ]
    .filter((s) => s !== "")
    .join(" ");
  const body = [
    SECTION,
    "",
    `${machineLine(seconds, command)} Method and sources: [docs/notes/types.md](notes/types.md).`,
    "",
    ...renderTypesQuality(result, options),
  ].join("\n");
  writeSection(SECTION, body, noWrite);
  return result;
}

/** The pairwise part: runs every scenario for every seed and writes its section. */
function pairwise(seedList: string, noWrite: boolean): unknown {
  const seeds = numbers(seedList, "pairwise-seeds");
  const started = performance.now();
  const result = runPairwise(seeds, log);
  const seconds = (performance.now() - started) / 1000;
  const command = ["pnpm bench:types", seedList !== "1,2,3,4,5" ? `--pairwise-seeds ${seedList}` : ""].filter((x) => x !== "").join(" ");
  const body = [
    PAIRWISE_SECTION,
    "",
    `${machineLine(seconds, command)} Method and sources: packages/quality/bench/pairwise.ts (header) and [decision 0285](decisions/0285-pairwise-comparison-quality.md).`,
    "",
    ...renderPairwise(result, seeds),
  ].join("\n");
  writeSection(PAIRWISE_SECTION, body, noWrite);
  return result;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
