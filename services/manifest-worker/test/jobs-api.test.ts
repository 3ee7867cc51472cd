/**
 * POST /v1/jobs validation, sealed credentials, GET /v1/jobs/{id} and GET /v1/jobs (contract §routes Batch jobs,
 * contract §jobs). No workers: every job created here stays `queued`, which keeps these checks deterministic.
 */
import { registerCustomer, type System, startSystem, TEST_SECRET_BOX } from "../../../test/system";
import { captureLogs, getJob, postJob, SPEC } from "./helpers";

let sys: System;
const logs = captureLogs();
let customer: { id: string; key: string };
let other: { id: string; key: string };

beforeAll(async () => {
  sys = await startSystem({ workers: false, logger: logs.logger });
  customer = await registerCustomer(sys);
  other = await registerCustomer(sys);
});
afterAll(() => sys.close());

const SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY-unique-7f3a";
const S3_CREDS = { access_key_id: "AKIAEXAMPLE12345", secret_access_key: SECRET, region: "eu-west-1" };
const GCS_CREDS = {
  service_account_json: JSON.stringify({
    client_email: "x@y.iam.gserviceaccount.com",
    private_key: "-----BEGIN PRIVATE KEY-----\nGCSSECRETKEYMATERIAL\n-----END PRIVATE KEY-----\n",
    project_id: "p",
  }),
};

type Details = { error: string; details?: { path: string; message: string }[] };

async function expect400(body: Record<string, unknown>, path?: string): Promise<Details> {
  const res = await postJob(sys, customer.key, body);
  expect(res.status).toBe(400);
  const b = res.body as unknown as Details;
  expect(b.error).toBe("validation failed");
  if (path !== undefined) expect(b.details?.map((d) => d.path)).toContain(path);
  return b;
}

