/**
 * `pnpm bench:manifest [--lines 100000,1000000] [--warmup 1000] [--export-runs 2]`
 *
 * Manifest job benchmark: for each size of `--lines`, a Ground Truth style JSONL manifest
 * (`{"source-ref":"s3://bench/img/N.jpg","class":"cat"}`) is uploaded to a local S3 (s3rver) and ingested
 * by ONE real manifest-worker process (`tsx services/manifest-worker/src/main.ts`, a fresh one per size,
 * warmed up with a `--warmup`-line job first). The job is created with POST /v1/jobs on an in-process
 * gateway (`createApp`). A database of its own (migrated, dropped at the end) and a Redis prefix of its
 * own (deleted at the end) on the machine's Postgres and Redis (BENCH_PG_URL, BENCH_REDIS_URL override).
 *
 * Measured for each size:
 *  - ingestion lines/s: `task_count / (ingested_at - started_at)` of the job row, and over the middle 80%
 *    of the lines (`lines_ingested` polled every 100 ms);
 *  - the worker's RSS: VmRSS of its node process (the child of the tsx launcher) sampled every 100 ms from
 *    /proc, and the kernel's high-water mark (VmHWM) at the end, idle before the job and peak;
 *  - CPU seconds of the worker, of this database's Postgres backends and of the machine during ingestion
 *    (the machine is shared: they say what bounded the run);
 *  - export lines/s: every task is then settled with one UPDATE (consensus_label, confidence, ledger_txid,
 *    settled_at; the job `completed`; VACUUM ANALYZE as autovacuum would), and the export is streamed
 *    `--export-runs` times with GET /v1/jobs/{id}/export from the in-process gateway (lines counted as they
 *    arrive, constant memory) and `--export-runs` times with `exportStream` directly. The RSS growth of
 *    this process (it runs the gateway) during the exports is reported.
 *
 * Progress and the worker's logs go to stderr; the summary is one JSON object on stdout. The worker runs
 * as deployed, `node --max-old-space-size=128 --import tsx main.ts`; BENCH_WORKER_NODE_ARGS replaces the
 * node flags (e.g. `--trace-gc`, or `--max-old-space-size=4096` to see the uncapped heap).
 */
