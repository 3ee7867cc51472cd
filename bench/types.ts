/**
 * `pnpm bench:types [--spans DIR] [--multilabel DIR] [--box-images 600] [--box-seeds 1,2,3] [--gold-share 0.05]
 *   [--seed 1] [--no-write]`
 *
 * Consensus quality of the DESIGN §12 task types (packages/quality/bench/types-quality.ts): text_span on a
 * crowd-spans folder, multi_label_classification on a crowd-multilabel folder (each only when its folder is
 * given; there is no default), bounding_box on a generated crowd (always; `--box-images 0` skips it). Pure
 * computation, no services. Writes the section "Task types: consensus quality (`pnpm bench:types`)" of
 * docs/benchmarks.md (replaced on each run) unless --no-write; one JSON line of results on stdout, progress on
 * stderr. Throughput per type through the pipeline is a separate part (it needs the gateway and the worker).
 */
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { renderTypesQuality, runTypesQuality, type TypesQualityOptions } from "@labelgate/quality/bench/types-quality";

const ROOT = path.resolve(__dirname, "..");
const SECTION = "## Task types: consensus quality (`pnpm bench:types`)";

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function numbers(value: string, name: string): number[] {
  const out = value.split(",").map(Number);
  if (out.some((n) => !Number.isFinite(n))) throw new Error(`--${name}: expected numbers, got "${value}"`);
  return out;
}

/** Replaces (or appends) a "## " section of a markdown file. */
export function replaceSection(markdown: string, heading: string, body: string): string {
  const start = markdown.indexOf(heading);
  if (start < 0) return `${markdown.trimEnd()}\n\n${body.trimEnd()}\n`;
  const next = markdown.indexOf("\n## ", start + heading.length);
  return `${markdown.slice(0, start)}${body.trimEnd()}\n${next < 0 ? "" : markdown.slice(next)}`;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      spans: { type: "string" },
      multilabel: { type: "string" },
      "box-images": { type: "string", default: "600" },
      "box-seeds": { type: "string", default: "1,2,3" },
      "gold-share": { type: "string", default: "0.05" },
      seed: { type: "string", default: "1" },
      "no-write": { type: "boolean", default: false },
    },
  });
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
  process.stdout.write(`${JSON.stringify(result)}\n`);
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
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "cpu"}), ` +
      `Node ${process.version}, ${seconds.toFixed(0)} s: \`${command}\`. Method and sources: [docs/notes/types.md](notes/types.md).`,
    "",
    ...renderTypesQuality(result, options),
  ].join("\n");
  if (values["no-write"]) {
    log(body);
    return;
  }
  const file = path.join(ROOT, "docs/benchmarks.md");
  writeFileSync(file, replaceSection(readFileSync(file, "utf8"), SECTION, body));
  log(`wrote ${SECTION} to docs/benchmarks.md`);
}

main();