describe("POST /v1/jobs", () => {
  it("answers 202 {job_id, status: queued, created_at} with s3_credentials", async () => {
    const before = Date.now();
    const res = await postJob(sys, customer.key, { manifest_url: "s3://bucket/path/manifest.jsonl", s3_credentials: S3_CREDS });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(["created_at", "job_id", "status"]);
    expect(res.body.job_id).toMatch(/^job_[A-Za-z0-9]+$/);
    expect(res.body.status).toBe("queued");
    const created = Date.parse(String(res.body.created_at));
    expect(new Date(created).toISOString()).toBe(res.body.created_at);
    expect(created).toBeGreaterThanOrEqual(before - 1000);
  });

  it("accepts the credentials under `credentials` too (S3 and GCS)", async () => {
    const s3 = await postJob(sys, customer.key, { manifest_url: "s3://bucket/m.jsonl", credentials: S3_CREDS });
    expect(s3.status).toBe(202);
    const gs = await postJob(sys, customer.key, { manifest_url: "gs://bucket/m.jsonl", credentials: GCS_CREDS });
    expect(gs.status).toBe(202);
    const gsOld = await postJob(sys, customer.key, { manifest_url: "gs://bucket/m.jsonl", s3_credentials: GCS_CREDS });
    expect(gsOld.status).toBe(202);
  });

  it("accepts an http(s) manifest without credentials", async () => {
    expect((await postJob(sys, customer.key, { manifest_url: "https://data.example/manifest.jsonl" })).status).toBe(202);
    // ALLOW_PRIVATE_URLS=true in tests: http:// is allowed for local servers
    expect((await postJob(sys, customer.key, { manifest_url: "http://127.0.0.1:9/manifest.jsonl" })).status).toBe(202);
  });

  it("rejects s3:// and gs:// manifests without (matching) credentials: 400 path credentials", async () => {
    await expect400({ manifest_url: "s3://bucket/m.jsonl" }, "credentials");
    await expect400({ manifest_url: "gs://bucket/m.jsonl" }, "credentials");
    await expect400({ manifest_url: "gs://bucket/m.jsonl", credentials: S3_CREDS }, "credentials");
    await expect400({ manifest_url: "s3://bucket/m.jsonl", credentials: GCS_CREDS }, "credentials");
  });

  it("rejects bad manifest URLs: 400 path manifest_url", async () => {
    await expect400({ manifest_url: "ftp://host/m.jsonl" }, "manifest_url");
    await expect400({ manifest_url: "s3://bucket", credentials: S3_CREDS }, "manifest_url");
    await expect400({ manifest_url: "s3://bucket/", credentials: S3_CREDS }, "manifest_url");
    await expect400({ manifest_url: "gs://bucket", credentials: GCS_CREDS }, "manifest_url");
    await expect400({ manifest_url: "not a url" }, "manifest_url");
    await expect400({ manifest_url: "https://user:pw@data.example/m.jsonl" }, "manifest_url");
    await expect400({ manifest_url: 42 }, "manifest_url");
    await expect400({ label_spec: SPEC }, "manifest_url");
  });

  it("rejects unknown fields, at the top and inside the credentials", async () => {
    await expect400({ manifest_url: "https://data.example/m.jsonl", foo: 1 });
    await expect400({ manifest_url: "s3://bucket/m.jsonl", credentials: { ...S3_CREDS, extra: "x" } });
    await expect400({ manifest_url: "s3://bucket/m.jsonl", credentials: { access_key_id: "a", secret_access_key: "b" } });
    await expect400({ manifest_url: "gs://bucket/m.jsonl", credentials: { service_account_json: "{not json" } });
    await expect400({ manifest_url: "gs://bucket/m.jsonl", credentials: { service_account_json: JSON.stringify({ project_id: "p" }) } });
  });

  it("rejects label_spec errors", async () => {
    const url = "https://data.example/m.jsonl";
    const res = await sys.api("POST", "/v1/jobs", { token: customer.key, body: { manifest_url: url } });
    expect(res.status).toBe(400);
    expect((res.body as unknown as Details).details?.map((d) => d.path)).toContain("label_spec");
    await expect400({ manifest_url: url, label_spec: { question: "q?", options: ["only"] } }, "label_spec.options");
    await expect400({ manifest_url: url, label_spec: { question: "q?", options: ["a", "a"] } }, "label_spec.options");
    await expect400({ manifest_url: url, label_spec: { question: "", options: ["a", "b"] } }, "label_spec.question");
    await expect400({ manifest_url: url, label_spec: { question: "q?", options: ["a", "b"], extra: true } });
    await expect400({ manifest_url: url, label_spec: "q?" }, "label_spec");
  });

  it("rejects a callback_url without an active webhook, accepts it with one", async () => {
    const url = "https://data.example/m.jsonl";
    const callback = "https://hooks.example/labelgate";
    await expect400({ manifest_url: url, callback_url: callback }, "callback_url");
    const hook = await sys.api("POST", "/v1/webhooks", {
      token: customer.key,
      body: { callback_url: callback, secret: "0123456789abcdef0123" },
    });
    expect(hook.status).toBe(201);
    expect((await postJob(sys, customer.key, { manifest_url: url, callback_url: callback })).status).toBe(202);
    // another customer's webhook does not count
    const res = await postJob(sys, other.key, { manifest_url: url, callback_url: callback });
    expect(res.status).toBe(400);
  });

  it("output_url must be s3:// or gs:// (with credentials for it)", async () => {
    const url = "https://data.example/m.jsonl";
    await expect400({ manifest_url: url, output_url: "https://out.example/export.jsonl" }, "output_url");
    await expect400({ manifest_url: url, output_url: "ftp://out.example/export.jsonl" }, "output_url");
    await expect400({ manifest_url: url, output_url: "s3://out", credentials: S3_CREDS }, "output_url");
    await expect400({ manifest_url: url, output_url: "s3://out/export.jsonl" }, "credentials");
    const ok = await postJob(sys, customer.key, { manifest_url: url, output_url: "s3://out/export.jsonl", credentials: S3_CREDS });
    expect(ok.status).toBe(202);
    const okGs = await postJob(sys, customer.key, { manifest_url: url, output_url: "gs://out/export.jsonl", credentials: GCS_CREDS });
    expect(okGs.status).toBe(202);
  });

  it("rejects other invalid options", async () => {
    const url = "https://data.example/m.jsonl";
    await expect400({ manifest_url: url, consensus_threshold: 0 }, "consensus_threshold");
    await expect400({ manifest_url: url, consensus_threshold: 3, max_labels: 2 }, "max_labels");
    await expect400({ manifest_url: url, type: "Not A Type" }, "type");
    await expect400({ manifest_url: "s3://b/k", credentials: { ...S3_CREDS, endpoint: "ftp://minio.local" } }, "credentials.endpoint");
  });

  it("requires authentication", async () => {
    const res = await sys.api("POST", "/v1/jobs", { body: { manifest_url: "https://data.example/m.jsonl", label_spec: SPEC } });
    expect(res.status).toBe(401);
  });
});

