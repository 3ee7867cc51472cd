/**
 * Label quality end to end (contract §quality, docs/decisions.md "Label quality"), through the HTTP API
 * with every worker running on real Postgres and Redis: customer settings and the precedence of the policy
 * layers, the confidence policy and the quota it returns, gold tasks (never settled, delivered or exported;
 * mixed into generic claims at the gold rate), the exclusion of a bad labeler, the background refit and the
 * dashboard's labelers and calibration.
 *
 * Generic claims take the oldest claimable task of any customer, so the tests that depend on what a generic
 * claim returns run on a system of their own over an isolated database.
 */

import { fetchExport, jsonl, serveManifest, waitForStatus } from "../services/manifest-worker/test/helpers";
import { createLabeler, eventually, label, registerCustomer, type System, startSystem, taskBody } from "./system";
import { newSecret, receivers, registerWebhook } from "./webhooks";

let sys: System;
const { rx, closeAll } = receivers();
beforeAll(async () => {
  sys = await startSystem({ env: { REFIT_INTERVAL_MS: "200" } });
});
afterAll(async () => {
  await sys.close();
  await closeAll();
});

type Json = Record<string, unknown>;

const EMPTY_SETTINGS = {
  task_defaults: { consensus_threshold: null, confidence_target: null, min_labels: null, min_gain: null, max_labels: null },
  quality: { gold_rate: null, min_labeler_accuracy: null, min_gold_answers: null, audit_rate: null, qualification: null },
};

async function patchSettings(s: System, key: string, body: unknown) {
  return s.api<Json>("PATCH", "/v1/customers/me/settings", { token: key, body });
}

async function taskView(s: System, key: string, taskId: string): Promise<Json> {
  const res = await s.api<Json>("GET", `/v1/tasks/${taskId}`, { token: key });
  expect(res.status).toBe(200);
  return res.body;
}

