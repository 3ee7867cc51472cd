/**
 * Object storage for manifests and exports: S3 (and S3-compatible stores) with @aws-sdk/client-s3,
 * GCS with @google-cloud/storage, and https GETs with undici (the outbound URL policy of contract §outbound-calls, no redirects).
 * Reads are streams (never a whole object in memory); writes take a stream (S3 multipart via
 * @aws-sdk/lib-storage, GCS simple upload).
 * Errors a retry cannot fix (bad credentials, missing object or bucket, 4xx) are `PermanentStorageError`.
 */

import { Readable } from "node:stream";
import { GetObjectCommand, S3Client, S3ServiceException } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { Storage } from "@google-cloud/storage";
import { checkOutboundUrl, outboundAgents, outboundDispatcher, type Resolver } from "@labelgate/core";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { type Dispatcher, request } from "undici";

export class PermanentStorageError extends Error {
  override name = "PermanentStorageError";
}

export type S3Credentials = { access_key_id: string; secret_access_key: string; region: string; endpoint?: string; session_token?: string };
export type GcsCredentials = { service_account_json: string };
export type StorageCredentials = S3Credentials | GcsCredentials;

export interface StorageOptions {
  allowPrivateUrls: boolean;
  /** GCS JSON API endpoint override (emulators and tests); unset = Google's */
  gcsApiEndpoint?: string;
  /** total time of an https manifest request before its body starts, ms */
  httpTimeoutMs?: number;
  /** connection pool of https manifest reads: its lookup refuses private addresses (unless allowed) */
  dispatcher: Dispatcher;
  /** the resolver of the checks before a request and of every connection (tests inject one; default the system's) */
  resolve?: Resolver;
  /** the HTTP handler of S3 clients with a custom endpoint: the same check on every connection */
  s3Handler: NodeHttpHandler;
}

/**
 * The storage options of a process: https manifests read through an `outboundDispatcher`, and S3 clients of
 * custom endpoints (credentials.endpoint) on `outboundAgents`, so the address every
 * connection really uses is checked (contract §outbound-calls), not only the one a check before the request
 * resolved (a host that changes its answer between the two would otherwise reach internal addresses).
 */
export function storageOptions(options: { allowPrivateUrls: boolean; gcsApiEndpoint?: string; resolve?: Resolver }): StorageOptions {
  const agents = outboundAgents({ allowPrivate: options.allowPrivateUrls, resolve: options.resolve });
  return {
    allowPrivateUrls: options.allowPrivateUrls,
    gcsApiEndpoint: options.gcsApiEndpoint,
    resolve: options.resolve,
    dispatcher: outboundDispatcher({
      allowPrivate: options.allowPrivateUrls,
      resolve: options.resolve,
      connectTimeoutMs: 10_000,
      connections: 8,
    }),
    s3Handler: new NodeHttpHandler({
      httpAgent: agents.http,
      httpsAgent: agents.https,
    }),
  };
}

export interface ObjectLocation {
  scheme: "s3" | "gs" | "https";
  bucket: string;
  key: string;
  url: string;
}

