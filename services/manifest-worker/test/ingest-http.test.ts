/**
 * Manifest jobs over http (a local node:http server; ALLOW_PRIVATE_URLS=true): the whole lifecycle with
 * the export checked line by line, failures of the manifest (404, redirects, malformed lines) and quota.
 * Every failure must leave no task behind and give the reserved quota back (contract §jobs).
 * Chunks of 5 lines, so that a failing manifest has committed tasks before it fails.
 */
import type http from "node:http";
import { createLabeler, eventually, registerCustomer, type System, startSystem } from "../../../test/system";
import {
  createJob,
  expectExport,
  fetchExport,
  gate,
  getJob,
  type JobBody,
  jobTasks,
  jsonl,
  labelAllAndComplete,
  postJob,
  quotaUsed,
  serveManifest,
  waitForStatus,
} from "./helpers";

let sys: System;
beforeAll(async () => {
  sys = await startSystem({ manifestChunkSize: 5 });
});
afterAll(() => sys.close());

const line = (i: number) => JSON.stringify({ data_url: `https://img.example/${i}.jpg`, item: i });

/** A server that sends `first`, waits for the gate, then sends `rest` (one response, streamed). */
async function gatedServer(first: string, rest: string) {
  const g = gate();
  const server = await serveManifest((_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    res.write(first);
    void g.promise.then(() => res.end(rest));
  });
  return { server, open: g.open };
}

async function expectNoTasksAndQuota(jobId: string, key: string, quotaBefore: number): Promise<void> {
  expect(await sys.db.prisma.task.count({ where: { jobId } })).toBe(0);
  expect((await getJob(sys, key, jobId)).task_count).toBe(0);
  expect(await quotaUsed(sys, key)).toBe(quotaBefore);
}

it("goes queued → ingesting → labeling → completed; export is 409 before and JSONL in manifest order after", async () => {
  const c = await registerCustomer(sys);
  // Ground Truth `source-ref` and `data_url` lines with extra fields, and blank lines (7, 14, 21, 28)
  const lines = Array.from({ length: 30 }, (_, k) => {
    const i = k + 1;
    if (i % 7 === 0) return "";
    return i % 2
      ? JSON.stringify({ data_url: `https://img.example/${i}.jpg`, sku: `s${i}`, meta: { i, tags: ["a", "b"] } })
      : JSON.stringify({ "source-ref": `s3://bucket/img/${i}.jpg`, "class-name": "animal", n: i, ok: true, none: null });
  });
  const nonBlank = lines.filter((l) => l !== "").length;
  const { server, open } = await gatedServer(jsonl(lines.slice(0, 12)), jsonl(lines.slice(12)));
  try {
    const created = await postJob(sys, c.key, { manifest_url: server.url() });
    expect(created.status).toBe(202);
    expect(created.body.status).toBe("queued");
    const jobId = String(created.body.job_id);

    // ingesting: the first 12 lines (11 tasks) are read, two chunks of 5 are written, the stream is held open.
    // (This wait once took over 15 s: the two chunks both created the new label space and stalled each other
    // until the statement timeout; the store's startIngesting now creates it first.)
    const ingesting = await eventually(
      async () => {
        const j = await getJob(sys, c.key, jobId);
        return j.status === "ingesting" && j.lines_ingested >= 11 ? j : undefined;
      },
      45_000,
      "the job ingesting its first 11 lines",
    );
    expect(ingesting.lines_ingested).toBe(11);
    expect(ingesting.task_count).toBe(10);
    const exp1 = await sys.api("GET", `/v1/jobs/${jobId}/export`, { token: c.key });
    expect(exp1.status).toBe(409);
    expect(exp1.body).toEqual({ error: "job not completed", status: "ingesting" });
    const written = await jobTasks(sys, jobId);
    expect(written.map((t) => t.status)).toEqual(Array(10).fill("pending"));
    // the tasks of a job still ingesting are not claimable, by name or by a generic claim
    const labeler = await createLabeler(sys);
    const claim = await sys.api("POST", "/v1/labeling/claims", { token: labeler.key, body: { task_id: written[0]?.id } });
    expect(claim.status).toBe(204);
    const generic = await sys.api("POST", "/v1/labeling/claims", { token: labeler.key, body: {} });
    expect(generic.status === 204 || !written.some((t) => t.id === generic.body.task_id)).toBe(true);

    open();
    const labeling = await waitForStatus(sys, c.key, jobId, "labeling");
    expect(labeling).toMatchObject({
      task_count: nonBlank,
      lines_ingested: 30,
      tasks_settled: 0,
      progress: 0,
      error: null,
      completed_at: null,
    });
    const tasks = await jobTasks(sys, jobId);
    expect(tasks.every((t) => t.status === "pending")).toBe(true);
    expect(tasks.map((t) => t.manifestLine)).toEqual(lines.flatMap((l, i) => (l === "" ? [] : [i + 1])));
    const exp2 = await sys.api("GET", `/v1/jobs/${jobId}/export`, { token: c.key });
    expect(exp2.status).toBe(409);
    expect(exp2.body).toEqual({ error: "job not completed", status: "labeling" });

    const completed = await labelAllAndComplete(sys, c.key, jobId, "cat");
    expect(completed).toMatchObject({ task_count: nonBlank, tasks_settled: nonBlank, progress: 1, error: null });
    expect(typeof completed.completed_at).toBe("string");
    expect(Date.parse(String(completed.completed_at))).toBeGreaterThanOrEqual(Date.parse(String(completed.created_at)));

    await expectExport(sys, c.key, jobId, lines, "cat");
    expect(server.requests).toBe(1);
  } finally {
    open();
    await server.close();
  }
}, 120_000);

