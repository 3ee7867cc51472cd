/**
 * Helpers shared by the benchmarks that run the real service processes (bench/api.ts, bench/labels.ts,
 * bench/soak.ts): free ports, spawning a service and waiting for it, stopping it, JSON calls to the
 * gateway, a keep-alive HTTP client for many concurrent callers, medians, and seeding a bench database
 * with existing tasks (the cost growth runs, `--existing-tasks N`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { deleteKeysWithPrefix } from "@labelgate/queue";
import { dropDatabase, labelSpaceId, withDatabase } from "@labelgate/store";
import type { Pool } from "pg";
import { log, nowMs, sleep } from "./measure";

export const ROOT = path.resolve(__dirname, "..");

/**
 * `markdown` with the `## ` section that starts at `heading` replaced by `body` (up to the next `## ` heading), or
 * `body` appended when no such heading exists. `body` holds its own heading; one blank line follows it.
 */
export function replaceSection(markdown: string, heading: string, body: string): string {
  const start = markdown.indexOf(heading);
  if (start < 0) return `${markdown.trimEnd()}\n\n${body.trimEnd()}\n`;
  const next = markdown.indexOf("\n## ", start + heading.length);
  return `${markdown.slice(0, start)}${body.trimEnd()}\n${next < 0 ? "" : markdown.slice(next)}`;
}

/**
 * Writes `section` into docs/benchmarks.md (`replaceSection`), in place of the section under its heading: `heading`,
 * by default the section's first line.
 */
export function writeBenchmarksSection(section: string, heading = section.slice(0, section.indexOf("\n"))): void {
  const file = path.join(ROOT, "docs/benchmarks.md");
  writeFileSync(file, replaceSection(readFileSync(file, "utf8"), heading, section));
}

/**
 * This process's arguments as a section of docs/benchmarks.md quotes them: the value of `--data` (a folder of
 * this machine) replaced by `placeholder`, so that the docs send nobody outside the repository.
 */
export function quotedArgs(placeholder: string): string[] {
  return process.argv.slice(2).map((a, i, all) => (all[i - 1] === "--data" ? placeholder : a));
}

export interface Started {
  child: ChildProcess;
  port: number;
}

/** A TCP port free right now on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Spawns `node --import tsx <script>` with its stdout discarded (the gateway logs every request, as
 * deployed) on a free port, passed in env `portVar` (PORT for the gateway and the floors, METRICS_PORT for
 * a worker's ops server), and waits until `GET <probe>` on that port answers 2xx or 404.
 * BENCH_GATEWAY_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) adds node flags to the gateway, and
 * BENCH_WORKER_NODE_ARGS to the worker services (`services/<name>-worker/...`).
 * @throws Error when the process exits or does not answer within 60 s.
 */
export async function startProcess(script: string, env: NodeJS.ProcessEnv, probe: string, portVar = "PORT"): Promise<Started> {
  const port = await freePort();
  const flags = script.includes("gateway")
    ? process.env.BENCH_GATEWAY_NODE_ARGS
    : script.includes("-worker/")
      ? process.env.BENCH_WORKER_NODE_ARGS
      : undefined;
  const extra = (flags ?? "").split(" ").filter(Boolean);
  const child = spawn(process.execPath, [...extra, "--import", "tsx", script], {
    cwd: ROOT,
    env: { ...process.env, ...env, [portVar]: String(port) },
    stdio: ["ignore", "ignore", "inherit"],
  });
  let exited: number | null | undefined;
  child.once("exit", (code) => {
    exited = code;
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== undefined) throw new Error(`${script} exited (${exited})`);
    const status = await fetch(`http://127.0.0.1:${port}${probe}`).then(
      (r) => r.status,
      () => 0,
    );
    if ((status >= 200 && status < 300) || status === 404) return { child, port };
    if (Date.now() > deadline) throw new Error(`${script} did not answer within 60 s`);
    await sleep(200);
  }
}

