/**
 * `pairwise_comparison` end to end (contract §task-types), against this run's Postgres and Redis with every
 * worker: tasks comparing two images (data_url, data_url_b) and two texts (data_text, data_text_b) submitted as a
 * batch, claims carrying both items, labels, a settled consensus `{winner, confidence}`, the batch's ranking
 * (`GET /v1/batches/{id}/ranking`: scores ordered as the labels imply, 95% intervals around each score), and the
 * bad inputs (400 with details, nothing stored): item b missing, data_text_b without data_text, the same item
 * twice, a tie where ties are not allowed, a winner outside a / b / tie, a spec with options; another customer's batch: 404
 * (manifest jobs of pairwise tasks: services/manifest-worker/test/pairwise-jobs.test.ts).
 */
import { LabelgateClient } from "@labelgate/sdk";
import { createLabelers, eventually, type Labeler, registerCustomer, type System, startSystem } from "./system";

let sys: System;
let labelers: Labeler[];
let customer: { key: string };

beforeAll(async () => {
  sys = await startSystem();
  labelers = await createLabelers(sys, 3, "pairwise");
  customer = await registerCustomer(sys);
});
afterAll(() => sys.close());

type Body = Record<string, unknown>;
const SPEC = { question: "Which photo is older?" };
const img = (name: string) => `https://images.example/${name}.jpg`;

