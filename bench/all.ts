/**
 * `pnpm bench [--only api,labels,growth,webhooks,manifest,soak,settlement] [--quick] [--runs 3] [--no-write]`
 *
 * Runs every benchmark, one after the other (each is a child process `node --import tsx bench/<name>.ts`
 * whose stderr is passed through and whose stdout is its one JSON summary line):
 *  - api: `bench/api.ts --runs R` (task submission, ratio to its floor, batches);
 *  - labels: `bench/labels.ts --runs R` (claims + labels at 200 labelers, ratio to its floor, consensus lag over
 *    HTTP at a rate this machine sustains, and at 1,000 labels/s offered with claims and labels recorded in-process);
 *  - growth: api and labels again with `--existing-tasks 10000` and `--existing-tasks 1000000`, compared with
 *    their runs at 0 existing tasks (those of this invocation when api/labels ran, else run here): rates may
 *    fall by at most 20%;
 *  - webhooks: `bench/webhooks.ts --rates 100,300` and manifest: `bench/manifest.ts --lines 100000` (these run
 *    once: they have no --runs);
 *  - soak: `bench/soak.ts --minutes 10`;
 *  - settlement: `bench/chain.ts` (LEDGER=evm on a local anvil: gas per settled task at full batches, settling →
 *    settled lag at 300 settlements/s, throughput evm vs local in the same run, verifySettlement per proof).
 * `--quick` is a short smoke run of the same (1 run, a few seconds each, growth at 1,000 and 10,000, a
 * 1-minute soak, small webhook and manifest sizes); its figures are not the benchmark's.
 * Before each bench, a `CHECKPOINT` of Postgres and a wait until the machine is quiet (`quiesce`).
 * Unless `--no-write`, the results replace the section of docs/benchmarks.md between the markers
 * `<!-- pnpm bench: begin -->` and `<!-- pnpm bench: end -->` (appended at the end when absent): machine
 * (CPU model, cores, RAM), date, the exact commands, and a table of each figure with its target and
 * pass/fail. All summaries also go to stdout as one JSON line. Exits 1 when a benchmark fails to run.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Pool } from "pg";
import { ROOT } from "./bench-lib";
import { log, machineCpu, positiveInt, round, sleep } from "./measure";

const BENCHES = ["api", "labels", "growth", "webhooks", "manifest", "soak", "settlement"] as const;
type BenchName = (typeof BENCHES)[number];
const BEGIN = "<!-- pnpm bench: begin -->";
const END = "<!-- pnpm bench: end -->";
const DOC = path.join(ROOT, "docs", "benchmarks.md");

/** A bench's JSON summary (its shape is the bench's own; read with `num`). */
type Summary = Record<string, unknown>;

interface Ran {
  command: string;
  summary: Summary;
  seconds: number;
}

/** Runs `bench/<script>.ts <args>`; resolves with its last stdout line parsed. @throws Error when it fails. */
function runBench(script: string, args: string[]): Promise<Ran> {
  const command = `node --import tsx bench/${script}.ts ${args.join(" ")}`.trim();
  log(`running ${command}`);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", `bench/${script}.ts`, ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString("utf8");
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      const line = out.trim().split("\n").filter(Boolean).pop();
      if (!line) {
        reject(new Error(`${command} exited ${code} without a summary`));
        return;
      }
      try {
        resolve({ command, summary: JSON.parse(line) as Summary, seconds: round((Date.now() - started) / 1000, 0) });
      } catch (err) {
        reject(new Error(`${command} exited ${code}; its last line is not JSON: ${(err as Error).message}`));
      }
    });
  });
}

/** Busy share of the machine's CPUs below which a bench may start, over `QUIET_SAMPLE_MS`. */
const QUIET_BUSY = 0.15;
const QUIET_SAMPLE_MS = 1000;
const QUIET_MAX_WAIT_MS = 90_000;

/**
 * Before each bench: a `CHECKPOINT` of the benches' Postgres (BENCH_PG_URL; the previous bench's writes,
 * up to a million seeded tasks and the drop of its database, are otherwise flushed in the background
 * during the next one), then a wait until the machine is quiet (under 15% of its CPUs busy over 1 s, at
 * most 90 s). Returns the seconds waited, and the busy share when it started. @throws pg's errors.
 */