/** SIGTERM, then SIGKILL after 15 s. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  await Promise.race([exited, sleep(15_000).then(() => child.kill("SIGKILL"))]);
}

/** One JSON call with fetch. @throws Error with the status and body on a non-2xx answer. */
export async function api<T>(base: string, method: string, route: string, token: string | undefined, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** A JSON POST's status and parsed body (undefined when empty). */
export interface Posted {
  status: number;
  body: unknown;
}

/**
 * A keep-alive node:http client for many concurrent callers against one port (cheaper per request than
 * fetch, which matters when the client shares 2 cores with the system under test).
 */
export class JsonClient {
  private readonly agent: http.Agent;

  constructor(
    private readonly port: number,
    maxSockets: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  /** POSTs `body` as JSON with a bearer token. Rejects only on a transport error. */
  post(route: string, token: string, body: unknown): Promise<Posted> {
    const payload = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: "127.0.0.1",
          port: this.port,
          path: route,
          method: "POST",
          agent: this.agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload), authorization: `Bearer ${token}` },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : undefined });
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** What `seedExistingTasks` wrote. */
export interface SeededTasks {
  tasks: number;
  settled: number;
  pending: number;
  canceled: number;
  labels: number;
  seconds: number;
}

/** Labelers of the seeded history (their keys are random hashes nobody holds). */
const HISTORY_LABELERS = 20;

/** question and options of the seeded tasks (their label space) */
const SEED_QUESTION = "Which animal is in the picture?";
const SEED_OPTIONS = ["cat", "dog", "bird"];

/**
 * Seeds `count` existing tasks of `customerId` with plain SQL (`INSERT ... SELECT generate_series`, in
 * chunks of 100,000), created over the 30 days before now: 97% settled by consensus (3 agreeing labels,
 * each with its labeled claim, one hash-chained-looking ledger record and a routed `task.settled`
 * event, as settlement writes them), 2% pending (open, claimable) and 1% canceled. The labels come from
 * 20 history labelers inserted here. The ledger records continue no real chain: a settlement appends
 * after the last one, which is all the hot paths read. Ends with VACUUM (ANALYZE), which autovacuum would
 * otherwise run during the first measurement: at 1,000,000 tasks its 24 s vacuum made the first lag run after the
 * seeding 17-25x slower than the second (p50 2,105 then 123 ms over HTTP).
 */
