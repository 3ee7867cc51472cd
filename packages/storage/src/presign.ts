/**
 * Presigned GETs of one object (contract §web-apps, issue 18), computed locally (no network request):
 * - S3 (and S3-compatible stores with `endpoint`): SigV4 query signing with @aws-sdk/s3-request-presigner
 *   (`X-Amz-Expires`), path-style when an endpoint is set, as `openRead` reads them;
 * - GCS: V4 signing with @google-cloud/storage `File#getSignedUrl` (`X-Goog-Expires`) from the service
 *   account's `private_key` (no call to Google, no IAM signBlob).
 */
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl as presignS3 } from "@aws-sdk/s3-request-presigner";
import { Storage } from "@google-cloud/storage";
import type { GcsCredentials, S3Credentials, StorageCredentials } from "./objects";

/** Signs GETs of the objects of one store for `ttlSeconds` (S3: at most 7 days; GCS V4: at most 7 days). */
export interface ObjectSigner {
  scheme: "s3" | "gs";
  /** @throws what the SDK throws on a key that cannot sign (e.g. a malformed GCS private key) */
  sign(bucket: string, key: string, ttlSeconds: number): Promise<string>;
}

/** `{scheme, bucket, key}` of `s3://bucket/key` or `gs://bucket/key` (key percent-decoded), else undefined. */
export function storageObjectOf(dataUrl: string): { scheme: "s3" | "gs"; bucket: string; key: string } | undefined {
  const match = /^(s3|gs):\/\/([^/?#]+)\/([^?#]+)$/.exec(dataUrl);
  if (!match) return undefined;
  const [, scheme, bucket, rawKey] = match as unknown as [string, "s3" | "gs", string, string];
  let key: string;
  try {
    key = decodeURIComponent(rawKey);
  } catch {
    return undefined;
  }
  return { scheme, bucket, key };
}

function s3Signer(c: S3Credentials): ObjectSigner {
  const client = new S3Client({
    region: c.region,
    credentials: {
      accessKeyId: c.access_key_id,
      secretAccessKey: c.secret_access_key,
      ...(c.session_token ? { sessionToken: c.session_token } : {}),
    },
    ...(c.endpoint ? { endpoint: c.endpoint, forcePathStyle: true } : {}),
  });
  return {
    scheme: "s3",
    sign: (bucket, key, ttlSeconds) => presignS3(client, new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: ttlSeconds }),
  };
}

function gcsSigner(c: GcsCredentials): ObjectSigner {
  const account = JSON.parse(c.service_account_json) as { client_email: string; private_key: string; project_id?: string };
  const storage = new Storage({
    credentials: { client_email: account.client_email, private_key: account.private_key },
    ...(account.project_id ? { projectId: account.project_id } : {}),
  });
  return {
    scheme: "gs",
    sign: async (bucket, key, ttlSeconds) => {
      const [url] = await storage
        .bucket(bucket)
        .file(key)
        .getSignedUrl({ version: "v4", action: "read", expires: Date.now() + ttlSeconds * 1000 });
      return url;
    },
  };
}

/**
 * The signer of a store's credentials: S3 for `access_key_id`, else GCS.
 * @throws SyntaxError when a GCS `service_account_json` does not parse
 */
export function objectSigner(credentials: StorageCredentials): ObjectSigner {
  return "access_key_id" in credentials ? s3Signer(credentials) : gcsSigner(credentials);
}
