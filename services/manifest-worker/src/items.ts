/**
 * The item fetch (contract §task-types, docs/decisions/0194): a task labeled on its text (`text_span`) created without
 * `data_text` waits, not claimable (`item_pending`), until this reads the body of its `data_url` (http(s) under
 * the outbound URL policy; s3:// and gs:// with its manifest job's sealed credentials) and stores it as its text.
 * The body must be UTF-8 of 1 to MAX_TEXT_CODE_POINTS code points (MAX_ITEM_BYTES bytes at most, read no
 * further). A body that cannot be a text (not found, refused, too long, not UTF-8, empty) cancels the task with
 * the reason at once; a transient failure (5xx, timeout, connection) is retried by the queue and cancels the
 * task on the last attempt. Safe to run twice: both writes apply only while the task still waits for its item.
 * A loopback URL naming one of the repository's sample texts (`http://127.0.0.1:3000/samples/texts/…`,
 * docs/decisions/0221) is read from data/samples, not over the network the outbound URL policy closes.
 */
import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import { codePointLength, MAX_TEXT_CODE_POINTS } from "@labelgate/api";
import { type Logger, type SecretBox, sampleFileOf } from "@labelgate/core";
import type { FollowUpNudge, JobContext } from "@labelgate/queue";
import { openRead, PermanentStorageError, type StorageCredentials, type StorageOptions } from "@labelgate/storage";
import type { Store } from "@labelgate/store";

/** The most bytes of an item read as a text: MAX_TEXT_CODE_POINTS code points of 4 bytes each. */
export const MAX_ITEM_BYTES = 4 * MAX_TEXT_CODE_POINTS;

export interface ItemDeps {
  store: Store;
  /** the process's follow-up relay, nudged after a commit that wrote follow-up rows (docs/decisions/0300) */
  relay?: FollowUpNudge;
  secretBox: SecretBox;
  logger: Logger;
  storage: StorageOptions;
}

/** An item that cannot be a task's text whatever the retries (too long, not UTF-8, empty). */
export class ItemTextError extends Error {
  override name = "ItemTextError";
}

/**
 * Reads a byte stream as a task's text: UTF-8 (a leading BOM dropped), 1 to MAX_TEXT_CODE_POINTS code points.
 * Stops reading (and destroys the stream) past `maxBytes`.
 * @throws ItemTextError (too long, not UTF-8, empty) or the stream's error
 */
export async function readItemText(stream: Readable, maxBytes = MAX_ITEM_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    bytes += buf.length;
    if (bytes > maxBytes) {
      stream.destroy();
      throw new ItemTextError(`longer than ${maxBytes} bytes (a text is at most ${MAX_TEXT_CODE_POINTS} code points)`);
    }
    chunks.push(buf);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new ItemTextError("not valid UTF-8");
  }
  if (text === "") throw new ItemTextError("empty");
  const length = codePointLength(text);
  if (length > MAX_TEXT_CODE_POINTS) throw new ItemTextError(`${length} code points, more than ${MAX_TEXT_CODE_POINTS}`);
  return text;
}

/** The reason recorded on a task whose item fetch failed: names its data_url's problem. */
function reasonOf(err: Error): string {
  return `the text at data_url could not be read: ${err.message.replace(/^manifest_url: /, "")}`;
}

/**
 * Fetches a task's text and stores it (the task becomes claimable), or cancels the task when it cannot be had.
 * @returns `stored`, `canceled`, or `skipped` (the task no longer waits for its item)
 * @throws transient errors while attempts remain (the queue retries)
 */
export async function fetchItem(
  deps: ItemDeps,
  taskId: string,
  attempt: Pick<JobContext, "attemptsMade" | "maxAttempts"> = { attemptsMade: 0, maxAttempts: 1 },
): Promise<"stored" | "canceled" | "skipped"> {
  const item = await deps.store.items.pending(taskId);
  if (!item) return "skipped";
  const cancel = async (reason: string): Promise<"canceled" | "skipped"> => {
    const { outcome, followUps } = await deps.store.items.fail(taskId, reason);
    if (outcome === "canceled")
      deps.logger.warn({ task_id: taskId, job_id: item.jobId, reason }, "task canceled: its item could not be fetched");
    // its task.canceled event and the job it completed (its export): follow_up rows of the cancellation
    if (Object.values(followUps).some((p) => p && p.length > 0)) deps.relay?.nudge();
    return outcome;
  };
  let credentials: StorageCredentials | undefined;
  if (item.jobId) {
    const job = await deps.store.jobs.find(item.jobId);
    if (job?.credentialsCiphertext) credentials = JSON.parse(deps.secretBox.open(job.credentialsCiphertext, job.id)) as StorageCredentials;
  }
  const scheme = new URL(item.dataUrl).protocol;
  if ((scheme === "s3:" || scheme === "gs:") && !credentials) {
    return cancel(`the text at data_url could not be read: an ${scheme}// data_url is read only with a manifest job's credentials`);
  }
  let text: string;
  try {
    const sample = sampleFileOf(item.dataUrl);
    const stream = sample ? createReadStream(sample) : await openRead(item.dataUrl, credentials, deps.storage);
    text = await readItemText(stream);
  } catch (err) {
    if (err instanceof PermanentStorageError || err instanceof ItemTextError) return cancel(reasonOf(err));
    if (attempt.attemptsMade + 1 >= attempt.maxAttempts) {
      return cancel(`the text at data_url could not be read after ${attempt.maxAttempts} attempts: ${(err as Error).message}`);
    }
    throw err;
  }
  return deps.store.items.storeText(taskId, text);
}