export async function seedExistingTasks(pool: Pool, customerId: string, count: number): Promise<SeededTasks> {
  const started = Date.now();
  const tag = randomBytes(4).toString("hex");
  const labelers = Array.from({ length: HISTORY_LABELERS }, (_, i) => `lbl_seed${tag}${String(i).padStart(3, "0")}`);
  await pool.query(
    `INSERT INTO labelers (id, name, key_hash, hint)
     SELECT id, 'history ' || id, md5(id || random()::text) || md5(random()::text), 'lk_…' FROM unnest($1::text[]) AS id`,
    [labelers],
  );
  // the label space of the seeded tasks (the same one the bench's own tasks of that question join)
  const spaceId = labelSpaceId(customerId, SEED_QUESTION, SEED_OPTIONS);
  await pool.query(
    "INSERT INTO label_spaces (id, customer_id, question, options) VALUES ($1, $2, $3, $4::text[]) ON CONFLICT (id) DO NOTHING",
    [spaceId, customerId, SEED_QUESTION, SEED_OPTIONS],
  );
  const chunk = 100_000;
  for (let start = 0; start < count; start += chunk) {
    const n = Math.min(chunk, count - start);
    // i runs over the whole seed so that created_at increases with i; `kind` by i % 100: 0-96 settled, 97-98 pending, 99 canceled
    await pool.query(
      `INSERT INTO tasks (id, customer_id, label_space_id, task_type, data_url, question, options, consensus_threshold, max_labels, metadata,
         status, labels_collected, label_counts, claim_cap, quota_reserved, consensus_label, confidence, resolution,
         ledger_txid, settled_at, canceled_at, last_label_id, last_label_at, created_at, updated_at)
       SELECT 'tsk_' || $2 || lpad(i::text, 9, '0'), $1, $6, 'image_classification', 'https://img.example.com/seed/' || i || '.jpg',
         'Which animal is in the picture?', ARRAY['cat','dog','bird'], 3, 7, '{"source":"seed"}'::jsonb,
         CASE WHEN i % 100 < 97 THEN 'settled' WHEN i % 100 < 99 THEN 'pending' ELSE 'canceled' END::"TaskStatus",
         CASE WHEN i % 100 < 97 THEN 3 ELSE 0 END,
         CASE WHEN i % 100 < 97 THEN '{"cat":3}'::jsonb ELSE '{}'::jsonb END,
         CASE WHEN i % 100 < 97 THEN 0 ELSE 3 END, 3,
         CASE WHEN i % 100 < 97 THEN 'cat' END, CASE WHEN i % 100 < 97 THEN 0.9876 END,
         CASE WHEN i % 100 < 97 THEN 'consensus'::"Resolution" END,
         CASE WHEN i % 100 < 97 THEN '0x' || encode(sha256(('seed' || $2 || i)::bytea), 'hex') END,
         CASE WHEN i % 100 < 97 THEN c + interval '90 seconds' END,
         CASE WHEN i % 100 = 99 THEN c + interval '1 hour' END,
         CASE WHEN i % 100 < 97 THEN 'lab_' || $2 || lpad(i::text, 9, '0') || '2' END,
         CASE WHEN i % 100 < 97 THEN c + interval '60 seconds' END,
         c, c + interval '90 seconds'
       FROM generate_series($3::int, $4::int) AS i
       CROSS JOIN LATERAL (SELECT now() - interval '30 days' + (interval '30 days' * i / $5::int) AS c) t`,
      [customerId, tag, start, start + n - 1, count, spaceId],
    );
    // 3 labeled claims and 3 labels per settled task, by history labelers i, i+1, i+2 (mod 20)
    await pool.query(
      `INSERT INTO claims (id, task_id, labeler_id, status, expires_at, created_at)
       SELECT 'clm_' || $1 || lpad(i::text, 9, '0') || k, 'tsk_' || $1 || lpad(i::text, 9, '0'), ($2::text[])[1 + (i + k) % 20],
         'labeled', c + interval '10 minutes', c + k * interval '20 seconds'
       FROM generate_series($3::int, $4::int) AS i
       CROSS JOIN generate_series(0, 2) AS k
       CROSS JOIN LATERAL (SELECT now() - interval '30 days' + (interval '30 days' * i / $5::int) AS c) t
       WHERE i % 100 < 97`,
      [tag, labelers, start, start + n - 1, count],
    );
    await pool.query(
      `INSERT INTO labels (id, task_id, customer_id, label_space_id, labeler_id, claim_id, value, created_at)
       SELECT 'lab_' || $1 || lpad(i::text, 9, '0') || k, 'tsk_' || $1 || lpad(i::text, 9, '0'), $6, $7, ($2::text[])[1 + (i + k) % 20],
         'clm_' || $1 || lpad(i::text, 9, '0') || k, 'cat', c + interval '20 seconds' + k * interval '20 seconds'
       FROM generate_series($3::int, $4::int) AS i
       CROSS JOIN generate_series(0, 2) AS k
       CROSS JOIN LATERAL (SELECT now() - interval '30 days' + (interval '30 days' * i / $5::int) AS c) t
       WHERE i % 100 < 97`,
      [tag, labelers, start, start + n - 1, count, customerId, spaceId],
    );
    await pool.query(
      `INSERT INTO ledger_entries (txid, task_id, prev_hash, hash, payload, created_at)
       SELECT t.ledger_txid, t.id, encode(sha256(('prev' || t.id)::bytea), 'hex'), substr(t.ledger_txid, 3),
         jsonb_build_object('task_id', t.id, 'consensus_label', 'cat', 'confidence', 0.9876), t.settled_at
       FROM tasks t WHERE t.id >= 'tsk_' || $1 || lpad($2::text, 9, '0') AND t.id <= 'tsk_' || $1 || lpad($3::text, 9, '0')
         AND t.status = 'settled'
       ORDER BY t.settled_at`,
      [tag, start, start + n - 1],
    );
    await pool.query(
      `INSERT INTO events (id, type, task_id, customer_id, payload, created_at, recorded_at)
       SELECT 'evt_' || substr(t.id, 5), 'task.settled', t.id, t.customer_id,
         jsonb_build_object('event', 'task.settled', 'task_id', t.id, 'consensus_label', 'cat', 'confidence', 0.9876,
           'ledger_txid', t.ledger_txid, 'settled_at', t.settled_at),
         t.settled_at, t.settled_at
       FROM tasks t WHERE t.id >= 'tsk_' || $1 || lpad($2::text, 9, '0') AND t.id <= 'tsk_' || $1 || lpad($3::text, 9, '0')
         AND t.status = 'settled'`,
      [tag, start, start + n - 1],
    );
    log(`seeded ${start + n} of ${count} existing tasks`);
  }
  await pool.query("VACUUM (ANALYZE)");
  const settled = Math.floor(count / 100) * 97 + Math.min(count % 100, 97);
  const canceled = Math.floor(count / 100);
  return {
    tasks: count,
    settled,
    pending: count - settled - canceled,
    canceled,
    labels: settled * 3,
    seconds: Math.round((Date.now() - started) / 100) / 10,
  };
}

