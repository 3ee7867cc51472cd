/**
 * The Node-only part of the SDK: the export of a manifest job or a batch as a Node stream, parsed line by
 * line, or written to a file (node:fs, node:stream, node:readline). `@labelgate/sdk` exports this module's
 * {@link LabelgateClient}, whose `jobs` is a {@link NodeJobsApi} and `batches` a {@link NodeBatchesApi};
 * browsers import `@labelgate/sdk/browser`.
 */
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { createInterface } from "node:readline";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { OPERATIONS } from "@labelgate/api/operations";
import { BatchesApi, type ClientOptions, type Context, type Credentials, type ExportOptions, JobsApi, LabelgateClientBase } from "./client";
import { ResponseError } from "./errors";
import { Transport } from "./transport";
import type { ExportLine } from "./types";

/** What {@link NodeJobsApi.exportToFile} wrote. */
export interface ExportFileResult {
  path: string;
  bytes: number;
  lines: number;
}

/** The Node helpers over one export operation's web body. */
class NodeExport {
  constructor(
    private readonly body: (id: string, options?: ExportOptions) => Promise<ReadableStream<Uint8Array>>,
    private readonly route: string,
  ) {}

  async stream(id: string, options?: ExportOptions): Promise<Readable> {
    return Readable.fromWeb((await this.body(id, options)) as unknown as NodeReadableStream<Uint8Array>);
  }

  async *lines<T>(id: string, options?: ExportOptions): AsyncGenerator<T, void, undefined> {
    const format = options?.format ?? "jsonl";
    if (format !== "jsonl" && format !== "hf")
      throw new TypeError(`exportLines reads JSON Lines (format jsonl or hf), not ${format}: use exportToFile`);
    const stream = await this.stream(id, options);
    const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
    const path = Transport.path(this.route, { id });
    let n = 0;
    try {
      for await (const line of lines) {
        n++;
        if (line === "") continue;
        try {
          yield JSON.parse(line) as T;
        } catch (err) {
          throw new ResponseError({ status: 200, error: `export line ${n} is not JSON`, method: "GET", path, cause: err });
        }
      }
    } catch (err) {
      if (err instanceof ResponseError) throw err;
      throw new ResponseError({ status: 200, error: `export cut short after ${n} lines`, method: "GET", path, cause: err });
    } finally {
      lines.close();
      stream.destroy();
    }
  }

  async toFile(id: string, file: string, options?: ExportOptions): Promise<ExportFileResult> {
    const stream = await this.stream(id, options);
    const part = `${file}.part`;
    let bytes = 0;
    let lines = 0;
    const count = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        for (const b of chunk) if (b === 10) lines++;
        done(null, chunk);
      },
    });
    try {
      await pipeline(stream, count, createWriteStream(part));
      await rename(part, file);
    } catch (err) {
      await rm(part, { force: true });
      throw err;
    }
    return { path: file, bytes, lines };
  }
}

/** `/v1/jobs` with the export as Node streams and files. */
export class NodeJobsApi extends JobsApi {
  private readonly node = new NodeExport((id, options) => this.exportBody(id, options), OPERATIONS.exportJob.path);

  /**
   * The export as a raw byte stream (`options.format`: jsonl, the default, label-studio, coco, conll or hf;
   * contract §exports). The request (and its retries) completes before this resolves; the body is then
   * streamed as it arrives.
   * @throws NotFoundError, ConflictError `job not completed` (body `status` = the job's status), ValidationError
   * for a format that does not fit the job's type
   */
  exportStream(jobId: string, options?: ExportOptions): Promise<Readable> {
    return this.node.stream(jobId, options);
  }

  /**
   * The export parsed line by line, streamed (constant memory at any size): format `jsonl` (ExportLine) or `hf`
   * (records).
   * @throws like {@link exportStream}; TypeError for a format that is not JSON Lines; ResponseError on a line
   * that is not JSON or a stream cut short
   */
  exportLines<T = ExportLine>(jobId: string, options?: ExportOptions): AsyncGenerator<T, void, undefined> {
    return this.node.lines<T>(jobId, options);
  }

  /**
   * Streams the export into `file` (written to `file.part`, renamed when complete, so a cut download
   * never leaves a partial file under the final name). Returns the bytes and lines written.
   * @throws like {@link exportStream}; the filesystem's errors
   */
  exportToFile(jobId: string, file: string, options?: ExportOptions): Promise<ExportFileResult> {
    return this.node.toFile(jobId, file, options);
  }
}

/** `/v1/batches` with the export as Node streams and files (as {@link NodeJobsApi}). */
export class NodeBatchesApi extends BatchesApi {
  private readonly node = new NodeExport((id, options) => this.exportBody(id, options), OPERATIONS.exportBatch.path);

  /** A completed batch's export as a raw byte stream. @throws NotFoundError, ConflictError `batch not completed`, ValidationError */
  exportStream(batchId: string, options?: ExportOptions): Promise<Readable> {
    return this.node.stream(batchId, options);
  }

  /** The export parsed line by line (format `jsonl` or `hf`). @throws like {@link NodeJobsApi.exportLines} */
  exportLines<T = ExportLine>(batchId: string, options?: ExportOptions): AsyncGenerator<T, void, undefined> {
    return this.node.lines<T>(batchId, options);
  }

  /** Streams the export into `file` (through `file.part`). @throws like {@link exportStream}; the filesystem's errors */
  exportToFile(batchId: string, file: string, options?: ExportOptions): Promise<ExportFileResult> {
    return this.node.toFile(batchId, file, options);
  }
}

/**
 * The labelgate API client for Node: every route (see {@link LabelgateClientBase}) and `jobs` with the
 * Node export helpers.
 *
 * ```ts
 * const lg = new LabelgateClient({ baseUrl: "http://127.0.0.1:3000", apiKey: process.env.LABELGATE_API_KEY });
 * const { task_id } = await lg.tasks.create({ type: "image_classification", data_url, label_spec });
 * const result = await lg.tasks.waitForResult(task_id);
 * await lg.jobs.exportToFile(jobId, "export.jsonl");
 * ```
 */
export class LabelgateClient extends LabelgateClientBase {
  declare readonly jobs: NodeJobsApi;
  declare readonly batches: NodeBatchesApi;

  constructor(options: ClientOptions);
  /** @internal shares a transport (see {@link withCredentials}) */
  constructor(options: ClientOptions, transport: Transport);
  constructor(options: ClientOptions, transport?: Transport) {
    if (transport) super(options, transport);
    else super(options);
  }

  protected override createJobs(ctx: Context): NodeJobsApi {
    return new NodeJobsApi(ctx);
  }

  protected override createBatches(ctx: Context): NodeBatchesApi {
    return new NodeBatchesApi(ctx);
  }

  /** A client with other credentials (those not given are kept) sharing this one's options and hooks. */
  override withCredentials(credentials: Credentials): LabelgateClient {
    const merged = { ...this.ctx.credentials, ...credentials };
    return new LabelgateClient({ baseUrl: this.ctx.transport.baseUrl, ...merged }, this.ctx.transport);
  }
}
