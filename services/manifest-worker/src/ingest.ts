/**
 * Manifest ingestion (contract §jobs): stream the manifest, parse JSONL line by line (`data_url` or Ground
 * Truth's `source-ref`; the whole line is kept as `source`), and create tasks in chunks, each chunk in one
 * transaction with its quota reservation and the new resume point (`jobs.lines_ingested`).
 *
 * Tasks are created `pending` but are not claimable while their job is not `labeling`: claims check the
 * job's status (packages/store/src/labeling.ts, `claimable`). At the end of the manifest one UPDATE of
 * the job row (`labeling`) opens all its tasks at once, so no task row is written twice. Rule on failure
 * (malformed line, missing object, bad credentials, quota): the job is `failed` with a precise `error`,
 * and its tasks are deleted and their quota returned, so a failed job leaves no task behind and none of
 * its tasks was ever labeled.
 *
 * Resume: a restarted ingestion re-reads the manifest from the start and skips lines up to
 * `lines_ingested`; `(job_id, manifest_line)` is unique, so a chunk written twice creates nothing twice.
 */
import type { Readable } from "node:stream";
import {
  type AnswerBody,
  type AnyLabelSpec,
  answerSchemaOf,
  answerShapeOf,
  choicesOf,
  codePointLength,
  dataUrlProblem,
  isReservedTaskType,
  MAX_TEXT_CODE_POINTS,
  manifestLineItems,
  prelabelField,
  prelabelIssues,
  storedLabelSpec,
} from "@labelgate/api";
import { type Logger, newId, type SecretBox } from "@labelgate/core";
import { taskKindOf } from "@labelgate/quality";
import type { FollowUpNudge } from "@labelgate/queue";
import { openRead, PermanentStorageError, type StorageCredentials, type StorageOptions } from "@labelgate/storage";
import { type Job, type ManifestChunk, QuotaExhaustedError, type Store } from "@labelgate/store";
import { LineTooLongError, readLines } from "./lines";