async function submit(s: System, key: string, overrides: Json): Promise<string> {
  const res = await s.api<{ task_id: string }>("POST", "/v1/tasks", { token: key, body: taskBody(overrides) });
  if (res.status !== 202) throw new Error(`task creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.task_id;
}

async function quotaUsed(s: System, key: string): Promise<number> {
  return Number((await s.api<Json>("GET", "/v1/customers/me", { token: key })).body.label_quota_used);
}

async function claim(s: System, labelerKey: string, taskId?: string) {
  return s.api<{ claim_id: string; task_id: string }>("POST", "/v1/labeling/claims", {
    token: labelerKey,
    body: taskId ? { task_id: taskId } : {},
  });
}

const policyOf = (t: Json) => ({
  consensus_threshold: t.consensus_threshold,
  max_labels: t.max_labels,
  confidence_target: t.confidence_target,
  min_labels: t.min_labels,
});

describe("settings", () => {
  it("GET answers every field null at first; PATCH merges, null clears, and both answer the full settings", async () => {
    const c = await registerCustomer(sys);
    expect((await sys.api("GET", "/v1/customers/me/settings", { token: c.key })).body).toEqual(EMPTY_SETTINGS);

    const first = await patchSettings(sys, c.key, {
      task_defaults: { confidence_target: 0.9, max_labels: 9 },
      quality: { gold_rate: 0.5 },
    });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      task_defaults: { consensus_threshold: null, confidence_target: 0.9, min_labels: null, min_gain: null, max_labels: 9 },
      quality: { gold_rate: 0.5, min_labeler_accuracy: null, min_gold_answers: null, audit_rate: null, qualification: null },
    });
    const second = await patchSettings(sys, c.key, { task_defaults: { max_labels: null, min_labels: 2 } });
    expect(second.body).toEqual({
      task_defaults: { consensus_threshold: null, confidence_target: 0.9, min_labels: 2, min_gain: null, max_labels: null },
      quality: { gold_rate: 0.5, min_labeler_accuracy: null, min_gold_answers: null, audit_rate: null, qualification: null },
    });
    expect((await sys.api("GET", "/v1/customers/me/settings", { token: c.key })).body).toEqual(second.body);
    // another customer's settings are its own
    const other = await registerCustomer(sys);
    expect((await sys.api("GET", "/v1/customers/me/settings", { token: other.key })).body).toEqual(EMPTY_SETTINGS);
  });

  it("refuses bad settings with the spec's 400 body and keeps what it had", async () => {
    const c = await registerCustomer(sys);
    await patchSettings(sys, c.key, { task_defaults: { consensus_threshold: 4 } });
    const inconsistent = await patchSettings(sys, c.key, { task_defaults: { max_labels: 3 } });
    expect(inconsistent.status).toBe(400);
    expect(inconsistent.body).toEqual({
      error: "validation failed",
      details: [{ path: "task_defaults.max_labels", message: "must be at least consensus_threshold" }],
    });
    for (const body of [
      { task_defaults: { confidence_target: 1.2 } },
      { task_defaults: { confidence_target: 0.4 } },
      { quality: { gold_rate: 2 } },
      { quality: { min_labeler_accuracy: 1 } },
      { quality: { min_gold_answers: 0 } },
      { task_defaults: { consensus_threshold: 2.5 } },
      { colour: "blue" },
      { task_defaults: { quorum: 3 } },
    ]) {
      const res = await patchSettings(sys, c.key, body);
      expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 400, error: "validation failed" });
    }
    expect((await sys.api("GET", "/v1/customers/me/settings", { token: c.key })).body).toEqual({
      ...EMPTY_SETTINGS,
      task_defaults: { ...EMPTY_SETTINGS.task_defaults, consensus_threshold: 4 },
    });
    expect((await sys.api("GET", "/v1/customers/me/settings")).status).toBe(401);
    expect((await sys.api("PATCH", "/v1/customers/me/settings", { body: {} })).status).toBe(401);
  });

  it("applies the policy from the most specific layer: task body, then batch, then job, then the customer's defaults", async () => {
    const c = await registerCustomer(sys, 10_000);
    await patchSettings(sys, c.key, { task_defaults: { consensus_threshold: 4, confidence_target: 0.9, min_labels: 2, max_labels: 9 } });

    // the customer's defaults alone
    expect(policyOf(await taskView(sys, c.key, await submit(sys, c.key, {})))).toEqual({
      consensus_threshold: 4,
      max_labels: 9,
      confidence_target: 0.9,
      min_labels: 2,
    });
    // the task body wins field by field; a null target is the threshold policy (min_labels then has no meaning)
    expect(policyOf(await taskView(sys, c.key, await submit(sys, c.key, { confidence_target: null, consensus_threshold: 2 })))).toEqual({
      consensus_threshold: 2,
      max_labels: 9,
      confidence_target: null,
      min_labels: null,
    });
    expect(policyOf(await taskView(sys, c.key, await submit(sys, c.key, { confidence_target: 0.75, max_labels: 4 })))).toEqual({
      consensus_threshold: 4,
      max_labels: 4,
      confidence_target: 0.75,
      min_labels: 2,
    });

    // the batch's top level sits between the task and the defaults
    const batch = await sys.api<{ task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: c.key,
      body: {
        confidence_target: 0.8,
        max_labels: 6,
        tasks: [taskBody(), taskBody({ max_labels: 5 }), taskBody({ confidence_target: 0.7, min_labels: 3 })],
      },
    });
    expect(batch.status).toBe(202);
    const views = await Promise.all(batch.body.task_ids.map((id) => taskView(sys, c.key, id)));
    expect(views.map(policyOf)).toEqual([
      { consensus_threshold: 4, max_labels: 6, confidence_target: 0.8, min_labels: 2 },
      { consensus_threshold: 4, max_labels: 5, confidence_target: 0.8, min_labels: 2 },
      { consensus_threshold: 4, max_labels: 6, confidence_target: 0.7, min_labels: 3 },
    ]);

    // the manifest job's body, then the defaults, for every task of the job
    const server = await serveManifest(jsonl([JSON.stringify({ data_url: "https://img.example/1.jpg" })]));
    try {
      const job = await sys.api<Json>("POST", "/v1/jobs", {
        token: c.key,
        body: { manifest_url: server.url(), label_spec: { question: "Q?", options: ["x", "y"] }, confidence_target: 0.85 },
      });
      expect(job.status).toBe(202);
      const jobId = String(job.body.job_id);
      const labeling = await waitForStatus(sys, c.key, jobId, "labeling");
      expect(policyOf(labeling)).toEqual({ consensus_threshold: 4, max_labels: 9, confidence_target: 0.85, min_labels: 2 });
      const [task] = await sys.db.prisma.task.findMany({ where: { jobId } });
      expect(policyOf(await taskView(sys, c.key, task?.id as string))).toEqual({
        consensus_threshold: 4,
        max_labels: 9,
        confidence_target: 0.85,
        min_labels: 2,
      });
    } finally {
      await server.close();
    }
  });

  it("refuses a task whose effective policy is inconsistent, naming the field (and the batch item)", async () => {
    const c = await registerCustomer(sys);
    await patchSettings(sys, c.key, { task_defaults: { consensus_threshold: 4 } });
    const single = await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody({ max_labels: 3 }) });
    expect(single.status).toBe(400);
    expect(single.body).toEqual({
      error: "validation failed",
      details: [{ path: "max_labels", message: "must be at least consensus_threshold" }],
    });
    const confident = await sys.api("POST", "/v1/tasks", {
      token: c.key,
      body: taskBody({ confidence_target: 0.9, min_labels: 5, max_labels: 3 }),
    });
    expect(confident.body).toEqual({
      error: "validation failed",
      details: [{ path: "max_labels", message: "must be at least min_labels" }],
    });
    const batch = await sys.api("POST", "/v1/tasks/batch", { token: c.key, body: { tasks: [taskBody(), taskBody({ max_labels: 2 })] } });
    expect(batch.status).toBe(400);
    expect(batch.body).toEqual({
      error: "validation failed",
      details: [{ path: "tasks.1.max_labels", message: "must be at least consensus_threshold" }],
    });
    const bad = await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody({ confidence_target: 1 }) });
    expect(bad.status).toBe(400);
    // nothing was created, no quota reserved
    expect(await quotaUsed(sys, c.key)).toBe(0);
  });
});

describe("confidence policy", () => {
  it("settles when the calibrated posterior reaches the target: labels_needed 0, resolution confidence, the unused reservation returned", async () => {
    const c = await registerCustomer(sys);
    const [l0] = [await createLabeler(sys, "confident")];
    // a new label space: its prior model gives one vote of three options 2/3 (packages/quality `defaultPopulation`)
    const taskId = await submit(sys, c.key, {
      label_spec: { question: `Confident ${Date.now()}?`, options: ["cat", "dog", "bird"] },
      consensus_threshold: 3,
      confidence_target: 0.6,
      max_labels: 5,
    });
    expect(await quotaUsed(sys, c.key)).toBe(3);
    const res = await label(sys, l0?.key as string, taskId, "cat");
    expect(res.status).toBe(201);
    expect(res.body.labels_needed).toBe(0);
    const result = await eventually(async () => {
      const r = await sys.api<Json>("GET", `/v1/tasks/${taskId}/result`, { token: c.key });
      return r.status === 200 ? r.body : undefined;
    });
    expect(result).toMatchObject({ consensus_label: "cat", resolution: "confidence", labels_collected: 1 });
    expect(result.confidence as number).toBeGreaterThanOrEqual(0.6);
    expect(result.confidence).toBe((result.posterior as Record<string, number>).cat);
    // one label used of the three reserved
    expect(await quotaUsed(sys, c.key)).toBe(1);
  });

  it("keeps collecting below the target, up to max_labels", async () => {
    const c = await registerCustomer(sys);
    const ls = [await createLabeler(sys), await createLabeler(sys), await createLabeler(sys)];
    const taskId = await submit(sys, c.key, {
      label_spec: { question: `Unsure ${Date.now()}?`, options: ["cat", "dog", "bird"] },
      confidence_target: 0.999,
      max_labels: 3,
    });
    const needed: unknown[] = [];
    for (const [i, value] of ["cat", "dog", "cat"].entries())
      needed.push((await label(sys, ls[i]?.key as string, taskId, value)).body.labels_needed);
    expect(needed).toEqual([2, 1, 0]);
    const result = await eventually(async () => {
      const r = await sys.api<Json>("GET", `/v1/tasks/${taskId}/result`, { token: c.key });
      return r.status === 200 ? r.body : undefined;
    });
    expect(result).toMatchObject({ consensus_label: "cat", resolution: "max_labels", labels_collected: 3 });
    expect(result.confidence as number).toBeLessThan(0.999);
  });
});

describe("gold tasks", () => {
  it("never settle: any number of labelers label one, each once; GET shows the gold fields; the result is 409", async () => {
    const c = await registerCustomer(sys);
    const goldId = await submit(sys, c.key, { gold_label: "cat", consensus_threshold: 1, max_labels: 1 });
    const values = ["cat", "cat", "dog", "cat"];
    for (const value of values) {
      const l = await createLabeler(sys, "gold");
      const res = await label(sys, l.key, goldId, value);
      expect(res.status).toBe(201);
      expect(res.body.labels_needed).toBe(1);
      // each labeler answers a gold task once
      expect((await claim(sys, l.key, goldId)).status).toBe(204);
    }
    const view = await taskView(sys, c.key, goldId);
    expect(view).toMatchObject({
      status: "labeling",
      gold: true,
      gold_label: "cat",
      gold_answers: 4,
      gold_agreement: 0.75,
      labels_collected: 4,
      consensus_label: null,
      ledger_txid: null,
    });
    const result = await sys.api("GET", `/v1/tasks/${goldId}/result`, { token: c.key });
    expect(result.status).toBe(409);
    expect(result.body).toEqual({ error: "gold tasks have no result", task_id: goldId });
    expect(await sys.db.prisma.ledgerEntry.count({ where: { taskId: goldId } })).toBe(0);
    expect(await sys.db.prisma.event.count({ where: { taskId: goldId } })).toBe(0);
    // a regular task shows gold: false and null gold fields
    expect(await taskView(sys, c.key, await submit(sys, c.key, {}))).toMatchObject({
      gold: false,
      gold_label: null,
      gold_answers: null,
      gold_agreement: null,
    });
    // labels on a gold task are charged like any label: 1 reserved by the submission + 3 beyond it, + 1 for the regular task
    expect(await quotaUsed(sys, c.key)).toBe(1 + 3 + 3);
  });

  it("refuses a gold_label that is not an option", async () => {
    const c = await registerCustomer(sys);
    const res = await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody({ gold_label: "horse" }) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: "validation failed",
      details: [{ path: "gold_label", message: "must be one of label_spec.options" }],
    });
    const batch = await sys.api("POST", "/v1/tasks/batch", { token: c.key, body: { tasks: [taskBody(), taskBody({ gold_label: 3 })] } });
    expect(batch.status).toBe(400);
    expect((batch.body.details as { path: string }[])[0]?.path).toBe("tasks.1.gold_label");
  });

  it("are never delivered: a webhook gets the regular task of a batch, never its gold task; the batch completes without it", async () => {
    const c = await registerCustomer(sys);
    const receiver = await rx();
    await registerWebhook(sys, c.key, receiver.url, newSecret());
    const batch = await sys.api<{ batch_id: string; task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: c.key,
      body: {
        callback_url: receiver.url,
        tasks: [taskBody({ consensus_threshold: 1 }), taskBody({ consensus_threshold: 1, gold_label: "dog" })],
      },
    });
    expect(batch.status).toBe(202);
    const [regular, gold] = batch.body.task_ids as [string, string];
    const before = await sys.api<Json>("GET", `/v1/batches/${batch.body.batch_id}`, { token: c.key });
    expect(before.body).toMatchObject({
      status: "accepted",
      gold_tasks: 1,
      counts: { pending: 1, labeling: 0, settling: 0, settled: 0, canceled: 0 },
    });
    const l = await createLabeler(sys);
    expect((await label(sys, l.key, gold, "dog")).status).toBe(201);
    expect((await label(sys, l.key, regular, "cat")).status).toBe(201);
    await eventually(async () => (receiver.forTask(regular).length > 0 ? true : undefined), 20000, "the regular task's delivery");
    const after = await sys.api<Json>("GET", `/v1/batches/${batch.body.batch_id}`, { token: c.key });
    expect(after.body).toMatchObject({ status: "completed", gold_tasks: 1, counts: { settled: 1, pending: 0, labeling: 0 } });
    expect(receiver.forTask(gold)).toEqual([]);
    expect(await sys.db.prisma.event.count({ where: { taskId: gold } })).toBe(0);
    expect((await taskView(sys, c.key, gold)).webhook_status).toBeNull();
  });

  it("are never exported: a manifest's gold lines make gold tasks, the job completes without them and its export leaves them out", async () => {
    const c = await registerCustomer(sys, 1000);
    const lines = [
      JSON.stringify({ data_url: "https://img.example/1.jpg", n: 1 }),
      JSON.stringify({ data_url: "https://img.example/2.jpg", n: 2, gold_label: "dog" }),
      JSON.stringify({ data_url: "https://img.example/3.jpg", n: 3, gold_label: null }),
    ];
    const server = await serveManifest(jsonl(lines));
    try {
      const created = await sys.api<Json>("POST", "/v1/jobs", {
        token: c.key,
        body: { manifest_url: server.url(), label_spec: { question: "Gold job?", options: ["cat", "dog"] }, consensus_threshold: 1 },
      });
      const jobId = String(created.body.job_id);
      const job = await waitForStatus(sys, c.key, jobId, "labeling");
      expect(job).toMatchObject({ task_count: 3, gold_tasks: 1, progress: 0 });
      const tasks = await sys.db.prisma.task.findMany({ where: { jobId }, orderBy: { manifestLine: "asc" } });
      expect(tasks.map((t) => t.goldLabel)).toEqual([null, "dog", null]);
      const l = await createLabeler(sys);
      // every label and the gold answer are "dog": the threshold policy settles only on the posterior's leader,
      // and in a space this small a refit that has seen one gold "cat" (its class prior then 2:1 for cat) or a
      // wrong gold answer makes a lone new labeler's "dog" trail, so the job would wait on refit timing
      for (const t of tasks) expect((await label(sys, l.key, t.id, "dog")).status).toBe(201);
      const done = await waitForStatus(sys, c.key, jobId, "completed");
      expect(done).toMatchObject({ tasks_settled: 2, progress: 1 });
      const exported = await fetchExport(sys, c.key, jobId);
      expect(exported.status).toBe(200);
      const out = exported.text
        .trim()
        .split("\n")
        .map((x) => JSON.parse(x) as Json);
      expect(out.map((o) => (o.source as Json).n)).toEqual([1, 3]);
      expect(out.map((o) => o.task_id)).toEqual([tasks[0]?.id, tasks[2]?.id]);

      // a gold label outside the options fails the job with the line's number
      const bad = await serveManifest(
        jsonl([lines[0] as string, JSON.stringify({ data_url: "https://img.example/9.jpg", gold_label: "horse" })]),
      );
      try {
        const failed = await sys.api<Json>("POST", "/v1/jobs", {
          token: c.key,
          body: { manifest_url: bad.url(), label_spec: { question: "Gold job?", options: ["cat", "dog"] } },
        });
        const result = await waitForStatus(sys, c.key, String(failed.body.job_id), "failed");
        expect(result.error).toBe(`line 2: "gold_label" must be one of the label spec's options`);
      } finally {
        await bad.close();
      }
    } finally {
      await server.close();
    }
  });
});

