/**
 * The task types of contract §task-types end to end over HTTP, against this run's real Postgres and
 * Redis with the gateway and the workers: a multi-label, a bounding-box and a text-span task are created,
 * claimed (the claim carries the type's label_spec and, for spans, the text), answered, decided in the label
 * transaction, settled on the ledger and shown in the task, its result and the `task.settled` event, with the
 * consensus of the type; a gold task of a reserved type counts each labeler's gold record; every bad answer
 * gets a 400 with details (a wrong shape for the type, an unknown class, overlapping or out-of-range spans, too
 * many boxes) or a 413 (an answer body over 256 KB); a task body whose label_spec is not its type's is a 400.
 */
import type { RecordedLabel, SettledResult, Task } from "@labelgate/api/types";
import { createLabelers, eventually, type Labeler, registerCustomer, type System, settledResult, startSystem } from "../../../test/system";

interface ErrorFields {
  error?: string;
  details?: { path: string; message: string }[];
}

let sys: System;
let customer: { id: string; key: string };
let labelers: Labeler[];

beforeAll(async () => {
  sys = await startSystem();
  customer = await registerCustomer(sys);
  labelers = await createLabelers(sys, 3, "typed");
});
afterAll(() => sys.close());

const IMAGE = "https://images.example/street.jpg";