describe("credentials at rest and in answers", () => {
  it("are never returned by GET /v1/jobs/{id} or GET /v1/jobs, and are sealed in jobs.credentials_ciphertext", async () => {
    const who = await registerCustomer(sys);
    const s3 = await postJob(sys, who.key, { manifest_url: "s3://bucket/m.jsonl", s3_credentials: S3_CREDS });
    const gs = await postJob(sys, who.key, { manifest_url: "gs://bucket/m.jsonl", credentials: GCS_CREDS });
    expect(s3.status).toBe(202);
    expect(gs.status).toBe(202);
    const ids = [String(s3.body.job_id), String(gs.body.job_id)];

    const views = [
      JSON.stringify((await sys.api("GET", `/v1/jobs/${ids[0]}`, { token: who.key })).body),
      JSON.stringify((await sys.api("GET", `/v1/jobs/${ids[1]}`, { token: who.key })).body),
      JSON.stringify((await sys.api("GET", "/v1/jobs", { token: who.key })).body),
    ];
    for (const v of views) {
      expect(v).not.toContain(SECRET);
      expect(v).not.toContain(S3_CREDS.access_key_id);
      expect(v).not.toContain("GCSSECRETKEYMATERIAL");
      expect(v).not.toContain("gserviceaccount");
      expect(v).not.toMatch(/credentials/);
    }

    const rows = await sys.db.prisma.$queryRaw<{ id: string; credentials_ciphertext: string }[]>`
      SELECT id, credentials_ciphertext FROM jobs WHERE id = ANY(${ids}::text[]) ORDER BY id`;
    expect(rows).toHaveLength(2);
    const byId = new Map(rows.map((r) => [r.id, r.credentials_ciphertext]));
    const s3Sealed = byId.get(ids[0] as string) as string;
    const gsSealed = byId.get(ids[1] as string) as string;
    for (const sealed of [s3Sealed, gsSealed]) {
      expect(sealed.startsWith("v1.")).toBe(true);
      expect(sealed).not.toContain(SECRET);
      expect(sealed).not.toContain(S3_CREDS.access_key_id);
      expect(sealed).not.toContain("GCSSECRETKEYMATERIAL");
    }
    // sealed with the job id as context: opens with it, to exactly what was given
    expect(JSON.parse(TEST_SECRET_BOX.open(s3Sealed, ids[0] as string))).toEqual(S3_CREDS);
    expect(JSON.parse(TEST_SECRET_BOX.open(gsSealed, ids[1] as string))).toEqual(GCS_CREDS);
    expect(() => TEST_SECRET_BOX.open(s3Sealed, ids[1] as string)).toThrow();
  });

  it("an https job stores no credentials", async () => {
    const res = await postJob(sys, customer.key, { manifest_url: "https://data.example/plain.jsonl" });
    const row = await sys.db.prisma.job.findUniqueOrThrow({ where: { id: String(res.body.job_id) } });
    expect(row.credentialsCiphertext).toBeNull();
  });
});

