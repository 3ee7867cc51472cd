/**
 * Downloading a job's JSONL export in the browser without holding it as objects: the SDK's
 * `jobs.exportBody()` is a stream of bytes, read chunk by chunk and never parsed.
 * - `file`: the File System Access API (`showSaveFilePicker`, Chromium): the bytes are piped straight to
 *   the file the user picks; memory stays flat at any size.
 * - `blob`: everywhere else: the chunks are gathered into a Blob (folded into one Blob every 8 MB, which
 *   browsers may keep on disk) and saved through a temporary object URL.
 * Newlines are counted on the bytes (0x0A) for the progress line.
 */
import type { LabelgateClient } from "@labelgate/sdk/browser";

export interface ExportProgress {
  bytes: number;
  lines: number;
}

/** The part of the File System Access API used here (not yet in TypeScript's DOM library). */
interface SaveFilePickerWindow {
  showSaveFilePicker?: (options: {
    suggestedName?: string;
    types?: { description: string; accept: Record<string, string[]> }[];
  }) => Promise<{ createWritable(): Promise<WritableStream<Uint8Array>> }>;
}

/** Whether this browser can stream the export straight into a file. */
export function canSaveToFile(): boolean {
  return typeof (window as unknown as SaveFilePickerWindow).showSaveFilePicker === "function";
}

/** A pass-through stream that counts bytes and newlines, reporting at most every 100 ms (and at the end). */
function counter(onProgress: (p: ExportProgress) => void): { stream: TransformStream<Uint8Array, Uint8Array>; total: ExportProgress } {
  const total: ExportProgress = { bytes: 0, lines: 0 };
  let last = 0;
  const stream = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      total.bytes += chunk.byteLength;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) total.lines++;
      const now = performance.now();
      if (now - last > 100) {
        last = now;
        onProgress({ ...total });
      }
      controller.enqueue(chunk);
    },
    flush() {
      onProgress({ ...total });
    },
  });
  return { stream, total };
}

const FOLD_BYTES = 8 * 1024 * 1024;

/**
 * Streams the export of `jobId` to a file the user picks (`mode: "file"`) or to a download (`"blob"`).
 * Resolves with the bytes and lines written once the whole export is saved.
 * @throws the SDK's errors (ConflictError `job not completed`, NotFoundError), AbortError when the user
 *   closes the file picker, and stream errors when the download is cut
 */
export async function downloadExport(
  client: LabelgateClient,
  jobId: string,
  mode: "file" | "blob",
  onProgress: (p: ExportProgress) => void,
): Promise<ExportProgress> {
  const name = `${jobId}.jsonl`;
  if (mode === "file") {
    const picker = (window as unknown as SaveFilePickerWindow).showSaveFilePicker;
    if (!picker) throw new Error("this browser cannot save to a file directly");
    const handle = await picker({
      suggestedName: name,
      types: [{ description: "JSON Lines", accept: { "application/x-ndjson": [".jsonl"] } }],
    });
    const writable = await handle.createWritable();
    const body = await client.jobs.exportBody(jobId);
    const { stream, total } = counter(onProgress);
    await body.pipeThrough(stream).pipeTo(writable);
    return total;
  }
  const body = await client.jobs.exportBody(jobId);
  const { stream, total } = counter(onProgress);
  const reader = body.pipeThrough(stream).getReader();
  let parts: BlobPart[] = [];
  let pending = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    // fetch bodies are backed by plain ArrayBuffers (never shared memory)
    parts.push(value as Uint8Array<ArrayBuffer>);
    pending += value.byteLength;
    if (pending >= FOLD_BYTES) {
      parts = [new Blob(parts)];
      pending = 0;
    }
  }
  const blob = new Blob(parts, { type: "application/x-ndjson" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.rel = "noopener";
  document.body.append(a);
  a.click();
  a.remove();
  // the download has taken the blob once the click is handled; free it a little later
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return total;
}
