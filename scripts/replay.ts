/**
 * `pnpm replay --dataset ../shared/data/crowd/dog [--base-url http://127.0.0.1:3000] [--admin-token T]
 *   [--threshold 3] [--batch-size 500] [--concurrency 32] [--limit N] [--json-out FILE]`
 *
 * Replays a recorded crowdsourcing dataset through a running labelgate (see `runReplay` in replay-lib.ts).
 * Progress goes to stderr; the summary is one JSON line on stdout (and appended to --json-out).
 * The admin token comes from --admin-token, else ADMIN_TOKEN, else `.data/admin-token` of the cwd.
 */
import { appendFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { resolveAdminToken, runReplay } from "./replay-lib";

const USAGE =
  "usage: pnpm replay --dataset DIR [--base-url http://127.0.0.1:3000] [--admin-token T] [--threshold 3] " +
  "[--batch-size 500] [--concurrency 32] [--limit N] [--json-out FILE]";

function intOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new Error(`--${name} must be a positive integer, got "${value}"`);
  return Number(value);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dataset: { type: "string" },
      "base-url": { type: "string", default: "http://127.0.0.1:3000" },
      "admin-token": { type: "string" },
      threshold: { type: "string" },
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
  if (!values.dataset) throw new Error(`--dataset is required\n${USAGE}`);

  const summary = await runReplay({
    dataset: values.dataset,
    baseUrl: values["base-url"],
    adminToken: resolveAdminToken(values["admin-token"], process.env, process.cwd()),
    threshold: intOption(values.threshold, "threshold"),
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