async function createTask(body: Record<string, unknown>): Promise<string> {
  const res = await sys.api<{ task_id: string } & ErrorFields>("POST", "/v1/tasks", { token: customer.key, body });
  if (res.status !== 202) throw new Error(`task creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.task_id;
}

/** Claims `taskId` for `labeler`; the claim body. */
async function claim(labeler: Labeler, taskId: string): Promise<Record<string, unknown> & { claim_id: string }> {
  const res = await sys.api<Record<string, unknown> & { claim_id: string }>("POST", "/v1/labeling/claims", {
    token: labeler.key,
    body: { task_id: taskId },
  });
  if (res.status !== 201) throw new Error(`claim failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Claims `taskId` for `labeler` and answers it with `answer` (an answer body); the label response. */
async function answer(labeler: Labeler, taskId: string, body: unknown) {
  const c = await claim(labeler, taskId);
  return sys.api<RecordedLabel & ErrorFields>("POST", `/v1/labeling/claims/${c.claim_id}/label`, { token: labeler.key, body });
}

async function task(taskId: string): Promise<Task> {
  return (await sys.api<Task>("GET", `/v1/tasks/${taskId}`, { token: customer.key })).body;
}

describe("multi_label_classification", () => {
  const spec = { question: "Which apply?", options: ["red", "round", "ripe"] };

  it("settles on the set two labelers agree on, with a confidence and a posterior per option", async () => {
    const taskId = await createTask({ type: "multi_label_classification", data_url: IMAGE, label_spec: spec, consensus_threshold: 2 });
    const c = await claim(labelers[0] as Labeler, taskId);
    expect(c).toMatchObject({ task_type: "multi_label_classification", label_spec: spec });
    const first = await sys.api<RecordedLabel>("POST", `/v1/labeling/claims/${c.claim_id}/label`, {
      token: (labelers[0] as Labeler).key,
      body: { labels: ["round", "red"] },
    });
    expect(first.status).toBe(201);
    // the parts in the spec's order; `label` is the canonical JSON of the answer
    expect(first.body).toMatchObject({ answer: { labels: ["red", "round"] }, label: '{"labels":["red","round"]}' });
    expect(first.body.labels_needed).toBeGreaterThan(0);
    const second = await answer(labelers[1] as Labeler, taskId, { labels: ["red", "round"] });
    expect(second.status).toBe(201);
    expect(second.body.labels_needed).toBe(0);
    const result = (await settledResult(sys, customer.key, taskId)) as SettledResult;
    expect(result.consensus_label).toBe('{"labels":["red","round"]}');
    expect(result.consensus).toMatchObject({ labels: ["red", "round"] });
    const confidence = (result.consensus as { confidence: Record<string, number> }).confidence;
    expect(Object.keys(confidence).sort()).toEqual(["red", "ripe", "round"]);
    expect(Object.keys(result.posterior).sort()).toEqual(["red", "ripe", "round"]);
    expect(result.posterior.red).toBeGreaterThan(0.5);
    expect(result.posterior.ripe).toBeLessThan(0.5);
    expect(result.label_counts).toEqual({ red: 2, round: 2, ripe: 0 });
    expect(result.confidence).toBeGreaterThan(0);
    expect(result.confidence).toBeLessThanOrEqual(1);
    expect((await task(taskId)).consensus).toEqual(result.consensus);
    // the task.settled event carries the typed consensus
    const events = await sys.db.pool.query<{ payload: { consensus?: unknown; consensus_label: string } }>(
      "SELECT payload FROM events WHERE task_id = $1 AND type = 'task.settled'",
      [taskId],
    );
    expect(events.rows[0]?.payload).toMatchObject({ consensus_label: '{"labels":["red","round"]}', consensus: result.consensus });
  });

  it("settles on the empty set", async () => {
    const taskId = await createTask({ type: "multi_label_classification", data_url: IMAGE, label_spec: spec, consensus_threshold: 2 });
    for (const l of labelers.slice(0, 2)) expect((await answer(l, taskId, { labels: [] })).status).toBe(201);
    const result = (await settledResult(sys, customer.key, taskId)) as SettledResult;
    expect(result).toMatchObject({ consensus_label: '{"labels":[]}', consensus: { labels: [] } });
  });
});

describe("the confidence policy on a reserved type", () => {
  it("settles no earlier than min_labels, when every part is decided at the target or at max_labels", async () => {
    const spec = { question: "Which apply (confidence)?", options: ["a", "b", "c"] };
    const taskId = await createTask({
      type: "multi_label_classification",
      data_url: IMAGE,
      label_spec: spec,
      confidence_target: 0.9,
      min_labels: 2,
      max_labels: 3,
    });
    const first = await answer(labelers[0] as Labeler, taskId, { labels: ["a"] });
    expect(first.status).toBe(201);
    expect(first.body.labels_needed).toBeGreaterThan(0);
    const second = await answer(labelers[1] as Labeler, taskId, { labels: ["a"] });
    expect(second.status).toBe(201);
    if (second.body.labels_needed > 0) expect((await answer(labelers[2] as Labeler, taskId, { labels: ["a"] })).status).toBe(201);
    const result = (await settledResult(sys, customer.key, taskId)) as SettledResult;
    expect(["confidence", "max_labels"]).toContain(result.resolution);
    expect(result.consensus).toMatchObject({ labels: ["a"] });
    if (result.resolution === "confidence") {
      for (const p of Object.values((result.consensus as { confidence: Record<string, number> }).confidence))
        expect(p).toBeGreaterThanOrEqual(0.9);
    }
  });
});

describe("bounding_box", () => {
  const spec = { question: "Box every car and person", classes: ["car", "person"] };

  it("fuses the boxes labelers drew of one object into one consensus box with its support and confidence", async () => {
    const taskId = await createTask({ type: "bounding_box", data_url: IMAGE, label_spec: spec, consensus_threshold: 2 });
    const c = await claim(labelers[0] as Labeler, taskId);
    expect(c).toMatchObject({ task_type: "bounding_box", label_spec: spec });
    const a = await sys.api<RecordedLabel>("POST", `/v1/labeling/claims/${c.claim_id}/label`, {
      token: (labelers[0] as Labeler).key,
      body: { boxes: [{ label: "car", x: 100, y: 50, w: 200, h: 100 }] },
    });
    expect(a.status).toBe(201);
    const b = await answer(labelers[1] as Labeler, taskId, { boxes: [{ label: "car", x: 104, y: 52, w: 196, h: 98 }] });
    expect(b.status).toBe(201);
    const result = (await settledResult(sys, customer.key, taskId)) as SettledResult;
    const boxes = (result.consensus as { boxes: { label: string; x: number; w: number; support: number; confidence: number }[] }).boxes;
    expect(boxes).toHaveLength(1);
    expect(boxes[0]).toMatchObject({ label: "car", support: 2 });
    expect(boxes[0]?.x).toBeGreaterThanOrEqual(100);
    expect(boxes[0]?.x).toBeLessThanOrEqual(104);
    expect(boxes[0]?.confidence).toBeGreaterThan(0);
    expect(result.posterior).toEqual({});
    expect(JSON.parse(result.consensus_label)).toEqual({
      boxes: [{ label: "car", x: boxes[0]?.x, y: expect.any(Number), w: boxes[0]?.w, h: expect.any(Number) }],
    });
    expect(result.settlement.ledger_txid).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it("counts a labeler's answer on a gold task as right when its boxes match the gold boxes", async () => {
    const gold = { boxes: [{ label: "person", x: 10, y: 10, w: 50, h: 120 }] };
    const taskId = await createTask({ type: "bounding_box", data_url: IMAGE, label_spec: spec, gold_answer: gold });
    expect(await task(taskId)).toMatchObject({ gold: true, gold_answer: gold });
    expect((await answer(labelers[2] as Labeler, taskId, { boxes: [{ label: "person", x: 12, y: 11, w: 49, h: 118 }] })).status).toBe(201);
    const rows = await sys.db.pool.query<{ gold_answers: number; gold_correct: number }>(
      "SELECT m.gold_answers, m.gold_correct FROM labeler_models m JOIN tasks t ON t.label_space_id = m.label_space_id WHERE t.id = $1 AND m.labeler_id = $2",
      [taskId, (labelers[2] as Labeler).id],
    );
    expect(rows.rows[0]).toEqual({ gold_answers: 1, gold_correct: 1 });
  });
});

describe("text_span", () => {
  const spec = { question: "Mark the drugs and the people", entity_types: ["DRUG", "PERSON"] };
  // an emoji (a surrogate pair) before the spans: offsets are in code points
  const text = "😀 Aspirin helped Maria sleep.";

  it("settles on the spans labelers agree on, in code points of data_text", async () => {
    const taskId = await createTask({
      type: "text_span",
      data_url: "https://texts.example/1.txt",
      data_text: text,
      label_spec: spec,
      consensus_threshold: 2,
    });
    const c = await claim(labelers[0] as Labeler, taskId);
    expect(c).toMatchObject({ task_type: "text_span", label_spec: spec, data_text: text });
    const spans = [
      { start: 2, end: 9, label: "DRUG" },
      { start: 17, end: 22, label: "PERSON" },
    ];
    expect([...text].slice(2, 9).join("")).toBe("Aspirin");
    expect([...text].slice(17, 22).join("")).toBe("Maria");
    const a = await sys.api<RecordedLabel>("POST", `/v1/labeling/claims/${c.claim_id}/label`, {
      token: (labelers[0] as Labeler).key,
      body: { spans: [...spans].reverse() },
    });
    expect(a.status).toBe(201);
    expect(a.body.answer).toEqual({ spans });
    expect((await answer(labelers[1] as Labeler, taskId, { spans })).status).toBe(201);
    const result = (await settledResult(sys, customer.key, taskId)) as SettledResult;
    expect(
      (result.consensus as { spans: { start: number; end: number; label: string }[] }).spans.map(({ start, end, label }) => ({
        start,
        end,
        label,
      })),
    ).toEqual(spans);
    expect((await task(taskId)).data_text).toBe(text);
  });
});

describe("bad answers and bodies", () => {
  let boxTask: string;
  let spanTask: string;
  beforeAll(async () => {
    boxTask = await createTask({
      type: "bounding_box",
      data_url: IMAGE,
      label_spec: { question: "Box the cars", classes: ["car"] },
      max_labels: 3,
    });
    spanTask = await createTask({
      type: "text_span",
      data_url: "https://texts.example/2.txt",
      data_text: "short text",
      label_spec: { question: "Mark", entity_types: ["X"] },
      max_labels: 3,
    });
  });

  /** Each refused answer leaves the claim open: the same claim takes the next try. */
  it("refuses answers that do not fit the task, with details, and keeps the claim", async () => {
    const l = labelers[2] as Labeler;
    const c = await claim(l, boxTask);
    const send = (body: unknown) => sys.api<ErrorFields>("POST", `/v1/labeling/claims/${c.claim_id}/label`, { token: l.key, body });
    const wrongShape = await send({ label: "car" });
    expect(wrongShape.status).toBe(400);
    expect(wrongShape.body).toMatchObject({
      error: "validation failed",
      details: [{ path: "", message: "a bounding_box task's answer is {boxes: [{label, x, y, w, h}, ...]}" }],
    });
    const unknownClass = await send({ boxes: [{ label: "bus", x: 0, y: 0, w: 1, h: 1 }] });
    expect(unknownClass.status).toBe(400);
    expect(unknownClass.body.details).toEqual([{ path: "boxes.0.label", message: 'unknown class "bus"' }]);
    const negative = await send({ boxes: [{ label: "car", x: -1, y: 0, w: 1, h: 1 }] });
    expect(negative.status).toBe(400);
    expect(negative.body.details?.[0]?.path).toBe("boxes.0.x");
    const tooMany = await send({ boxes: Array.from({ length: 501 }, () => ({ label: "car", x: 0, y: 0, w: 1, h: 1 })) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.details?.[0]?.path).toBe("boxes");
    const huge = await sys.api<ErrorFields>("POST", `/v1/labeling/claims/${c.claim_id}/label`, {
      token: l.key,
      raw: JSON.stringify({ boxes: Array.from({ length: 10_000 }, () => ({ label: "car", x: 10.5, y: 20.25, w: 30.125, h: 40.0625 })) }),
      headers: { "content-type": "application/json" },
    });
    expect(huge.status).toBe(413);
    expect((await send({ boxes: [] })).status).toBe(201);
  });

  it("refuses spans that overlap or run past the text", async () => {
    const l = labelers[2] as Labeler;
    const c = await claim(l, spanTask);
    const send = (body: unknown) => sys.api<ErrorFields>("POST", `/v1/labeling/claims/${c.claim_id}/label`, { token: l.key, body });
    const overlap = await send({
      spans: [
        { start: 0, end: 5, label: "X" },
        { start: 3, end: 8, label: "X" },
      ],
    });
    expect(overlap.status).toBe(400);
    expect(overlap.body.details).toEqual([{ path: "spans.1", message: "overlaps span 0 (0..5)" }]);
    const past = await send({ spans: [{ start: 6, end: 11, label: "X" }] });
    expect(past.status).toBe(400);
    expect(past.body.details).toEqual([{ path: "spans.0.end", message: "end 11 is past the end of the text (10 code points)" }]);
    const empty = await send({ spans: [{ start: 4, end: 4, label: "X" }] });
    expect(empty.status).toBe(400);
    expect((await send({ spans: [{ start: 6, end: 10, label: "X" }] })).status).toBe(201);
  });

  it("refuses a task body whose label_spec or gold is not its type's", async () => {
    const post = (body: Record<string, unknown>) => sys.api<ErrorFields>("POST", "/v1/tasks", { token: customer.key, body });
    const options = await post({ type: "bounding_box", data_url: IMAGE, label_spec: { question: "q", options: ["a", "b"] } });
    expect(options.status).toBe(400);
    expect(options.body.details).toContainEqual({
      path: "label_spec.classes",
      message: "Invalid input: expected array, received undefined",
    });
    const goldLabel = await post({
      type: "multi_label_classification",
      data_url: IMAGE,
      label_spec: { question: "q", options: ["a"] },
      gold_label: "a",
    });
    expect(goldLabel.status).toBe(400);
    const goldOut = await post({
      type: "text_span",
      data_url: IMAGE,
      data_text: "abc",
      label_spec: { question: "q", entity_types: ["X"] },
      gold_answer: { spans: [{ start: 0, end: 4, label: "X" }] },
    });
    expect(goldOut.status).toBe(400);
    expect(goldOut.body.details).toEqual([
      { path: "gold_answer.spans.0.end", message: "end 4 is past the end of the text (3 code points)" },
    ]);
    // single choice keeps its contract
    const single = await post({ type: "image_classification", data_url: IMAGE, label_spec: { question: "q", options: ["a"] } });
    expect(single.status).toBe(400);
    expect(single.body.details?.[0]?.path).toBe("label_spec.options");
  });
});

it("claims and settles every type side by side in one labeler's queue (generic claims)", async () => {
  const ids = await Promise.all([
    createTask({
      type: "multi_label_classification",
      data_url: IMAGE,
      label_spec: { question: "Q?", options: ["x", "y"] },
      consensus_threshold: 1,
    }),
    createTask({ type: "bounding_box", data_url: IMAGE, label_spec: { question: "B?", classes: ["c"] }, consensus_threshold: 1 }),
    createTask({
      type: "text_span",
      data_url: IMAGE,
      data_text: "one two",
      label_spec: { question: "S?", entity_types: ["E"] },
      consensus_threshold: 1,
    }),
  ]);
  const [l] = await createLabelers(sys, 1, "queue");
  const answers: Record<string, unknown> = {
    multi_label_classification: { labels: ["x"] },
    bounding_box: { boxes: [{ label: "c", x: 1, y: 1, w: 5, h: 5 }] },
    text_span: { spans: [{ start: 0, end: 3, label: "E" }] },
  };
  const seen = new Set<string>();
  await eventually(async () => {
    const c = await sys.api<{ claim_id: string; task_id: string; task_type: string }>("POST", "/v1/labeling/claims", {
      token: (l as Labeler).key,
      body: {},
    });
    if (c.status === 204) return seen.size >= 3 ? true : undefined;
    expect(c.status).toBe(201);
    // another test's open task of this file's database: answered with the empty answer of its type
    const empty: Record<string, unknown> = {
      multi_label_classification: { labels: [] },
      bounding_box: { boxes: [] },
      text_span: { spans: [] },
    };
    const body = ids.includes(c.body.task_id) ? answers[c.body.task_type] : empty[c.body.task_type];
    const r = await sys.api("POST", `/v1/labeling/claims/${c.body.claim_id}/label`, { token: (l as Labeler).key, body });
    expect(r.status).toBe(201);
    if (ids.includes(c.body.task_id)) seen.add(c.body.task_id);
    return seen.size >= 3 ? true : undefined;
  });
  for (const id of ids) expect((await settledResult(sys, customer.key, id)).status).toBe("settled");
});
