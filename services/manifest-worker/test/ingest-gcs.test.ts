/**
 * Manifest jobs on GCS, against the fake JSON API server of test/gcs-server.ts (the manifest worker's
 * @google-cloud/storage pointed at it through `gcsApiEndpoint`): happy path with the export checked line by
 * line and written to a gs:// output_url, missing object and bucket, and refused credentials.
 */

import { type FakeGcs, startFakeGcs } from "../../../test/gcs-server";
import { registerCustomer, type System, startSystem } from "../../../test/system";
import {
  captureLogs,
  createJob,
  expectExport,
  jsonl,
  labelAllAndComplete,
  quotaUsed,
  waitForExportWritten,
  waitForStatus,
} from "./helpers";

let sys: System;
let gcs: FakeGcs;
const logs = captureLogs();

const CREDENTIALS = {
  service_account_json: JSON.stringify({
    type: "service_account",
    client_email: "x@y.iam.gserviceaccount.com",
    private_key: "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n",
    project_id: "p",
  }),
};

beforeAll(async () => {
  gcs = await startFakeGcs({ buckets: ["gt-manifests", "gt-exports"] });
  sys = await startSystem({ gcsApiEndpoint: gcs.url, logger: logs.logger });
});
afterAll(async () => {
  await sys.close();
  await gcs.close();
});

it("happy path: gs:// manifest ingested, labeled, completed, exported line by line and to a gs:// output_url", async () => {
  const c = await registerCustomer(sys);
  const lines = [
    JSON.stringify({ "source-ref": "gs://gt-images/0001.jpg", "class-name": "cat" }),
    JSON.stringify({ data_url: "https://cdn.example/0002.jpg", extra: { a: [1, 2, 3] } }),
    "",
    JSON.stringify({ "source-ref": "gs://gt-images/0004.jpg", note: "naïve – ☕" }),
    ...Array.from({ length: 17 }, (_, i) => JSON.stringify({ "source-ref": `gs://gt-images/${String(i + 5).padStart(4, "0")}.jpg` })),
  ];
  gcs.put("gt-manifests", "jobs/2026/output.manifest", jsonl(lines), "application/x-ndjson");
  const jobId = await createJob(sys, c.key, {
    manifest_url: "gs://gt-manifests/jobs/2026/output.manifest",
    credentials: CREDENTIALS,
    output_url: "gs://gt-exports/out/result.jsonl",
  });
  const labeling = await waitForStatus(sys, c.key, jobId, "labeling");
  expect(labeling).toMatchObject({ task_count: 20, lines_ingested: lines.length, error: null });
  // the library asked for the metadata, then the media, of the manifest object
  expect(gcs.requests).toContain("GET /storage/v1/b/gt-manifests/o/jobs%2F2026%2Foutput.manifest");
  expect(gcs.requests.some((r) => r.startsWith("GET /storage/v1/b/gt-manifests/o/jobs%2F2026%2Foutput.manifest?alt=media"))).toBe(true);

  await labelAllAndComplete(sys, c.key, jobId, "dog");
  const text = await expectExport(sys, c.key, jobId, lines, "dog");
  await waitForExportWritten(sys, c.key, jobId);
  const obj = gcs.get("gt-exports", "out/result.jsonl");
  expect(obj?.data.toString("utf8")).toBe(text);
  expect(obj?.contentType).toBe("application/x-ndjson");
});

it("missing object: failed, error says not found; no tasks, no quota", async () => {
  const c = await registerCustomer(sys);
  const jobId = await createJob(sys, c.key, { manifest_url: "gs://gt-manifests/nope.jsonl", credentials: CREDENTIALS });
  const failed = await waitForStatus(sys, c.key, jobId, "failed");
  expect(failed.error).toMatch(/not found/);
  expect(failed.error).toContain("gs://gt-manifests/nope.jsonl");
  expect(await sys.db.prisma.task.count({ where: { jobId } })).toBe(0);
  expect(await quotaUsed(sys, c.key)).toBe(0);
});

it("missing bucket: failed, error says not found", async () => {
  const c = await registerCustomer(sys);
  const jobId = await createJob(sys, c.key, { manifest_url: "gs://no-such-bucket/m.jsonl", credentials: CREDENTIALS });
  const failed = await waitForStatus(sys, c.key, jobId, "failed");
  expect(failed.error).toMatch(/not found/);
});

// With a custom apiEndpoint, @google-cloud/storage sends no Authorization header (it skips
// google-auth-library unless `useAuthWithCustomEndpoint`), so the fake server cannot judge a credential:
// it refuses every request to a bucket marked unauthorized with 401, as Google does for a bad account.
it("credentials refused (401): failed, error names the credentials", async () => {
  const c = await registerCustomer(sys);
  gcs.put("locked-bucket", "m.jsonl", jsonl([JSON.stringify({ data_url: "https://cdn.example/1.jpg" })]));
  gcs.unauthorizedBuckets.add("locked-bucket");
  const jobId = await createJob(sys, c.key, { manifest_url: "gs://locked-bucket/m.jsonl", credentials: CREDENTIALS });
  const failed = await waitForStatus(sys, c.key, jobId, "failed");
  expect(failed.error).toMatch(/credential|denied/i);
  expect(failed.error).not.toContain("PRIVATE KEY");
  expect(await sys.db.prisma.task.count({ where: { jobId } })).toBe(0);
});

it("a malformed line in a GCS manifest: failed with its line number", async () => {
  const c = await registerCustomer(sys);
  gcs.put("gt-manifests", "bad.jsonl", jsonl([JSON.stringify({ data_url: "https://cdn.example/1.jpg" }), "", "", JSON.stringify({})]));
  const jobId = await createJob(sys, c.key, { manifest_url: "gs://gt-manifests/bad.jsonl", credentials: CREDENTIALS });
  const failed = await waitForStatus(sys, c.key, jobId, "failed");
  expect(failed.error).toBe('line 4: no "data_url" or "source-ref" string');
  expect(await sys.db.prisma.task.count({ where: { jobId } })).toBe(0);
});

it("the service account key never reaches the logs", () => {
  const text = logs.text();
  expect(text).toContain("manifest job failed"); // the failures above were logged
  expect(text).not.toContain("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC");
  expect(text).not.toContain("PRIVATE KEY");
});
