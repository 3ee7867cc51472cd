/**
 * The `free_text` task type (contract §task-types) end to end over HTTP, against this run's real Postgres and
 * Redis with the gateway and the workers: tasks are created, claimed (the claim carries the label_spec),
 * answered, decided in the label transaction and settled, with the consensus text and a confidence per word;
 * the threshold policy counts equal normalized answers, the confidence policy every word's confidence; a gold
 * task matches after normalization; every bad answer or task body is a 400 with details and stores nothing.
 */
import type { RecordedLabel, SettledResult, Task } from "@labelgate/api/types";
import { createLabelers, eventually, type Labeler, registerCustomer, type System, settledResult, startSystem } from "../../../test/system";

interface ErrorFields {
  error?: string;
  details?: { path: string; message: string }[];
}
interface TextConsensus {
  text: string;
  words: { word: string; confidence: number }[];
  slots: { word: string | null; confidence: number; answers: (string | null)[] }[];
}

let sys: System;
let customer: { id: string; key: string };
let labelers: Labeler[];

beforeAll(async () => {
  sys = await startSystem();
  customer = await registerCustomer(sys);
  labelers = await createLabelers(sys, 3, "text");
});
afterAll(() => sys.close());

const AUDIO = "https://audio.example/utterance-1.flac";

