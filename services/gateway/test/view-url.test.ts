/**
 * Presigned `view_url`s of claims (services/gateway/src/view-url.ts, contract §web-apps): a labeler's claim on an
 * `s3://` item of a manifest job with stored credentials carries a presigned GET that the labeler can
 * fetch from s3rver (test/s3.ts), valid at most 15 minutes. s3rver checks the access key of a presigned
 * URL but not its SigV4 signature, so the test recomputes the signature with the secret; `gs://`
 * items of a GCS job get a V4-signed URL computed locally from the service account's key (checked by its
 * parameters and by verifying the RSA signature over the string-to-sign); items without stored
 * credentials (https, tasks posted directly) get none; a key that cannot sign gives claims without
 * `view_url` and one warning (without the key), not one per claim. Every claim carries `task_type`.
 */
import { createHash, createHmac, createVerify, generateKeyPairSync } from "node:crypto";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { type FakeGcs, startFakeGcs } from "../../../test/gcs-server";
import { createLabeler, registerCustomer, type System, startSystem, taskBody } from "../../../test/system";
import {
  captureLogs,
  createJob,
  jobTasks,
  jsonl,
  putS3,
  type S3WithClient,
  startS3WithClient,
  waitForStatus,
} from "../../manifest-worker/test/helpers";

let sys: System;
let s3: S3WithClient;
let gcs: FakeGcs;
const logs = captureLogs();

beforeAll(async () => {
  s3 = await startS3WithClient(["manifests", "images"]);
  gcs = await startFakeGcs({ buckets: ["gt-manifests"] });
  sys = await startSystem({ gcsApiEndpoint: gcs.url, logger: logs.logger });
});
afterAll(async () => {
  await sys.close();
  await s3.close();
  await gcs.close();
});

interface ClaimWire {
  claim_id: string;
  task_id: string;
  task_type: string;
  data_url: string;
  view_url?: string;
}

async function claimTask(key: string, taskId: string): Promise<ClaimWire> {
  const res = await sys.api<ClaimWire>("POST", "/v1/labeling/claims", { token: key, body: { task_id: taskId } });
  expect(res.status).toBe(201);
  return res.body;
}

/** The canonical query string of a presigned URL: every parameter but the signature, sorted, RFC 3986 encoded. */
function canonicalQuery(url: URL, signatureParam: string): string {
  const rfc3986 = (v: string) => encodeURIComponent(v).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
  return [...url.searchParams]
    .filter(([k]) => k !== signatureParam)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${rfc3986(k)}=${rfc3986(v)}`)
    .join("&");
}

/**
 * The string-to-sign of a presigned GET whose only signed header is `host` (UNSIGNED-PAYLOAD): the same
 * canonical request under SigV4 (`X-Amz-*`) and GCS V4 (`X-Goog-*`), `prefix` naming the parameters.
 */
function stringToSign(url: URL, prefix: "X-Amz" | "X-Goog", algorithm: string, scope: string): string {
  const canonicalRequest = [
    "GET",
    url.pathname,
    canonicalQuery(url, `${prefix}-Signature`),
    `host:${url.host}`,
    "",
    "host",
    "UNSIGNED-PAYLOAD",
  ].join("\n");
  return [algorithm, url.searchParams.get(`${prefix}-Date`), scope, createHash("sha256").update(canonicalRequest).digest("hex")].join("\n");
}

/** Whether a SigV4 presigned GET (`X-Amz-*`, UNSIGNED-PAYLOAD, host the only signed header) is signed with `secret`. */
function sigV4Valid(url: URL, secret: string): boolean {
  const q = url.searchParams;
  const [, date, region, service] = String(q.get("X-Amz-Credential")).split("/");
  const toSign = stringToSign(url, "X-Amz", "AWS4-HMAC-SHA256", `${date}/${region}/${service}/aws4_request`);
  let key: Buffer = Buffer.from(`AWS4${secret}`);
  for (const part of [String(date), String(region), String(service), "aws4_request"]) key = createHmac("sha256", key).update(part).digest();
  return createHmac("sha256", key).update(toSign).digest("hex") === q.get("X-Amz-Signature");
}

/**
 * Writes `lines` as gs://gt-manifests/view/<name>, creates a job of it with `credentials` and resolves to
 * its id once the job is labeling.
 */
async function gcsJobLabeling(key: string, name: string, lines: string[], credentials: { service_account_json: string }): Promise<string> {
  gcs.put("gt-manifests", `view/${name}`, jsonl(lines), "application/x-ndjson");
  const jobId = await createJob(sys, key, {
    manifest_url: `gs://gt-manifests/view/${name}`,
    label_spec: { question: "Which animal?", options: ["cat", "dog"] },
    credentials,
  });
  await waitForStatus(sys, key, jobId, "labeling");
  return jobId;
}

