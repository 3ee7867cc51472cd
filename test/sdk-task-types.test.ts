/**
 * @labelgate/sdk with the task types of contract §task-types against the real gateway (startSystem: real Postgres, Redis
 * and workers): typed task creation per type (the request types of the SDK), claims carrying the type's
 * label_spec and `data_text`, `labeling.label` with an answer body (the recorded `answer` typed), results and
 * tasks with a typed `consensus` told apart by the SDK's guards, a gold task with `gold_answer`, and a wrong
 * answer refused with a ValidationError whose details name the part.
 */
import {
  type BoundingBoxTaskRequest,
  type Consensus,
  type ConsensusBox,
  codePointLength,
  type FreeTextTaskRequest,
  isBoxConsensus,
  isFreeTextConsensus,
  isMultiLabelConsensus,
  isPairwiseConsensus,
  isReservedTaskType,
  isSpanConsensus,
  LabelgateClient,
  type MultiLabelTaskRequest,
  NotFoundError,
  type PairwiseTaskRequest,
  RESERVED_TASK_TYPES,
  type SpanAnswer,
  type TextSpanTaskRequest,
  ValidationError,
} from "@labelgate/sdk";
import { ADMIN_TOKEN, type System, startSystem } from "./system";

let sys: System;
let customer: LabelgateClient;
let labelers: LabelgateClient[];

beforeAll(async () => {
  sys = await startSystem();
  const admin = new LabelgateClient({ baseUrl: sys.baseUrl, adminToken: ADMIN_TOKEN });
  const registered = await admin.customers.register({ name: "SDK Types Co", email: `sdk-types-${Date.now()}@example.com` });
  customer = admin.withCredentials({ apiKey: registered.api_key });
  labelers = await Promise.all(
    [0, 1].map(async (i) => admin.withCredentials({ labelerKey: (await admin.admin.createLabeler(`typed-${i}`)).api_key })),
  );
});
afterAll(() => sys.close());

const IMAGE = "https://images.example/street.jpg";

/** Claims `taskId` for labeler `i` and answers it; the recorded label. */
async function answer(i: number, taskId: string, body: Parameters<LabelgateClient["labeling"]["label"]>[1]) {
  const lg = labelers[i] as LabelgateClient;
  const claim = await lg.labeling.claim(taskId);
  if (!claim) throw new Error(`no claim of ${taskId}`);
  return lg.labeling.label(claim.claim_id, body);
}

it("exports the reserved types and their helpers", () => {
  expect(RESERVED_TASK_TYPES).toEqual(["multi_label_classification", "bounding_box", "text_span", "free_text", "pairwise_comparison"]);
  expect(isReservedTaskType("bounding_box")).toBe(true);
  expect(isReservedTaskType("image_classification")).toBe(false);
  expect(codePointLength("😀 ab")).toBe(4);
  const none: Consensus | null = null;
  expect([isMultiLabelConsensus(none), isBoxConsensus(none), isSpanConsensus(none)]).toEqual([false, false, false]);
});

it("multi_label_classification: typed creation, answer bodies, a typed consensus per option", async () => {
  const body: MultiLabelTaskRequest = {
    type: "multi_label_classification",
    data_url: IMAGE,
    label_spec: { question: "Which apply?", options: ["red", "round", "ripe"] },
    consensus_threshold: 2,
  };
  const { task_id } = await customer.tasks.create(body);
  const first = await answer(0, task_id, { labels: ["round", "red"] });
  expect(first.answer).toEqual({ labels: ["red", "round"] });
  expect(first.label).toBe('{"labels":["red","round"]}');
  await answer(1, task_id, { labels: ["red", "round"] });
  const result = await customer.tasks.waitForResult(task_id, { intervalMs: 100, timeoutMs: 30_000 });
  expect(result.consensus_label).toBe('{"labels":["red","round"]}');
  const consensus = result.consensus;
  if (!isMultiLabelConsensus(consensus)) throw new Error(`not a multi-label consensus: ${JSON.stringify(consensus)}`);
  expect(consensus.labels).toEqual(["red", "round"]);
  expect(Object.keys(consensus.confidence).sort()).toEqual(["red", "ripe", "round"]);
  expect(isBoxConsensus(consensus) || isSpanConsensus(consensus)).toBe(false);
  expect((await customer.tasks.get(task_id)).consensus).toEqual(consensus);
});

