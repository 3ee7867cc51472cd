/**
 * Helpers of `bench/webhooks.ts`: the local receiver, seeding of settled tasks and their `task.settled`
 * events, percentiles, and CPU accounting from /proc (the worker's process tree, this database's Postgres
 * backends, Redis, and the whole machine, which other engineers share).
 */
import { execFileSync } from "node:child_process";
import { createHmac, timingSafeEqual } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { newId } from "@labelgate/core";
import type { Pool } from "pg";

/** Wall-clock milliseconds with sub-millisecond resolution. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface Receipt {
  eventId: string;
  /** wall-clock receipt time, ms */
  at: number;
  /** `settled_at` of the payload, ms */
  settledAt: number;
  attempt: number;
}

export interface Receiver {
  url: string;
  /** first receipt of each event id */
  receipts: Map<string, Receipt>;
  duplicates: number;
  badSignatures: number;
  close(): Promise<void>;
}

/**
 * A node:http receiver answering 200 at once. It checks every signature (HMAC-SHA256 of the raw body
 * with `secret`) and records the receipt time of each event.
 */
export async function startReceiver(secret: string): Promise<Receiver> {
  const receipts = new Map<string, Receipt>();
  const state = { duplicates: 0, badSignatures: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = nowMs();
      res.statusCode = 200;
      res.end();
      const raw = Buffer.concat(chunks);
      const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`);
      const got = Buffer.from(String(req.headers["x-svc-signature"] ?? ""));
      if (got.length !== expected.length || !timingSafeEqual(got, expected)) state.badSignatures++;
      const eventId = String(req.headers["x-svc-event-id"] ?? "");
      if (receipts.has(eventId)) {
        state.duplicates++;
        return;
      }
      const body = JSON.parse(raw.toString("utf8")) as { settled_at: string };
      receipts.set(eventId, {
        eventId,
        at,
        settledAt: Date.parse(body.settled_at),
        attempt: Number(req.headers["x-svc-delivery-attempt"]),
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/bench`,
    receipts,
    get duplicates() {
      return state.duplicates;
    },
    get badSignatures() {
      return state.badSignatures;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Inserts `count` settled tasks (with `callback_url`) and their `task.settled` events as settle.ts writes
 * them; the i-th is settled at `settledAt(i)`. Event ids come back in order.
 */
export async function seedSettled(
  pool: Pool,
  customerId: string,
  callbackUrl: string,
  count: number,
  settledAt: (i: number) => Date,
): Promise<string[]> {
  const eventIds: string[] = [];
  const chunk = 5000;
  for (let start = 0; start < count; start += chunk) {
    const n = Math.min(chunk, count - start);
    const taskIds: string[] = [];
    const evIds: string[] = [];
    const settled: string[] = [];
    const payloads: string[] = [];
    for (let i = 0; i < n; i++) {
      const taskId = newId("task");
      const eventId = newId("event");
      const at = settledAt(start + i).toISOString();
      taskIds.push(taskId);
      evIds.push(eventId);
      settled.push(at);
      payloads.push(
        JSON.stringify({
          event: "task.settled",
          task_id: taskId,
          consensus_label: "cat",
          confidence: 0.9876,
          ledger_txid: `0x${"ab".repeat(32)}`,
          settled_at: at,
        }),
      );
    }
    await pool.query(
      `INSERT INTO tasks (id, customer_id, task_type, data_url, question, options, callback_url, consensus_threshold, max_labels,
         status, labels_collected, label_counts, labels_needed, quota_reserved, consensus_label, confidence, resolution,
         ledger_txid, settled_at)
       SELECT t.id, $1, 'image_classification', 'https://data.example/x.jpg', 'cat or dog?', ARRAY['cat','dog'], $2, 3, 7,
         'settled', 3, '{"cat":3}', 0, 3, 'cat', 0.9876, 'consensus', $5, t.settled_at
       FROM unnest($3::text[], $4::timestamptz[]) AS t(id, settled_at)`,
      [customerId, callbackUrl, taskIds, settled, `0x${"ab".repeat(32)}`],
    );
    await pool.query(
      `INSERT INTO events (id, type, task_id, customer_id, payload, created_at)
       SELECT e.id, 'task.settled', e.task_id, $1, e.payload::jsonb, e.settled_at
       FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS e(id, task_id, payload, settled_at)`,
      [customerId, evIds, taskIds, payloads, settled],
    );
    eventIds.push(...evIds);
  }
  return eventIds;
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