const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d4948445200000001000000010806000000" +
    "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a5d1e7b80000000049454e44ae426082",
  "hex",
);

it("S3: the claim's view_url is a presigned GET (<= 15 min) the labeler can fetch; https items get none", async () => {
  await s3.client.send(new PutObjectCommand({ Bucket: "images", Key: "pets/cat 1.png", Body: PNG, ContentType: "image/png" }));
  const c = await registerCustomer(sys);
  const lines = [
    JSON.stringify({ "source-ref": "s3://images/pets/cat%201.png" }),
    JSON.stringify({ data_url: "https://cdn.example/dog.png" }),
  ];
  await putS3(s3.client, "manifests", "view/manifest.jsonl", jsonl(lines));
  const jobId = await createJob(sys, c.key, {
    manifest_url: "s3://manifests/view/manifest.jsonl",
    label_spec: { question: "Which animal?", options: ["cat", "dog"] },
    type: "image_classification",
    credentials: s3.credentials,
  });
  await waitForStatus(sys, c.key, jobId, "labeling");
  const [privateTask, publicTask] = await jobTasks(sys, jobId);
  const labeler = await createLabeler(sys, "viewer");

  const before = Date.now();
  const claim = await claimTask(labeler.key, String(privateTask?.id));
  expect(claim).toMatchObject({ task_type: "image_classification", data_url: "s3://images/pets/cat%201.png" });
  const url = new URL(String(claim.view_url));
  expect(`${url.protocol}//${url.host}`).toBe(s3.endpoint);
  expect(url.pathname).toBe("/images/pets/cat%201.png");
  expect(Number(url.searchParams.get("X-Amz-Expires"))).toBeLessThanOrEqual(900);
  expect(Number(url.searchParams.get("X-Amz-Expires"))).toBeGreaterThan(0);
  expect(url.searchParams.get("X-Amz-Credential")).toMatch(/^S3RVER\//);
  expect(url.searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);
  expect(
    Date.parse(String(url.searchParams.get("X-Amz-Date")).replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, "$1-$2-$3T$4:$5:$6Z")),
  ).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);

  // the labeler (no credentials of their own) GETs the object through the presigned URL
  const got = await fetch(url);
  expect(got.status).toBe(200);
  expect(Buffer.from(await got.arrayBuffer()).equals(PNG)).toBe(true);
  // s3rver checks the access key but not SigV4 signatures: verify the signature here, and that it covers the object
  expect(sigV4Valid(url, s3.credentials.secret_access_key)).toBe(true);
  const otherObject = new URL(url);
  otherObject.pathname = "/images/pets/other.png";
  expect(sigV4Valid(otherObject, s3.credentials.secret_access_key)).toBe(false);
  expect(sigV4Valid(url, "another secret")).toBe(false);

  const plain = await claimTask(labeler.key, String(publicTask?.id));
  expect(plain).toMatchObject({ task_type: "image_classification", data_url: "https://cdn.example/dog.png" });
  expect(plain.view_url).toBeUndefined();
  // the claim carries the wire fields only (no job id, no credentials)
  expect(Object.keys(claim).sort()).toEqual([
    "claim_id",
    "data_url",
    "expires_at",
    "instructions_version",
    "label_space",
    "label_spec",
    "task_id",
    "task_type",
    "view_url",
  ]);
});