/** Where a bench's services run: its own database and Redis prefix (both deleted by the bench at the end). */
export interface BenchTarget {
  /** the database's name, `lgbench_<bench>_<run id>` */
  database: string;
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  /** the random id in the database name and the prefix (8 hex digits), for other names of the run */
  runId: string;
  adminToken: string;
  encryptionKey: string;
}

/**
 * A fresh target for bench `name`: database `lgbench_<name>_<id>` on BENCH_PG_URL (default the machine's
 * Postgres), Redis prefix `lgbench:<name>:<id>` on BENCH_REDIS_URL, a random admin token and encryption key.
 */
export function benchTarget(name: string): BenchTarget {
  const serverUrl = process.env.BENCH_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  const runId = randomBytes(4).toString("hex");
  const database = `lgbench_${name}_${runId}`;
  return {
    database,
    databaseUrl: withDatabase(serverUrl, database),
    redisUrl: process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379",
    prefix: `lgbench:${name}:${runId}`,
    runId,
    adminToken: `bench-admin-${randomBytes(12).toString("hex")}`,
    encryptionKey: randomBytes(32).toString("hex"),
  };
}

/** Stops `children`, drops the target's database and deletes its Redis keys (failures are logged). */
export async function tearDown(target: BenchTarget, children: ChildProcess[]): Promise<void> {
  for (const child of children) await stop(child);
  await dropDatabase(target.databaseUrl).catch((err: unknown) => log(`could not drop ${target.database}: ${(err as Error).message}`));
  const deleted = await deleteKeysWithPrefix(target.redisUrl, target.prefix);
  log(`dropped database ${target.database} and ${deleted} Redis keys under ${target.prefix}`);
}

export type ServiceName = "gateway" | "consensus-worker" | "webhook-worker" | "manifest-worker";

/**
 * Starts the real service processes named in `services` (`node --import tsx services/<name>/src/main.ts`),
 * the gateway first, with rate limits and quotas far above what a bench can use, outbound calls to local
 * URLs allowed, and each worker's ops server on a free port (probed on /healthz). `extraEnv` is added to
 * every process. Returns them by name (the caller stops them).
 */
export async function startServices(
  target: BenchTarget,
  services: ServiceName[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<Map<ServiceName, Started>> {
  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: target.databaseUrl,
    REDIS_URL: target.redisUrl,
    QUEUE_PREFIX: target.prefix,
    ADMIN_TOKEN: target.adminToken,
    ENCRYPTION_KEY: target.encryptionKey,
    ALLOW_PRIVATE_URLS: "true",
    HOST: "127.0.0.1",
    RATE_LIMIT_PRODUCTION: "1000000000",
    // a bench is one client address that may sign up a customer per run (bench:quality: 31 replays)
    RATE_LIMIT_REGISTRATIONS_PER_HOUR: "1000000000",
    PRODUCTION_LABEL_QUOTA: "1000000000",
    ...extraEnv,
  };
  const started = new Map<ServiceName, Started>();
  for (const name of services) {
    const script = `services/${name}/src/main.ts`;
    const s =
      name === "gateway"
        ? await startProcess(script, { ...env, METRICS_PORT: "0" }, "/v1/health")
        : await startProcess(script, env, "/healthz", "METRICS_PORT");
    started.set(name, s);
  }
  return started;
}

/** A production customer created through the gateway (registration, then the admin upgrade); its key. */
export async function productionCustomer(base: string, adminToken: string, name: string): Promise<{ id: string; key: string }> {
  const customer = await api<{ customer_id: string; api_key: string }>(base, "POST", "/v1/customers", undefined, {
    name,
    email: `${name}-${randomBytes(4).toString("hex")}@example.com`,
  });
  const upgraded = await api<{ api_key?: string }>(base, "POST", `/v1/admin/customers/${customer.customer_id}/upgrade`, adminToken, {});
  return { id: customer.customer_id, key: upgraded.api_key ?? customer.api_key };
}

/** `count` labelers created with the admin route (20 requests at a time); their ids and keys. */
export async function createLabelers(base: string, adminToken: string, count: number): Promise<{ id: string; key: string }[]> {
  const out: { id: string; key: string }[] = [];
  for (let start = 0; start < count; start += 20) {
    const group = await Promise.all(
      Array.from({ length: Math.min(20, count - start) }, (_, i) =>
        api<{ labeler_id: string; api_key: string }>(base, "POST", "/v1/admin/labelers", adminToken, {
          name: `bench labeler ${start + i}`,
        }),
      ),
    );
    out.push(...group.map((l) => ({ id: l.labeler_id, key: l.api_key })));
  }
  return out;
}

/** A task body of the benches: three options, consensus at 3 agreeing labels. */
export function benchTask(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: "image_classification",
    data_url: `https://img.example.com/cats/${i}.jpg`,
    label_spec: { question: "Which animal is in the picture?", options: ["cat", "dog", "bird"] },
    consensus_threshold: 3,
    metadata: { source: "bench" },
    ...extra,
  };
}

