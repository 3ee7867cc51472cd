/**
 * @labelgate/manifest-worker: manifest jobs (contract §jobs). Ingests manifests from S3, GCS or https
 * into tasks (streamed, resumable), fetches the text of text_span tasks created without it, and writes completed jobs' JSONL exports to their output_url.
 * `manifestRole` is its module for the runtime (@labelgate/runtime).
 */
export * from "./export";
export * from "./handlers";
export * from "./ingest";
export * from "./items";
export * from "./lines";
export { manifestRole } from "./role";
