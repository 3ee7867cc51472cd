/**
 * A manifest worker killed (SIGKILL) in the middle of an ingestion: the manifest worker runs as a REAL
 * child process (`tsx services/manifest-worker/src/main.ts`), the gateway in-process without workers.
 * BullMQ's stalled-job check hands the ingestion to a second worker process, which resumes from
 * `jobs.lines_ingested`: in the end exactly one task per manifest line, none missing, none twice, and the
 * quota reserved once per task.
 *
 * The lock of the killed worker's job expires after BullMQ's lock duration (30 s) and the new worker's
 * stalled check (every 30 s) moves it back to waiting: the resume takes 30 to 60 s, waited for with
 * `eventually`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type http from "node:http";
import { join } from "node:path";
import { REDIS_URL } from "../../../test/env";
import { eventually, registerCustomer, type System, startSystem, TEST_ENCRYPTION_KEY } from "../../../test/system";
import { createJob, gate, getJob, quotaUsed, serveManifest } from "./helpers";

const ROOT = join(__dirname, "..", "..", "..");
const LINES = 20_000;
/** the first request stops sending here until its worker is killed (mid-chunk: 7 chunks of 1000 written) */
const HOLD_AT = 7_250;
const CHUNK = 250;

let sys: System;
const children: ChildProcess[] = [];

beforeAll(async () => {
  sys = await startSystem({ workers: false });
});
afterAll(async () => {
  for (const child of children) await stop(child, "SIGTERM");
  await sys.close();
});

function startWorker(): { child: ChildProcess; output: () => string } {
  let output = "";
  const child = spawn(join(ROOT, "node_modules", ".bin", "tsx"), ["services/manifest-worker/src/main.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: sys.databaseUrl,
      REDIS_URL,
      QUEUE_PREFIX: sys.prefix,
      ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      ALLOW_PRIVATE_URLS: "true",
      LOG_LEVEL: "silent",
      // an ephemeral ops port: test processes never contend for the default METRICS_PORT
      METRICS_PORT: "0",
    },
    // its own process group: tsx runs the service in a child node process, and a kill must reach both
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  children.push(child);
  return { child, output: () => output };
}

/** Signals the child's process group and waits for the child to exit (SIGKILL after 10 s of SIGTERM). */
async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const pid = child.pid;
  const kill = (s: NodeJS.Signals) => {
    try {
      process.kill(-pid, s);
    } catch {
      // already gone
    }
  };
  kill(signal);
  if (signal !== "SIGKILL") {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), 10_000);
    });
    const result = await Promise.race([exited.then(() => "exited" as const), timeout]);
    clearTimeout(timer);
    if (result === "exited") return;
    kill("SIGKILL");
  }
  await exited;
}

const manifestLine = (n: number) => `${JSON.stringify({ data_url: `https://img.example/${n}.jpg`, n })}\n`;

function linesText(from: number, to: number): string {
  let s = "";
  for (let n = from; n <= to; n++) s += manifestLine(n);
  return s;
}

it("a worker SIGKILLed mid-ingestion: another worker resumes, one task per manifest line", async () => {
  const killed = gate();
  const requests: { n: number; sentThrough: number; closed: boolean }[] = [];
  // Streams the manifest in chunks of 250 lines with a pause between chunks. The first request holds at
  // HOLD_AT lines until its worker is killed, so the kill always lands mid-way.
  const server = await serveManifest((_req: http.IncomingMessage, res: http.ServerResponse) => {
    const r = { n: requests.length + 1, sentThrough: 0, closed: false };
    requests.push(r);
    res.on("close", () => {
      r.closed = true;
    });
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    const send = async () => {
      while (r.sentThrough < LINES && !r.closed) {
        if (r.n === 1 && r.sentThrough >= HOLD_AT) await killed.promise;
        if (r.closed) return;
        const to = Math.min(r.sentThrough + CHUNK, LINES);
        const ok = res.write(linesText(r.sentThrough + 1, to));
        r.sentThrough = to;
        if (!ok) await new Promise<void>((resolve) => res.once("drain", () => resolve()));
        else await new Promise<void>((resolve) => setTimeout(resolve, 2));
      }
      if (!r.closed) res.end();
    };
    void send();
  });

  const first = startWorker();
  try {
    const c = await registerCustomer(sys, LINES); // exactly enough quota: a double reservation would fail the job
    const jobId = await createJob(sys, c.key, { manifest_url: server.url("/big.jsonl") });

    const mid = await eventually(
      async () => {
        if (first.child.exitCode !== null) throw new Error(`first worker exited: ${first.output()}`);
        const j = await getJob(sys, c.key, jobId);
        return j.status === "ingesting" && j.lines_ingested >= HOLD_AT - (HOLD_AT % 1000) ? j : undefined;
      },
      60_000,
      "the first worker to ingest up to the hold point",
    );
    expect(mid.lines_ingested).toBe(7_000);
    expect(mid.task_count).toBe(7_000);

    await stop(first.child, "SIGKILL");
    expect(first.child.signalCode).toBe("SIGKILL");
    killed.open();
    const afterKill = await getJob(sys, c.key, jobId);
    expect(afterKill.status).toBe("ingesting");
    expect(afterKill.lines_ingested).toBe(7_000);
    expect(await sys.db.prisma.task.count({ where: { jobId, status: "pending" } })).toBe(7_000);

    const second = startWorker();
    const done = await eventually(
      async () => {
        if (second.child.exitCode !== null) throw new Error(`second worker exited: ${second.output()}`);
        const j = await getJob(sys, c.key, jobId);
        if (j.status === "failed") throw new Error(`job failed: ${j.error}`);
        return j.status === "labeling" ? j : undefined;
      },
      150_000,
      "the resumed ingestion to finish",
    );
    expect(done).toMatchObject({ task_count: LINES, lines_ingested: LINES, error: null });
    expect(requests.length).toBeGreaterThanOrEqual(2);
    expect(requests[0]?.closed).toBe(true);
    expect(requests[0]?.sentThrough).toBeLessThan(LINES);

    const [stats] = await sys.db.prisma.$queryRaw<
      { n: bigint; lines: bigint; lo: number; hi: number; pending: bigint; mismatched: bigint; ids: bigint }[]
    >`
      SELECT count(*) AS n, count(DISTINCT manifest_line) AS lines, min(manifest_line) AS lo, max(manifest_line) AS hi,
             count(*) FILTER (WHERE status = 'pending') AS pending,
             count(*) FILTER (WHERE (source->>'n')::int <> manifest_line
                               OR data_url <> 'https://img.example/' || manifest_line || '.jpg') AS mismatched,
             count(DISTINCT id) AS ids
      FROM tasks WHERE job_id = ${jobId}`;
    expect(stats).toEqual({
      n: BigInt(LINES),
      lines: BigInt(LINES),
      lo: 1,
      hi: LINES,
      pending: BigInt(LINES),
      mismatched: 0n,
      ids: BigInt(LINES),
    });
    expect(await quotaUsed(sys, c.key)).toBe(LINES);
  } finally {
    killed.open();
    await server.close();
  }
}, 240_000);