it("a manifest answering 404 fails the job with a not-found error", async () => {
  const c = await registerCustomer(sys);
  const server = await serveManifest((_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("no such manifest");
  });
  try {
    const jobId = await createJob(sys, c.key, { manifest_url: server.url("/missing.jsonl") });
    const failed = await waitForStatus(sys, c.key, jobId, "failed");
    expect(failed.error).toMatch(/not found/);
    expect(failed.error).toContain("/missing.jsonl");
    await expectNoTasksAndQuota(jobId, c.key, 0);
    const exp = await sys.api("GET", `/v1/jobs/${jobId}/export`, { token: c.key });
    expect(exp.status).toBe(409);
    expect(exp.body).toEqual({ error: "job not completed", status: "failed" });
    // a permanent failure is not retried
    expect(server.requests).toBe(1);
  } finally {
    await server.close();
  }
});

it("a redirect is not followed: the job fails", async () => {
  const c = await registerCustomer(sys);
  const server = await serveManifest((_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(302, { location: "http://127.0.0.1:9/elsewhere.jsonl" });
    res.end();
  });
  try {
    const jobId = await createJob(sys, c.key, { manifest_url: server.url() });
    const failed = await waitForStatus(sys, c.key, jobId, "failed");
    expect(failed.error).toMatch(/redirect/);
    expect(server.requests).toBe(1);
  } finally {
    await server.close();
  }
});

it("a transient 503 is retried and the job then ingests", async () => {
  const c = await registerCustomer(sys);
  const lines = [line(1), line(2), line(3)];
  let calls = 0;
  const server = await serveManifest((_req: http.IncomingMessage, res: http.ServerResponse) => {
    calls++;
    if (calls === 1) {
      res.writeHead(503);
      res.end("try later");
      return;
    }
    res.writeHead(200);
    res.end(jsonl(lines));
  });
  try {
    const jobId = await createJob(sys, c.key, { manifest_url: server.url() });
    const labeling = await waitForStatus(sys, c.key, jobId, "labeling", 30_000);
    expect(labeling).toMatchObject({ task_count: 3, error: null });
    expect(calls).toBe(2);
  } finally {
    await server.close();
  }
});