describe("GET /v1/jobs/{id} and GET /v1/jobs", () => {
  it("GET /v1/jobs/{id} gives the status fields", async () => {
    const res = await postJob(sys, customer.key, {
      manifest_url: "s3://bucket/status/m.jsonl",
      credentials: S3_CREDS,
      label_spec: { question: "Which one?", options: ["left", "right", "none"] },
      consensus_threshold: 2,
    });
    const id = String(res.body.job_id);
    const job = await getJob(sys, customer.key, id);
    expect(job).toMatchObject({
      job_id: id,
      status: "queued",
      manifest_url: "s3://bucket/status/m.jsonl",
      label_spec: { question: "Which one?", options: ["left", "right", "none"] },
      task_count: 0,
      tasks_settled: 0,
      progress: 0,
      error: null,
      created_at: res.body.created_at,
      completed_at: null,
    });
    for (const k of ["job_id", "status", "manifest_url", "label_spec", "task_count", "tasks_settled", "progress", "error", "created_at"]) {
      expect(job).toHaveProperty(k);
    }
  });

  it("GET /v1/jobs lists the customer's own jobs, newest first, with page/per_page", async () => {
    const a = await registerCustomer(sys);
    const b = await registerCustomer(sys);
    const mine: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await postJob(sys, a.key, { manifest_url: `https://data.example/${i}.jsonl` });
      mine.push(String(r.body.job_id));
    }
    const theirs = String((await postJob(sys, b.key, { manifest_url: "https://data.example/b.jsonl" })).body.job_id);

    type Page = { page: number; per_page: number; total: number; items: { job_id: string; created_at: string }[] };
    const all = await sys.api<Page>("GET", "/v1/jobs", { token: a.key });
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(3);
    const listed = all.body.items.map((j) => j.job_id);
    expect([...listed].sort()).toEqual([...mine].sort());
    // newest first (jobs created within the same millisecond may come in either order)
    const times = all.body.items.map((j) => Date.parse(j.created_at));
    expect([...times].sort((x, y) => y - x)).toEqual(times);

    const p1 = await sys.api<Page>("GET", "/v1/jobs?page=1&per_page=2", { token: a.key });
    const p2 = await sys.api<Page>("GET", "/v1/jobs?page=2&per_page=2", { token: a.key });
    const p3 = await sys.api<Page>("GET", "/v1/jobs?page=3&per_page=2", { token: a.key });
    expect(p1.body).toMatchObject({ page: 1, per_page: 2, total: 3 });
    expect(p1.body.items).toHaveLength(2);
    expect(p2.body.items).toHaveLength(1);
    expect(p3.body.items).toHaveLength(0);
    expect([...p1.body.items, ...p2.body.items].map((j) => j.job_id)).toEqual(listed);

    const bList = await sys.api<Page>("GET", "/v1/jobs", { token: b.key });
    expect(bList.body.items.map((j) => j.job_id)).toEqual([theirs]);

    expect((await sys.api("GET", "/v1/jobs?per_page=0", { token: a.key })).status).toBe(400);
    expect((await sys.api("GET", "/v1/jobs?per_page=101", { token: a.key })).status).toBe(400);
    expect((await sys.api("GET", "/v1/jobs?page=0", { token: a.key })).status).toBe(400);
    expect((await sys.api("GET", "/v1/jobs")).status).toBe(401);
  });

  it("another customer's job is 404 {error: job not found} on GET and export", async () => {
    const a = await registerCustomer(sys);
    const b = await registerCustomer(sys);
    const id = String((await postJob(sys, a.key, { manifest_url: "https://data.example/a.jsonl" })).body.job_id);
    for (const path of [`/v1/jobs/${id}`, `/v1/jobs/${id}/export`]) {
      const res = await sys.api("GET", path, { token: b.key });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "job not found" });
    }
    for (const path of ["/v1/jobs/job_doesnotexist", "/v1/jobs/nope", "/v1/jobs/job_doesnotexist/export"]) {
      const res = await sys.api("GET", path, { token: a.key });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "job not found" });
    }
    // the owner sees it; export before completion is 409 with the status
    expect((await sys.api("GET", `/v1/jobs/${id}`, { token: a.key })).status).toBe(200);
    const exp = await sys.api("GET", `/v1/jobs/${id}/export`, { token: a.key });
    expect(exp.status).toBe(409);
    expect(exp.body).toEqual({ error: "job not completed", status: "queued" });
  });
});

it("no credential reaches the logs (accepted and rejected job requests alike)", () => {
  const text = logs.text();
  expect(text.length).toBeGreaterThan(0);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain("GCSSECRETKEYMATERIAL");
});
