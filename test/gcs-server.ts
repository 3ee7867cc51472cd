/**
 * A small local server implementing the subset of the GCS JSON API that @google-cloud/storage 7.22 calls
 * (no GCS emulator installs on this platform: docs/decisions/README.md (Platform)). Point the library at it with
 * `apiEndpoint: server.url`. Implemented:
 * - object metadata: `GET /storage/v1/b/{bucket}/o/{object}` (objects carry base64 `md5Hash` and `crc32c`);
 * - media download: `GET /storage/v1/b/{bucket}/o/{object}?alt=media` (what `File#createReadStream` calls)
 *   and `GET /download/storage/v1/b/{bucket}/o/{object}?alt=media`;
 * - simple upload: `POST /upload/storage/v1/b/{bucket}/o?uploadType=media|multipart&name=...`
 *   (`createWriteStream({ resumable: false })` sends `multipart/related`: a JSON metadata part, then the data);
 * - errors as the JSON API renders them: `{error: {code, message, errors: [{reason, message}]}}`.
 *
 * Credentials: with a custom `apiEndpoint` the library sends no Authorization header at all (it skips
 * google-auth-library unless `useAuthWithCustomEndpoint`), so a "bad credentials" case cannot be told
 * apart by the request. Instead, buckets listed in `unauthorizedBuckets` (or every bucket while
 * `rejectAll` is set) answer 401 Invalid Credentials, which is what Google answers to a bad service account.
 */
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface GcsObject {
  data: Buffer;
  contentType: string;
  generation: string;
  md5Hash: string;
  crc32c: string;
  updated: string;
}

export interface FakeGcs {
  /** `http://127.0.0.1:<port>`: the `apiEndpoint` / `gcsApiEndpoint` */
  url: string;
  /** stores an object (the bucket is created if absent) */
  put(bucket: string, name: string, data: string | Buffer, contentType?: string): void;
  get(bucket: string, name: string): GcsObject | undefined;
  createBucket(bucket: string): void;
  /** buckets whose every request answers 401 (simulated bad credentials) */
  unauthorizedBuckets: Set<string>;
  /** every request answers 401 while true */
  rejectAll: boolean;
  /** requests seen, `METHOD path?query` */
  requests: string[];
  close(): Promise<void>;
}