describe("a manifest that keeps answering 503", () => {
  it("is retried until the queue's attempts are spent (5 requests), then the job ends failed naming the 503", async () => {
    const c = await registerCustomer(sys);
    const server = await serveManifest((_req: http.IncomingMessage, res: http.ServerResponse) => {
      res.writeHead(503);
      res.end("down");
    });
    try {
      const jobId = await createJob(sys, c.key, { manifest_url: server.url("/down.jsonl") });
      // 5 attempts, exponential backoff from 2 s: about 30 s until the last attempt fails the job
      const failed = await waitForStatus(sys, c.key, jobId, "failed", 90_000);
      expect(server.requests).toBe(5);
      expect(failed).toMatchObject({ status: "failed", task_count: 0, error: expect.stringMatching(/503/) });
    } finally {
      await server.close();
    }
  }, 120_000);
});

it("a connection cut mid-manifest is retried and resumes: exactly one task per line", async () => {
  const c = await registerCustomer(sys);
  const lines = Array.from({ length: 40 }, (_, i) => line(i + 1));
  let calls = 0;
  const server = await serveManifest((_req: http.IncomingMessage, res: http.ServerResponse) => {
    calls++;
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    if (calls > 1) {
      res.end(jsonl(lines));
      return;
    }
    // first attempt: 17 lines and half of the 18th, then the connection drops once they are ingested
    res.write(`${jsonl(lines.slice(0, 17))}${(lines[17] as string).slice(0, 10)}`);
    void eventually(async () => {
      const j = await sys.db.prisma.job.findFirst({ where: { customerId: c.id }, select: { linesIngested: true } });
      return j && j.linesIngested >= 15 ? true : undefined;
    }).then(() => res.destroy());
  });
  try {
    const jobId = await createJob(sys, c.key, { manifest_url: server.url() });
    const labeling = await waitForStatus(sys, c.key, jobId, "labeling", 30_000);
    expect(calls).toBe(2);
    expect(labeling).toMatchObject({ task_count: 40, lines_ingested: 40, error: null });
    const tasks = await jobTasks(sys, jobId);
    expect(tasks.map((t) => t.manifestLine)).toEqual(lines.map((_, i) => i + 1));
    expect(tasks.map((t) => (t.source as { item: number }).item)).toEqual(lines.map((_, i) => i + 1));
    expect(await quotaUsed(sys, c.key)).toBe(40);
  } finally {
    await server.close();
  }
});

it("a line longer than 1 MiB fails the job with its line number", async () => {
  const c = await registerCustomer(sys);
  const huge = JSON.stringify({ data_url: "https://img.example/big.jpg", blob: "x".repeat(1_200_000) });
  const server = await serveManifest(jsonl([line(1), "", huge, line(4)]));
  try {
    const jobId = await createJob(sys, c.key, { manifest_url: server.url() });
    const failed = await waitForStatus(sys, c.key, jobId, "failed");
    expect(failed.error).toMatch(/^line 3: longer than/);
    await expectNoTasksAndQuota(jobId, c.key, 0);
  } finally {
    await server.close();
  }
});

it("tasks canceled while their job ingests: the job opens with the rest, or completes when none is left open", async () => {
  const c = await registerCustomer(sys);
  const ten = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(line);
  // job 1: the first 10 tasks are canceled mid-way, 2 more lines follow: it opens with 2 tasks
  const one = await gatedServer(jsonl(ten), jsonl([line(11), line(12)]));
  // job 2: all its 10 tasks are canceled mid-way, nothing follows: it completes when ingested
  const two = await gatedServer(jsonl(ten), "");
  try {
    const jobs = [
      await createJob(sys, c.key, { manifest_url: one.server.url() }),
      await createJob(sys, c.key, { manifest_url: two.server.url() }),
    ];
    for (const jobId of jobs) {
      await eventually(async () => ((await getJob(sys, c.key, jobId)).task_count === 10 ? true : undefined));
      for (const t of await jobTasks(sys, jobId)) {
        const canceled = await sys.api("POST", `/v1/tasks/${t.id}/cancel`, { token: c.key });
        expect(canceled.status).toBe(200);
      }
      expect((await getJob(sys, c.key, jobId)).status).toBe("ingesting");
    }
    one.open();
    two.open();
    const opened = await waitForStatus(sys, c.key, jobs[0] as string, "labeling");
    expect(opened.task_count).toBe(12);
    expect((await jobTasks(sys, jobs[0] as string)).filter((t) => t.status === "pending").length).toBe(2);
    const completed = await waitForStatus(sys, c.key, jobs[1] as string, "completed");
    expect(completed.task_count).toBe(10);
    // quota: the 2 open tasks of job 1 hold theirs, every canceled one returned its own
    expect(await quotaUsed(sys, c.key)).toBe(2);
  } finally {
    one.open();
    two.open();
    await one.server.close();
    await two.server.close();
  }
});