async function quiesce(): Promise<{ waitedS: number; busy: number }> {
  const started = Date.now();
  const pool = new Pool({ connectionString: process.env.BENCH_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres", max: 1 });
  try {
    await pool.query("CHECKPOINT");
  } finally {
    await pool.end();
  }
  let busy = 1;
  while (Date.now() - started < QUIET_MAX_WAIT_MS) {
    // /proc/stat's first line sums every CPU: busy / total is the share of the whole machine
    const a = machineCpu();
    await sleep(QUIET_SAMPLE_MS);
    const b = machineCpu();
    busy = Math.min(1, (b.busy - a.busy) / Math.max(1e-9, b.total - a.total));
    if (busy < QUIET_BUSY) break;
  }
  return { waitedS: round((Date.now() - started) / 1000, 1), busy: round(busy, 2) };
}

/** The number at `path` (dot-separated) of a summary, or NaN. */
function num(summary: Summary | undefined, at: string): number {
  let v: unknown = summary;
  for (const key of at.split(".")) v = v && typeof v === "object" ? (v as Record<string, unknown>)[key] : undefined;
  return typeof v === "number" ? v : Number.NaN;
}

interface Row {
  bench: string;
  figure: string;
  value: string;
  target: string;
  /** undefined: no target */
  pass?: boolean;
}

function fmt(x: number, digits = 0): string {
  return Number.isFinite(x) ? x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "n/a";
}

function row(bench: string, figure: string, value: number, digits: number, target?: { text: string; ok: (v: number) => boolean }): Row {
  return {
    bench,
    figure,
    value: fmt(value, digits),
    target: target?.text ?? "",
    pass: target ? Number.isFinite(value) && target.ok(value) : undefined,
  };
}

function apiRows(s: Summary, bench = "api"): Row[] {
  return [
    row(bench, "POST /v1/tasks, gateway requests/s (median)", num(s, "single.median.gateway_requests_per_s"), 0),
    row(bench, "POST /v1/tasks, floor requests/s (median)", num(s, "single.median.floor_requests_per_s"), 0),
    row(bench, "ratio gateway / floor (median)", num(s, "single.median.ratio"), 3, { text: "≥ 0.8", ok: (v) => v >= 0.8 }),
    row(bench, "POST /v1/tasks p99 latency, ms (median)", num(s, "single.median.gateway_p99_ms"), 0, { text: "≤ 50", ok: (v) => v <= 50 }),
    row(bench, "batches of 1,000: tasks/s (median)", num(s, "batch.tasks_per_s"), 0, { text: "≥ 20,000", ok: (v) => v >= 20_000 }),
  ];
}

function labelsRows(s: Summary, bench = "labels"): Row[] {
  const rate = num(s, "lag.rate");
  const reduced = (s.lag as { rate_reduced?: boolean } | undefined)?.rate_reduced === true;
  const pipelineRate = num(s, "pipeline_lag.rate");
  const pipelineAchieved = num(s, "pipeline_lag.median.achieved_labels_per_s");
  return [
    row(bench, "claims + labels, gateway labels/s, closed loop (median)", num(s, "closed_loop.median.gateway_labels_per_s"), 0),
    row(bench, "claims + labels, floor labels/s (median)", num(s, "closed_loop.median.floor_labels_per_s"), 0),
    row(bench, "ratio gateway / floor (median)", num(s, "closed_loop.median.ratio"), 3),
    row(bench, "CPU ms per label: gateway process (median)", num(s, "closed_loop.median.gateway_cpu_ms_per_label"), 2),
    row(bench, "CPU ms per label: floor process (median)", num(s, "closed_loop.median.floor_cpu_ms_per_label"), 2),
    row(bench, "CPU ms per label: Postgres with the gateway (median)", num(s, "closed_loop.median.postgres_cpu_ms_per_label_gateway"), 2),
    row(bench, "CPU ms per label: Postgres with the floor (median)", num(s, "closed_loop.median.postgres_cpu_ms_per_label_floor"), 2),
    row(
      bench,
      `consensus lag p50, ms, over HTTP at ${fmt(rate)} labels/s${reduced ? " (reduced: 80% of the closed loop)" : ""}`,
      num(s, "lag.median.p50_ms"),
      0,
    ),
    row(bench, `consensus lag p99, ms, over HTTP at ${fmt(rate)} labels/s${reduced ? " (reduced)" : ""}`, num(s, "lag.median.p99_ms"), 0),
    row(
      bench,
      `pipeline: labels/s achieved with ${fmt(pipelineRate)} offered (claims and labels recorded in-process, median)`,
      pipelineAchieved,
      0,
      { text: `≥ 95% of ${fmt(pipelineRate)}`, ok: (v) => v >= pipelineRate * 0.95 },
    ),
    row(bench, `pipeline: consensus lag p50, ms, at ${fmt(pipelineRate)} labels/s offered`, num(s, "pipeline_lag.median.p50_ms"), 0),
    row(
      bench,
      `pipeline: CPU ms per label, every process (the fifth pass's measure), at ${fmt(pipelineRate)} labels/s offered`,
      num(s, "pipeline_lag.median.cpu_ms_per_label.total"),
      2,
      { text: "≤ 2.0", ok: (v) => v <= 2.0 },
    ),
    row(bench, `pipeline: consensus lag p99, ms, at ${fmt(pipelineRate)} labels/s offered`, num(s, "pipeline_lag.median.p99_ms"), 0, {
      text: "< 250 at 1,000 labels/s",
      ok: (v) => v < 250 && pipelineRate >= 1000 && pipelineAchieved >= pipelineRate * 0.95,
    }),
  ];
}

/** Rates at N existing tasks against the rates at 0: a fall of at most 20% passes. */
function growthRows(base: { api?: Summary; labels?: Summary }, at: number, api?: Summary, labels?: Summary): Row[] {
  const rows: Row[] = [];
  const fall = (b: number, v: number) => (1 - v / b) * 100;
  const compare = (figure: string, b: number, v: number) => {
    rows.push({
      bench: "growth",
      figure: `${figure} at ${fmt(at)} existing tasks (at 0: ${fmt(b)})`,
      value: `${fmt(v)} (${fall(b, v) >= 0 ? "−" : "+"}${fmt(Math.abs(fall(b, v)), 1)}%)`,
      target: "fall ≤ 20%",
      pass: Number.isFinite(fall(b, v)) && fall(b, v) <= 20,
    });
  };
  if (api && base.api) {
    compare(
      "POST /v1/tasks requests/s",
      num(base.api, "single.median.gateway_requests_per_s"),
      num(api, "single.median.gateway_requests_per_s"),
    );
    compare("batch tasks/s", num(base.api, "batch.tasks_per_s"), num(api, "batch.tasks_per_s"));
  }
  if (labels && base.labels) {
    compare(
      "labels/s, closed loop",
      num(base.labels, "closed_loop.median.gateway_labels_per_s"),
      num(labels, "closed_loop.median.gateway_labels_per_s"),
    );
  }
  return rows;
}

function webhooksRows(s: Summary): Row[] {
  const latency = (s.latency as Summary[] | undefined) ?? [];
  const at100 = latency.find((l) => num(l, "rate_per_s") === 100);
  return [
    row("webhooks", "burst deliveries/s, middle 80% of receipts", num(s, "burst.deliveries_per_s_middle_80pct"), 0, {
      text: "≥ 2,000",
      ok: (v) => v >= 2000,
    }),
    row("webhooks", "settled → received p50 at 100/s, ms", num(at100, "settled_to_receipt.p50_ms"), 1, { text: "< 20", ok: (v) => v < 20 }),
    row("webhooks", "settled → received p99 at 100/s, ms", num(at100, "settled_to_receipt.p99_ms"), 1),
  ];
}

function manifestRows(s: Summary): Row[] {
  const results = (s.results as Summary[] | undefined) ?? [];
  return results.flatMap((r) => {
    const lines = fmt(num(r, "lines"));
    return [
      row("manifest", `${lines} lines: ingestion lines/s, end to end`, num(r, "ingestion.lines_per_s"), 0, {
        text: "≥ 20,000",
        ok: (v) => v >= 20_000,
      }),
      row("manifest", `${lines} lines: worker RSS peak (VmHWM), MB`, num(r, "ingestion.worker_rss_mb.peak_vmhwm"), 0, {
        text: "< 256",
        ok: (v) => v < 256,
      }),
      row("manifest", `${lines} lines: export over HTTP, lines/s (best)`, num(r, "export.lines_per_s_http_best"), 0, {
        text: "≥ 50,000",
        ok: (v) => v >= 50_000,
      }),
    ];
  });
}

function settlementRows(s: Summary): Row[] {
  const intervalMs = num(s, "lag.anchor_interval_ms");
  return [
    row("settlement", "gas per anchor at 1,024 leaves", num(s, "gas.gas_per_anchor"), 0),
    row("settlement", "gas per settled task at full batches", num(s, "gas.gas_per_task"), 1, { text: "<= 50", ok: (v) => v <= 50 }),
    row("settlement", `settling → settled lag p99 at ${fmt(num(s, "lag.offered_per_s"))}/s offered, ms`, num(s, "lag.ms.p99_ms"), 0, {
      text: `<= ${fmt(intervalMs + 1000)} (ANCHOR_INTERVAL_MS + 1 s)`,
      ok: (v) => v <= intervalMs + 1000,
    }),
    row("settlement", "leaves per anchor at that rate", num(s, "lag.leaves_per_anchor"), 0),
    row("settlement", "throughput LEDGER=local, tasks/s", num(s, "throughput.local_tasks_per_s"), 0),
    row("settlement", "throughput LEDGER=evm to the last task settled, tasks/s", num(s, "throughput.evm_settled_per_s"), 0),
    row("settlement", "evm / local throughput (to the last task settled)", num(s, "throughput.ratio_settled"), 2, {
      text: ">= 0.9",
      ok: (v) => v >= 0.9,
    }),
    row("settlement", "verifySettlementLocal per proof, ms", num(s, "verify_ms_per_proof"), 3, { text: "< 10", ok: (v) => v < 10 }),
  ];
}

function soakRows(s: Summary): Row[] {
  const services = (s.rss as { services?: Record<string, Summary> } | undefined)?.services ?? {};
  const limit = num(s, "rss.flat_below_mb_per_min");
  return Object.entries(services).map(([name, r]) => ({
    bench: "soak",
    figure: `${name}: RSS MB at minute 1 / end / max; Theil–Sen slope of the per-minute floors, last ${fmt(num(s, "rss.slope_window_min"), 1)} min`,
    value: `${fmt(num(r, "rss_minute_1_mb"))} / ${fmt(num(r, "rss_end_mb"))} / ${fmt(num(r, "rss_max_mb"))}; ${fmt(num(r, "slope_mb_per_min"), 2)} MB/min`,
    target: `flat: abs(slope) < ${fmt(limit)} MB/min`,
    pass: Math.abs(num(r, "slope_mb_per_min")) < limit,
  }));
}

function table(rows: Row[]): string {
  const lines = ["| bench | figure | value | target | result |", "|---|---|---|---|---|"];
  for (const r of rows) {
    lines.push(`| ${r.bench} | ${r.figure} | ${r.value} | ${r.target} | ${r.pass === undefined ? "" : r.pass ? "pass" : "**FAIL**"} |`);
  }
  return lines.join("\n");
}

/** Replaces the generated section of docs/benchmarks.md (appends it when the markers are absent). */
function writeSection(body: string): void {
  const doc = readFileSync(DOC, "utf8");
  const section = `${BEGIN}\n${body}\n${END}`;
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  const next =
    begin >= 0 && end > begin ? `${doc.slice(0, begin)}${section}${doc.slice(end + END.length)}` : `${doc.trimEnd()}\n\n${section}\n`;
  writeFileSync(DOC, next);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: "string" },
      quick: { type: "boolean", default: false },
      runs: { type: "string", default: "3" },
      "no-write": { type: "boolean", default: false },
    },
    strict: true,
  });
  const only = values.only ? values.only.split(",").map((s) => s.trim()) : [...BENCHES];
  for (const name of only) {
    if (!(BENCHES as readonly string[]).includes(name))
      throw new Error(`--only: unknown benchmark "${name}" (known: ${BENCHES.join(", ")})`);
  }
  const selected = new Set(only as BenchName[]);
  const quick = values.quick ?? false;
  const runs = quick ? 1 : positiveInt(values.runs, "runs");
  const apiArgs = quick ? ["--runs", "1", "--seconds", "3", "--batch-seconds", "3"] : ["--runs", String(runs)];
  const labelsArgs = quick ? ["--runs", "1", "--seconds", "3", "--lag-seconds", "4", "--labelers", "50"] : ["--runs", String(runs)];
  const sizes = quick ? [1000, 10_000] : [10_000, 1_000_000];

  const started = new Date();
  const loadAtStart = os.loadavg().map((l) => round(l, 2));
  const ran: Ran[] = [];
  const rows: Row[] = [];
  const failed: string[] = [];
  /** how long each bench waited for a quiet machine (`quiesce`) */
  const quiet: string[] = [];
  /** a bench's summary, or undefined (recorded as a failed row) when it did not produce one */
  const run = async (script: string, args: string[]): Promise<Summary | undefined> => {
    try {
      const q = await quiesce();
      log(`checkpoint, then ${q.waitedS} s until the machine was quiet (${Math.round(q.busy * 100)}% busy)`);
      quiet.push(`${q.waitedS} s (${Math.round(q.busy * 100)}%)`);
      const r = await runBench(script, args);
      ran.push(r);
      return r.summary;
    } catch (err) {
      log(`FAILED: ${(err as Error).message}`);
      failed.push(`bench/${script}.ts ${args.join(" ")}`);
      rows.push({
        bench: script,
        figure: `\`bench/${script}.ts ${args.join(" ")}\` did not complete`,
        value: "",
        target: "runs",
        pass: false,
      });
      return undefined;
    }
  };
  const base: { api?: Summary; labels?: Summary } = {};
  if (selected.has("api")) {
    base.api = await run("api", apiArgs);
    if (base.api) rows.push(...apiRows(base.api));
  }
  if (selected.has("labels")) {
    base.labels = await run("labels", labelsArgs);
    if (base.labels) rows.push(...labelsRows(base.labels));
  }
  if (selected.has("growth")) {
    base.api ??= await run("api", apiArgs);
    base.labels ??= await run("labels", labelsArgs);
    for (const n of sizes) {
      const api = await run("api", [...apiArgs, "--existing-tasks", String(n)]);
      const labels = await run("labels", [...labelsArgs, "--existing-tasks", String(n)]);
      rows.push(...growthRows(base, n, api, labels));
    }
  }
  if (selected.has("webhooks")) {
    const s = await run("webhooks", quick ? ["--n", "2000", "--rates", "100", "--latency-seconds", "3"] : ["--rates", "100,300"]);
    if (s) rows.push(...webhooksRows(s));
  }
  if (selected.has("manifest")) {
    const s = await run("manifest", quick ? ["--lines", "10000"] : ["--lines", "100000"]);
    if (s) rows.push(...manifestRows(s));
  }
  if (selected.has("soak")) {
    const s = await run("soak", quick ? ["--minutes", "1"] : ["--minutes", "10"]);
    if (s) rows.push(...soakRows(s));
  }
  if (selected.has("settlement")) {
    const s = await run("chain", quick ? ["--tasks", "2048", "--seconds", "5"] : []);
    if (s) rows.push(...settlementRows(s));
  }

  const cpus = os.cpus();
  const body = [
    `Generated by \`pnpm bench${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(" ")}` : ""}\` (bench/all.ts)${quick ? ": a QUICK smoke run, not the benchmark's figures" : ""}.`,
    "",
    `- Date: ${started.toISOString()} – ${new Date().toISOString()}`,
    `- Machine: ${cpus[0]?.model ?? "unknown"}, ${cpus.length} cores, ${round(os.totalmem() / 2 ** 30, 1)} GiB RAM, Node ${process.version}, load average at start ${loadAtStart.join(" / ")} (shared machine)`,
    `- Before each command: \`CHECKPOINT\`, then a wait until the machine was under ${QUIET_BUSY * 100}% busy over 1 s (at most ${QUIET_MAX_WAIT_MS / 1000} s; waited ${quiet.join(", ")})`,
    "- Commands (each from the repository root; seconds it took):",
    ...ran.map((r) => `  - \`${r.command}\` (${r.seconds} s)`),
    "",
    table(rows),
    "",
    `${rows.filter((r) => r.pass === false).length} of ${rows.filter((r) => r.pass !== undefined).length} figures with a target fail it.`,
  ].join("\n");
  if (!values["no-write"]) {
    writeSection(body);
    log(`wrote the generated section of ${path.relative(ROOT, DOC)}`);
  }
  process.stderr.write(`${body}\n`);
  process.stdout.write(`${JSON.stringify({ bench: "all", date: started.toISOString(), quick, failed, summaries: ran })}\n`);
  if (failed.length > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