describe("the background refit and the dashboard", () => {
  it("refits the label space as labels arrive; the dashboard lists its labelers and the calibration measured on gold", async () => {
    const c = await registerCustomer(sys, 10_000);
    const question = `Refit ${Date.now()}?`;
    const spec = { question, options: ["cat", "dog"] };
    const ls = [await createLabeler(sys, "good-a"), await createLabeler(sys, "good-b"), await createLabeler(sys, "coin")];
    const gold = await Promise.all(
      ["cat", "dog", "cat", "dog", "cat", "dog"].map((g) => submit(sys, c.key, { label_spec: spec, gold_label: g })),
    );
    const truths = ["cat", "dog", "cat", "dog", "cat", "dog"];
    for (const [i, id] of gold.entries()) {
      const truth = truths[i] as string;
      const wrong = truth === "cat" ? "dog" : "cat";
      await label(sys, ls[0]?.key as string, id, truth);
      await label(sys, ls[1]?.key as string, id, truth);
      await label(sys, ls[2]?.key as string, id, i % 2 ? truth : wrong);
    }
    const space = await eventually(
      async () => {
        const row = await sys.db.prisma.labelSpace.findFirst({ where: { customerId: c.id, question } });
        return row && row.fittedLabels >= 18 ? row : undefined;
      },
      30000,
      "the space's refit",
    );
    expect(space.version).toBeGreaterThanOrEqual(1);
    const labelers = await sys.api<{ items: Json[] }>("GET", "/v1/dashboard/labelers", { token: c.key });
    expect(labelers.status).toBe(200);
    const rows = new Map(labelers.body.items.map((r) => [r.labeler_id, r]));
    expect(rows.get(ls[0]?.id)).toMatchObject({
      label_space: space.id,
      question,
      labels: 6,
      gold_answers: 6,
      gold_accuracy: 1,
      status: "active",
    });
    expect(rows.get(ls[2]?.id)).toMatchObject({ gold_answers: 6, gold_accuracy: 0.5, status: "active" });
    expect(rows.get(ls[0]?.id)?.estimated_accuracy as number).toBeGreaterThan(rows.get(ls[2]?.id)?.estimated_accuracy as number);

    const quality = await sys.api<Json>("GET", "/v1/dashboard/quality", { token: c.key });
    const calibration = quality.body.calibration as { gold_tasks: number; bins: Json[]; ece: number };
    expect(calibration.gold_tasks).toBe(6);
    expect(calibration.bins).toHaveLength(10);
    // replayed under the space's policy (threshold 3), only the 3 gold tasks where all three agree decide; a
    // 2-to-1 gold task would still be collecting, so it has no confidence to calibrate
    expect(calibration.bins.reduce((n, b) => n + (b.tasks as number), 0)).toBe(3);
    expect(calibration.ece).toBeGreaterThanOrEqual(0);
    expect(calibration.ece).toBeLessThanOrEqual(1);
    // a customer without gold has no calibration
    const plain = await registerCustomer(sys);
    expect((await sys.api<Json>("GET", "/v1/dashboard/quality", { token: plain.key })).body.calibration).toBeNull();
    expect((await sys.api<Json>("GET", "/v1/dashboard/labelers", { token: plain.key })).body).toEqual({ items: [] });
  });
});