const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC32C (Castagnoli) of `data`, big-endian, base64: the form GCS reports in `crc32c`. */
export function crc32cBase64(data: Buffer): string {
  let crc = 0xffffffff;
  for (const byte of data) crc = (CRC32C_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  const out = Buffer.alloc(4);
  out.writeUInt32BE((crc ^ 0xffffffff) >>> 0, 0);
  return out.toString("base64");
}

function md5Base64(data: Buffer): string {
  return createHash("md5").update(data).digest("base64");
}

function sendError(res: http.ServerResponse, code: number, message: string, reason: string): void {
  const body = JSON.stringify({ error: { code, message, errors: [{ domain: "global", reason, message }] } });
  res.writeHead(code, { "content-type": "application/json; charset=UTF-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

function sendJson(res: http.ServerResponse, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(200, { "content-type": "application/json; charset=UTF-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Splits a `multipart/related` body into its parts' content types and bodies. */
function parseMultipart(body: Buffer, boundary: string): { contentType: string; data: Buffer }[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: { contentType: string; data: Buffer }[] = [];
  let pos = body.indexOf(delimiter);
  while (pos !== -1) {
    let start = pos + delimiter.length;
    if (body.subarray(start, start + 2).toString() === "--") break; // closing delimiter
    if (body.subarray(start, start + 2).toString() === "\r\n") start += 2;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    let part = body.subarray(start, next);
    if (part.subarray(part.length - 2).toString() === "\r\n") part = part.subarray(0, part.length - 2);
    const headerEnd = part.indexOf("\r\n\r\n");
    const headers = headerEnd === -1 ? "" : part.subarray(0, headerEnd).toString();
    const data = headerEnd === -1 ? part : part.subarray(headerEnd + 4);
    const contentType = /^content-type:\s*(.+)$/im.exec(headers)?.[1]?.trim() ?? "application/octet-stream";
    parts.push({ contentType, data });
    pos = next;
  }
  return parts;
}

export async function startFakeGcs(options: { buckets?: string[] } = {}): Promise<FakeGcs> {
  const buckets = new Map<string, Map<string, GcsObject>>();
  for (const b of options.buckets ?? []) buckets.set(b, new Map());
  let generation = 1_700_000_000_000_000;

  const store = (bucket: string, name: string, data: Buffer, contentType: string): GcsObject => {
    let objects = buckets.get(bucket);
    if (!objects) {
      objects = new Map();
      buckets.set(bucket, objects);
    }
    const obj: GcsObject = {
      data,
      contentType,
      generation: String(++generation),
      md5Hash: md5Base64(data),
      crc32c: crc32cBase64(data),
      updated: new Date().toISOString(),
    };
    objects.set(name, obj);
    return obj;
  };

  const metadata = (base: string, bucket: string, name: string, o: GcsObject) => ({
    kind: "storage#object",
    id: `${bucket}/${name}/${o.generation}`,
    selfLink: `${base}/storage/v1/b/${bucket}/o/${encodeURIComponent(name)}`,
    mediaLink: `${base}/download/storage/v1/b/${bucket}/o/${encodeURIComponent(name)}?generation=${o.generation}&alt=media`,
    name,
    bucket,
    generation: o.generation,
    metageneration: "1",
    contentType: o.contentType,
    storageClass: "STANDARD",
    size: String(o.data.length),
    md5Hash: o.md5Hash,
    crc32c: o.crc32c,
    etag: Buffer.from(o.generation).toString("base64"),
    timeCreated: o.updated,
    updated: o.updated,
  });

  const fake: FakeGcs = {
    url: "",
    put: (bucket, name, data, contentType = "application/octet-stream") =>
      void store(bucket, name, typeof data === "string" ? Buffer.from(data) : data, contentType),
    get: (bucket, name) => buckets.get(bucket)?.get(name),
    createBucket: (bucket) => void (buckets.has(bucket) || buckets.set(bucket, new Map())),
    unauthorizedBuckets: new Set(),
    rejectAll: false,
    requests: [],
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", fake.url);
    fake.requests.push(`${req.method} ${url.pathname}${url.search}`);
    const path = url.pathname;
    let m: RegExpExecArray | null;
    const denied = (bucket: string) => {
      if (!fake.rejectAll && !fake.unauthorizedBuckets.has(bucket)) return false;
      // Drain the body so the client sees the answer rather than a reset connection.
      req.resume();
      sendError(res, 401, "Invalid Credentials", "authError");
      return true;
    };

    // Upload: POST /upload/storage/v1/b/{bucket}/o?uploadType=media|multipart&name=...
    m = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(path);
    if (m && req.method === "POST") {
      const bucket = decodeURIComponent(m[1] as string);
      if (denied(bucket)) return;
      if (!buckets.has(bucket)) {
        req.resume();
        return sendError(res, 404, "The specified bucket does not exist.", "notFound");
      }
      const uploadType = url.searchParams.get("uploadType");
      const body = await readBody(req);
      let name = url.searchParams.get("name") ?? undefined;
      let contentType = req.headers["content-type"] ?? "application/octet-stream";
      let data = body;
      if (uploadType === "multipart") {
        const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
        if (!boundary) return sendError(res, 400, "multipart upload without boundary", "invalid");
        const [meta, media] = parseMultipart(body, boundary);
        if (!meta || !media) return sendError(res, 400, "multipart upload needs a metadata and a media part", "invalid");
        const parsed = JSON.parse(meta.data.toString() || "{}") as { name?: string; contentType?: string };
        name = parsed.name ?? name;
        contentType = parsed.contentType ?? media.contentType;
        data = media.data;
      } else if (uploadType !== "media") {
        return sendError(res, 400, `uploadType ${uploadType} is not supported by the fake server`, "invalid");
      }
      if (!name) return sendError(res, 400, "Required parameter: name", "required");
      const obj = store(bucket, name, data, contentType);
      return sendJson(res, metadata(fake.url, bucket, name, obj));
    }

    // Metadata or media: GET [/download]/storage/v1/b/{bucket}/o/{object}[?alt=media]
    m = /^(\/download)?\/storage\/v1\/b\/([^/]+)\/o\/(.+)$/.exec(path);
    if (m && (req.method === "GET" || req.method === "HEAD")) {
      const bucket = decodeURIComponent(m[2] as string);
      const name = decodeURIComponent(m[3] as string);
      if (denied(bucket)) return;
      const objects = buckets.get(bucket);
      if (!objects) return sendError(res, 404, "The specified bucket does not exist.", "notFound");
      const obj = objects.get(name);
      if (!obj) return sendError(res, 404, `No such object: ${bucket}/${name}`, "notFound");
      if (m[1] || url.searchParams.get("alt") === "media") {
        res.writeHead(200, {
          "content-type": obj.contentType,
          "content-length": obj.data.length,
          "x-goog-generation": obj.generation,
          "x-goog-hash": `crc32c=${obj.crc32c},md5=${obj.md5Hash}`,
          "x-goog-stored-content-encoding": "identity",
        });
        res.end(req.method === "HEAD" ? undefined : obj.data);
        return;
      }
      return sendJson(res, metadata(fake.url, bucket, name, obj));
    }

    req.resume();
    sendError(res, 501, `${req.method} ${path} is not implemented by the fake GCS server`, "notImplemented");
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, String(err), "backendError");
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
