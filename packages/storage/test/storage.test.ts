/**
 * @labelgate/storage against a real S3-compatible server (s3rver, test/s3.ts): a streamed write read back,
 * the errors a retry cannot fix, the outbound policy on a custom endpoint, and a presigned GET that fetches
 * the object. The services' own tests cover the rest end to end: manifests over S3, GCS and https
 * (services/manifest-worker/test/ingest-*.test.ts) and claims' view URLs (services/gateway/test/view-url.test.ts).
 */
import { type AddressInfo, createServer } from "node:net";
import { Readable } from "node:stream";
import { type LocalS3, startS3 } from "../../../test/s3";
import { objectSigner, openRead, PermanentStorageError, parseLocation, storageObjectOf, storageOptions, writeObject } from "../src";

let s3: LocalS3;
// s3rver listens on 127.0.0.1: private addresses allowed here, refused in the test of the policy below
const options = storageOptions({ allowPrivateUrls: true });

beforeAll(async () => {
  s3 = await startS3(["objects"]);
});
afterAll(async () => {
  await s3.close();
});

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString("utf8");
}

describe("object locations", () => {
  it("parses s3://, gs:// and https URLs, and refuses other schemes", () => {
    expect(parseLocation("s3://bucket/a/b%20c.jsonl")).toEqual({
      scheme: "s3",
      bucket: "bucket",
      key: "a/b c.jsonl",
      url: "s3://bucket/a/b%20c.jsonl",
    });
    expect(parseLocation("gs://bucket/x").scheme).toBe("gs");
    expect(parseLocation("https://example.com/m.jsonl").scheme).toBe("https");
    expect(() => parseLocation("ftp://example.com/m.jsonl")).toThrow(PermanentStorageError);
    expect(() => parseLocation("s3://bucket/")).toThrow(PermanentStorageError);
    expect(storageObjectOf("gs://b/k%2Fx")).toEqual({ scheme: "gs", bucket: "b", key: "k/x" });
    expect(storageObjectOf("https://example.com/k")).toBeUndefined();
  });
});

describe("S3", () => {
  it("writes a stream and reads it back", async () => {
    const body = Array.from({ length: 1000 }, (_, i) => `{"line":${i}}`).join("\n");
    await writeObject("s3://objects/out/round-trip.jsonl", Readable.from([body]), s3.credentials, options, "application/x-ndjson");
    expect(await text(await openRead("s3://objects/out/round-trip.jsonl", s3.credentials, options))).toBe(body);
  });

  it("answers PermanentStorageError for a missing object, bad credentials and missing credentials", async () => {
    await expect(openRead("s3://objects/missing.jsonl", s3.credentials, options)).rejects.toThrow(/not found/);
    const wrong = { ...s3.credentials, access_key_id: "WRONG" };
    await expect(openRead("s3://objects/missing.jsonl", wrong, options)).rejects.toBeInstanceOf(PermanentStorageError);
    await expect(openRead("s3://objects/x", undefined, options)).rejects.toThrow("S3 manifest without S3 credentials");
  });

  it("refuses a custom endpoint on a private address unless private URLs are allowed", async () => {
    const strict = storageOptions({ allowPrivateUrls: false });
    await expect(openRead("s3://objects/x", s3.credentials, strict)).rejects.toThrow(/credentials.endpoint/);
  });

  it("presigns a GET that fetches the object, valid for the given seconds", async () => {
    await writeObject("s3://objects/images/cat 1.png", Readable.from(["pixels"]), s3.credentials, options, "image/png");
    const signer = objectSigner(s3.credentials);
    expect(signer.scheme).toBe("s3");
    const url = new URL(await signer.sign("objects", "images/cat 1.png", 120));
    expect(url.searchParams.get("X-Amz-Expires")).toBe("120");
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("pixels");
  });
});

describe("GCS signer", () => {
  it("refuses service account JSON that does not parse", () => {
    expect(() => objectSigner({ service_account_json: "{not json" })).toThrow(SyntaxError);
  });
});

describe("https manifests", () => {
  // undici 7 crashed the process (an uncatchable assert(!this.paused)) when a server closed the connection
  // while backpressure had paused the body parser: a manifest served with `Connection: close` and read
  // slower than it arrived, as Python's http.server serves it. patches/undici@7.30.2.patch carries the fix.
  it("reads a whole body the server sent with Connection: close before the reader caught up", async () => {
    const body = Buffer.alloc(70_000, 0x61);
    const server = createServer((socket) => {
      socket.once("data", () => {
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
        socket.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const stream = await openRead(`http://127.0.0.1:${port}/manifest.jsonl`, undefined, options);
      // let the whole response and the FIN arrive while nothing reads: the parser pauses on backpressure
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await text(stream)).length).toBe(body.length);
    } finally {
      server.close();
    }
  });
});
