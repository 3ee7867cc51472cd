/**
 * Helpers of `bench/manifest.ts`: the generated manifest, RSS sampling of a process tree from /proc, and
 * line counting of a streamed export (constant memory: only the first and the last line are kept).
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import { Readable } from "node:stream";
import { processTree } from "./measure";

/** Line `n` (1-based) of the bench manifest, Ground Truth style. */
export function manifestLine(n: number): string {
  return `{"source-ref":"s3://bench/img/${n}.jpg","class":"${CLASSES[n % CLASSES.length]}"}\n`;
}
const CLASSES = ["cat", "dog", "bird", "fish"];

/** A `lines`-line JSONL manifest as a byte stream, generated on the fly (about 64 KiB per chunk). */
export function manifestStream(lines: number): Readable {
  let n = 0;
  return new Readable({
    read() {
      if (n >= lines) {
        this.push(null);
        return;
      }
      let chunk = "";
      while (n < lines && chunk.length < 65_536) chunk += manifestLine(++n);
      this.push(Buffer.from(chunk, "utf8"));
    },
  });
}

/** A field of /proc/<pid>/status in bytes (VmRSS, VmHWM), or 0 when the process is gone. */
export function statusBytes(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Samples VmRSS of every process under `root` (tsx and the node process it spawns) every `everyMs`.
 * `worker()` is the node process that runs the service: the child of the tsx launcher, or `root` itself
 * when it runs the service (`rootIsWorker`).
 */
export class RssSampler {
  private readonly peaks = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;
  samples = 0;

  constructor(
    private readonly root: number,
    private readonly rootIsWorker: boolean,
    everyMs = 100,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
  }

  private sample(): void {
    this.samples++;
    for (const pid of processTree(this.root)) {
      const rss = statusBytes(pid, "VmRSS");
      if (rss === 0) continue;
      this.last.set(pid, rss);
      this.peaks.set(pid, Math.max(rss, this.peaks.get(pid) ?? 0));
    }
  }

  /** the service's node process (the launcher's first child), once it exists */
  worker(): number | undefined {
    if (this.rootIsWorker) return this.root;
    try {
      const children = readFileSync(`/proc/${this.root}/task/${this.root}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
      return children.length > 0 ? Number(children[0]) : undefined;
    } catch {
      return undefined;
    }
  }

  /** the worker's sampled RSS now and its peak so far (bytes) */
  workerRss(): { now: number; peak: number; hwm: number } {
    this.sample();
    const pid = this.worker();
    if (pid === undefined) return { now: 0, peak: 0, hwm: 0 };
    return { now: this.last.get(pid) ?? 0, peak: this.peaks.get(pid) ?? 0, hwm: statusBytes(pid, "VmHWM") };
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

export interface CountedStream {
  status: number;
  lines: number;
  bytes: number;
  first: string;
  last: string;
}

/** Counts the lines of a byte stream, keeping only its first and last line. */
export async function countLines(source: AsyncIterable<Buffer | string>): Promise<Omit<CountedStream, "status">> {
  let lines = 0;
  let bytes = 0;
  let head = "";
  let headDone = false;
  let tail = Buffer.alloc(0);
  for await (const raw of source) {
    const chunk = typeof raw === "string" ? Buffer.from(raw, "utf8") : raw;
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    if (!headDone) {
      head += chunk.toString("utf8", 0, Math.min(chunk.length, 8192));
      const nl = head.indexOf("\n");
      if (nl !== -1 || head.length > 65_536) {
        head = nl === -1 ? head : head.slice(0, nl);
        headDone = true;
      }
    }
    tail = Buffer.concat([tail, chunk]).subarray(-16_384);
  }
  const text = tail.toString("utf8").replace(/\n$/, "");
  return { lines, bytes, first: head, last: text.slice(text.lastIndexOf("\n") + 1) };
}

/** GETs `url` with a bearer token and counts the lines of the body as it streams. */
export function getAndCount(url: string, token: string): Promise<CountedStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      countLines(res).then((counted) => resolve({ status: res.statusCode ?? 0, ...counted }), reject);
    });
    req.on("error", reject);
  });
}