export interface IngestDeps {
  store: Store;
  /** the process's follow-up relay, nudged after a commit that wrote follow-up rows (docs/decisions/0300) */
  relay?: FollowUpNudge;
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

/** The longest `gold_explanation` of a line, in UTF-16 code units: a task body's limit (@labelgate/api). */
export const MAX_GOLD_EXPLANATION = 2000;

/** What a manifest line must give for a job of a type: its label_spec, and whether a line may carry the text. */
export interface LineRules {
  type: string;
  spec: AnyLabelSpec;
}

/** A parsed manifest line: its data URL, its stored gold answer (or undefined), the line as an object. */
export interface ManifestLine {
  dataUrl: string;
  /** the stored gold answer: an option, or the canonical JSON of a reserved type's `gold_answer` */
  goldLabel: string | undefined;
  /** the line's pre-label (contract §prelabels): its model and the stored value of its answer */
  prelabel?: { model: string; value: string };
  /** the item fields its type's lines carry beside data_url (pairwise: item b; docs/decisions/0305), stored as given */
  items: Record<string, string>;
  source: Record<string, unknown>;
}

/**
 * Parses one manifest line: `data_url` (or `source-ref`), and optionally the gold answer that makes the line a
 * gold task (contract §quality): `gold_label`, one of the job's options, for single choice;
 * `gold_answer`, an answer of the type (contract §task-types), for a reserved type. A line of a text_span job may carry
 * its text, `data_text` (a string of 1 to MAX_TEXT_CODE_POINTS code points); without it the task's text is the
 * body of its data URL, fetched after ingestion (`itemFetch`). A line of a type whose lines carry item fields
 * (@labelgate/api `manifestLineItems`: a pairwise line's `data_url_b`, or `data_text` and `data_text_b`) gives them
 * as that type's task body does, checked the same way. A gold line may carry `gold_explanation` (a string of
 * 1 to 2,000 characters, as a task body's), shown after a qualification training answer (contract §qualification);
 * the store takes it from the line.
 * @returns undefined for a blank line. @throws ManifestError naming the line.
 */
export function parseManifestLine(line: string, number: number, rules: LineRules): ManifestLine | undefined {
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
  // the rule of a task's data_url (@labelgate/api): a storage URL names a bucket and a key
  const problem = dataUrlProblem(url);
  if (problem) throw new ManifestError(`line ${number}: data URL ${problem}`);
  const lineItems = manifestLineItems(rules.type, url, obj);
  const itemIssue = lineItems.issues[0];
  if (itemIssue) throw new ManifestError(`line ${number}: "${itemIssue.path.join(".")}": ${itemIssue.message}`);
  const kind = taskKindOf(rules.type);
  const text = obj.data_text;
  if (kind.needsText && text !== undefined && text !== null) {
    if (typeof text !== "string" || text === "") throw new ManifestError(`line ${number}: "data_text" must be a non-empty string`);
    if (text.length > 4 * MAX_TEXT_CODE_POINTS || codePointLength(text) > MAX_TEXT_CODE_POINTS)
      throw new ManifestError(`line ${number}: "data_text" longer than ${MAX_TEXT_CODE_POINTS} code points`);
  }
  let goldLabel: string | undefined;
  if (!isReservedTaskType(rules.type)) {
    const gold = obj.gold_label;
    if (gold !== undefined && gold !== null) {
      if (typeof gold !== "string" || !choicesOf(rules.type, rules.spec).includes(gold)) {
        throw new ManifestError(`line ${number}: "gold_label" must be one of the label spec's options`);
      }
      goldLabel = gold;
    }
  } else {
    if (obj.gold_label !== undefined && obj.gold_label !== null)
      throw new ManifestError(`line ${number}: a ${rules.type} line gives its gold answer as "gold_answer" ${answerShapeOf(rules.type)}`);
    const gold = obj.gold_answer;
    if (gold !== undefined && gold !== null) {
      const shaped = answerSchemaOf(rules.type).safeParse(gold);
      if (!shaped.success)
        throw new ManifestError(`line ${number}: "gold_answer" must be ${answerShapeOf(rules.type)} (${shaped.error.issues[0]?.message})`);
      const read = kind.readAnswer(rules.spec, shaped.data, { text: typeof text === "string" ? text : undefined });
      if (!("value" in read)) {
        const issue = read.issues[0];
        throw new ManifestError(`line ${number}: "gold_answer" ${[...(issue?.path ?? [])].join(".")}: ${issue?.message}`);
      }
      goldLabel = read.value;
    }
  }
  const explanation = obj.gold_explanation;
  if (explanation !== undefined && explanation !== null) {
    // a task body's rule (@labelgate/api `gold_explanation`): a gold task's, 1 to 2,000 characters
    if (typeof explanation !== "string" || explanation === "")
      throw new ManifestError(`line ${number}: "gold_explanation" must be a non-empty string`);
    if (explanation.length > MAX_GOLD_EXPLANATION)
      throw new ManifestError(`line ${number}: "gold_explanation" longer than ${MAX_GOLD_EXPLANATION} characters`);
    if (goldLabel === undefined)
      throw new ManifestError(`line ${number}: only a gold line (with its gold answer) has a "gold_explanation"`);
  }
  const prelabel = obj.prelabel === undefined || obj.prelabel === null ? undefined : linePrelabel(obj.prelabel, number, rules, text);
  return { dataUrl: url, goldLabel, ...(prelabel ? { prelabel } : {}), items: lineItems.items, source: obj };
}

/**
 * A line's `prelabel` (contract §prelabels): `{answer, model, score?}` as a task body's, its answer checked against
 * the job's type and label spec. @returns its model and the stored value of its answer. @throws ManifestError naming the line.
 */
function linePrelabel(given: unknown, number: number, rules: LineRules, text: unknown): { model: string; value: string } {
  const parsed = prelabelField.safeParse(given);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ManifestError(`line ${number}: "${["prelabel", ...(issue?.path ?? []).map(String)].join(".")}": ${issue?.message}`);
  }
  const itemText = typeof text === "string" ? text : undefined;
  const issue = prelabelIssues(rules.type, rules.spec, parsed.data, itemText)[0];
  if (issue) throw new ManifestError(`line ${number}: "${issue.path.join(".")}": ${issue.message}`);
  const read = taskKindOf(rules.type).readAnswer(rules.spec, parsed.data.answer as AnswerBody, { text: itemText });
  if (!("value" in read)) throw new ManifestError(`line ${number}: "prelabel.answer": ${read.issues[0]?.message}`);
  return { model: parsed.data.model, value: read.value };
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
  const { store } = deps;
  const found = await store.jobs.find(jobId);
  if (!found) throw new Error(`job ${jobId} not found`);
  if (found.status !== "queued" && found.status !== "ingesting") return "skipped";
  const job = await store.jobs.startIngesting(found);