describe("on a system of its own (generic claims)", () => {
  let own: System;
  beforeAll(async () => {
    own = await startSystem({ env: { REFIT_INTERVAL_MS: "200" } });
  });
  afterAll(() => own.close());

  it("serves unanswered gold at the gold rate: 1 = gold first while the labeler has unanswered gold, 0 = never", async () => {
    const c = await registerCustomer(own, 1000);
    await patchSettings(own, c.key, { quality: { gold_rate: 1 } });
    const spec = { question: "Served?", options: ["a", "b"] };
    const regular = await submit(own, c.key, { label_spec: spec });
    const gold1 = await submit(own, c.key, { label_spec: spec, gold_label: "a" });
    const gold2 = await submit(own, c.key, { label_spec: spec, gold_label: "b" });
    const l = await createLabeler(own);
    const served: string[] = [];
    for (let i = 0; i < 3; i++) {
      const got = await claim(own, l.key);
      expect(got.status).toBe(201);
      served.push(got.body.task_id);
      expect((await own.api("POST", `/v1/labeling/claims/${got.body.claim_id}/label`, { token: l.key, body: { label: "a" } })).status).toBe(
        201,
      );
    }
    // gold in creation order, then (no unanswered gold left) the regular task
    expect(served).toEqual([gold1, gold2, regular]);
    expect((await claim(own, l.key)).status).toBe(204);

    // gold_rate 0: a new labeler gets the regular tasks only, though unanswered gold waits; then nothing
    await patchSettings(own, c.key, { quality: { gold_rate: 0 } });
    const regular2 = await submit(own, c.key, { label_spec: spec });
    const fresh = await createLabeler(own);
    const servedFresh: (string | number)[] = [];
    for (let i = 0; i < 3; i++) {
      const got = await claim(own, fresh.key);
      if (got.status !== 201) {
        servedFresh.push(got.status);
        break;
      }
      servedFresh.push(got.body.task_id);
      await own.api("POST", `/v1/labeling/claims/${got.body.claim_id}/label`, { token: fresh.key, body: { label: "b" } });
    }
    expect(servedFresh).toEqual([regular, regular2, 204]);
  });

  it("excludes a labeler whose gold accuracy is below min_labeler_accuracy, from the label that makes it so, per label space", async () => {
    const c = await registerCustomer(own, 1000);
    await patchSettings(own, c.key, { quality: { min_labeler_accuracy: 0.9, min_gold_answers: 3, gold_rate: 0 } });
    const spec = { question: "Excluded?", options: ["yes", "no"] };
    const golds = await Promise.all([0, 1, 2].map(() => submit(own, c.key, { label_spec: spec, gold_label: "yes" })));
    const regular = await submit(own, c.key, { label_spec: spec });
    const otherSpace = await submit(own, c.key, { label_spec: { question: "Elsewhere?", options: ["yes", "no"] } });
    const bad = await createLabeler(own, "bad");
    const good = await createLabeler(own, "good");
    for (const [i, id] of golds.entries()) {
      expect((await label(own, bad.key, id, "no")).status).toBe(201);
      expect((await label(own, good.key, id, "yes")).status).toBe(201);
      // P(accuracy < 0.9 | 0 of n right) under Beta(1, 1): excluded once n reaches min_gold_answers
      const excluded = i + 1 >= 3;
      expect({ answers: i + 1, status: (await claim(own, bad.key, regular)).status }).toEqual({
        answers: i + 1,
        status: excluded ? 204 : 201,
      });
      if (!excluded) {
        const row = await own.db.prisma.claim.findFirstOrThrow({ where: { taskId: regular, labelerId: bad.id, status: "active" } });
        await own.api("DELETE", `/v1/labeling/claims/${row.id}`, { token: bad.key });
      }
    }
    // neither by task id nor generically in that space; another label space is not affected
    expect((await claim(own, bad.key, regular)).status).toBe(204);
    const generic = await claim(own, bad.key);
    expect(generic.status).toBe(201);
    expect(generic.body.task_id).not.toBe(regular);
    await own.api("DELETE", `/v1/labeling/claims/${generic.body.claim_id}`, { token: bad.key });
    expect((await claim(own, bad.key, otherSpace)).status).toBe(201);
    const goodClaim = await claim(own, good.key, regular);
    expect(goodClaim.status).toBe(201);

    const labelers = await own.api<{ items: Json[] }>("GET", "/v1/dashboard/labelers", { token: c.key });
    const row = (id: string) => labelers.body.items.find((r) => r.labeler_id === id && r.question === "Excluded?");
    expect(row(bad.id)).toMatchObject({ gold_answers: 3, gold_accuracy: 0, status: "excluded" });
    expect(row(good.id)).toMatchObject({ gold_answers: 3, gold_accuracy: 1, status: "active" });

    // clearing the floor re-admits the labeler at once; setting it again excludes it again
    await patchSettings(own, c.key, { quality: { min_labeler_accuracy: null } });
    const readmitted = await claim(own, bad.key, regular);
    expect(readmitted.status).toBe(201);
    await own.api("DELETE", `/v1/labeling/claims/${readmitted.body.claim_id}`, { token: bad.key });
    await patchSettings(own, c.key, { quality: { min_labeler_accuracy: 0.9 } });
    expect((await claim(own, bad.key, regular)).status).toBe(204);
  });
});
