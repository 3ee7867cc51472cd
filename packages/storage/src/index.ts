/**
 * @labelgate/storage: object storage, one place for both services. Reads and writes of manifests and
 * exports (objects.ts: S3 and S3-compatible stores, GCS, https GETs under the outbound URL policy), used by
 * the manifest worker; presigned GETs of one object (presign.ts), used by the gateway's view URLs.
 */
export * from "./objects";
export * from "./presign";
