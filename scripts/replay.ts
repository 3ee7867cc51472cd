/**
 * `pnpm replay [--dataset data/crowd/dog] [--base-url http://127.0.0.1:3000] [--admin-token T]
 *   [--threshold 3 | --confidence-target 0.95] [--gold-share 0.05] [--seed 1] [--batch-size 500]
 *   [--concurrency 32] [--limit N] [--json-out FILE]`
 *
 * Replays a recorded crowdsourcing dataset through a running labelgate (see `runReplay` of @labelgate/replay, packages/replay).
 * The dataset defaults to the dog sample that ships in this repository (data/crowd/dog, its source in
 * README-source.txt); the base URL to LABELGATE_URL, else http://127.0.0.1:3000.
 * Progress goes to stderr; the summary is one JSON line on stdout (and appended to --json-out).
 * The admin token comes from --admin-token, else ADMIN_TOKEN, else `.data/admin-token` of the cwd.
 */
import { appendFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { resolveAdminToken, runReplay } from "@labelgate/replay";

/** The crowd sample shipped with the repository (807 dog images, 8,070 answers of 109 workers). */
const DEFAULT_DATASET = path.resolve(__dirname, "..", "data", "crowd", "dog");

const USAGE =
  "usage: pnpm replay [--dataset DIR (default data/crowd/dog)] [--base-url URL (default LABELGATE_URL or http://127.0.0.1:3000)] [--admin-token T] [--threshold 3 | --confidence-target T] " +
  "[--gold-share S] [--seed N] " +
  "[--batch-size 500] [--concurrency 32] [--limit N] [--json-out FILE]";

function intOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new Error(`--${name} must be a positive integer, got "${value}"`);
  return Number(value);
}

function numberOption(value: string | undefined, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < min || n > max) {
    throw new Error(`--${name} must be a number between ${min} and ${max}, got "${value}"`);
  }
  return n;
}

function integerOption(value: string, name: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new Error(`--${name} must be an integer, got "${value}"`);
  return Number(value);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dataset: { type: "string" },
      "base-url": { type: "string", default: process.env.LABELGATE_URL || "http://127.0.0.1:3000" },
      "admin-token": { type: "string" },
      threshold: { type: "string" },
      "confidence-target": { type: "string" },
      "gold-share": { type: "string" },
      seed: { type: "string" },
      "batch-size": { type: "string" },
      concurrency: { type: "string" },
      limit: { type: "string" },
      "json-out": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (values.threshold !== undefined && values["confidence-target"] !== undefined) {
    throw new Error(`--threshold and --confidence-target choose different policies: pass one\n${USAGE}`);
  }

  const summary = await runReplay({
    dataset: values.dataset ?? DEFAULT_DATASET,
    baseUrl: values["base-url"],
    adminToken: resolveAdminToken(values["admin-token"], process.env, process.cwd()),
    threshold: intOption(values.threshold, "threshold"),
    confidenceTarget: numberOption(values["confidence-target"], "confidence-target", 0.5, 1),
    goldShare: numberOption(values["gold-share"], "gold-share", 0, 1),
    seed: values.seed === undefined ? undefined : integerOption(values.seed, "seed"),
    batchSize: intOption(values["batch-size"], "batch-size"),
    concurrency: intOption(values.concurrency, "concurrency"),
    limit: intOption(values.limit, "limit"),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const line = JSON.stringify(summary);
  process.stdout.write(`${line}\n`);
  if (values["json-out"]) appendFileSync(values["json-out"], `${line}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`replay failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