/** Parses `s3://bucket/key`, `gs://bucket/key` or an http(s) URL. @throws PermanentStorageError */
export function parseLocation(raw: string): ObjectLocation {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PermanentStorageError(`not a valid URL: ${raw}`);
  }
  if (url.protocol === "s3:" || url.protocol === "gs:") {
    const key = decodeURIComponent(url.pathname.replace(/^\//, ""));
    if (!url.hostname || !key) throw new PermanentStorageError(`${raw} must be ${url.protocol}//bucket/key`);
    return { scheme: url.protocol === "s3:" ? "s3" : "gs", bucket: url.hostname, key, url: raw };
  }
  if (url.protocol === "https:" || url.protocol === "http:") return { scheme: "https", bucket: "", key: "", url: raw };
  throw new PermanentStorageError(`unsupported scheme ${url.protocol}`);
}

function s3Client(c: S3Credentials, options: StorageOptions): S3Client {
  return new S3Client({
    region: c.region,
    credentials: {
      accessKeyId: c.access_key_id,
      secretAccessKey: c.secret_access_key,
      ...(c.session_token ? { sessionToken: c.session_token } : {}),
    },
    ...(c.endpoint ? { endpoint: c.endpoint, forcePathStyle: true, requestHandler: options.s3Handler } : {}),
    maxAttempts: 2,
  });
}

function gcsClient(c: GcsCredentials, options: StorageOptions): Storage {
  const account = JSON.parse(c.service_account_json) as { client_email: string; private_key: string; project_id?: string };
  return new Storage({
    credentials: { client_email: account.client_email, private_key: account.private_key },
    ...(account.project_id ? { projectId: account.project_id } : {}),
    ...(options.gcsApiEndpoint ? { apiEndpoint: options.gcsApiEndpoint } : {}),
  });
}

const S3_PERMANENT = new Set([
  "NoSuchKey",
  "NoSuchBucket",
  "InvalidAccessKeyId",
  "SignatureDoesNotMatch",
  "AccessDenied",
  "InvalidBucketName",
  "NotFound",
  "Forbidden",
]);

function s3Error(err: unknown, loc: ObjectLocation): Error {
  if (err instanceof S3ServiceException) {
    const status = err.$metadata?.httpStatusCode ?? 0;
    if (S3_PERMANENT.has(err.name) || (status >= 400 && status < 500)) {
      const what =
        err.name === "NoSuchKey" || err.name === "NotFound"
          ? `object ${loc.url} not found`
          : err.name === "NoSuchBucket"
            ? `bucket ${loc.bucket} not found`
            : err.name === "InvalidAccessKeyId" ||
                err.name === "SignatureDoesNotMatch" ||
                err.name === "AccessDenied" ||
                err.name === "Forbidden"
              ? `access to ${loc.url} denied: check the credentials (${err.name})`
              : `${err.name}: ${err.message}`;
      return new PermanentStorageError(what, { cause: err });
    }
  }
  return err instanceof Error ? err : new Error(String(err));
}

function gcsError(err: unknown, loc: ObjectLocation): Error {
  const code = (err as { code?: number | string }).code;
  if (code === 404) return new PermanentStorageError(`object ${loc.url} not found`, { cause: err });
  if (code === 401 || code === 403) return new PermanentStorageError(`access to ${loc.url} denied: check the credentials`, { cause: err });
  if (typeof code === "number" && code >= 400 && code < 500)
    return new PermanentStorageError(`GCS answered ${code} for ${loc.url}`, { cause: err });
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Opens the object for reading, as a byte stream.
 * @throws PermanentStorageError (bad credentials, missing object, forbidden URL, 4xx) or a transient Error.
 */
export async function openRead(raw: string, credentials: StorageCredentials | undefined, options: StorageOptions): Promise<Readable> {
  const loc = parseLocation(raw);
  if (loc.scheme === "s3") {
    if (!credentials || !("access_key_id" in credentials)) throw new PermanentStorageError("S3 manifest without S3 credentials");
    if (credentials.endpoint)
      await checkOutboundUrl(credentials.endpoint, { allowPrivate: options.allowPrivateUrls, resolve: options.resolve }).catch(
        (e: Error) => {
          throw new PermanentStorageError(`credentials.endpoint: ${e.message}`);
        },
      );
    try {
      const out = await s3Client(credentials, options).send(new GetObjectCommand({ Bucket: loc.bucket, Key: loc.key }));
      if (!(out.Body instanceof Readable)) throw new Error("S3 returned no stream");
      return out.Body;
    } catch (err) {
      throw s3Error(err, loc);
    }
  }
  if (loc.scheme === "gs") {
    if (!credentials || !("service_account_json" in credentials))
      throw new PermanentStorageError("GCS manifest without service_account_json");
    const file = gcsClient(credentials, options).bucket(loc.bucket).file(loc.key);
    // Probe first so that a missing object or bad credentials surface here, not mid-stream.
    try {
      await file.getMetadata();
    } catch (err) {
      throw gcsError(err, loc);
    }
    return file.createReadStream({ validation: false });
  }
  try {
    await checkOutboundUrl(loc.url, { allowPrivate: options.allowPrivateUrls, resolve: options.resolve });
  } catch (err) {
    throw new PermanentStorageError(`manifest_url: ${(err as Error).message}`);
  }
  let res: Dispatcher.ResponseData;
  try {
    res = await request(loc.url, {
      method: "GET",
      dispatcher: options.dispatcher,
      headersTimeout: options.httpTimeoutMs ?? 30_000,
      bodyTimeout: options.httpTimeoutMs ?? 30_000,
    });
  } catch (err) {
    // the connection's address was refused (the host resolved to a private address when connecting)
    if ((err as { code?: string }).code === "EPRIVATEADDRESS") throw new PermanentStorageError(`manifest_url: ${(err as Error).message}`);
    throw err;
  }
  if (res.statusCode >= 200 && res.statusCode < 300) return Readable.from(res.body);
  await res.body.dump();
  const message = `GET ${loc.url} answered ${res.statusCode}`;
  if (res.statusCode >= 400 && res.statusCode < 500)
    throw new PermanentStorageError(res.statusCode === 404 ? `object ${loc.url} not found` : message);
  if (res.statusCode >= 300 && res.statusCode < 400) throw new PermanentStorageError(`${message}: redirects are not followed`);
  throw new Error(message);
}

/** Writes a stream to `s3://` or `gs://` without buffering it whole. @throws like openRead. */
export async function writeObject(
  raw: string,
  body: Readable,
  credentials: StorageCredentials | undefined,
  options: StorageOptions,
  contentType: string,
): Promise<void> {
  const loc = parseLocation(raw);
  if (loc.scheme === "s3") {
    if (!credentials || !("access_key_id" in credentials)) throw new PermanentStorageError("S3 output without S3 credentials");
    try {
      await new Upload({
        client: s3Client(credentials, options),
        params: { Bucket: loc.bucket, Key: loc.key, Body: body, ContentType: contentType },
      }).done();
    } catch (err) {
      throw s3Error(err, loc);
    }
    return;
  }
  if (loc.scheme === "gs") {
    if (!credentials || !("service_account_json" in credentials))
      throw new PermanentStorageError("GCS output without service_account_json");
    const file = gcsClient(credentials, options).bucket(loc.bucket).file(loc.key);
    await new Promise<void>((resolve, reject) => {
      const out = file.createWriteStream({ resumable: false, contentType, validation: false });
      out.on("error", (err) => reject(gcsError(err, loc)));
      out.on("finish", () => resolve());
      body.on("error", (err) => out.destroy(err));
      body.pipe(out);
    });
    return;
  }
  throw new PermanentStorageError("output_url must be s3:// or gs://");
}