  const credentials = job.credentialsCiphertext
    ? (JSON.parse(deps.secretBox.open(job.credentialsCiphertext, job.id)) as StorageCredentials)
    : undefined;
  const chunkSize = deps.chunkSize ?? 1000;
  const rules: LineRules = { type: job.taskType, spec: storedLabelSpec(job) };
  const resumeAfter = job.linesIngested;
  let stream: Readable | undefined;
  // Chunks are pipelined: while one is read and parsed, up to two are written on two connections. A chunk
  // inserts its tasks at once but reserves its quota, moves `lines_ingested` and commits only after the
  // chunk before it committed (it awaits it inside its transaction, and rolls back if that one failed),
  // so the committed chunks are always a prefix of the manifest and `lines_ingested` its end.
  let last: Promise<void> = Promise.resolve();
  let beforeLast: Promise<void> = Promise.resolve();
  // the item fetches of committed chunks (text_span lines without data_text), sent in chunk order
  let fetches: Promise<unknown> = Promise.resolve();
  const write = async (chunk: ManifestChunk, throughLine: number) => {
    await beforeLast;
    const previous = last;
    const written = store.jobs.writeChunk(job, chunk, throughLine, previous);
    const next = written.then(() => undefined);
    // its error surfaces where `next` is awaited (a handler is attached so that it is never unhandled); a
    // chunk that did not commit has nothing to fetch
    next.catch(() => undefined);
    fetches = Promise.all([fetches, written]).then(
      ([, w]) => {
        // follow_up rows of the chunk's transaction
        if (w.followUps.itemFetch?.length) deps.relay?.nudge();
      },
      () => undefined,
    );
    beforeLast = previous;
    last = next;
  };
  let lastLine = resumeAfter;
  try {
    stream = await openRead(job.manifestUrl, credentials, deps.storage);
    let chunk = newChunk();
    const modelIds = new Map<string, string>();
    for await (const { line, number } of readLines(stream)) {
      if (number <= resumeAfter) continue;
      lastLine = number;
      const parsed = parseManifestLine(line, number, rules);
      if (parsed) {
        // a pre-label's model labeler, created on its first line (contract §prelabels)
        let labelerId: string | undefined;
        if (parsed.prelabel) {
          labelerId = modelIds.get(parsed.prelabel.model);
          if (labelerId === undefined) {
            labelerId = (await store.tasks.modelLabelers(job.customerId, [parsed.prelabel.model])).get(parsed.prelabel.model);
            if (labelerId === undefined) throw new Error(`no labeler for model ${parsed.prelabel.model}`);
            modelIds.set(parsed.prelabel.model, labelerId);
          }
        }
        addRow(
          chunk,
          line,
          number,
          parsed.goldLabel,
          parsed.prelabel && labelerId ? { labelerId, value: parsed.prelabel.value } : undefined,
          parsed.items,
        );
      }
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
      await failJob(deps, job, err instanceof QuotaExhaustedError ? `quota exhausted while ingesting: ${err.message}` : err.message);
      return "failed";
    }
    if (attempt.attemptsMade + 1 >= attempt.maxAttempts) {
      // Transient errors on every attempt: the job ends failed, its tasks gone, its quota returned.
      await failJob(deps, job, `manifest could not be read after ${attempt.maxAttempts} attempts: ${(err as Error).message}`);
      return "failed";
    }
    throw err;
  }

  // every committed chunk's item fetches are sent (a lost one is found by the reconciliation)
  await fetches;
  // The whole manifest is in: its tasks become claimable at once, by the job's status (one row).
  const opened = await store.jobs.open(jobId);
  // a job that completed at once emitted its job.completed event
  if (opened?.followUps.routeEvent?.length) deps.relay?.nudge();
  deps.logger.info({ job_id: jobId, tasks: opened?.task_count, status: opened?.status }, "manifest ingested");
  return "ingested";
}

function newChunk(): ManifestChunk {
  return { rows: 0, records: "" };
}

/**
 * Adds a line to a chunk as `<task id>\t<line number>\t<gold>\t<pre-label labeler>\t<pre-label value>\t<claim id>\t<label id>\t<items>\t<line text>`
 * (see the store's `ManifestChunk`; the pre-label fields empty without one, `<items>` the JSON of the line's item
 * fields or empty without any).
 */
function addRow(
  chunk: ManifestChunk,
  line: string,
  number: number,
  gold: string | undefined,
  prelabel: { labelerId: string; value: string } | undefined,
  items: Record<string, string>,
): void {
  const pre = prelabel ? `${prelabel.labelerId}\t${JSON.stringify(prelabel.value)}\t${newId("claim")}\t${newId("label")}` : "\t\t\t";
  // JSON.stringify escapes tabs and newlines inside strings: the record stays one line of tab-separated fields
  const given = Object.keys(items).length > 0 ? JSON.stringify(items) : "";
  chunk.records += `${chunk.rows > 0 ? "\n" : ""}${newId("task")}\t${number}\t${gold === undefined ? "" : JSON.stringify(gold)}\t${pre}\t${given}\t${line}`;
  chunk.rows++;
}

/**
 * Fails the job with `error`, deletes its tasks (never claimable: the job never reached `labeling`) and
 * returns the quota they still hold (a task the customer canceled meanwhile returned its own already).
 */
async function failJob(deps: IngestDeps, job: Job, error: string): Promise<void> {
  const { followUps } = await deps.store.jobs.fail(job.id, job.customerId, error);
  // its job.failed event (contract §events): a follow_up row of the failure's transaction
  if (followUps.routeEvent?.length) deps.relay?.nudge();
  deps.logger.warn({ job_id: job.id, error }, "manifest job failed");
}
