/**
 * Manifest ingestion (DESIGN §8): stream the manifest, parse JSONL line by line (`data_url` or Ground
 * Truth's `source-ref`; the whole line is kept as `source`), and create tasks in chunks, each chunk in one
 * transaction with its quota reservation and the new resume point (`jobs.lines_ingested`).
 *
 * Tasks are created `pending` but are not claimable while their job is not `labeling`: claims check the
 * job's status (services/gateway/src/labeling.ts, `claimable`). At the end of the manifest one UPDATE of
 * the job row (`labeling`) opens all its tasks at once, so no task row is written twice. Rule on failure
 * (malformed line, missing object, bad credentials, quota): the job is `failed` with a precise `error`,
 * and its tasks are deleted and their quota returned, so a failed job leaves no task behind and none of
 * its tasks was ever labeled.
 *
 * Resume: a restarted ingestion re-reads the manifest from the start and skips lines up to
 * `lines_ingested`; `(job_id, manifest_line)` is unique, so a chunk written twice creates nothing twice.
 */
import type { Readable } from "node:stream";
import { type Logger, newId, type SecretBox } from "@labelgate/core";
import { type PrismaClient, QuotaExhaustedError, releaseQuota, reserveQuota } from "@labelgate/store";
import type { QueueClient } from "@labelgate/queue";
import { LineTooLongError, readLines } from "./lines";
import { openRead, PermanentStorageError, type StorageCredentials, type StorageOptions } from "./storage";

export interface IngestDeps {
  prisma: PrismaClient;
  queue: QueueClient;
  secretBox: SecretBox;
  logger: Logger;
  storage: StorageOptions;
  /** manifest lines per transaction (default 1000) */
  chunkSize?: number;
}

/** A problem with the manifest or its access that a retry cannot fix: the job fails with this message. */
export class ManifestError extends Error {
  override name = "ManifestError";
}

const DATA_URL_SCHEMES = new Set(["http:", "https:", "s3:", "gs:"]);

