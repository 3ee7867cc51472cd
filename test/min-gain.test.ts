/**
 * `min_gain` end to end (contract §quality, decision 0267), through the HTTP API with every worker running on
 * real Postgres and Redis: set wherever `confidence_target` is (customer defaults, manifest job, batch top
 * level, task body, most specific first), shown on a task's and a job's GET, refused out of its bounds with
 * the spec's 400 body and nothing stored, and a task under the confidence policy settling with resolution
 * `no_gain` when the best next label cannot raise its confidence by `min_gain`.
 */

import { jsonl, serveManifest, waitForStatus } from "../services/manifest-worker/test/helpers";
import { createLabelers, eventually, label, registerCustomer, type System, startSystem, taskBody } from "./system";

let sys: System;
beforeAll(async () => {
  sys = await startSystem();
});
afterAll(async () => {
  await sys.close();
});

type Json = Record<string, unknown>;

async function patchSettings(key: string, body: unknown) {
  return sys.api<Json>("PATCH", "/v1/customers/me/settings", { token: key, body });
}

async function submit(key: string, overrides: Json): Promise<string> {
  const res = await sys.api<{ task_id: string }>("POST", "/v1/tasks", { token: key, body: taskBody(overrides) });
  if (res.status !== 202) throw new Error(`task creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.task_id;
}

async function taskView(key: string, taskId: string): Promise<Json> {
  const res = await sys.api<Json>("GET", `/v1/tasks/${taskId}`, { token: key });
  expect(res.status).toBe(200);
  return res.body;
}

const policyOf = (t: Json) => ({ confidence_target: t.confidence_target, min_gain: t.min_gain });

async function quotaUsed(key: string): Promise<number> {
  return Number((await sys.api<Json>("GET", "/v1/customers/me", { token: key })).body.label_quota_used);
}

describe("min_gain settings and layers", () => {
  it("is a task default: PATCH sets it, null clears it, and GET answers it with the other fields", async () => {
    const c = await registerCustomer(sys);
    const set = await patchSettings(c.key, { task_defaults: { confidence_target: 0.95, min_gain: 0.05 } });
    expect(set.status).toBe(200);
    expect(set.body.task_defaults).toEqual({
      consensus_threshold: null,
      confidence_target: 0.95,
      min_labels: null,
      min_gain: 0.05,
      max_labels: null,
    });
    const cleared = await patchSettings(c.key, { task_defaults: { min_gain: null } });
    expect((cleared.body.task_defaults as Json).min_gain).toBeNull();
    expect(((await sys.api<Json>("GET", "/v1/customers/me/settings", { token: c.key })).body.task_defaults as Json).min_gain).toBeNull();
  });

  it("refuses a min_gain outside 0.001..0.5 or not a number, in the settings, a task, a batch and a job: 400 with details, nothing stored", async () => {
    const c = await registerCustomer(sys);
    await patchSettings(c.key, { task_defaults: { confidence_target: 0.9, min_gain: 0.1 } });
    for (const value of [0.0005, 0.6, -1, "0.05", true]) {
      const res = await patchSettings(c.key, { task_defaults: { min_gain: value } });
      expect({ value, status: res.status, error: res.body.error }).toEqual({ value, status: 400, error: "validation failed" });
      expect((res.body.details as { path: string }[]).map((d) => d.path)).toEqual(["task_defaults.min_gain"]);
    }
    expect(((await sys.api<Json>("GET", "/v1/customers/me/settings", { token: c.key })).body.task_defaults as Json).min_gain).toBe(0.1);

    const single = await sys.api<Json>("POST", "/v1/tasks", { token: c.key, body: taskBody({ confidence_target: 0.9, min_gain: 0.51 }) });
    expect(single.status).toBe(400);
    expect(single.body.error).toBe("validation failed");
    expect((single.body.details as { path: string; message: string }[]).map((d) => d.path)).toEqual(["min_gain"]);
    const batch = await sys.api<Json>("POST", "/v1/tasks/batch", {
      token: c.key,
      body: { tasks: [taskBody(), taskBody({ min_gain: 0 })] },
    });
    expect(batch.status).toBe(400);
    expect((batch.body.details as { path: string }[]).map((d) => d.path)).toEqual(["tasks.1.min_gain"]);
    const top = await sys.api<Json>("POST", "/v1/tasks/batch", { token: c.key, body: { min_gain: 2, tasks: [taskBody()] } });
    expect(top.status).toBe(400);
    expect((top.body.details as { path: string }[]).map((d) => d.path)).toEqual(["min_gain"]);
    const job = await sys.api<Json>("POST", "/v1/jobs", {
      token: c.key,
      body: { manifest_url: "https://manifests.example/m.jsonl", label_spec: { question: "Q?", options: ["x", "y"] }, min_gain: 0.9 },
    });
    expect(job.status).toBe(400);
    expect((job.body.details as { path: string }[]).map((d) => d.path)).toContain("min_gain");
    // nothing was created: no task, no job, no quota reserved
    expect(await quotaUsed(c.key)).toBe(0);
    expect(await sys.db.prisma.task.count({ where: { customerId: c.id } })).toBe(0);
    expect(await sys.db.prisma.job.count({ where: { customerId: c.id } })).toBe(0);
  });

  it("comes from the most specific layer that sets it; null turns it off; the threshold policy shows none", async () => {
    const c = await registerCustomer(sys, 10_000);
    await patchSettings(c.key, { task_defaults: { confidence_target: 0.9, min_gain: 0.05 } });
    expect(policyOf(await taskView(c.key, await submit(c.key, {})))).toEqual({ confidence_target: 0.9, min_gain: 0.05 });
    expect(policyOf(await taskView(c.key, await submit(c.key, { min_gain: 0.2 })))).toEqual({ confidence_target: 0.9, min_gain: 0.2 });
    expect(policyOf(await taskView(c.key, await submit(c.key, { min_gain: null })))).toEqual({ confidence_target: 0.9, min_gain: null });
    // the threshold policy has no min_gain, whatever the defaults say
    expect(policyOf(await taskView(c.key, await submit(c.key, { confidence_target: null })))).toEqual({
      confidence_target: null,
      min_gain: null,
    });

    const batch = await sys.api<{ task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: c.key,
      body: { min_gain: 0.01, tasks: [taskBody(), taskBody({ min_gain: 0.3 })] },
    });
    expect(batch.status).toBe(202);
    const views = await Promise.all(batch.body.task_ids.map((id) => taskView(c.key, id)));
    expect(views.map(policyOf)).toEqual([
      { confidence_target: 0.9, min_gain: 0.01 },
      { confidence_target: 0.9, min_gain: 0.3 },
    ]);

    const server = await serveManifest(jsonl([JSON.stringify({ data_url: "https://img.example/1.jpg" })]));
    try {
      const job = await sys.api<Json>("POST", "/v1/jobs", {
        token: c.key,
        body: { manifest_url: server.url(), label_spec: { question: "Q?", options: ["x", "y"] }, min_gain: 0.02 },
      });
      expect(job.status).toBe(202);
      const jobId = String(job.body.job_id);
      const labeling = await waitForStatus(sys, c.key, jobId, "labeling");
      expect(policyOf(labeling)).toEqual({ confidence_target: 0.9, min_gain: 0.02 });
      const [task] = await sys.db.prisma.task.findMany({ where: { jobId } });
      expect(policyOf(await taskView(c.key, task?.id as string))).toEqual({ confidence_target: 0.9, min_gain: 0.02 });
    } finally {
      await server.close();
    }
  });
});

describe("resolution no_gain", () => {
  it("settles below the target once the best next label cannot raise the confidence by min_gain, with labels left", async () => {
    const c = await registerCustomer(sys);
    const ls = await createLabelers(sys, 6, "no-gain");
    // a new label space: under its prior model each agreeing vote of three options multiplies the odds by 4
    // (packages/quality `defaultPopulation`), so the confidence goes 0.67, 0.89, 0.97, 0.99: the third label's best
    // successor adds 0.02 < 0.05, while T = 0.999 is still out of reach
    const taskId = await submit(c.key, {
      label_spec: { question: `No gain ${Date.now()}?`, options: ["cat", "dog", "bird"] },
      confidence_target: 0.999,
      min_gain: 0.05,
      max_labels: 6,
    });
    let labels = 0;
    for (const l of ls) {
      const res = await label(sys, l.key, taskId, "cat");
      expect(res.status).toBe(201);
      labels++;
      if (res.body.labels_needed === 0) break;
    }
    expect(labels).toBeLessThan(6);
    const result = await eventually(async () => {
      const r = await sys.api<Json>("GET", `/v1/tasks/${taskId}/result`, { token: c.key });
      return r.status === 200 ? r.body : undefined;
    });
    expect(result).toMatchObject({ consensus_label: "cat", resolution: "no_gain", labels_collected: labels });
    expect(result.confidence as number).toBeLessThan(0.999);
    expect(result.confidence).toBe((result.posterior as Record<string, number>).cat);
    // the same labels without min_gain keep a task open up to max_labels
    const open = await submit(c.key, {
      label_spec: { question: `No gain ${Date.now()}?`, options: ["cat", "dog", "bird"] },
      confidence_target: 0.999,
      max_labels: 6,
    });
    for (const l of ls.slice(0, labels)) expect((await label(sys, l.key, open, "cat")).body.labels_needed).toBeGreaterThan(0);
  });
});
