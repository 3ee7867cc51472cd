/**
 * Qualification (contract §qualification, docs/decisions/0276) end to end through the HTTP API on real Postgres
 * and Redis: the setting and its validation, training (a labeler new to a label space gets only its gold tasks,
 * whatever the gold rate, and each training label answers the right answer and the explanation), the exam's
 * verdict by the Beta(1, 1) posterior mean (pass: the space's other tasks; fail: excluded with
 * `failed_qualification` in the labeler table, and the claim says why nothing is served).
 *
 * Generic claims take the oldest claimable task of any customer, so this file runs on a system of its own over
 * an isolated database, one customer and label space per test.
 */

import { createLabeler, registerCustomer, type System, startSystem, taskBody } from "./system";

let sys: System;
beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

type Json = Record<string, unknown>;

/** The open tasks of the current test (customer key, task id): canceled after it, so the next test's generic claims start clean. */
const created: [string, string][] = [];
afterEach(async () => {
  for (const [key, id] of created.splice(0)) await sys.api("POST", `/v1/tasks/${id}/cancel`, { token: key });
});

async function submit(key: string, overrides: Json): Promise<string> {
  const res = await sys.api<{ task_id: string }>("POST", "/v1/tasks", { token: key, body: taskBody(overrides) });
  if (res.status !== 202) throw new Error(`task creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  created.push([key, res.body.task_id]);
  return res.body.task_id;
}

async function claim(labelerKey: string, taskId?: string) {
  return sys.api<{ claim_id: string; task_id: string }>("POST", "/v1/labeling/claims", {
    token: labelerKey,
    body: taskId ? { task_id: taskId } : {},
  });
}

async function labelClaim(labelerKey: string, claimId: string, body: Json) {
  return sys.api<Json & { training?: Json }>("POST", `/v1/labeling/claims/${claimId}/label`, { token: labelerKey, body });
}

/** Claims generically, expects `expected`, labels it with `answer`; answers the label response. */
async function answerNext(labelerKey: string, expected: string, answer: Json) {
  const got = await claim(labelerKey);
  expect({ status: got.status, task: got.body.task_id }).toEqual({ status: 201, task: expected });
  const res = await labelClaim(labelerKey, got.body.claim_id, answer);
  expect(res.status).toBe(201);
  return res.body;
}

describe("the setting", () => {
  it("is stored and answered; null clears it", async () => {
    const c = await registerCustomer(sys);
    const set = await sys.api<Json>("PATCH", "/v1/customers/me/settings", {
      token: c.key,
      body: { quality: { qualification: { gold_tasks: 10, min_accuracy: 0.65 } } },
    });
    expect(set.status).toBe(200);
    expect((set.body.quality as Json).qualification).toEqual({ gold_tasks: 10, min_accuracy: 0.65 });
    const got = await sys.api<Json>("GET", "/v1/customers/me/settings", { token: c.key });
    expect((got.body.quality as Json).qualification).toEqual({ gold_tasks: 10, min_accuracy: 0.65 });
    const cleared = await sys.api<Json>("PATCH", "/v1/customers/me/settings", { token: c.key, body: { quality: { qualification: null } } });
    expect((cleared.body.quality as Json).qualification).toBeNull();
  });

  it("refuses a bad qualification with 400 and details, storing nothing", async () => {
    const c = await registerCustomer(sys);
    const good = { gold_tasks: 5, min_accuracy: 0.7 };
    await sys.api("PATCH", "/v1/customers/me/settings", { token: c.key, body: { quality: { qualification: good } } });
    for (const [qualification, path] of [
      [{ gold_tasks: 0, min_accuracy: 0.7 }, "quality.qualification.gold_tasks"],
      [{ gold_tasks: 101, min_accuracy: 0.7 }, "quality.qualification.gold_tasks"],
      [{ gold_tasks: 2.5, min_accuracy: 0.7 }, "quality.qualification.gold_tasks"],
      [{ gold_tasks: 5, min_accuracy: -0.1 }, "quality.qualification.min_accuracy"],
      [{ gold_tasks: 5, min_accuracy: 1.5 }, "quality.qualification.min_accuracy"],
      [{ gold_tasks: 5 }, "quality.qualification.min_accuracy"],
      [{ gold_tasks: 5, min_accuracy: 0.7, pass_mark: 3 }, "quality.qualification"],
      ["yes", "quality.qualification"],
    ] as const) {
      const res = await sys.api<{ error: string; details: { path: string }[] }>("PATCH", "/v1/customers/me/settings", {
        token: c.key,
        body: { quality: { qualification } },
      });
      expect({ qualification, status: res.status, error: res.body.error }).toEqual({
        qualification,
        status: 400,
        error: "validation failed",
      });
      expect(res.body.details.map((d) => d.path)).toContain(path);
    }
    const after = await sys.api<Json>("GET", "/v1/customers/me/settings", { token: c.key });
    expect((after.body.quality as Json).qualification).toEqual(good);
  });

  it("refuses a gold_explanation on a task without a gold answer, storing nothing", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Explained?", options: ["a", "b"] };
    const res = await sys.api<{ error: string; details: Json[] }>("POST", "/v1/tasks", {
      token: c.key,
      body: taskBody({ label_spec: spec, gold_explanation: "because" }),
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ path: "gold_explanation", message: "only a gold task (with its gold answer) has an explanation" }]);
    expect(await sys.db.prisma.task.count({ where: { question: "Explained?" } })).toBe(0);
  });
});

describe("training and the exam", () => {
  it("serves gold only in training, answers each with the right answer and explanation, and lets a passing labeler on", async () => {
    const c = await registerCustomer(sys, 1000);
    // gold_rate 0: the gold substitution is forced by the training alone
    await sys.api("PATCH", "/v1/customers/me/settings", {
      token: c.key,
      body: { quality: { gold_rate: 0, qualification: { gold_tasks: 3, min_accuracy: 0.6 } } },
    });
    const spec = { question: "Pass?", options: ["a", "b"] };
    const regular = await submit(c.key, { label_spec: spec });
    const g1 = await submit(c.key, { label_spec: spec, gold_label: "a", gold_explanation: "The item shows an a." });
    const g2 = await submit(c.key, { label_spec: spec, gold_label: "b" });
    const g3 = await submit(c.key, { label_spec: spec, gold_label: "a" });
    const l = await createLabeler(sys, "passer");

    // in training the regular task is not served, not even by id
    expect((await claim(l.key, regular)).status).toBe(204);
    const first = await answerNext(l.key, g1, { label: "a" });
    expect(first.training).toEqual({
      correct: true,
      right_answer: { label: "a" },
      explanation: "The item shows an a.",
      gold_answers: 1,
      gold_correct: 1,
      gold_tasks: 3,
      min_accuracy: 0.6,
      status: "training",
    });
    expect((await claim(l.key, regular)).status).toBe(204);
    const second = await answerNext(l.key, g2, { label: "a" });
    expect(second.training).toMatchObject({ correct: false, right_answer: { label: "b" }, explanation: null, status: "training" });
    // 2 of 3 right: (2 + 1) / (3 + 2) = 0.6 >= 0.6 passes
    const third = await answerNext(l.key, g3, { label: "a" });
    expect(third.training).toMatchObject({ correct: true, gold_answers: 3, gold_correct: 2, status: "qualified" });

    // qualified: the regular task now, and its label carries no training feedback
    const after = await answerNext(l.key, regular, { label: "a" });
    expect(after.training).toBeUndefined();
    const labelers = await sys.api<{ items: Json[] }>("GET", "/v1/dashboard/labelers", { token: c.key });
    expect(labelers.body.items.find((r) => r.labeler_id === l.id)).toMatchObject({ gold_answers: 3, status: "active" });
  });

  it("excludes a labeler below min_accuracy after gold_tasks answers: failed_qualification, and the claim says why", async () => {
    const c = await registerCustomer(sys, 1000);
    await sys.api("PATCH", "/v1/customers/me/settings", {
      token: c.key,
      body: { quality: { gold_rate: 0, qualification: { gold_tasks: 3, min_accuracy: 0.65 } } },
    });
    const spec = { question: "Fail?", options: ["a", "b"] };
    const regular = await submit(c.key, { label_spec: spec });
    const g1 = await submit(c.key, { label_spec: spec, gold_label: "a", gold_explanation: "An a." });
    const g2 = await submit(c.key, { label_spec: spec, gold_label: "a" });
    const g3 = await submit(c.key, { label_spec: spec, gold_label: "b" });
    const l = await createLabeler(sys, "failer");

    const first = await answerNext(l.key, g1, { label: "b" });
    expect(first.training).toMatchObject({ correct: false, right_answer: { label: "a" }, explanation: "An a.", status: "training" });
    await answerNext(l.key, g2, { label: "a" });
    // 2 of 3 right: (2 + 1) / (3 + 2) = 0.6 < 0.65 fails
    const last = await answerNext(l.key, g3, { label: "a" });
    expect(last.training).toMatchObject({ correct: false, gold_answers: 3, gold_correct: 1, status: "failed_qualification" });

    const idle = await claim(l.key);
    expect(idle.status).toBe(204);
    expect(idle.headers.get("labelgate-idle-reason")).toBe("failed_qualification");
    expect((await claim(l.key, regular)).status).toBe(204);
    const labelers = await sys.api<{ items: Json[] }>("GET", "/v1/dashboard/labelers", { token: c.key });
    expect(labelers.body.items.find((r) => r.labeler_id === l.id)).toMatchObject({ gold_answers: 3, status: "failed_qualification" });

    // a change of the quality settings re-evaluates min_labeler_accuracy only: the failed exam stands
    await sys.api("PATCH", "/v1/customers/me/settings", { token: c.key, body: { quality: { min_labeler_accuracy: 0.1 } } });
    expect((await claim(l.key, regular)).status).toBe(204);
    // another labeler is not affected: it starts its own training
    const other = await createLabeler(sys, "other");
    const got = await claim(other.key);
    expect(got.body.task_id).toBe(g1);
    await sys.api("DELETE", `/v1/labeling/claims/${got.body.claim_id}`, { token: other.key });
  });

  it("with fewer gold tasks than gold_tasks, decides after the space's last open gold task", async () => {
    const c = await registerCustomer(sys, 1000);
    await sys.api("PATCH", "/v1/customers/me/settings", {
      token: c.key,
      body: { quality: { gold_rate: 0, qualification: { gold_tasks: 10, min_accuracy: 0.6 } } },
    });
    const spec = { question: "Short exam?", options: ["a", "b"] };
    const regular = await submit(c.key, { label_spec: spec });
    const gold = await submit(c.key, { label_spec: spec, gold_label: "a" });
    const l = await createLabeler(sys, "short");
    // 1 of 1 right: (1 + 1) / (1 + 2) = 0.67 >= 0.6
    const only = await answerNext(l.key, gold, { label: "a" });
    expect(only.training).toMatchObject({ gold_answers: 1, gold_tasks: 10, status: "qualified" });
    await answerNext(l.key, regular, { label: "b" });
  });

  it("works for a reserved type: a multi-label gold task's right answer is its answer body", async () => {
    const c = await registerCustomer(sys, 1000);
    await sys.api("PATCH", "/v1/customers/me/settings", {
      token: c.key,
      body: { quality: { gold_rate: 0, qualification: { gold_tasks: 1, min_accuracy: 0.5 } } },
    });
    const spec = { question: "Which apply?", options: ["red", "round", "ripe"] };
    const base = { type: "multi_label_classification", label_spec: spec };
    const regular = await submit(c.key, base);
    const gold = await submit(c.key, { ...base, gold_answer: { labels: ["red", "round"] }, gold_explanation: "A red ball: not ripe." });
    const l = await createLabeler(sys, "multi");
    expect((await claim(l.key, regular)).status).toBe(204);
    const res = await answerNext(l.key, gold, { labels: ["round", "red"] });
    // 1 of 1 right: (1 + 1) / (1 + 2) = 0.67 >= 0.5
    expect(res.training).toEqual({
      correct: true,
      right_answer: { labels: ["red", "round"] },
      explanation: "A red ball: not ripe.",
      gold_answers: 1,
      gold_correct: 1,
      gold_tasks: 1,
      min_accuracy: 0.5,
      status: "qualified",
    });
    await answerNext(l.key, regular, { labels: ["ripe"] });
  });
});