describe("a malformed line fails the job with `line N: ...`, deletes its tasks and returns the quota", () => {
  const six = [1, 2, 3, 4, 5, 6].map(line);
  it.each([
    ["a line that is not JSON", [...six, "", line(7), "{not json"], 9, /^line 9: not valid JSON/],
    ["a JSON array", [...six, "[1,2,3]"], 7, /^line 7: not a JSON object$/],
    ["a JSON null", [...six, "", "", "null", line(8)], 9, /^line 9: not a JSON object$/],
    ["a JSON string", [...six, '"https://img.example/x.jpg"'], 7, /^line 7: not a JSON object$/],
    [
      "a line without data_url",
      [...six, "", JSON.stringify({ url: "https://img.example/x.jpg" })],
      8,
      /^line 8: no "data_url" or "source-ref" string$/,
    ],
    ["a data_url that is not a string", [...six, JSON.stringify({ data_url: 5 })], 7, /^line 7: no "data_url" or "source-ref" string$/],
    ["a data_url that is not a URL", ["", ...six, JSON.stringify({ data_url: "not a url" })], 8, /^line 8: "not a url" is not a URL$/],
    [
      "a data_url longer than 2048 characters",
      [...six, JSON.stringify({ data_url: `https://img.example/${"a".repeat(2100)}.jpg` })],
      7,
      /^line 7: data URL longer than 2048 characters$/,
    ],
    ["a data_url with another scheme", [...six, JSON.stringify({ "source-ref": "ftp://host/x.jpg" })], 7, /^line 7: data URL must be/],
    [
      "an s3:// data_url without bucket and key",
      [...six, JSON.stringify({ data_url: "s3://" })],
      7,
      /^line 7: data URL must name a bucket and a key: s3:\/\/bucket\/key$/,
    ],
    [
      "a gs:// source-ref without a key",
      [...six, "", JSON.stringify({ "source-ref": "gs://b" })],
      8,
      /^line 8: data URL must name a bucket and a key: gs:\/\/bucket\/key$/,
    ],
  ])("%s", async (_name, lines, lineNo, message) => {
    const c = await registerCustomer(sys);
    const before = await quotaUsed(sys, c.key);
    const server = await serveManifest(jsonl(lines));
    try {
      const jobId = await createJob(sys, c.key, { manifest_url: server.url() });
      const failed = await waitForStatus(sys, c.key, jobId, "failed");
      expect(failed.error).toMatch(message);
      expect(failed.error?.startsWith(`line ${lineNo}: `)).toBe(true);
      await expectNoTasksAndQuota(jobId, c.key, before);
    } finally {
      await server.close();
    }
  });

  it("with CRLF line endings and blank lines counted", async () => {
    const c = await registerCustomer(sys);
    const body = [...six, "", "  ", "[]"].join("\r\n");
    const server = await serveManifest(`${body}\r\n`);
    try {
      const jobId = await createJob(sys, c.key, { manifest_url: server.url() });
      const failed = await waitForStatus(sys, c.key, jobId, "failed");
      expect(failed.error).toBe("line 9: not a JSON object");
      await expectNoTasksAndQuota(jobId, c.key, 0);
    } finally {
      await server.close();
    }
  });

  it("after tasks were committed and quota reserved (observed mid-way)", async () => {
    const c = await registerCustomer(sys);
    const first = [...six, "", line(8), line(9), line(10), line(11)]; // 10 tasks: two chunks of 5
    const { server, open } = await gatedServer(jsonl(first), jsonl([line(12), "", '{"data_url": "https://img.example/13.jpg",}']));
    try {
      const jobId = await createJob(sys, c.key, { manifest_url: server.url() });
      const mid = await eventually(async () => {
        const j = await getJob(sys, c.key, jobId);
        return j.task_count === 10 ? j : undefined;
      });
      expect(mid.status).toBe("ingesting");
      expect(await sys.db.prisma.task.count({ where: { jobId, status: "pending" } })).toBe(10);
      expect(await quotaUsed(sys, c.key)).toBe(10);
      open();
      const failed = await waitForStatus(sys, c.key, jobId, "failed");
      expect(failed.error).toMatch(/^line 14: not valid JSON/);
      await expectNoTasksAndQuota(jobId, c.key, 0);
    } finally {
      open();
      await server.close();
    }
  });
});

