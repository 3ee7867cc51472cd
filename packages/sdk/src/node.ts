/**
 * The Node-only part of the SDK: the export of a manifest job as a Node stream, parsed line by line, or
 * written to a file (node:fs, node:stream, node:readline). `@labelgate/sdk` exports this module's
 * {@link LabelgateClient}, whose `jobs` is a {@link NodeJobsApi}; browsers import `@labelgate/sdk/browser`.
 */
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { createInterface } from "node:readline";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { OPERATIONS } from "@labelgate/api/operations";
import { type ClientOptions, type Context, type Credentials, JobsApi, LabelgateClientBase } from "./client";
import { ResponseError } from "./errors";
import { type RequestOptions, Transport } from "./transport";
import type { ExportLine } from "./types";

/** What {@link NodeJobsApi.exportToFile} wrote. */
export interface ExportFileResult {
  path: string;
  bytes: number;
  lines: number;
}

/** `/v1/jobs` with the export as Node streams and files. */
export class NodeJobsApi extends JobsApi {
  /**
   * The export as a raw byte stream (JSONL, one line per manifest line, manifest order). The request
   * (and its retries) completes before this resolves; the body is then streamed as it arrives.
   * @throws NotFoundError, ConflictError `job not completed` (body `status` = the job's status)
   */
  async exportStream(jobId: string, options?: RequestOptions): Promise<Readable> {
    const body = await this.exportBody(jobId, options);
    return Readable.fromWeb(body as unknown as NodeReadableStream<Uint8Array>);
  }

  /**
   * The export parsed line by line, streamed (constant memory at any size).
   * @throws like {@link exportStream}; ResponseError on a line that is not JSON or a stream cut short
   */
  async *exportLines(jobId: string, options?: RequestOptions): AsyncGenerator<ExportLine, void, undefined> {
    const stream = await this.exportStream(jobId, options);
    const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
    let n = 0;
    try {
      for await (const line of lines) {
        n++;
        if (line === "") continue;
        try {
          yield JSON.parse(line) as ExportLine;
        } catch (err) {
          throw new ResponseError({
            status: 200,
            error: `export line ${n} is not JSON`,
            method: "GET",
            path: Transport.path(OPERATIONS.exportJob.path, { id: jobId }),
            cause: err,
          });
        }
      }
    } catch (err) {
      if (err instanceof ResponseError) throw err;
      throw new ResponseError({
        status: 200,
        error: `export cut short after ${n} lines`,
        method: "GET",
        path: Transport.path(OPERATIONS.exportJob.path, { id: jobId }),
        cause: err,
      });
    } finally {
      lines.close();
      stream.destroy();
    }
  }

  /**
   * Streams the export into `file` (written to `file.part`, renamed when complete, so a cut download
   * never leaves a partial file under the final name). Returns the bytes and lines written.
   * @throws like {@link exportStream}; the filesystem's errors
   */
  async exportToFile(jobId: string, file: string, options?: RequestOptions): Promise<ExportFileResult> {
    const stream = await this.exportStream(jobId, options);
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

  /** A client with other credentials (those not given are kept) sharing this one's options and hooks. */
  override withCredentials(credentials: Credentials): LabelgateClient {
    const merged = { ...this.ctx.credentials, ...credentials };
    return new LabelgateClient({ baseUrl: this.ctx.transport.baseUrl, ...merged }, this.ctx.transport);
  }
}