it("bounding_box: fused boxes with support and confidence; a gold task with gold_answer", async () => {
  const spec = { question: "Box every car", classes: ["car", "person"] };
  const body: BoundingBoxTaskRequest = { type: "bounding_box", data_url: IMAGE, label_spec: spec, consensus_threshold: 2 };
  const { task_id } = await customer.tasks.create(body);
  const claim = await (labelers[0] as LabelgateClient).labeling.claim(task_id);
  expect(claim).toMatchObject({ task_type: "bounding_box", label_spec: spec });
  // a class outside the spec: a ValidationError naming the part; the claim stays open
  const refused = await (labelers[0] as LabelgateClient).labeling
    .label(claim?.claim_id as string, { boxes: [{ label: "bus", x: 0, y: 0, w: 1, h: 1 }] })
    .catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(ValidationError);
  expect((refused as ValidationError).details).toEqual([{ path: "boxes.0.label", message: 'unknown class "bus"' }]);
  await (labelers[0] as LabelgateClient).labeling.label(claim?.claim_id as string, {
    boxes: [{ label: "car", x: 100, y: 50, w: 200, h: 100 }],
  });
  await answer(1, task_id, { boxes: [{ label: "car", x: 104, y: 52, w: 196, h: 98 }] });
  const result = await customer.tasks.waitForResult(task_id, { intervalMs: 100, timeoutMs: 30_000 });
  if (!isBoxConsensus(result.consensus)) throw new Error(`not a box consensus: ${JSON.stringify(result.consensus)}`);
  const [box] = result.consensus.boxes as [ConsensusBox];
  expect(result.consensus.boxes).toHaveLength(1);
  expect(box).toMatchObject({ label: "car", support: 2 });
  expect(box.x).toBeGreaterThanOrEqual(100);
  expect(box.x).toBeLessThanOrEqual(104);
  expect(box.confidence).toBeGreaterThan(0);

  const gold = { boxes: [{ label: "person", x: 10, y: 10, w: 50, h: 120 }] };
  const goldTask = await customer.tasks.create({ type: "bounding_box", data_url: IMAGE, label_spec: spec, gold_answer: gold });
  expect(await customer.tasks.get(goldTask.task_id)).toMatchObject({ gold: true, gold_answer: gold });
});

it("text_span: data_text on the claim, spans in code points, a typed span consensus", async () => {
  const text = "😀 Aspirin helped Maria sleep.";
  const body: TextSpanTaskRequest = {
    type: "text_span",
    data_url: "https://texts.example/1.txt",
    data_text: text,
    label_spec: { question: "Mark the drugs and the people", entity_types: ["DRUG", "PERSON"] },
    consensus_threshold: 2,
  };
  const { task_id } = await customer.tasks.create(body);
  const claim = await (labelers[0] as LabelgateClient).labeling.claim(task_id);
  expect(claim?.data_text).toBe(text);
  const spans: SpanAnswer["spans"] = [
    { start: 2, end: 9, label: "DRUG" },
    { start: 17, end: 22, label: "PERSON" },
  ];
  const recorded = await (labelers[0] as LabelgateClient).labeling.label(claim?.claim_id as string, { spans: [...spans].reverse() });
  expect(recorded.answer).toEqual({ spans });
  await answer(1, task_id, { spans });
  const result = await customer.tasks.waitForResult(task_id, { intervalMs: 100, timeoutMs: 30_000 });
  if (!isSpanConsensus(result.consensus)) throw new Error(`not a span consensus: ${JSON.stringify(result.consensus)}`);
  expect(result.consensus.spans.map(({ start, end, label }) => ({ start, end, label }))).toEqual(spans);
  expect(result.consensus.spans.every((s) => s.confidence > 0 && s.confidence <= 1)).toBe(true);
  expect(JSON.parse(result.consensus_label)).toEqual({ spans });
});