describe("quota", () => {
  it("a manifest needing more quota than is left fails the job with a quota error, no tasks left, quota back", async () => {
    const c = await registerCustomer(sys, 7);
    const lines = Array.from({ length: 12 }, (_, i) => line(i + 1));
    const { server, open } = await gatedServer(jsonl(lines.slice(0, 6)), jsonl(lines.slice(6)));
    try {
      const jobId = await createJob(sys, c.key, { manifest_url: server.url() });
      // the first chunk (5 tasks x threshold 1) fits and is reserved
      await eventually(async () => ((await getJob(sys, c.key, jobId)).task_count === 5 ? true : undefined));
      expect(await quotaUsed(sys, c.key)).toBe(5);
      open();
      const failed = await waitForStatus(sys, c.key, jobId, "failed");
      expect(failed.error).toMatch(/quota/i);
      await expectNoTasksAndQuota(jobId, c.key, 0);
    } finally {
      open();
      await server.close();
    }
  });

  /** A customer granted `quota` and its job of 5 manifest lines at consensus_threshold 3 (15 units), once it is `status`. */
  async function fiveTasksOfThree(quota: number, status: string): Promise<{ key: string; job: JobBody }> {
    const c = await registerCustomer(sys, quota);
    const server = await serveManifest(jsonl([1, 2, 3, 4, 5].map(line)));
    try {
      const jobId = await createJob(sys, c.key, { manifest_url: server.url(), consensus_threshold: 3 });
      return { key: c.key, job: await waitForStatus(sys, c.key, jobId, status) };
    } finally {
      await server.close();
    }
  }

  it("reserves consensus_threshold units per task: 5 tasks x 3 do not fit in 14", async () => {
    const { key, job } = await fiveTasksOfThree(14, "failed");
    expect(job.error).toMatch(/quota/i);
    await expectNoTasksAndQuota(job.job_id, key, 0);
  });

  it("a manifest that exactly fits the quota ingests, and reserves it", async () => {
    const { key, job } = await fiveTasksOfThree(15, "labeling");
    expect(job.task_count).toBe(5);
    expect(await quotaUsed(sys, key)).toBe(15);
  });
});

it("an empty manifest completes at once with no tasks, and exports nothing", async () => {
  const c = await registerCustomer(sys);
  const server = await serveManifest("\n\n");
  try {
    const jobId = await createJob(sys, c.key, { manifest_url: server.url() });
    const done = await waitForStatus(sys, c.key, jobId, "completed");
    expect(done).toMatchObject({ task_count: 0, lines_ingested: 2, error: null });
    const exp = await fetchExport(sys, c.key, jobId);
    expect(exp.status).toBe(200);
    expect(exp.text).toBe("");
  } finally {
    await server.close();
  }
});
