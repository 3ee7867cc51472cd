/**
 * Refit benchmark of the quality engine: a label space of 100,000 labels (20,000 tasks x 5 labels, 1,000
 * labelers, K = 4; the crowd of synthetic.ts "syn-mixed" scaled up, with 5% gold tasks). Measures
 *   - a cold fit of all labels;
 *   - a warm refit after 1% new labels (the service's periodic refit: about one second of labels at a few
 *     hundred labels/s), from the previous model;
 *   - the service's refit (`refit(table, previous)`, issue 27): a cold fit from majority vote, kept when it is
 *     identified (the warm fit only runs when the cold one is not), so it costs about one cold fit;
 *   - scoreTask of a 5-vote task.
 * Target (packages/quality task): a refit well under 2 s on this machine. Prints one JSON line with wall and
 * CPU times (CPU time is less sensitive to other processes on a shared machine) and the 1-minute load average.
 * Run: pnpm exec tsx packages/quality/bench/refit.ts [--runs 3]
 */
import os from "node:os";
import { fit, LabelTable, refit, scoreTask } from "../src/index";
import { pickGold } from "./sim-lib";
import { SCENARIOS, syntheticDataset } from "./synthetic";

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

function main(): void {
  const runsArg = process.argv.indexOf("--runs");
  const runs = runsArg >= 0 ? Number(process.argv[runsArg + 1]) : 3;
  const base = SCENARIOS.find((s) => s.name === "syn-mixed");
  if (!base) throw new Error("scenario syn-mixed missing");
  const ds = syntheticDataset({ ...base, name: "bench-100k", seed: 99, items: 20_000, labelers: 1000 });
  const gold = pickGold(ds, 0.05, 1);
  const rows = ds.items.flatMap((it) => it.answers.map((a) => ({ task: it.id, worker: a.worker, option: a.option })));
  const cut = Math.floor(rows.length * 0.99);
  const build = (n: number) => {
    const table = new LabelTable(ds.options.length);
    for (const it of ds.items) if (gold.has(it.id)) table.setGold(it.id, it.gold as number);
    for (const r of rows.slice(0, n)) table.add(r.task, r.worker, r.option);
    return table;
  };
  const cold: number[] = [];
  const warm: number[] = [];
  const coldCpu: number[] = [];
  const warmCpu: number[] = [];
  const cpuMs = (since: NodeJS.CpuUsage) => {
    const u = process.cpuUsage(since);
    return (u.user + u.system) / 1000;
  };
  const coldIterations: number[] = [];
  const warmIterations: number[] = [];
  const service: number[] = [];
  const serviceCpu: number[] = [];
  const outcomes: string[] = [];
  let scoreUs = 0;
  for (let run = 0; run < runs; run++) {
    const before = build(cut);
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const first = fit(before);
    cold.push(performance.now() - t0);
    coldCpu.push(cpuMs(c0));
    coldIterations.push(first.model.space.iterations);
    const after = build(rows.length);
    const t1 = performance.now();
    const c1 = process.cpuUsage();
    const second = fit(after, { previous: first.model });
    warm.push(performance.now() - t1);
    warmCpu.push(cpuMs(c1));
    warmIterations.push(second.model.space.iterations);
    const t3 = performance.now();
    const c3 = process.cpuUsage();
    const refitted = refit(after, first.model);
    service.push(performance.now() - t3);
    serviceCpu.push(cpuMs(c3));
    outcomes.push(refitted.outcome);
    const labelers = [...second.model.labelers.values()].slice(0, 5);
    const votes = labelers.map((l, i) => ({ labeler: l, option: i % ds.options.length }));
    const n = 20_000;
    const t2 = performance.now();
    for (let i = 0; i < n; i++) scoreTask(second.model.space, votes);
    scoreUs = ((performance.now() - t2) / n) * 1000;
  }
  console.log(
    JSON.stringify({
      bench: "quality-refit",
      labels: rows.length,
      tasks: ds.items.length,
      labelers: 1000,
      k: ds.options.length,
      gold_tasks: gold.size,
      runs,
      cold_fit_ms_median: Math.round(median(cold)),
      cold_fit_cpu_ms_median: Math.round(median(coldCpu)),
      cold_iterations: coldIterations,
      warm_refit_ms_median: Math.round(median(warm)),
      warm_refit_cpu_ms_median: Math.round(median(warmCpu)),
      warm_iterations: warmIterations,
      service_refit_ms_median: Math.round(median(service)),
      service_refit_cpu_ms_median: Math.round(median(serviceCpu)),
      service_refit_outcomes: outcomes,
      score_task_us: Math.round(scoreUs * 10) / 10,
      node: process.version,
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? "unknown",
      load_average_1m: Math.round((os.loadavg()[0] ?? 0) * 100) / 100,
      date: new Date().toISOString(),
    }),
  );
}

main();
