/**
 * Measurement helpers shared by every benchmark: time, percentiles and latency summaries, rounding, CPU
 * accounting from /proc (a process tree, this database's Postgres backends, processes by name, the whole
 * machine, which other engineers share), logging and option parsing.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Wall-clock milliseconds with sub-millisecond resolution. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export interface LatencySummary {
  n: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
}

export function latencySummary(values: number[]): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50_ms: round(percentile(sorted, 50)),
    p90_ms: round(percentile(sorted, 90)),
    p99_ms: round(percentile(sorted, 99)),
    max_ms: round(sorted[sorted.length - 1] ?? Number.NaN),
  };
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** user+system CPU seconds of one process (0 when it is gone or unreadable). */
function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 (state): utime is field 14, stime field 15
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

/** `root` and every descendant process. */
export function processTree(root: number): number[] {
  const pids = allPids();
  const parents = new Map(pids.map((p) => [p, parentOf(p)]));
  const tree = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of parents) {
      if (ppid !== undefined && tree.has(ppid) && !tree.has(pid)) {
        tree.add(pid);
        grew = true;
      }
    }
  }
  return [...tree];
}

export function pidsByName(name: string): number[] {
  return allPids().filter((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, "utf8").trim() === name;
    } catch {
      return false;
    }
  });
}

export function cpuSeconds(pids: number[]): number {
  return pids.reduce((sum, p) => sum + processCpuSeconds(p), 0);
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

/**
 * Cumulative CPU seconds of a changing set of processes (e.g. Postgres backends, which come and go with
 * the pool): samples every `everyMs` and keeps the last reading of each process, so a process that
 * exits keeps what it used up to its last sample.
 */
export class CpuTracker {
  private readonly last = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pids: () => number[],
    everyMs = 250,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
  }

  private sample(): void {
    for (const pid of this.pids()) {
      const cpu = processCpuSeconds(pid);
      if (cpu > 0) this.last.set(pid, Math.max(cpu, this.last.get(pid) ?? 0));
    }
  }

  seconds(): number {
    this.sample();
    let sum = 0;
    for (const v of this.last.values()) sum += v;
    return sum;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** Postgres backends connected to `database` (their process title names it), except the `exclude`d ones. */
export function postgresBackends(database: string, exclude: Set<number>): () => number[] {
  return () => pidsByName("postgres").filter((p) => !exclude.has(p) && cmdline(p).includes(` ${database} `));
}

/** Machine-wide busy and total CPU seconds (all cores) from /proc/stat. */
export function machineCpu(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  return { busy: (total - idle) / CLK_TCK, total: total / CLK_TCK };
}

/**
 * Starts counting the CPU of each named source (a cumulative reading in seconds, e.g. `cpuSeconds` of some
 * pids, `CpuTracker.seconds`, `machineCpu().busy`); the returned function gives each source's CPU ms per unit
 * of work done since then (`units`: labels recorded, calls answered; at least 1), rounded to `digits`.
 */
export function countCpuPer<K extends string>(sources: Record<K, () => number>, digits: number): (units: number) => Record<K, number> {
  const keys = Object.keys(sources) as K[];
  const at0 = keys.map((k) => sources[k]());
  return (units) =>
    Object.fromEntries(keys.map((k, i) => [k, round(((sources[k]() - (at0[i] as number)) * 1000) / Math.max(1, units), digits)])) as Record<
      K,
      number
    >;
}

/** A progress line of a benchmark, on stderr (stdout is its JSON summary). */
export function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

/** A `--name` option that must be a positive integer. @throws Error naming the option. */
export function positiveInt(value: string | undefined, name: string): number {
  if (value === undefined || !/^\d+$/.test(value.trim()) || Number(value) < 1) {
    throw new Error(`--${name} must be a positive integer, got "${value}"`);
  }
  return Number(value);
}
