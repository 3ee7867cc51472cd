/**
 * Shared helpers of the manifest-job tests: manifest servers (local http, s3rver, fake GCS), job polling,
 * labeling every task of a job, and the line-by-line check of the JSONL export against the manifest.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { createLogger, type Logger } from "@labelgate/core";
import { type LocalS3, startS3 } from "../../../test/s3";
import { type ApiResponse, createLabeler, eventually, label, type System } from "../../../test/system";

export const SPEC = { question: "What is in the picture?", options: ["cat", "dog"] };

export type JobBody = Record<string, unknown> & {
  job_id: string;
  status: string;
  task_count: number;
  lines_ingested: number;
  tasks_settled: number;
  progress: number;
  error: string | null;
};

/** POST /v1/jobs with the defaults of these tests (threshold 1: one label settles a task). */
export async function postJob(sys: System, key: string, body: Record<string, unknown>): Promise<ApiResponse> {
  return sys.api("POST", "/v1/jobs", { token: key, body: { label_spec: SPEC, consensus_threshold: 1, ...body } });
}

/** Creates a job and returns its id; fails the test on anything but 202. */
export async function createJob(sys: System, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await postJob(sys, key, body);
  if (res.status !== 202) throw new Error(`job creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return String(res.body.job_id);
}

export async function getJob(sys: System, key: string, jobId: string): Promise<JobBody> {
  const res = await sys.api<JobBody>("GET", `/v1/jobs/${jobId}`, { token: key });
  if (res.status !== 200) throw new Error(`GET job failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Waits until the job reaches `status` and returns its body; fails early if it reaches another final state. */
export async function waitForStatus(sys: System, key: string, jobId: string, status: string, timeoutMs = 30_000): Promise<JobBody> {
  return eventually(
    async () => {
      const job = await getJob(sys, key, jobId);
      if (job.status === status) return job;
      const final = ["failed", "completed"];
      if (final.includes(job.status) && job.status !== status) {
        throw new Error(`job ${jobId} is ${job.status} (error: ${job.error}), expected ${status}`);
      }
      return undefined;
    },
    timeoutMs,
    `job ${jobId} to be ${status}`,
  );
}

export async function quotaUsed(sys: System, key: string): Promise<number> {
  const res = await sys.api<{ label_quota_used: number }>("GET", "/v1/customers/me", { token: key });
  if (res.status !== 200) throw new Error(`GET /v1/customers/me failed: ${res.status}`);
  return res.body.label_quota_used;
}

export interface DbTask {
  id: string;
  manifestLine: number | null;
  status: string;
  dataUrl: string;
  source: unknown;
}

export async function jobTasks(sys: System, jobId: string): Promise<DbTask[]> {
  return sys.db.prisma.task.findMany({
    where: { jobId },
    orderBy: { manifestLine: "asc" },
    select: { id: true, manifestLine: true, status: true, dataUrl: true, source: true },
  });
}

/** Claims and labels every open task with `value` (a few requests in flight), then waits for the job to complete. */
export async function labelAllAndComplete(sys: System, key: string, jobId: string, value = "dog", timeoutMs = 60_000): Promise<JobBody> {
  const labeler = await createLabeler(sys, `labeler-${jobId}`);
  const tasks = (await jobTasks(sys, jobId)).filter((t) => t.status === "pending" || t.status === "labeling");
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < tasks.length; i = next++) {
      const res = await label(sys, labeler.key, (tasks[i] as DbTask).id, value);
      if (res.status !== 201) throw new Error(`label failed: ${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
  return waitForStatus(sys, key, jobId, "completed", timeoutMs);
}

export interface ExportResponse {
  status: number;
  contentType: string | null;
  text: string;
}

export async function fetchExport(sys: System, key: string, jobId: string): Promise<ExportResponse> {
  const res = await fetch(`${sys.baseUrl}/v1/jobs/${jobId}/export`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, contentType: res.headers.get("content-type"), text: await res.text() };
}

/**
 * Fetches a completed job's export (GET /v1/jobs/{id}/export) and checks it: 200, `application/x-ndjson`,
 * and line by line against the manifest (`expectExportMatches`, every task labeled `consensusLabel`).
 * @returns the export's text
 */
export async function expectExport(
  sys: System,
  key: string,
  jobId: string,
  manifestLines: string[],
  consensusLabel: string,
): Promise<string> {
  const exp = await fetchExport(sys, key, jobId);
  expect(exp.status).toBe(200);
  expect(exp.contentType).toContain("application/x-ndjson");
  expectExportMatches(exp.text, manifestLines, await jobTasks(sys, jobId), consensusLabel);
  return exp.text;
}

/**
 * Waits (20 s at most) until a completed job's export is written to its output_url and checks the job has
 * no error. Nothing enqueues that write when the job completes: the periodic reconciliation (every
 * RECONCILE_INTERVAL_MS in production) finds completed jobs whose export is not written and enqueues it.
 * The test system schedules no reconciliation, so this schedules one, as production does.
 * @returns the job's body once `export_written_at` is set
 */
export async function waitForExportWritten(sys: System, key: string, jobId: string): Promise<JobBody> {
  await sys.queue.schedule("reconcile", 500, {});
  const written = await eventually(
    async () => {
      const j = await getJob(sys, key, jobId);
      return j.export_written_at ? j : undefined;
    },
    20_000,
    "export to output_url",
  );
  expect(written.error).toBeNull();
  return written;
}

export const EXPORT_KEYS = ["confidence", "consensus_label", "data_url", "ledger_txid", "settled_at", "source", "task_id"];

/**
 * Checks an export line by line against the manifest: one line per non-blank manifest line, in manifest
 * order, each `{task_id, data_url, consensus_label, confidence, ledger_txid, settled_at, source}` with the
 * task of that manifest line and `source` echoing the manifest line.
 */
export function expectExportMatches(text: string, manifestLines: string[], tasks: DbTask[], consensusLabel: string): void {
  expect(text.endsWith("\n")).toBe(true);
  const out = text.slice(0, -1).split("\n");
  const expected: { lineNo: number; source: Record<string, unknown> }[] = [];
  manifestLines.forEach((l, i) => {
    if (l.trim() !== "") expected.push({ lineNo: i + 1, source: JSON.parse(l) as Record<string, unknown> });
  });
  expect(out).toHaveLength(expected.length);
  const taskByLine = new Map(tasks.map((t) => [t.manifestLine, t]));
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i] as { lineNo: number; source: Record<string, unknown> };
    const o = JSON.parse(out[i] as string) as Record<string, unknown>;
    const task = taskByLine.get(e.lineNo);
    const where = `export line ${i + 1} (manifest line ${e.lineNo})`;
    if (!task) throw new Error(`${where}: no task`);
    try {
      expect(Object.keys(o).sort()).toEqual(EXPORT_KEYS);
      expect(o.task_id).toBe(task.id);
      expect(o.data_url).toBe(e.source.data_url ?? e.source["source-ref"]);
      expect(o.source).toEqual(e.source);
      expect(o.consensus_label).toBe(consensusLabel);
      expect(typeof o.confidence).toBe("number");
      expect(o.confidence as number).toBeGreaterThan(0);
      expect(o.confidence as number).toBeLessThanOrEqual(1);
      expect(o.ledger_txid).toMatch(/^0x[0-9a-f]{64}$/);
      expect(typeof o.settled_at).toBe("string");
      expect(new Date(o.settled_at as string).toISOString()).toBe(o.settled_at);
    } catch (err) {
      throw new Error(`${where}: ${(err as Error).message}`);
    }
  }
}

/** A local http server answering every GET with `handler` (or a fixed body). */
export interface ManifestServer {
  url(path?: string): string;
  requests: number;
  close(): Promise<void>;
}

export async function serveManifest(handler: string | http.RequestListener): Promise<ManifestServer> {
  const state = { requests: 0 };
  const server = http.createServer((req, res) => {
    state.requests++;
    if (typeof handler === "string") {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.end(handler);
    } else {
      handler(req, res);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path = "/manifest.jsonl") => `http://127.0.0.1:${port}${path}`,
    get requests() {
      return state.requests;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A promise and the function that resolves it. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open: () => open() };
}

export function s3Client(endpoint: string): S3Client {
  return new S3Client({
    region: "us-east-1",
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
  });
}

/** s3rver (test/s3.ts) and an S3 client of it; `close` destroys the client, then stops the server. */
export interface S3WithClient extends LocalS3 {
  client: S3Client;
}

/** Starts s3rver with `buckets` and a client of it. */
export async function startS3WithClient(buckets: string[]): Promise<S3WithClient> {
  const s3 = await startS3(buckets);
  const client = s3Client(s3.endpoint);
  const close = async () => {
    client.destroy();
    await s3.close();
  };
  return { ...s3, client, close };
}

export async function putS3(
  client: S3Client,
  bucket: string,
  key: string,
  body: string,
  contentType = "application/x-ndjson",
): Promise<void> {
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }));
}

/** Joins manifest lines into a JSONL body with a final newline. */
export function jsonl(lines: string[]): string {
  return `${lines.join("\n")}\n`;
}

/** A trace-level logger of the system under test whose lines are kept, to check what reaches the logs. */
export function captureLogs(): { logger: Logger; text: () => string } {
  const lines: string[] = [];
  const logger = createLogger("test", "trace", { write: (line: string) => void lines.push(line) });
  return { logger, text: () => lines.join("") };
}