/** Claims `taskId` for labeler `i`; the claim's body. */
async function claim(i: number, taskId: string): Promise<Body & { claim_id: string }> {
  const res = await sys.api<Body & { claim_id: string }>("POST", "/v1/labeling/claims", {
    token: (labelers[i] as Labeler).key,
    body: { task_id: taskId },
  });
  if (res.status !== 201) throw new Error(`claim failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function label(i: number, claimId: string, body: Body) {
  return sys.api<Body>("POST", `/v1/labeling/claims/${claimId}/label`, { token: (labelers[i] as Labeler).key, body });
}

async function answer(i: number, taskId: string, winner: string): Promise<void> {
  const c = await claim(i, taskId);
  const res = await label(i, c.claim_id, { winner });
  if (res.status !== 201) throw new Error(`label failed: ${res.status} ${JSON.stringify(res.body)}`);
}

async function taskCount(key: string): Promise<number> {
  const res = await sys.api<{ total: number }>("GET", "/v1/dashboard/tasks", { token: key });
  return res.body.total;
}

it("settles a comparison on its consensus winner, and ranks a batch's items as its labels imply", async () => {
  // true order: p1 > p2 > p3 > p4 (p1 is the oldest photo); every pair once, with a and b alternating
  const names = ["p1", "p2", "p3", "p4"];
  const pairs: [string, string][] = [];
  for (let i = 0; i < names.length; i++)
    for (let j = i + 1; j < names.length; j++)
      pairs.push(pairs.length % 2 === 0 ? [names[i] as string, names[j] as string] : [names[j] as string, names[i] as string]);
  const res = await sys.api<{ batch_id: string; task_ids: string[] }>("POST", "/v1/tasks/batch", {
    token: customer.key,
    body: {
      tasks: pairs.map(([a, b]) => ({
        type: "pairwise_comparison",
        data_url: img(a),
        data_url_b: img(b),
        label_spec: SPEC,
        consensus_threshold: 2,
        max_labels: 3,
      })),
    },
  });
  expect(res.status).toBe(202);
  const { batch_id, task_ids } = res.body;

  // the claim carries both items and the spec with its default
  const first = await claim(0, task_ids[0] as string);
  expect(first).toMatchObject({
    task_type: "pairwise_comparison",
    data_url: img("p1"),
    data_url_b: img("p2"),
    label_spec: { question: SPEC.question, allow_tie: false },
  });
  // a tie where the spec does not allow one, and a winner outside a / b / tie: 400 with details, nothing stored
  const tie = await label(0, first.claim_id, { winner: "tie" });
  expect(tie.status).toBe(400);
  expect(tie.body.details).toEqual([{ path: "winner", message: expect.stringContaining("does not allow ties") }]);
  const outside = await label(0, first.claim_id, { winner: "c" });
  expect(outside.status).toBe(400);
  expect(JSON.stringify(outside.body.details)).toContain("winner");
  const untouched = await sys.api<Body>("GET", `/v1/tasks/${task_ids[0]}`, { token: customer.key });
  expect(untouched.body.labels_collected).toBe(0);
  expect((await label(0, first.claim_id, { winner: "a" })).status).toBe(201);

  // two labelers give every pair its true winner
  for (const [k, id] of task_ids.entries()) {
    const [a, b] = pairs[k] as [string, string];
    const winner = names.indexOf(a) < names.indexOf(b) ? "a" : "b";
    if (k > 0) await answer(0, id, winner);
    await answer(1, id, winner);
  }
  const settled = await eventually(
    async () => {
      const t = await sys.api<Body>("GET", `/v1/tasks/${task_ids[1]}`, { token: customer.key });
      return t.body.status === "settled" ? t.body : undefined;
    },
    30_000,
    "a pairwise task settled",
  );
  // pairs[1] = [p3, p1]: b wins
  expect(settled.consensus_label).toBe('{"winner":"b"}');
  expect(settled.consensus).toEqual({ winner: "b", confidence: expect.any(Number) });
  expect(settled.confidence as number).toBeGreaterThan(0.5);
  expect(settled.data_url_b).toBe(img("p1"));

  const ranking = await sys.api<{
    items: { item: string; score: number; rank: number; ci_low: number; ci_high: number; comparisons: number }[];
    labels: number;
    tie_parameter: number;
  }>("GET", `/v1/batches/${batch_id}/ranking`, { token: customer.key });
  expect(ranking.status).toBe(200);
  expect(ranking.body.labels).toBe(12);
  expect(ranking.body.tie_parameter).toBe(0);
  expect(ranking.body.items.map((i) => i.item)).toEqual(names.map(img));
  expect(ranking.body.items.map((i) => i.rank)).toEqual([1, 2, 3, 4]);
  for (const item of ranking.body.items) {
    expect(item.comparisons).toBe(6);
    expect(item.ci_low).toBeLessThan(item.score);
    expect(item.ci_high).toBeGreaterThan(item.score);
  }
  const scores = ranking.body.items.map((i) => i.score);
  expect(scores[0]).toBeGreaterThan(scores[1] as number);
  expect(scores[2]).toBeGreaterThan(scores[3] as number);
  expect(scores.reduce((x, y) => x + y, 0)).toBeCloseTo(0, 6);

  // the SDK's call answers the same ranking
  const sdk = new LabelgateClient({ baseUrl: sys.baseUrl, apiKey: customer.key });
  expect((await sdk.batches.ranking(batch_id)).items.map((i) => i.item)).toEqual(names.map(img));

  // another customer's batch, an unknown batch: 404
  const other = await registerCustomer(sys);
  expect((await sys.api("GET", `/v1/batches/${batch_id}/ranking`, { token: other.key })).status).toBe(404);
  expect((await sys.api("GET", "/v1/batches/bat_unknown00000000000000/ranking", { token: customer.key })).status).toBe(404);
});

it("compares two texts, with ties allowed; the ranking names text items by their hash", async () => {
  const res = await sys.api<{ task_id: string }>("POST", "/v1/tasks", {
    token: customer.key,
    body: {
      type: "pairwise_comparison",
      data_url: "https://prompts.example/42",
      data_text: "Paris is the capital of France.",
      data_text_b: "The capital of France is Lyon.",
      label_spec: { question: "Which answer is better?", allow_tie: true },
      metadata: { prompt: "What is the capital of France?" },
      consensus_threshold: 2,
    },
  });
  expect(res.status).toBe(202);
  const c = await claim(2, res.body.task_id);
  expect(c).toMatchObject({ data_text: "Paris is the capital of France.", data_text_b: "The capital of France is Lyon." });
  expect((await label(2, c.claim_id, { winner: "tie" })).status).toBe(201);
  const task = await sys.api<Body>("GET", `/v1/tasks/${res.body.task_id}`, { token: customer.key });
  expect(task.body).toMatchObject({ label_spec: { question: "Which answer is better?", allow_tie: true }, labels_collected: 1 });
});

it("refuses bad pairwise input with 400 and details, storing nothing", async () => {
  const who = await registerCustomer(sys);
  const base = { type: "pairwise_comparison", data_url: img("x"), label_spec: SPEC };
  const cases: [Body, string][] = [
    [base, "data_url_b"],
    [{ ...base, data_text_b: "only b" }, "data_text"],
    [{ ...base, data_text: "only a" }, "data_text_b"],
    [{ ...base, data_url_b: img("x") }, "data_url_b"],
    [{ ...base, data_url_b: "ftp://images.example/y.jpg" }, "data_url_b"],
    [{ ...base, data_url_b: img("y"), label_spec: { ...SPEC, options: ["a", "b"] } }, "label_spec"],
    [{ ...base, data_url_b: img("y"), label_spec: { ...SPEC, allow_tie: "yes" } }, "label_spec.allow_tie"],
    [{ ...base, data_url_b: img("y"), gold_answer: { winner: "tie" } }, "gold_answer.winner"],
  ];
  for (const [body, path] of cases) {
    const res = await sys.api<{ error: string; details: { path: string; message: string }[] }>("POST", "/v1/tasks", {
      token: who.key,
      body,
    });
    expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 400, error: "validation failed" });
    expect(res.body.details.map((d) => d.path).some((p) => p.startsWith(path))).toBe(true);
  }
  const batch = await sys.api("POST", "/v1/tasks/batch", { token: who.key, body: { tasks: [{ ...base, data_url_b: img("y") }, base] } });
  expect(batch.status).toBe(400);
  expect(await taskCount(who.key)).toBe(0);
  expect((await sys.api<{ total: number }>("GET", "/v1/batches", { token: who.key })).body.total).toBe(0);
});