import { type ChildProcess, spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { canonicalJson } from "@labelgate/canonical-json";
import { createLogger, hashKey, issueKey, KEY_PREFIX, newId } from "@labelgate/core";
import { gatewayRole } from "@labelgate/gateway";
import { deleteKeysWithPrefix } from "@labelgate/queue";
import { createRuntime, type Runtime } from "@labelgate/runtime";
import { storageOptions, writeObject } from "@labelgate/storage";
import { dropDatabase, migrateDatabase } from "@labelgate/store";
import { Pool } from "pg";
import { type LocalS3, startS3 } from "../test/s3";
import { benchTarget } from "./bench-lib";
import { countLines, getAndCount, manifestLine, manifestStream, RssSampler } from "./manifest-lib";
import { CpuTracker, log, machineCpu, nowMs, positiveInt, postgresBackends, processTree, round, sleep } from "./measure";

const ROOT = path.resolve(__dirname, "..");
const USAGE = "usage: pnpm bench:manifest [--lines 100000,1000000] [--warmup 1000] [--export-runs 2]";
const BUCKET = "bench";
const OPTIONS = ["cat", "dog", "bird", "fish"];
const MB = 2 ** 20;

interface JobRow {
  status: string;
  lines_ingested: number;
  task_count: number;
  error: string | null;
  started_ms: number | null;
  ingested_ms: number | null;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      lines: { type: "string", default: "100000" },
      warmup: { type: "string", default: "1000" },
      "export-runs": { type: "string", default: "2" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const sizes = (values.lines ?? "").split(",").map((s) => positiveInt(s, "lines"));
  const warmup = positiveInt(values.warmup, "warmup");
  const exportRuns = positiveInt(values["export-runs"], "export-runs");

  const { runId, database: databaseName, databaseUrl, redisUrl, prefix, encryptionKey } = benchTarget("manifest");
  const startedAt = new Date();
  const loadAtStart = os.loadavg().map((l) => round(l, 2));

  let worker: ChildProcess | undefined;
  let s3: LocalS3 | undefined;
  let pool: Pool | undefined;
  let gateway: Runtime<[Awaited<ReturnType<typeof gatewayRole.start>>]> | undefined;
  let migrated = false;
  const stoppers: { stop(): void }[] = [];

  const stopWorker = async () => {
    const child = worker;
    worker = undefined;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    // The worker runs in its own process group (tsx and its node child): stop exactly that group.
    const pgid = child.pid;
    const signal = (s: NodeJS.Signals) => {
      try {
        process.kill(-pgid, s);
      } catch {
        // already gone
      }
    };
    signal("SIGTERM");
    const done = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
    if (!done) {
      signal("SIGKILL");
      await exited;
    }
  };

  const cleanup = async () => {
    for (const s of stoppers) s.stop();
    await stopWorker();
    if (gateway) {
      gateway.instances[0].server.closeAllConnections();
      await gateway.shutdown().catch(() => undefined);
    }
    await pool?.end().catch(() => undefined);
    await s3?.close().catch(() => undefined);
    if (migrated) await dropDatabase(databaseUrl).catch((err: unknown) => log(`could not drop ${databaseName}: ${String(err)}`));
    const deleted = await deleteKeysWithPrefix(redisUrl, prefix);
    log(`dropped database ${databaseName} and ${deleted} Redis keys under ${prefix}`);
  };
  process.once("SIGINT", () => {
    void cleanup().finally(() => process.exit(130));
  });

  try {
    log(`database ${databaseName}, Redis prefix ${prefix}`);
    await migrateDatabase(databaseUrl);
    migrated = true;
    pool = new Pool({ connectionString: databaseUrl, max: 2, application_name: "bench" });
    const sql = pool;
    s3 = await startS3([BUCKET]);
    const s3Credentials = s3.credentials;

    // the in-process gateway, built by the runtime like the service (its pool the gateway's, 4 here)
    gateway = await createRuntime(
      {
        DATABASE_URL: databaseUrl,
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: prefix,
        ALLOW_PRIVATE_URLS: "true",
        ENCRYPTION_KEY: encryptionKey,
        PORT: "0",
        HOST: "127.0.0.1",
        METRICS_PORT: "0",
        DB_POOL_MAX: "4",
      },
      [gatewayRole],
      { logger: createLogger("bench", "warn"), queueTimeoutMs: 5000 },
    );
    const baseUrl = `http://127.0.0.1:${gateway.instances[0].port}`;
    const store = gateway.ctx.store;

    // a production customer with quota for every manifest, and its key
    const customerId = newId("customer");
    const key = issueKey(KEY_PREFIX.production);
    await sql.query(`INSERT INTO customers (id, name, email, tier, label_quota) VALUES ($1, 'bench', $2, 'production', 2000000000)`, [
      customerId,
      `bench-${runId}@example.com`,
    ]);
    await sql.query(`INSERT INTO api_keys (id, customer_id, key_hash, hint, tier) VALUES ($1, $2, $3, $4, 'production')`, [
      newId("apiKey"),
      customerId,
      hashKey(key.key),
      key.hint,
    ]);

    const storage = storageOptions({ allowPrivateUrls: true });
    const upload = async (lines: number): Promise<string> => {
      const url = `s3://${BUCKET}/manifest-${lines}.jsonl`;
      const t0 = nowMs();
      await writeObject(url, manifestStream(lines), s3Credentials, storage, "application/x-ndjson");
      log(`uploaded ${url} (${lines} lines) in ${round((nowMs() - t0) / 1000, 1)} s`);
      return url;
    };
    const createJob = async (manifestUrl: string): Promise<string> => {
      const res = await fetch(`${baseUrl}/v1/jobs`, {
        method: "POST",
        headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
        body: JSON.stringify({
          manifest_url: manifestUrl,
          label_spec: { question: "What is in the picture?", options: OPTIONS },
          consensus_threshold: 3,
          credentials: s3Credentials,
        }),
      });
      const body = (await res.json()) as { job_id?: string };
      if (res.status !== 202 || !body.job_id) throw new Error(`POST /v1/jobs answered ${res.status}: ${JSON.stringify(body)}`);
      return body.job_id;
    };
    const jobRow = async (jobId: string): Promise<JobRow> => {
      const r = await sql.query<JobRow>(
        `SELECT status, lines_ingested, task_count, error,
                extract(epoch FROM started_at) * 1000 AS started_ms, extract(epoch FROM ingested_at) * 1000 AS ingested_ms
         FROM jobs WHERE id = $1`,
        [jobId],
      );
      const row = r.rows[0];
      if (!row) throw new Error(`job ${jobId} not found`);
      return {
        ...row,
        started_ms: row.started_ms === null ? null : Number(row.started_ms),
        ingested_ms: row.ingested_ms === null ? null : Number(row.ingested_ms),
      };
    };
    /** Polls the job every 100 ms until it leaves `queued`/`ingesting`; returns it with its progress. */
    const waitIngested = async (jobId: string, timeoutMs: number, rss?: RssSampler) => {
      const progress: { at: number; lines: number; rss: number }[] = [];
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const j = await jobRow(jobId);
        progress.push({ at: nowMs(), lines: j.lines_ingested, rss: rss?.workerRss().now ?? 0 });
        if (j.status === "failed") throw new Error(`job ${jobId} failed: ${j.error}`);
        if (j.status !== "queued" && j.status !== "ingesting") return { job: j, progress };
        if (Date.now() > deadline) throw new Error(`job ${jobId} not ingested after ${timeoutMs} ms (${j.lines_ingested} lines)`);
        if (worker?.exitCode !== null) throw new Error("the worker exited");
        await sleep(100);
      }
    };

    const results: Record<string, unknown>[] = [];
    const benchBackends = new Set<number>();
    for (const lines of sizes) {
      const warmupUrl = await upload(warmup);
      const manifestUrl = await upload(lines);

      // a fresh worker for each size: its RSS is this manifest's
      // as deployed (services/manifest-worker/package.json, compose, deploy/): node with a 128 MB old space
      const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? "--max-old-space-size=128").split(" ").filter(Boolean);
      const [command, args] = [process.execPath, [...nodeArgs, "--import", "tsx", "services/manifest-worker/src/main.ts"]];
      const child = spawn(command, args, {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: databaseUrl,
          REDIS_URL: redisUrl,
          QUEUE_PREFIX: prefix,
          ENCRYPTION_KEY: encryptionKey,
          ALLOW_PRIVATE_URLS: "true",
          LOG_LEVEL: "warn",
          // an ephemeral ops port (/metrics, /healthz): the default one may be taken
          METRICS_PORT: "0",
        },
        detached: true,
        // its logs go to this process's stderr: stdout is the summary
        stdio: ["ignore", 2, 2],
      });
      worker = child;
      child.once("exit", (code, signal) => {
        if (code !== 0 && code !== 143 && signal !== "SIGTERM") log(`the worker exited (${code ?? signal})`);
      });
      const rss = new RssSampler(child.pid as number, nodeArgs !== undefined, 100);
      stoppers.push(rss);
      log(`worker started (pid ${child.pid}); warm-up job of ${warmup} lines`);
      await waitIngested(await createJob(warmupUrl), 120_000);
      await sleep(1000);
      const idle = rss.workerRss();
      log(`warm-up done; worker pid ${rss.worker()} idle RSS ${round(idle.now / MB)} MB`);

      const workerCpu = new CpuTracker(() => processTree(child.pid as number));
      const postgresCpu = new CpuTracker(postgresBackends(databaseName, benchBackends));
      stoppers.push(workerCpu, postgresCpu);
      const own = await sql.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = 'bench'`);
      for (const row of own.rows) benchBackends.add(row.pid);
      const cpu0 = { worker: workerCpu.seconds(), postgres: postgresCpu.seconds(), machine: machineCpu() };

      const t0 = nowMs();
      const jobId = await createJob(manifestUrl);
      const { job, progress } = await waitIngested(jobId, 1_800_000, rss);
      const cpu1 = { worker: workerCpu.seconds(), postgres: postgresCpu.seconds(), machine: machineCpu() };
      const workerRss = rss.workerRss();
      workerCpu.stop();
      postgresCpu.stop();
      if (job.task_count !== lines || job.lines_ingested !== lines) throw new Error(`ingested ${job.task_count} tasks of ${lines} lines`);
      const ingestSeconds = ((job.ingested_ms as number) - (job.started_ms as number)) / 1000;
      const at = (share: number) => progress.find((p) => p.lines >= lines * share)?.at;
      const lo = at(0.1);
      const hi = at(0.9);
      const wall = (nowMs() - t0) / 1000;
      // when every line was written (polled), then the one transaction that makes the tasks claimable
      const allWritten = at(1) ?? (job.ingested_ms as number);
      const ingestion = {
        lines,
        seconds_started_to_ingested: round(ingestSeconds, 2),
        seconds_writing_lines: round((allWritten - (job.started_ms as number)) / 1000, 2),
        seconds_opening_tasks: round(((job.ingested_ms as number) - allWritten) / 1000, 2),
        lines_per_s: round(lines / ingestSeconds),
        lines_per_s_middle_80pct: lo !== undefined && hi !== undefined && hi > lo ? round((lines * 0.8) / ((hi - lo) / 1000)) : null,
        worker_rss_mb: {
          idle_before: round(idle.now / MB),
          peak_sampled: round(workerRss.peak / MB),
          peak_while_writing_lines: round(Math.max(0, ...progress.filter((p) => p.lines < lines).map((p) => p.rss)) / MB),
          peak_while_opening_tasks: round(Math.max(0, ...progress.filter((p) => p.lines >= lines).map((p) => p.rss)) / MB),
          peak_vmhwm: round(workerRss.hwm / MB),
          at_end: round(workerRss.now / MB),
          samples: rss.samples,
        },
        cpu_seconds: {
          worker: round(cpu1.worker - cpu0.worker, 2),
          postgres_backends: round(cpu1.postgres - cpu0.postgres, 2),
          machine_busy_fraction: round((cpu1.machine.busy - cpu0.machine.busy) / (cpu1.machine.total - cpu0.machine.total), 2),
          wall: round(wall, 2),
        },
      };
      log(`ingestion: ${JSON.stringify(ingestion)}`);
      rss.stop();
      await stopWorker();

      // every task settled at once, the job completed
      const s0 = nowMs();
      await sql.query(
        `UPDATE tasks SET status = 'settled', consensus_label = options[1 + manifest_line % 4], confidence = 0.9375,
                resolution = 'consensus', labels_collected = 3, claim_cap = 0,
                ledger_txid = '0x' || md5(id) || md5(manifest_line::text), settled_at = now(), updated_at = now()
         WHERE job_id = $1`,
        [jobId],
      );
      await sql.query(`UPDATE jobs SET status = 'completed', completed_at = now() WHERE id = $1`, [jobId]);
      await sql.query(`VACUUM ANALYZE tasks`);
      log(`settled ${lines} tasks in ${round((nowMs() - s0) / 1000, 1)} s`);

      const runs: Record<string, unknown>[] = [];
      for (const via of ["http", "exportStream"] as const) {
        for (let run = 1; run <= exportRuns; run++) {
          const rssBefore = process.memoryUsage().rss;
          let rssPeak = rssBefore;
          const timer = setInterval(() => {
            rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
          }, 100);
          const e0 = nowMs();
          const counted =
            via === "http"
              ? await getAndCount(`${baseUrl}/v1/jobs/${jobId}/export`, key.key)
              : { status: 200, ...(await countLines(store.jobs.exportStream(jobId))) };
          const seconds = (nowMs() - e0) / 1000;
          clearInterval(timer);
          if (counted.status !== 200 || counted.lines !== lines)
            throw new Error(`export via ${via}: ${counted.status}, ${counted.lines} lines`);
          const first = JSON.parse(counted.first) as { source?: unknown; consensus_label?: unknown; ledger_txid?: unknown };
          const last = JSON.parse(counted.last) as { source?: unknown };
          if (
            canonicalJson(first.source) !== canonicalJson(JSON.parse(manifestLine(1))) ||
            canonicalJson(last.source) !== canonicalJson(JSON.parse(manifestLine(lines))) ||
            first.consensus_label !== OPTIONS[1] ||
            typeof first.ledger_txid !== "string"
          ) {
            throw new Error(`export via ${via}: unexpected first/last line ${counted.first} / ${counted.last}`);
          }
          const r = {
            via,
            run,
            seconds: round(seconds, 2),
            lines_per_s: round(lines / seconds),
            mb_per_s: round(counted.bytes / MB / seconds, 1),
            bytes: counted.bytes,
            bench_rss_growth_mb: round((rssPeak - rssBefore) / MB),
          };
          log(`export: ${JSON.stringify(r)}`);
          runs.push(r);
        }
      }
      const best = (via: string) => Math.max(...runs.filter((r) => r.via === via).map((r) => r.lines_per_s as number));
      results.push({
        lines,
        job_id: jobId,
        ingestion,
        export: { lines_per_s_http_best: best("http"), lines_per_s_export_stream_best: best("exportStream"), runs },
      });
    }

    const cpus = os.cpus();
    const summary = {
      bench: "manifest",
      date: startedAt.toISOString(),
      machine: {
        cpu: cpus[0]?.model ?? "unknown",
        cores: cpus.length,
        memory_gib: round(os.totalmem() / 2 ** 30, 1),
        node: process.version,
        load_average_at_start: loadAtStart,
      },
      warmup_lines: warmup,
      results,
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    await cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