it("a task posted with an s3:// data_url has no stored credentials: no view_url", async () => {
  const c = await registerCustomer(sys);
  const res = await sys.api("POST", "/v1/tasks", {
    token: c.key,
    body: taskBody({ type: "video_review", data_url: "s3://images/pets/cat 1.png" }),
  });
  expect(res.status).toBe(202);
  const labeler = await createLabeler(sys, "direct");
  const claim = await claimTask(labeler.key, String(res.body.task_id));
  expect(claim.task_type).toBe("video_review");
  expect(claim.view_url).toBeUndefined();
});

it("GCS: a V4 signed URL from the service account's key, <= 15 min, verifiable with its public key", async () => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const credentials = {
    service_account_json: JSON.stringify({
      type: "service_account",
      client_email: "labelgate-test@example-project.iam.gserviceaccount.com",
      private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      project_id: "example-project",
    }),
  };
  const c = await registerCustomer(sys);
  const jobId = await gcsJobLabeling(c.key, "manifest.jsonl", [JSON.stringify({ "source-ref": "gs://gt-images/a/0001.jpg" })], credentials);
  const [task] = await jobTasks(sys, jobId);
  const labeler = await createLabeler(sys, "gcs-viewer");
  const claim = await claimTask(labeler.key, String(task?.id));
  const url = new URL(String(claim.view_url));
  expect(url.origin).toBe("https://storage.googleapis.com");
  expect(url.pathname).toBe("/gt-images/a/0001.jpg");
  const q = url.searchParams;
  expect(q.get("X-Goog-Algorithm")).toBe("GOOG4-RSA-SHA256");
  expect(q.get("X-Goog-Credential")).toMatch(
    /^labelgate-test@example-project\.iam\.gserviceaccount\.com\/\d{8}\/auto\/storage\/goog4_request$/,
  );
  expect(Number(q.get("X-Goog-Expires"))).toBeLessThanOrEqual(900);
  expect(Number(q.get("X-Goog-Expires"))).toBeGreaterThan(0);

  // V4 signing: the signature is RSA-SHA256 over the string-to-sign of the canonical request
  const scope = String(q.get("X-Goog-Credential")).split("/").slice(1).join("/");
  const verifier = createVerify("RSA-SHA256");
  verifier.update(stringToSign(url, "X-Goog", "GOOG4-RSA-SHA256", scope));
  expect(verifier.verify(publicKey, Buffer.from(String(q.get("X-Goog-Signature")), "hex"))).toBe(true);
});

it("a service account key that cannot sign: claims go without view_url, one warning without the key", async () => {
  const badKey = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n";
  const credentials = {
    service_account_json: JSON.stringify({ type: "service_account", client_email: "x@y.iam.gserviceaccount.com", private_key: badKey }),
  };
  const c = await registerCustomer(sys);
  const lines = [JSON.stringify({ "source-ref": "gs://gt-images/b/1.jpg" }), JSON.stringify({ "source-ref": "gs://gt-images/b/2.jpg" })];
  const jobId = await gcsJobLabeling(c.key, "bad-key.jsonl", lines, credentials);
  const labeler = await createLabeler(sys, "bad-key-viewer");
  for (const task of await jobTasks(sys, jobId)) {
    const claim = await claimTask(labeler.key, task.id);
    expect(claim.task_type).toBe("image_classification");
    expect(claim.view_url).toBeUndefined();
  }
  const warnings = logs
    .text()
    .split("\n")
    .filter((l) => l.includes("view_url not signed") && l.includes(jobId));
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).not.toContain("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC");
});