it("single choice keeps its contract: a string answer, no consensus object", async () => {
  const { task_id } = await customer.tasks.create({
    type: "image_classification",
    data_url: IMAGE,
    label_spec: { question: "Animal?", options: ["cat", "dog"] },
    consensus_threshold: 1,
  });
  const recorded = await answer(0, task_id, "dog");
  expect(recorded.label).toBe("dog");
  const result = await customer.tasks.waitForResult(task_id, { intervalMs: 100, timeoutMs: 30_000 });
  expect(result.consensus_label).toBe("dog");
  expect(result.consensus ?? null).toBeNull();
});

it("free_text and pairwise_comparison: typed creation, answer bodies, typed consensus, the batch's ranking", async () => {
  const text: FreeTextTaskRequest = {
    type: "free_text",
    data_url: "https://audio.example/clip-1.wav",
    label_spec: { question: "Transcribe the clip", max_length: 200 },
    consensus_threshold: 2,
  };
  const { task_id: textTask } = await customer.tasks.create(text);
  const written = await answer(0, textTask, { text: "The cat sat." });
  expect(written.answer).toEqual({ text: "The cat sat." });
  await answer(1, textTask, { text: "the cat sat" });
  const textResult = await customer.tasks.waitForResult(textTask, { intervalMs: 100, timeoutMs: 30_000 });
  if (!isFreeTextConsensus(textResult.consensus)) throw new Error(`not a free_text consensus: ${JSON.stringify(textResult.consensus)}`);
  expect(textResult.consensus.text).toBe("the cat sat");
  expect(isPairwiseConsensus(textResult.consensus) || isSpanConsensus(textResult.consensus)).toBe(false);

  const pair = (a: string, b: string): PairwiseTaskRequest => ({
    type: "pairwise_comparison",
    data_url: `https://images.example/${a}.jpg`,
    data_url_b: `https://images.example/${b}.jpg`,
    label_spec: { question: "Which photo is sharper?" },
    consensus_threshold: 2,
  });
  const batch = await customer.tasks.createBatch({ tasks: [pair("s1", "s2"), pair("s3", "s2"), pair("s1", "s3")] });
  const winners = ["a", "b", "a"] as const;
  for (const [k, id] of batch.task_ids.entries()) {
    const claim = await (labelers[0] as LabelgateClient).labeling.claim(id);
    expect(claim).toMatchObject({ task_type: "pairwise_comparison", data_url_b: expect.stringMatching(/^https:/) });
    await (labelers[0] as LabelgateClient).labeling.label(claim?.claim_id as string, { winner: winners[k] as "a" | "b" });
    await answer(1, id, { winner: winners[k] as "a" | "b" });
  }
  const pairResult = await customer.tasks.waitForResult(batch.task_ids[0] as string, { intervalMs: 100, timeoutMs: 30_000 });
  if (!isPairwiseConsensus(pairResult.consensus)) throw new Error(`not a pairwise consensus: ${JSON.stringify(pairResult.consensus)}`);
  expect(pairResult.consensus.winner).toBe("a");
  expect(isFreeTextConsensus(pairResult.consensus)).toBe(false);
  const ranking = await customer.batches.ranking(batch.batch_id);
  // s1 beat s2, s2 beat s3, s1 beat s3
  expect(ranking.items.map((i) => i.item)).toEqual(["s1", "s2", "s3"].map((n) => `https://images.example/${n}.jpg`));
  expect(ranking.labels).toBe(6);
  // the job route's call: an unknown job is NotFoundError
  await expect(customer.jobs.ranking("job_unknown000000000000000")).rejects.toBeInstanceOf(NotFoundError);
});
