/**
 * A local S3 for tests: s3rver 3.7 on an ephemeral port, objects in a temporary directory removed on close.
 * Clients use path-style addressing (`forcePathStyle: true`) and s3rver's accepted keys (`S3RVER`/`S3RVER`);
 * other keys are rejected (InvalidAccessKeyId / SignatureDoesNotMatch), which tests bad credentials.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}

type S3rverCtor = new (options: {
  port: number;
  address: string;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

// s3rver ships no type declarations: load it untyped and give it the small surface used here.
const S3rver = require("s3rver") as S3rverCtor;

/** The only access key pair s3rver accepts by default. */
export const S3RVER_ACCESS_KEY_ID = "S3RVER";
export const S3RVER_SECRET_ACCESS_KEY = "S3RVER";

export interface LocalS3 {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  /** credentials for a job body (`s3_credentials` / `credentials`) */
  credentials: { access_key_id: string; secret_access_key: string; region: string; endpoint: string };
  close(): Promise<void>;
}

/** Starts s3rver with the given buckets (default `manifests`). */
export async function startS3(buckets: string[] = ["manifests"]): Promise<LocalS3> {
  const directory = await mkdtemp(join(tmpdir(), "labelgate-s3rver-"));
  const server = new S3rver({
    port: 0,
    address: "127.0.0.1",
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    credentials: { access_key_id: S3RVER_ACCESS_KEY_ID, secret_access_key: S3RVER_SECRET_ACCESS_KEY, region: "us-east-1", endpoint },
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