/** Submits `count` open tasks through `POST /v1/tasks/batch`, 1,000 per call, two calls at a time. */
export async function submitOpenTasks(base: string, key: string, count: number, extra: Record<string, unknown> = {}): Promise<void> {
  const calls = Array.from({ length: Math.ceil(count / 1000) }, (_, c) => Math.min(1000, count - c * 1000));
  for (let c = 0; c < calls.length; c += 2) {
    await Promise.all(
      calls
        .slice(c, c + 2)
        .map((n, j) =>
          api(base, "POST", "/v1/tasks/batch", key, { tasks: Array.from({ length: n }, (_, i) => benchTask((c + j) * 1000 + i, extra)) }),
        ),
    );
  }
}

/** A labeler: id and API key. */
export interface Labeler {
  id: string;
  key: string;
}

/** A claim as `POST /v1/labeling/claims` answers it (201), the fields an answer is made from. */
export interface ClaimBody {
  claim_id: string;
  task_id: string;
  task_type: string;
  data_url: string;
  label_spec: Record<string, unknown>;
  data_text?: string;
}

/** The benches' single-choice answer: "cat" 85% of the time, else "dog". */
export function catOrDog(): { label: string } {
  return { label: Math.random() < 0.85 ? "cat" : "dog" };
}

/**
 * One claim + label cycle of a labeler: true when a label was recorded, false when nothing was open.
 * `answerOf` makes the answer body from the claim (default `catOrDog`).
 */
export async function claimAndLabel(
  client: JsonClient,
  labeler: Labeler,
  stats: CycleStats,
  answerOf: (claim: ClaimBody) => unknown = catOrDog,
): Promise<boolean> {
  const t0 = nowMs();
  const claim = await client.post("/v1/labeling/claims", labeler.key, {});
  const t1 = nowMs();
  stats.claimMs.push(t1 - t0);
  if (claim.status === 204) {
    stats.empty++;
    return false;
  }
  if (claim.status !== 201) {
    stats.errors++;
    stats.statuses[`claim ${claim.status}`] = (stats.statuses[`claim ${claim.status}`] ?? 0) + 1;
    return false;
  }
  const body = claim.body as ClaimBody;
  const label = await client.post(`/v1/labeling/claims/${body.claim_id}/label`, labeler.key, answerOf(body));
  stats.labelMs.push(nowMs() - t1);
  if (label.status !== 201) {
    stats.errors++;
    // the status and the error's message (e.g. 409 "task no longer accepts labels": decided while claimed)
    const message = (label.body as { error?: unknown } | undefined)?.error;
    const key = `label ${label.status}${typeof message === "string" ? ` ${message}` : ""}`;
    stats.statuses[key] = (stats.statuses[key] ?? 0) + 1;
    return false;
  }
  stats.labels++;
  return true;
}

export interface CycleStats {
  labels: number;
  empty: number;
  errors: number;
  /** non-2xx answers by request and status */
  statuses: Record<string, number>;
  claimMs: number[];
  labelMs: number[];
}

export function newStats(): CycleStats {
  return { labels: 0, empty: 0, errors: 0, statuses: {}, claimMs: [], labelMs: [] };
}