async function createTask(body: Record<string, unknown>): Promise<string> {
  const res = await sys.api<{ task_id: string } & ErrorFields>("POST", "/v1/tasks", { token: customer.key, body });
  if (res.status !== 202) throw new Error(`task creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.task_id;
}

async function claim(labeler: Labeler, taskId: string): Promise<Record<string, unknown> & { claim_id: string }> {
  const res = await sys.api<Record<string, unknown> & { claim_id: string }>("POST", "/v1/labeling/claims", {
    token: labeler.key,
    body: { task_id: taskId },
  });
  if (res.status !== 201) throw new Error(`claim failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function answer(labeler: Labeler, taskId: string, body: unknown) {
  const c = await claim(labeler, taskId);
  return sys.api<RecordedLabel & ErrorFields>("POST", `/v1/labeling/claims/${c.claim_id}/label`, { token: labeler.key, body });
}

async function task(taskId: string): Promise<Task> {
  return (await sys.api<Task>("GET", `/v1/tasks/${taskId}`, { token: customer.key })).body;
}

describe("free_text", () => {
  const spec = { question: "Transcribe the utterance", max_length: 200 };

  it("settles under the threshold policy on two equal normalized answers, with a confidence per word", async () => {
    const taskId = await createTask({ type: "free_text", data_url: AUDIO, label_spec: spec, consensus_threshold: 2, max_labels: 3 });
    const c = await claim(labelers[0] as Labeler, taskId);
    expect(c).toMatchObject({ task_type: "free_text", label_spec: spec });
    const first = await sys.api<RecordedLabel>("POST", `/v1/labeling/claims/${c.claim_id}/label`, {
      token: (labelers[0] as Labeler).key,
      body: { text: "  The cat sat on the mat.\r\n" },
    });
    expect(first.status).toBe(201);
    // stored as written (line ends and ends of the text canonical); compared after normalization
    expect(first.body).toMatchObject({ answer: { text: "The cat sat on the mat." }, label: '{"text":"The cat sat on the mat."}' });
    expect(first.body.labels_needed).toBeGreaterThan(0);
    const second = await answer(labelers[1] as Labeler, taskId, { text: "the cat sat on the mat" });
    expect(second.status).toBe(201);
    expect(second.body.labels_needed).toBe(0);
    const result = (await settledResult(sys, customer.key, taskId)) as SettledResult;
    expect(result.resolution).toBe("consensus");
    expect(result.consensus_label).toBe('{"text":"the cat sat on the mat"}');
    const consensus = result.consensus as unknown as TextConsensus;
    expect(consensus.text).toBe("the cat sat on the mat");
    expect(consensus.words.map((w) => w.word)).toEqual(["the", "cat", "sat", "on", "the", "mat"]);
    for (const w of consensus.words) {
      expect(w.confidence).toBeGreaterThan(0);
      expect(w.confidence).toBeLessThanOrEqual(1);
    }
    expect(result.confidence).toBeGreaterThan(0);
    expect(result.confidence).toBeLessThanOrEqual(1);
    expect(result.posterior).toEqual({});
    expect((await task(taskId)).consensus).toEqual(consensus);
  });

  it("votes word by word: two answers that differ in one word each give the majority's words", async () => {
    const taskId = await createTask({ type: "free_text", data_url: AUDIO, label_spec: spec, consensus_threshold: 3, max_labels: 3 });
    expect((await answer(labelers[0] as Labeler, taskId, { text: "she sells sea shells" })).status).toBe(201);
    expect((await answer(labelers[1] as Labeler, taskId, { text: "she sell sea shells" })).status).toBe(201);
    const last = await answer(labelers[2] as Labeler, taskId, { text: "she sells see shells" });
    expect(last.status).toBe(201);
    expect(last.body.labels_needed).toBe(0);
    const result = (await settledResult(sys, customer.key, taskId)) as SettledResult;
    expect(result.resolution).toBe("max_labels");
    const consensus = result.consensus as unknown as TextConsensus;
    expect(consensus.text).toBe("she sells sea shells");
    // the answers aligned word by word, in recording order
    expect(consensus.slots.map((s) => s.answers)).toEqual([
      ["she", "she", "she"],
      ["sells", "sell", "sells"],
      ["sea", "sea", "see"],
      ["shells", "shells", "shells"],
    ]);
    expect(consensus.slots.map((s) => s.word)).toEqual(["she", "sells", "sea", "shells"]);
    // the words two of three wrote are less sure than the word all three wrote
    const [she, sells] = consensus.words as { word: string; confidence: number }[];
    expect((sells as { confidence: number }).confidence).toBeLessThan((she as { confidence: number }).confidence);
  });

  it("under the confidence policy settles when every word reaches the target, or at max_labels", async () => {
    const taskId = await createTask({
      type: "free_text",
      data_url: AUDIO,
      label_spec: { question: "Transcribe (confidence)" },
      confidence_target: 0.9,
      min_labels: 2,
      max_labels: 3,
    });
    expect((await answer(labelers[0] as Labeler, taskId, { text: "hello world" })).status).toBe(201);
    const second = await answer(labelers[1] as Labeler, taskId, { text: "Hello, world!" });
    expect(second.status).toBe(201);
    if (second.body.labels_needed > 0) expect((await answer(labelers[2] as Labeler, taskId, { text: "hello world" })).status).toBe(201);
    const result = (await settledResult(sys, customer.key, taskId)) as SettledResult;
    expect(["confidence", "max_labels"]).toContain(result.resolution);
    const consensus = result.consensus as unknown as TextConsensus;
    expect(consensus.text).toBe("hello world");
    if (result.resolution === "confidence") for (const w of consensus.words) expect(w.confidence).toBeGreaterThanOrEqual(0.9);
  });

  it("counts a labeler's answer on a gold task as right when it equals the gold text after normalization", async () => {
    const goldId = await createTask({
      type: "free_text",
      data_url: "https://audio.example/gold-1.wav",
      label_spec: { question: "Transcribe (gold)" },
      gold_answer: { text: "Good morning, Vietnam!" },
    });
    expect(await task(goldId)).toMatchObject({
      gold: true,
      gold_label: '{"text":"Good morning, Vietnam!"}',
      gold_answer: { text: "Good morning, Vietnam!" },
    });
    expect((await answer(labelers[0] as Labeler, goldId, { text: "good morning vietnam" })).status).toBe(201);
    expect((await answer(labelers[1] as Labeler, goldId, { text: "good mourning vietnam" })).status).toBe(201);
    const record = async (labeler: Labeler) =>
      (
        await sys.db.pool.query<{ gold_answers: number; gold_correct: number }>(
          "SELECT m.gold_answers, m.gold_correct FROM labeler_models m JOIN tasks t ON t.label_space_id = m.label_space_id WHERE t.id = $1 AND m.labeler_id = $2",
          [goldId, labeler.id],
        )
      ).rows[0];
    expect(await eventually(() => record(labelers[0] as Labeler))).toEqual({ gold_answers: 1, gold_correct: 1 });
    expect(await eventually(() => record(labelers[1] as Labeler))).toEqual({ gold_answers: 1, gold_correct: 0 });
    expect((await task(goldId)).gold_answers).toBe(2);
  });
});

describe("bad free-text answers and bodies", () => {
  it("refuses an answer too long, empty after normalization or of another type's shape, with details; nothing is stored", async () => {
    const taskId = await createTask({
      type: "free_text",
      data_url: AUDIO,
      label_spec: { question: "Short answer", max_length: 10 },
      max_labels: 3,
    });
    const l = labelers[2] as Labeler;
    const c = await claim(l, taskId);
    const send = (body: unknown) => sys.api<ErrorFields>("POST", `/v1/labeling/claims/${c.claim_id}/label`, { token: l.key, body });
    const tooLong = await send({ text: "eleven char" });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toMatchObject({
      error: "validation failed",
      details: [{ path: "text", message: "is 11 code points, more than max_length 10" }],
    });
    // code points, not UTF-16 units: ten emoji fit
    expect((await send({ text: "😀".repeat(11) })).status).toBe(400);
    const empty = await send({ text: "" });
    expect(empty.status).toBe(400);
    expect(empty.body.details).toEqual([
      { path: "text", message: "has no word after normalization (skip the task instead of answering empty)" },
    ]);
    expect((await send({ text: " ?! ... " })).status).toBe(400);
    const wrongShape = await send({ label: "a" });
    expect(wrongShape.status).toBe(400);
    expect(wrongShape.body.details).toEqual([{ path: "", message: "a free_text task's answer is {text}" }]);
    const notString = await send({ text: 5 });
    expect(notString.status).toBe(400);
    expect((await task(taskId)).labels_collected).toBe(0);
    expect((await send({ text: "😀".repeat(10) })).status).toBe(201);
    expect((await task(taskId)).labels_collected).toBe(1);
  });

  it("refuses a free-text task body whose label_spec or gold answer does not fit", async () => {
    const post = (body: Record<string, unknown>) => sys.api<ErrorFields>("POST", "/v1/tasks", { token: customer.key, body });
    const tooLongSpec = await post({ type: "free_text", data_url: AUDIO, label_spec: { question: "q", max_length: 10_001 } });
    expect(tooLongSpec.status).toBe(400);
    expect(tooLongSpec.body.details?.[0]?.path).toBe("label_spec.max_length");
    const badNormalize = await post({ type: "free_text", data_url: AUDIO, label_spec: { question: "q", normalize: "stem" } });
    expect(badNormalize.status).toBe(400);
    expect(badNormalize.body.details?.[0]?.path).toBe("label_spec.normalize");
    const options = await post({ type: "free_text", data_url: AUDIO, label_spec: { question: "q", options: ["a"] } });
    expect(options.status).toBe(400);
    const goldTooLong = await post({
      type: "free_text",
      data_url: AUDIO,
      label_spec: { question: "q", max_length: 5 },
      gold_answer: { text: "too long" },
    });
    expect(goldTooLong.status).toBe(400);
    expect(goldTooLong.body.details).toEqual([{ path: "gold_answer.text", message: "is 8 code points, more than max_length 5" }]);
    const goldLabel = await post({ type: "free_text", data_url: AUDIO, label_spec: { question: "q" }, gold_label: "x" });
    expect(goldLabel.status).toBe(400);
  });
});
