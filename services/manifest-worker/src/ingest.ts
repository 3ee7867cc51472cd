/**
 * Manifest ingestion (DESIGN §8): stream the manifest, parse JSONL line by line (`data_url` or Ground
 * Truth's `source-ref`; the whole line is kept as `source`), and create tasks in chunks, each chunk in one
 * transaction with its quota reservation and the new resume point (`jobs.lines_ingested`).
 *
 * Tasks are created `staged` (not claimable). At the end of the manifest one UPDATE makes them `pending`
 * and the job `labeling`. Rule on failure (malformed line, missing object, bad credentials, quota): the
 * job is `failed` with a precise `error`, and its staged tasks are deleted and their quota returned, so
 * a failed job leaves no task behind and none of its tasks was ever labeled.
 *
 * Resume: a restarted ingestion re-reads the manifest from the start and skips lines up to
 * `lines_ingested`; `(job_id, manifest_line)` is unique, so a chunk written twice creates nothing twice.
 */
import type { Readable } from "node:stream";
import { type Logger, newId, type SecretBox } from "@labelgate/core";
import { type Prisma, type PrismaClient, QuotaExhaustedError, releaseQuota, reserveQuota } from "@labelgate/db";
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

interface PendingRow {
  number: number;
  dataUrl: string;
  source: Record<string, unknown>;
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
  try {
    stream = await openRead(job.manifestUrl, credentials, deps.storage);
    let rows: PendingRow[] = [];
    let lastLine = resumeAfter;
    for await (const { line, number } of readLines(stream)) {
      if (number <= resumeAfter) continue;
      lastLine = number;
      const parsed = parseManifestLine(line, number);
      if (parsed) rows.push({ number, ...parsed });
      if (rows.length >= chunkSize) {
        await writeChunk(deps, job, rows, number);
        rows = [];
      }
    }
    await writeChunk(deps, job, rows, lastLine);
  } catch (err) {
    stream?.destroy();
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
      // Transient errors on every attempt: the job ends failed, its staged tasks gone, its quota returned.
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

  // The whole manifest is in: its tasks become claimable at once.
  await prisma.$transaction(async (tx) => {
    const opened =
      await tx.$executeRaw`UPDATE tasks SET status = 'pending', updated_at = now() WHERE job_id = ${jobId} AND status = 'staged'`;
    const current = await tx.job.findUniqueOrThrow({ where: { id: jobId }, select: { taskCount: true } });
    await tx.job.update({
      where: { id: jobId },
      data:
        current.taskCount === 0
          ? { status: "completed", ingestedAt: new Date(), completedAt: new Date() }
          : { status: "labeling", ingestedAt: new Date() },
    });
    deps.logger.info({ job_id: jobId, tasks: current.taskCount, opened }, "manifest ingested");
  });
  return "ingested";
}

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
  rows: PendingRow[],
  throughLine: number,
): Promise<void> {
  await deps.prisma.$transaction(async (tx) => {
    if (rows.length > 0) {
      const created = await tx.task.createMany({
        data: rows.map((r) => ({
          id: newId("task"),
          customerId: job.customerId,
          jobId: job.id,
          manifestLine: r.number,
          source: r.source as Prisma.InputJsonValue,
          status: "staged" as const,
          taskType: job.taskType,
          dataUrl: r.dataUrl,
          question: job.question,
          options: job.options,
          callbackUrl: job.callbackUrl,
          consensusThreshold: job.consensusThreshold,
          maxLabels: job.maxLabels,
          labelsNeeded: Math.min(job.maxLabels, job.consensusThreshold),
          quotaReserved: job.consensusThreshold,
        })),
        skipDuplicates: true,
      });
      // Reserve only for tasks really created (a resumed chunk may already exist).
      if (created.count > 0) await reserveQuota(tx, job.customerId, created.count * job.consensusThreshold);
      await tx.job.update({ where: { id: job.id }, data: { linesIngested: throughLine, taskCount: { increment: created.count } } });
    } else {
      await tx.job.update({ where: { id: job.id }, data: { linesIngested: throughLine } });
    }
  });
}

/** Fails the job with `error`, deletes its staged tasks and returns their reserved quota. */
async function failJob(deps: IngestDeps, jobId: string, customerId: string, error: string): Promise<void> {
  await deps.prisma.$transaction(async (tx) => {
    const removed = await tx.$queryRaw<{ reserved: bigint | null; n: bigint }[]>`
      WITH gone AS (DELETE FROM tasks WHERE job_id = ${jobId} AND status = 'staged' RETURNING quota_reserved)
      SELECT sum(quota_reserved) AS reserved, count(*) AS n FROM gone`;
    await releaseQuota(tx, customerId, Number(removed[0]?.reserved ?? 0));
    await tx.job.update({ where: { id: jobId }, data: { status: "failed", error, taskCount: 0 } });
  });
  deps.logger.warn({ job_id: jobId, error }, "manifest job failed");
}