/** Parses one manifest line. @returns undefined for a blank line. @throws ManifestError naming the line. */
export function parseManifestLine(line: string, number: number): { dataUrl: string; source: Record<string, unknown> } | undefined {
  if (line.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new ManifestError(`line ${number}: not valid JSON (${(err as Error).message})`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new ManifestError(`line ${number}: not a JSON object`);
  const obj = value as Record<string, unknown>;
  const url = obj.data_url ?? obj["source-ref"];
  if (typeof url !== "string" || url === "") throw new ManifestError(`line ${number}: no "data_url" or "source-ref" string`);
  let scheme: string;
  try {
    scheme = new URL(url).protocol;
  } catch {
    throw new ManifestError(`line ${number}: "${url.slice(0, 200)}" is not a URL`);
  }
  if (!DATA_URL_SCHEMES.has(scheme)) throw new ManifestError(`line ${number}: data URL must be http(s), s3:// or gs://`);
  if (url.length > 2048) throw new ManifestError(`line ${number}: data URL longer than 2048 characters`);
  return { dataUrl: url, source: obj };
}

/**
 * Ingests a job's manifest. Idempotent: a job past `ingesting` is left alone.
 * @throws transient errors while attempts remain (the queue retries); permanent errors, and transient
 * ones on the last attempt, fail the job and return normally.
 */
export async function ingestManifest(
  deps: IngestDeps,
  jobId: string,
  attempt: { attemptsMade: number; maxAttempts: number } = { attemptsMade: 0, maxAttempts: 1 },
): Promise<"ingested" | "failed" | "skipped"> {
  const { prisma } = deps;
  const job = await prisma.job.findUnique({ where: { id: jobId } });
  if (!job) throw new Error(`job ${jobId} not found`);
  if (job.status !== "queued" && job.status !== "ingesting") return "skipped";
  await prisma.job.update({ where: { id: jobId }, data: { status: "ingesting", startedAt: job.startedAt ?? new Date() } });

  const credentials = job.credentialsCiphertext
    ? (JSON.parse(deps.secretBox.open(job.credentialsCiphertext, job.id)) as StorageCredentials)
    : undefined;
  const chunkSize = deps.chunkSize ?? 1000;
  const resumeAfter = job.linesIngested;
  let stream: Readable | undefined;
  // Chunks are pipelined: while one is read and parsed, up to two are written on two connections. A chunk
  // inserts its tasks at once but reserves its quota, moves `lines_ingested` and commits only after the
  // chunk before it committed (it awaits it inside its transaction, and rolls back if that one failed),
  // so the committed chunks are always a prefix of the manifest and `lines_ingested` its end.
  let last: Promise<void> = Promise.resolve();
  let beforeLast: Promise<void> = Promise.resolve();
  const write = async (chunk: Chunk, throughLine: number) => {
    await beforeLast;
    const previous = last;
    const next = writeChunk(deps, job, chunk, throughLine, previous);
    // its error surfaces where it is awaited (a handler is attached so that it is never unhandled)
    next.catch(() => undefined);
    beforeLast = previous;
    last = next;
  };
  let lastLine = resumeAfter;
  try {
    stream = await openRead(job.manifestUrl, credentials, deps.storage);
    let chunk = newChunk();
    for await (const { line, number } of readLines(stream)) {
      if (number <= resumeAfter) continue;
      lastLine = number;
      const parsed = parseManifestLine(line, number);
      if (parsed) addRow(chunk, line, number);
      if (chunk.rows >= chunkSize) {
        await write(chunk, number);
        chunk = newChunk();
      }
    }
    await write(chunk, lastLine);
    await last;
  } catch (caught) {
    stream?.destroy();
    let err = caught;
    // No write may be in flight when the job fails (its tasks are deleted). The first failed chunk
    // comes from earlier in the manifest than whatever the reader met since: its error is the one reported.
    for (const pending of [beforeLast, last]) {
      try {
        await pending;
      } catch (writeErr) {
        if (err === caught) err = writeErr;
      }
    }
    if (
      err instanceof ManifestError ||
      err instanceof PermanentStorageError ||
      err instanceof LineTooLongError ||
      err instanceof QuotaExhaustedError
    ) {
      await failJob(
        deps,
        job.id,
        job.customerId,
        err instanceof QuotaExhaustedError ? `quota exhausted while ingesting: ${err.message}` : err.message,
      );
      return "failed";
    }
    if (attempt.attemptsMade + 1 >= attempt.maxAttempts) {
      // Transient errors on every attempt: the job ends failed, its tasks gone, its quota returned.
      await failJob(
        deps,
        job.id,
        job.customerId,
        `manifest could not be read after ${attempt.maxAttempts} attempts: ${(err as Error).message}`,
      );
      return "failed";
    }
    throw err;
  }

  // The whole manifest is in: its tasks become claimable at once, by the job's status (one row). The job
  // row is locked first and the check runs in a later statement (fresh snapshot), as in completeJobIfDone,
  // so a cancel of the job's last open task committed meanwhile is seen: such a job completes at once.
  const [, opened] = await prisma.$transaction([
    prisma.$executeRaw`SELECT 1 FROM jobs WHERE id = ${jobId} FOR UPDATE`,
    prisma.$queryRaw<{ status: string; task_count: number }[]>`
      WITH open_tasks AS (SELECT EXISTS (SELECT 1 FROM tasks WHERE job_id = ${jobId} AND status IN ('pending', 'labeling', 'settling')) AS has_open)
      UPDATE jobs SET status = CASE WHEN (SELECT has_open FROM open_tasks) THEN 'labeling'::"JobStatus" ELSE 'completed'::"JobStatus" END,
        ingested_at = now(), completed_at = CASE WHEN (SELECT has_open FROM open_tasks) THEN completed_at ELSE now() END, updated_at = now()
      WHERE id = ${jobId} AND status = 'ingesting'
      RETURNING status::text AS status, task_count`,
  ]);
  deps.logger.info({ job_id: jobId, tasks: opened[0]?.task_count, status: opened[0]?.status }, "manifest ingested");
  return "ingested";
}

/**
 * One chunk of manifest lines to write: `rows` records `<task id>\t<line number>\t<line text>` joined with
 * "\n" in one string (a line of the manifest never contains "\n", an id or a number never a tab). One
 * string parameter costs the driver far less than parallel arrays of a thousand elements each.
 */
interface Chunk {
  rows: number;
  records: string;
}

function newChunk(): Chunk {
  return { rows: 0, records: "" };
}

function addRow(chunk: Chunk, line: string, number: number): void {
  chunk.records += `${chunk.rows > 0 ? "\n" : ""}${newId("task")}\t${number}\t${line}`;
  chunk.rows++;
}

/**
 * Writes a chunk in one transaction: its tasks (one INSERT of all its rows), then, once `previous` (the
 * chunk before it) committed, their quota reservation and the new resume point `jobs.lines_ingested` =
 * `throughLine`. Lines already written by an interrupted run are skipped by the unique
 * (job_id, manifest_line) and neither counted nor reserved.
 */
async function writeChunk(
  deps: IngestDeps,
  job: {
    id: string;
    customerId: string;
    taskType: string;
    question: string;
    options: string[];
    consensusThreshold: number;
    maxLabels: number;
    callbackUrl: string | null;
  },
  chunk: Chunk,
  throughLine: number,
  previous: Promise<void>,
): Promise<void> {
  await deps.prisma.$transaction(
    async (tx) => {
      let created = 0;
      if (chunk.rows > 0) {
        // `source` is the line itself (JSON.parse accepted it; Postgres parses it once more), `data_url` the
        // field parseManifestLine validated: "data_url" unless absent or null, else "source-ref".
        const rows = await tx.$queryRaw<{ created: number }[]>`
          WITH created AS (
            INSERT INTO tasks (id, customer_id, job_id, manifest_line, source, status, task_type, data_url, question, options,
                               callback_url, consensus_threshold, max_labels, labels_needed, quota_reserved)
            SELECT r.id, ${job.customerId}, ${job.id}, r.line::int, r.source, 'pending'::"TaskStatus", ${job.taskType},
                   coalesce(r.source->>'data_url', r.source->>'source-ref'), ${job.question}, ${job.options}::text[],
                   ${job.callbackUrl}, ${job.consensusThreshold}, ${job.maxLabels}, ${Math.min(job.maxLabels, job.consensusThreshold)},
                   ${job.consensusThreshold}
            FROM unnest(string_to_array(${chunk.records}, E'\n')) AS rec,
                 LATERAL (SELECT split_part(rec, E'\t', 1) AS id, split_part(rec, E'\t', 2) AS line) AS f,
                 LATERAL (SELECT f.id, f.line, substr(rec, length(f.id) + length(f.line) + 3)::jsonb AS source) AS r
            ON CONFLICT (job_id, manifest_line) DO NOTHING
            RETURNING 1
          )
          SELECT count(*)::int AS created FROM created`;
        created = rows[0]?.created ?? 0;
      }
      // The chunk before this one commits first (its error, if it failed, rolls this one back).
      await previous;
      // Reserve only for tasks really created (a resumed chunk may already exist).
      if (created > 0) await reserveQuota(tx, job.customerId, created * job.consensusThreshold);
      await tx.$executeRaw`
        UPDATE jobs SET lines_ingested = ${throughLine}, task_count = task_count + ${created}, updated_at = now() WHERE id = ${job.id}`;
    },
    { maxWait: 10_000, timeout: 60_000 },
  );
}

/**
 * Fails the job with `error`, deletes its tasks (never claimable: the job never reached `labeling`) and
 * returns the quota they still hold (a task the customer canceled meanwhile returned its own already).
 */
async function failJob(deps: IngestDeps, jobId: string, customerId: string, error: string): Promise<void> {
  await deps.prisma.$transaction(async (tx) => {
    const removed = await tx.$queryRaw<{ reserved: bigint | null; n: bigint }[]>`
      WITH gone AS (DELETE FROM tasks WHERE job_id = ${jobId} AND status IN ('staged', 'pending', 'canceled') RETURNING status, quota_reserved)
      SELECT sum(quota_reserved) FILTER (WHERE status <> 'canceled') AS reserved, count(*) AS n FROM gone`;
    await releaseQuota(tx, customerId, Number(removed[0]?.reserved ?? 0));
    await tx.job.update({ where: { id: jobId }, data: { status: "failed", error, taskCount: 0 } });
  });
  deps.logger.warn({ job_id: jobId, error }, "manifest job failed");
}
