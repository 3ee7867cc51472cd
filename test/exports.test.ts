/**
 * Exports in every format (contract §exports), for batches and manifest jobs, against this run's Postgres and
 * Redis with every worker: a batch of each task type labeled through the API (one label settles a task) and
 * exported as `jsonl`, `label-studio`, `coco`, `conll` and `hf`, each checked against the format's published
 * shape written below as a zod schema (Label Studio: https://labelstud.io/guide/task_format and the tags'
 * "Sample Results JSON"; COCO: https://cocodataset.org/#format-data, object detection; CoNLL-2003: Tjong Kim
 * Sang and De Meulder 2003, token and tag columns, `-DOCSTART-` documents; Hugging Face `datasets`: JSON Lines,
 * one record per line, the same keys and types in every record); a manifest job of boxes exported as COCO; the
 * refusals (a format that does not fit: 400 naming the formats that fit; an unknown format; a batch or job not
 * completed: 409; another customer's: 404); and the streaming of a 10,000-task batch (a keyset cursor page by
 * page, at most a page buffered while the consumer is slow).
 */
import { setTimeout as delay } from "node:timers/promises";
import { EXPORT_FORMATS, tagTokens } from "@labelgate/api/exports";
import { z } from "zod";
import { createJob, jsonl, type ManifestServer, serveManifest, waitForStatus } from "../services/manifest-worker/test/helpers";
import { createLabelers, eventually, type Labeler, registerCustomer, type System, startSystem } from "./system";

let sys: System;
let labelers: Labeler[];
let server: ManifestServer;
const manifests = new Map<string, string>();

beforeAll(async () => {
  sys = await startSystem();
  labelers = await createLabelers(sys, 1, "exports");
  server = await serveManifest((req, res) => {
    const body = manifests.get((req.url ?? "").split("?")[0] as string);
    if (body === undefined) res.writeHead(404).end("not found");
    else res.writeHead(200, { "content-type": "application/x-ndjson" }).end(body);
  });
});
afterAll(async () => {
  await server.close();
  await sys.close();
});

type Body = Record<string, unknown>;

// --- the published shapes ---------------------------------------------------------------------------------

/** Label Studio: one region of `annotations[].result[]` (from_name/to_name name the config's tags). */
const lsRegion = z.object({
  id: z.string(),
  from_name: z.string(),
  to_name: z.string(),
  type: z.enum(["choices", "rectanglelabels", "labels", "textarea", "pairwise"]),
  value: z.record(z.string(), z.unknown()),
  score: z.number().optional(),
  original_width: z.number().optional(),
  original_height: z.number().optional(),
  image_rotation: z.number().optional(),
});
/** Each type's `value` as the tag's "Sample Results JSON" shows it. */
const lsValues = {
  choices: z.strictObject({ choices: z.array(z.string()) }),
  rectanglelabels: z.strictObject({
    x: z.number().min(0).max(100),
    y: z.number().min(0).max(100),
    width: z.number().min(0).max(100),
    height: z.number().min(0).max(100),
    rotation: z.number(),
    rectanglelabels: z.array(z.string()).length(1),
  }),
  labels: z.strictObject({ start: z.int().min(0), end: z.int().min(0), text: z.string(), labels: z.array(z.string()).length(1) }),
  textarea: z.strictObject({ text: z.array(z.string()) }),
  // the Pairwise tag's result: which side was selected
  pairwise: z.strictObject({ selected: z.enum(["left", "right"]) }),
};
const lsTask = z.object({
  id: z.int(),
  data: z.record(z.string(), z.unknown()),
  annotations: z.array(
    z.object({
      id: z.int(),
      result: z.array(lsRegion),
      score: z.number().nullable(),
      ground_truth: z.boolean(),
      was_cancelled: z.boolean(),
      created_at: z.string().nullable(),
    }),
  ),
  predictions: z.array(z.unknown()),
  meta: z.record(z.string(), z.unknown()).optional(),
});
const lsExport = z.array(lsTask);

/** Checks a Label Studio export: the array's shape, and each region's value against its type's. */
function parseLabelStudio(text: string) {
  const tasks = lsExport.parse(JSON.parse(text));
  for (const t of tasks)
    for (const a of t.annotations)
      for (const r of a.result) {
        lsValues[r.type].parse(r.value);
        if (r.type === "rectanglelabels")
          expect(r).toMatchObject({ original_width: expect.any(Number), original_height: expect.any(Number) });
      }
  return tasks;
}

/** COCO object detection (the data format page: info, images, annotations, licenses, categories). */
const cocoExport = z.strictObject({
  info: z.strictObject({
    year: z.int(),
    version: z.string(),
    description: z.string(),
    contributor: z.string(),
    url: z.string(),
    date_created: z.string(),
  }),
  licenses: z.array(z.strictObject({ id: z.int(), name: z.string(), url: z.string() })),
  images: z.array(
    z.object({
      id: z.int(),
      width: z.int().positive().optional(),
      height: z.int().positive().optional(),
      file_name: z.string(),
      coco_url: z.string().optional(),
    }),
  ),
  annotations: z.array(
    z.object({
      id: z.int(),
      image_id: z.int(),
      category_id: z.int(),
      segmentation: z.array(z.unknown()),
      area: z.number().nonnegative(),
      bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]),
      iscrowd: z.union([z.literal(0), z.literal(1)]),
      score: z.number().min(0).max(1),
    }),
  ),
  categories: z.array(z.object({ id: z.int(), name: z.string(), supercategory: z.string() })),
});

/** COCO's references: unique ids, every annotation's image and category exist. */
function parseCoco(text: string) {
  const coco = cocoExport.parse(JSON.parse(text));
  const images = new Set(coco.images.map((i) => i.id));
  const categories = new Set(coco.categories.map((c) => c.id));
  expect(images.size).toBe(coco.images.length);
  expect(new Set(coco.annotations.map((a) => a.id)).size).toBe(coco.annotations.length);
  for (const a of coco.annotations) {
    expect(images.has(a.image_id)).toBe(true);
    expect(categories.has(a.category_id)).toBe(true);
    expect(a.area).toBeCloseTo(a.bbox[2] * a.bbox[3]);
  }
  return coco;
}

/** CoNLL-2003 columns: documents opened by `-DOCSTART- O` and a blank line, `token TAG` lines, a blank line after each. */
function parseConll(text: string): { token: string; tag: string }[][] {
  expect(text.endsWith("\n\n") || text === "").toBe(true);
  const docs: { token: string; tag: string }[][] = [];
  const blocks = text.split("\n\n").slice(0, -1);
  for (let i = 0; i < blocks.length; i += 2) {
    expect(blocks[i]).toBe("-DOCSTART- O");
    const lines = (blocks[i + 1] ?? "").split("\n").filter((l) => l !== "");
    const doc = lines.map((l) => {
      const m = /^(\S+) (O|[BI]-\S+)$/u.exec(l);
      if (!m) throw new Error(`not a CoNLL line: ${JSON.stringify(l)}`);
      return { token: m[1] as string, tag: m[2] as string };
    });
    // BIO: an I- tag continues a span of its type
    doc.forEach((t, k) => {
      if (t.tag.startsWith("I-")) expect((doc[k - 1] as { tag: string }).tag.slice(2)).toBe(t.tag.slice(2));
    });
    docs.push(doc);
  }
  return docs;
}

/** Hugging Face JSON Lines: one object per line, every record with the same keys (one Arrow schema). */
function parseHf<S extends z.ZodType>(text: string, record: S): z.output<S>[] {
  expect(text.endsWith("\n")).toBe(true);
  const rows = text
    .slice(0, -1)
    .split("\n")
    .map((l) => JSON.parse(l) as Body);
  const keys = JSON.stringify(Object.keys(rows[0] ?? {}));
  for (const r of rows) expect(JSON.stringify(Object.keys(r))).toBe(keys);
  return rows.map((r) => record.parse(r));
}

const hfBase = { task_id: z.string(), confidence: z.number().nullable() };
const hfRecords = {
  pairwise: z.strictObject({
    ...hfBase,
    item_a: z.string(),
    item_b: z.string().nullable(),
    winner: z.enum(["a", "b", "tie"]).nullable(),
  }),
  single: z.strictObject({ ...hfBase, data_url: z.string(), label: z.string().nullable() }),
  multi: z.strictObject({ ...hfBase, data_url: z.string(), labels: z.array(z.string()).nullable() }),
  boxes: z.strictObject({
    ...hfBase,
    image: z.string(),
    width: z.number().nullable(),
    height: z.number().nullable(),
    objects: z.strictObject({
      bbox: z.array(z.tuple([z.number(), z.number(), z.number(), z.number()])),
      category: z.array(z.string()),
      score: z.array(z.number()),
    }),
  }),
  text: z.strictObject({
    ...hfBase,
    data_url: z.string(),
    text: z.string().nullable(),
    words: z.array(z.string()).nullable(),
    word_confidences: z.array(z.number().min(0).max(1)).nullable(),
  }),
  spans: z.strictObject({
    ...hfBase,
    data_url: z.string(),
    text: z.string().nullable(),
    tokens: z.array(z.string()),
    ner_tags: z.array(z.string()).nullable(),
    spans: z.array(z.strictObject({ start: z.int(), end: z.int(), label: z.string(), confidence: z.number() })).nullable(),
  }),
};

// --- helpers ----------------------------------------------------------------------------------------------

interface Fetched {
  status: number;
  contentType: string | null;
  disposition: string | null;
  text: string;
}

async function fetchExport(key: string, path: string): Promise<Fetched> {
  const res = await fetch(`${sys.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    disposition: res.headers.get("content-disposition"),
    text: await res.text(),
  };
}

/** An export that must succeed: its text. */
async function exported(key: string, kind: "batches" | "jobs", id: string, format?: string): Promise<string> {
  const res = await fetchExport(key, `/v1/${kind}/${id}/export${format ? `?format=${format}` : ""}`);
  if (res.status !== 200) throw new Error(`export ${format} failed: ${res.status} ${res.text}`);
  return res.text;
}

/** Creates a batch (threshold 1: one label settles a task); its task ids in order. */
async function batch(key: string, tasks: Body[]): Promise<{ batchId: string; taskIds: string[] }> {
  const res = await sys.api<{ batch_id: string; task_ids: string[] }>("POST", "/v1/tasks/batch", {
    token: key,
    body: { tasks: tasks.map((t) => ({ consensus_threshold: 1, ...t })) },
  });
  if (res.status !== 202) throw new Error(`batch failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { batchId: res.body.batch_id, taskIds: res.body.task_ids };
}

/** Claims `taskId` and answers it with `body`. */
async function answer(taskId: string, body: Body): Promise<void> {
  const l = labelers[0] as Labeler;
  const c = await sys.api<{ claim_id: string }>("POST", "/v1/labeling/claims", { token: l.key, body: { task_id: taskId } });
  if (c.status !== 201) throw new Error(`claim failed: ${c.status} ${JSON.stringify(c.body)}`);
  const res = await sys.api("POST", `/v1/labeling/claims/${c.body.claim_id}/label`, { token: l.key, body });
  if (res.status !== 201) throw new Error(`label failed: ${res.status} ${JSON.stringify(res.body)}`);
}

async function completed(key: string, batchId: string): Promise<void> {
  await eventually(
    async () => {
      const res = await sys.api<{ status: string }>("GET", `/v1/batches/${batchId}`, { token: key });
      return res.body.status === "completed" ? true : undefined;
    },
    30_000,
    `batch ${batchId} completed`,
  );
}

/** The 400 of a format that does not fit: `validation failed` naming the formats that fit. */
async function expectUnfit(key: string, path: string, fitting: string[]): Promise<void> {
  const res = await fetchExport(key, path);
  expect(res.status).toBe(400);
  const body = JSON.parse(res.text) as Body;
  expect(body).toEqual({
    error: "validation failed",
    details: [{ path: "format", message: expect.stringContaining(`formats that fit: ${fitting.join(", ")}`) }],
    formats: fitting,
  });
}

const img = (n: number) => `https://img.example/exports/${n}.jpg`;

// --- tests ------------------------------------------------------------------------------------------------

describe("a batch of each task type in every format that fits it", () => {
  it("single choice: jsonl (metadata), label-studio choices, hf label names; coco and conll are 400", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Which pet?", options: ["cat", "dog"] };
    const { batchId, taskIds } = await batch(c.key, [
      { type: "image_classification", data_url: img(1), label_spec: spec, metadata: { sku: 1 } },
      { type: "image_classification", data_url: img(2), label_spec: spec },
      { type: "image_classification", data_url: img(3), label_spec: spec },
    ]);
    const [a, b, canceled] = taskIds as [string, string, string];
    // not completed yet: 409 with the batch's status, whatever the format
    const early = await fetchExport(c.key, `/v1/batches/${batchId}/export?format=hf`);
    expect(early.status).toBe(409);
    expect(JSON.parse(early.text)).toEqual({ error: "batch not completed", status: "accepted" });

    await answer(a, { label: "cat" });
    await answer(b, { label: "dog" });
    expect((await sys.api("POST", `/v1/tasks/${canceled}/cancel`, { token: c.key })).status).toBe(200);
    await completed(c.key, batchId);

    const res = await fetchExport(c.key, `/v1/batches/${batchId}/export`);
    expect(res.status).toBe(200);
    expect(res.contentType).toContain("application/x-ndjson");
    expect(res.disposition).toBe(`attachment; filename="${batchId}.jsonl"`);
    const lines = res.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Body);
    // task id order, `metadata` where a job's lines have `source`
    expect(lines.map((l) => l.task_id)).toEqual([...taskIds].sort());
    const byId = new Map(lines.map((l) => [l.task_id, l]));
    expect(Object.keys(byId.get(a) ?? {})).toEqual([
      "task_id",
      "data_url",
      "consensus_label",
      "confidence",
      "ledger_txid",
      "settled_at",
      "metadata",
    ]);
    expect(byId.get(a)).toMatchObject({ consensus_label: "cat", metadata: { sku: 1 } });
    expect(byId.get(canceled)).toMatchObject({ consensus_label: null, confidence: null, metadata: null });
    expect(await exported(c.key, "batches", batchId, "jsonl")).toBe(res.text);

    const ls = parseLabelStudio(await exported(c.key, "batches", batchId, "label-studio"));
    const lsA = ls.find((t) => t.data.task_id === a);
    expect(lsA?.data).toMatchObject({ item: img(1), data_url: img(1), task_type: "image_classification" });
    expect(lsA?.annotations).toHaveLength(1);
    expect(lsA?.annotations[0]?.result).toEqual([
      { id: "r1", from_name: "label", to_name: "item", type: "choices", value: { choices: ["cat"] }, score: expect.any(Number) },
    ]);
    expect(lsA?.annotations[0]?.score).toBe(byId.get(a)?.confidence);
    expect(ls.find((t) => t.data.task_id === canceled)?.annotations).toEqual([]);

    const hf = parseHf(await exported(c.key, "batches", batchId, "hf"), hfRecords.single);
    expect(hf.map((r) => [r.task_id, r.label])).toEqual(lines.map((l) => [l.task_id, l.consensus_label]));

    for (const format of ["coco", "conll"])
      await expectUnfit(c.key, `/v1/batches/${batchId}/export?format=${format}`, ["jsonl", "label-studio", "hf"]);
  });

  it("multi-label: label-studio choices (several), hf a list of names", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Which apply?", options: ["red", "round", "ripe"] };
    const { batchId, taskIds } = await batch(c.key, [
      { type: "multi_label_classification", data_url: img(10), label_spec: spec },
      { type: "multi_label_classification", data_url: img(11), label_spec: spec },
    ]);
    await answer(taskIds[0] as string, { labels: ["round", "red"] });
    await answer(taskIds[1] as string, { labels: [] });
    await completed(c.key, batchId);

    const ls = parseLabelStudio(await exported(c.key, "batches", batchId, "label-studio"));
    const first = ls.find((t) => t.data.task_id === taskIds[0]);
    expect(first?.annotations[0]?.result[0]).toMatchObject({ type: "choices", value: { choices: ["red", "round"] } });
    // nothing applies: the annotation holds no region
    expect(ls.find((t) => t.data.task_id === taskIds[1])?.annotations[0]?.result).toEqual([]);
    const hf = parseHf(await exported(c.key, "batches", batchId, "hf"), hfRecords.multi);
    expect(new Map(hf.map((r) => [r.task_id, r.labels]))).toEqual(
      new Map([
        [taskIds[0], ["red", "round"]],
        [taskIds[1], []],
      ]),
    );
    await expectUnfit(c.key, `/v1/batches/${batchId}/export?format=coco`, ["jsonl", "label-studio", "hf"]);
  });

  it("bounding boxes: coco (pixels, sizes from metadata), label-studio rectangles in percent, hf objects; conll is 400", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Mark the vehicles", classes: ["car", "bus"] };
    const { batchId, taskIds } = await batch(c.key, [
      { type: "bounding_box", data_url: img(20), label_spec: spec, metadata: { width: 640, height: 480 } },
      { type: "bounding_box", data_url: img(21), label_spec: spec },
    ]);
    const [sized, unsized] = taskIds as [string, string];
    await answer(sized, {
      boxes: [
        { label: "bus", x: 64, y: 48, w: 320, h: 240 },
        { label: "car", x: 0, y: 0, w: 10, h: 20 },
      ],
    });
    await answer(unsized, { boxes: [{ label: "car", x: 5, y: 5, w: 50, h: 50 }] });
    await completed(c.key, batchId);

    const cocoRes = await fetchExport(c.key, `/v1/batches/${batchId}/export?format=coco`);
    expect(cocoRes.contentType).toContain("application/json");
    expect(cocoRes.disposition).toBe(`attachment; filename="${batchId}.json"`);
    const coco = parseCoco(cocoRes.text);
    expect(coco.categories).toEqual([
      { id: 1, name: "car", supercategory: "none" },
      { id: 2, name: "bus", supercategory: "none" },
    ]);
    const sizedImage = coco.images.find((i) => i.file_name === img(20));
    expect(sizedImage).toMatchObject({ width: 640, height: 480 });
    expect(coco.images.find((i) => i.file_name === img(21))).not.toHaveProperty("width");
    const onSized = coco.annotations.filter((a) => a.image_id === sizedImage?.id);
    expect(onSized.map((a) => [a.category_id, a.bbox]).sort()).toEqual(
      [
        [1, [0, 0, 10, 20]],
        [2, [64, 48, 320, 240]],
      ].sort(),
    );
    expect(coco.annotations).toHaveLength(3);

    const ls = parseLabelStudio(await exported(c.key, "batches", batchId, "label-studio"));
    const lsSized = ls.find((t) => t.data.task_id === sized);
    const bus = lsSized?.annotations[0]?.result.find((r) => (r.value.rectanglelabels as string[])[0] === "bus");
    expect(bus).toMatchObject({ original_width: 640, original_height: 480, value: { x: 10, y: 10, width: 50, height: 50, rotation: 0 } });
    // without the image's size no rectangle can be placed: said in the task's meta
    const lsUnsized = ls.find((t) => t.data.task_id === unsized);
    expect(lsUnsized?.annotations[0]?.result).toEqual([]);
    expect(lsUnsized?.meta).toEqual({ warning: expect.stringContaining("image size unknown") });

    const hf = parseHf(await exported(c.key, "batches", batchId, "hf"), hfRecords.boxes);
    const hfSized = hf.find((r) => r.task_id === sized);
    expect(hfSized).toMatchObject({ image: img(20), width: 640, height: 480 });
    expect(hfSized?.objects.category.slice().sort()).toEqual(["bus", "car"]);
    expect(hf.find((r) => r.task_id === unsized)).toMatchObject({ width: null, height: null, objects: { bbox: [[5, 5, 50, 50]] } });

    await expectUnfit(c.key, `/v1/batches/${batchId}/export?format=conll`, ["jsonl", "label-studio", "coco", "hf"]);
  });

  it("text spans: conll BIO documents, label-studio labels in UTF-16 offsets, hf tokens and tags; coco is 400", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Mark the entities", entity_types: ["PER", "LOC"] };
    // code points: "🙂 " is 2 code points (3 UTF-16 units)
    const text1 = "🙂 Ada Lovelace visited New York.";
    const text2 = "Nothing here";
    const { batchId, taskIds } = await batch(c.key, [
      { type: "text_span", data_url: "https://t.example/1.txt", data_text: text1, label_spec: spec },
      { type: "text_span", data_url: "https://t.example/2.txt", data_text: text2, label_spec: spec },
    ]);
    await answer(taskIds[0] as string, {
      spans: [
        { start: 2, end: 14, label: "PER" },
        { start: 23, end: 31, label: "LOC" },
      ],
    });
    await answer(taskIds[1] as string, { spans: [] });
    await completed(c.key, batchId);

    const conllRes = await fetchExport(c.key, `/v1/batches/${batchId}/export?format=conll`);
    expect(conllRes.contentType).toContain("text/plain");
    const docs = parseConll(conllRes.text);
    expect(docs).toHaveLength(2);
    const first = taskIds[0] as string;
    const doc1 = docs[[...taskIds].sort().indexOf(first)];
    expect(doc1).toEqual([
      { token: "🙂", tag: "O" },
      { token: "Ada", tag: "B-PER" },
      { token: "Lovelace", tag: "I-PER" },
      { token: "visited", tag: "O" },
      { token: "New", tag: "B-LOC" },
      { token: "York", tag: "I-LOC" },
      { token: ".", tag: "O" },
    ]);

    const ls = parseLabelStudio(await exported(c.key, "batches", batchId, "label-studio"));
    const lsFirst = ls.find((t) => t.data.task_id === first);
    expect(lsFirst?.data.item).toBe(text1);
    const regions = lsFirst?.annotations[0]?.result ?? [];
    // Label Studio counts JavaScript string offsets: the emoji is 2 units
    expect(regions.map((r) => r.value)).toEqual([
      { start: 3, end: 15, text: "Ada Lovelace", labels: ["PER"] },
      { start: 24, end: 32, text: "New York", labels: ["LOC"] },
    ]);
    for (const r of regions) expect(text1.slice(r.value.start as number, r.value.end as number)).toBe(r.value.text);

    const hf = parseHf(await exported(c.key, "batches", batchId, "hf"), hfRecords.spans);
    const hfFirst = hf.find((r) => r.task_id === first);
    expect(hfFirst?.tokens).toEqual(doc1?.map((t) => t.token));
    expect(hfFirst?.ner_tags).toEqual(doc1?.map((t) => t.tag));
    expect(hfFirst?.text).toBe(text1);
    expect(hf.find((r) => r.task_id === taskIds[1])).toMatchObject({ tokens: ["Nothing", "here"], ner_tags: ["O", "O"], spans: [] });

    await expectUnfit(c.key, `/v1/batches/${batchId}/export?format=coco`, ["jsonl", "label-studio", "conll", "hf"]);
  });

  it("free text: jsonl consensus with word confidences, label-studio textarea, hf text and words; coco and conll are 400", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Transcribe", max_length: 100 };
    const { batchId, taskIds } = await batch(c.key, [
      { type: "free_text", data_url: "https://audio.example/exports/1.wav", label_spec: spec },
      { type: "free_text", data_url: "https://audio.example/exports/2.wav", label_spec: spec },
    ]);
    await answer(taskIds[0] as string, { text: "Hello, World!" });
    await answer(taskIds[1] as string, { text: "Good night." });
    await completed(c.key, batchId);

    const lines = (await exported(c.key, "batches", batchId, "jsonl"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Body);
    const first = lines.find((l) => l.task_id === taskIds[0]) as Body;
    expect(first).toMatchObject({ consensus_label: '{"text":"hello world"}', consensus: { text: "hello world" } });
    const words = (first.consensus as { words: { word: string; confidence: number }[] }).words;
    expect(words.map((w) => w.word)).toEqual(["hello", "world"]);
    for (const w of words) expect(w.confidence).toBeGreaterThan(0);

    const ls = parseLabelStudio(await exported(c.key, "batches", batchId, "label-studio"));
    const task = ls.find((t) => t.data.task_id === taskIds[1]);
    expect(task?.data.item).toBe("https://audio.example/exports/2.wav");
    expect(task?.annotations[0]?.result).toEqual([
      {
        id: "r1",
        from_name: "label",
        to_name: "item",
        type: "textarea",
        value: { text: ["good night"] },
        score: task?.annotations[0]?.score,
      },
    ]);
    const hf = parseHf(await exported(c.key, "batches", batchId, "hf"), hfRecords.text);
    const record = hf.find((r) => r.task_id === taskIds[0]);
    expect(record).toMatchObject({ data_url: "https://audio.example/exports/1.wav", text: "hello world", words: ["hello", "world"] });
    expect(record?.word_confidences).toEqual(words.map((w) => w.confidence));
    await expectUnfit(c.key, `/v1/batches/${batchId}/export?format=coco`, ["jsonl", "label-studio", "hf"]);
    await expectUnfit(c.key, `/v1/batches/${batchId}/export?format=conll`, ["jsonl", "label-studio", "hf"]);
  });

  it("pairwise: jsonl with both items, label-studio pairwise regions, hf item_a/item_b/winner; coco and conll are 400", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Which is better?", allow_tie: true };
    const { batchId, taskIds } = await batch(c.key, [
      { type: "pairwise_comparison", data_url: img(40), data_url_b: img(41), label_spec: spec },
      { type: "pairwise_comparison", data_url: "https://prompts.example/1", data_text: "yes", data_text_b: "no", label_spec: spec },
      { type: "pairwise_comparison", data_url: img(42), data_url_b: img(43), label_spec: spec },
    ]);
    await answer(taskIds[0] as string, { winner: "b" });
    await answer(taskIds[1] as string, { winner: "a" });
    await answer(taskIds[2] as string, { winner: "tie" });
    await completed(c.key, batchId);

    const lines = (await exported(c.key, "batches", batchId))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Body);
    expect(lines.find((l) => l.task_id === taskIds[0])).toMatchObject({
      consensus_label: '{"winner":"b"}',
      consensus: { winner: "b" },
      data_url_b: img(41),
      data_text: null,
    });
    expect(lines.find((l) => l.task_id === taskIds[1])).toMatchObject({ data_text: "yes", data_text_b: "no" });
    const ls = parseLabelStudio(await exported(c.key, "batches", batchId, "label-studio"));
    const byId = new Map(ls.map((t) => [t.data.task_id, t]));
    expect(byId.get(taskIds[0])?.data).toMatchObject({ item: img(40), item_b: img(41) });
    expect(byId.get(taskIds[0])?.annotations[0]?.result[0]).toMatchObject({ type: "pairwise", value: { selected: "right" } });
    expect(byId.get(taskIds[1])?.annotations[0]?.result[0]).toMatchObject({ type: "pairwise", value: { selected: "left" } });
    expect(byId.get(taskIds[2])?.annotations[0]?.result[0]).toMatchObject({ type: "choices", value: { choices: ["tie"] } });
    const hf = parseHf(await exported(c.key, "batches", batchId, "hf"), hfRecords.pairwise);
    expect(new Map(hf.map((r) => [r.task_id, [r.item_a, r.item_b, r.winner]]))).toEqual(
      new Map([
        [taskIds[0], [img(40), img(41), "b"]],
        [taskIds[1], ["yes", "no", "a"]],
        [taskIds[2], [img(42), img(43), "tie"]],
      ]),
    );
    await expectUnfit(c.key, `/v1/batches/${batchId}/export?format=coco`, ["jsonl", "label-studio", "hf"]);
    await expectUnfit(c.key, `/v1/batches/${batchId}/export?format=conll`, ["jsonl", "label-studio", "hf"]);
  });

  it("a batch mixing task types fits jsonl and label-studio only", async () => {
    const c = await registerCustomer(sys);
    const { batchId, taskIds } = await batch(c.key, [
      { type: "image_classification", data_url: img(30), label_spec: { question: "Which?", options: ["a", "b"] } },
      {
        type: "bounding_box",
        data_url: img(31),
        label_spec: { question: "Boxes", classes: ["car"] },
        metadata: { width: 100, height: 100 },
      },
    ]);
    await answer(taskIds[0] as string, { label: "a" });
    await answer(taskIds[1] as string, { boxes: [{ label: "car", x: 1, y: 2, w: 3, h: 4 }] });
    await completed(c.key, batchId);
    const ls = parseLabelStudio(await exported(c.key, "batches", batchId, "label-studio"));
    expect(ls.map((t) => t.annotations[0]?.result[0]?.type).sort()).toEqual(["choices", "rectanglelabels"]);
    expect((await exported(c.key, "batches", batchId)).trim().split("\n")).toHaveLength(2);
    for (const format of ["coco", "conll", "hf"])
      await expectUnfit(c.key, `/v1/batches/${batchId}/export?format=${format}`, ["jsonl", "label-studio"]);
  });
});

describe("refusals", () => {
  it("an unknown format or another query field is 400 naming the formats; another customer's batch is 404", async () => {
    const c = await registerCustomer(sys);
    const other = await registerCustomer(sys);
    const { batchId } = await batch(c.key, [
      { type: "image_classification", data_url: img(40), label_spec: { question: "Q", options: ["a", "b"] } },
    ]);
    const unknown = await fetchExport(c.key, `/v1/batches/${batchId}/export?format=yolo`);
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.text)).toEqual({
      error: "validation failed",
      details: [{ path: "format", message: `one of ${EXPORT_FORMATS.join(", ")}` }],
    });
    const extra = await fetchExport(c.key, `/v1/batches/${batchId}/export?fmt=coco`);
    expect(extra.status).toBe(400);
    expect(JSON.parse(extra.text)).toMatchObject({ error: "validation failed" });
    for (const path of [`/v1/batches/${batchId}/export`, "/v1/batches/bat_doesnotexist/export", "/v1/batches/nope/export"]) {
      const res = await fetchExport(other.key, path);
      expect([res.status, JSON.parse(res.text)]).toEqual([404, { error: "batch not found" }]);
    }
  });
});

describe("a manifest job", () => {
  it("of boxes exports as COCO with the manifest line's size, and refuses conll naming the formats that fit", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Mark the cars", classes: ["car"] };
    manifests.set(
      "/boxes.jsonl",
      jsonl([
        JSON.stringify({ data_url: img(50), width: 200, height: 100 }),
        JSON.stringify({ "source-ref": img(51) }),
        JSON.stringify({ data_url: img(52), gold_answer: { boxes: [] } }),
      ]),
    );
    const jobId = await createJob(sys, c.key, { manifest_url: server.url("/boxes.jsonl"), type: "bounding_box", label_spec: spec });
    await waitForStatus(sys, c.key, jobId, "labeling");
    const early = await fetchExport(c.key, `/v1/jobs/${jobId}/export?format=coco`);
    expect([early.status, JSON.parse(early.text)]).toEqual([409, { error: "job not completed", status: "labeling" }]);
    const tasks = await sys.db.prisma.task.findMany({ where: { jobId, goldLabel: null }, orderBy: { manifestLine: "asc" } });
    await answer(tasks[0]?.id as string, { boxes: [{ label: "car", x: 20, y: 10, w: 100, h: 50 }] });
    await answer(tasks[1]?.id as string, { boxes: [] });
    await waitForStatus(sys, c.key, jobId, "completed");

    const coco = parseCoco(await exported(c.key, "jobs", jobId, "coco"));
    // image ids are the manifest lines (the gold line 3 is not exported)
    expect(coco.images.map((i) => [i.id, i.file_name, i.width, i.height])).toEqual([
      [1, img(50), 200, 100],
      [2, img(51), undefined, undefined],
    ]);
    expect(coco.annotations).toEqual([
      { id: 1, image_id: 1, category_id: 1, bbox: [20, 10, 100, 50], area: 5000, iscrowd: 0, segmentation: [], score: expect.any(Number) },
    ]);
    expect(coco.info.description).toBe(`labelgate export of job ${jobId}`);
    const ls = parseLabelStudio(await exported(c.key, "jobs", jobId, "label-studio"));
    expect(ls.map((t) => t.id)).toEqual([1, 2]);
    expect(ls[0]?.annotations[0]?.result[0]?.value).toEqual({ x: 10, y: 10, width: 50, height: 50, rotation: 0, rectanglelabels: ["car"] });
    // the default stays the JSONL of contract §jobs, with `source`
    const lines = (await exported(c.key, "jobs", jobId)).trim().split("\n");
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      source: { data_url: img(50), width: 200, height: 100 },
      annotations: [expect.any(Object)],
    });
    parseHf(await exported(c.key, "jobs", jobId, "hf"), hfRecords.boxes);
    await expectUnfit(c.key, `/v1/jobs/${jobId}/export?format=conll`, ["jsonl", "label-studio", "coco", "hf"]);
  });
});

describe("streaming", () => {
  const N = 10_000;
  let key: string;
  let batchId: string;

  beforeAll(async () => {
    const c = await registerCustomer(sys, 100_000);
    key = c.key;
    const spec = { question: "Mark the cars", classes: ["car", "bus"] };
    const tasks = Array.from({ length: N }, (_, i) => ({
      type: "bounding_box",
      data_url: `https://img.example/big/${String(i).padStart(5, "0")}.jpg`,
      label_spec: spec,
      metadata: { width: 1000, height: 800 },
    }));
    ({ batchId } = await batch(key, tasks));
    // settling 10,000 tasks through the API would take minutes: one statement settles them (docs/decisions/0175)
    const consensus = {
      boxes: [
        { label: "car", x: 10, y: 20, w: 30, h: 40, confidence: 0.9, support: 1 },
        { label: "bus", x: 100, y: 200, w: 300, h: 400, confidence: 0.8, support: 1 },
      ],
    };
    const settled = await sys.db.pool.query(
      `UPDATE tasks SET status = 'settled', consensus = $2::jsonb, consensus_label = 'x', confidence = 0.85, resolution = 'consensus',
              labels_collected = 1, claim_cap = 0, settled_at = now(), updated_at = now() WHERE batch_id = $1`,
      [batchId, JSON.stringify(consensus)],
    );
    expect(settled.rowCount).toBe(N);
    // the statistics autovacuum keeps (a table filled a moment ago has none: the planner then scans the whole
    // batch for each page, 80 ms a page here, instead of 2 ms along the index; docs/decisions/0255)
    await sys.db.pool.query("ANALYZE tasks");
  });

  it("the store reads a batch page by page with a keyset cursor, in task id order", async () => {
    let pages = 0;
    let last = "";
    let ordinal = 0;
    for await (const page of sys.store.exports.pages({ kind: "batch", id: batchId }, false, 700)) {
      pages++;
      expect(page.length).toBeLessThanOrEqual(700);
      for (const r of page) {
        expect(r.task_id > last).toBe(true);
        last = r.task_id;
        expect(r.ordinal).toBe(++ordinal);
      }
    }
    expect([pages, ordinal]).toEqual([Math.ceil(N / 700), N]);
  });

  it("a slow consumer never has more than a page buffered; the whole export is a valid COCO of every task", async () => {
    const stream = sys.store.exports.stream({ kind: "batch", id: batchId }, "coco", { pageRows: 500 });
    let total = 0;
    let chunks = 0;
    let maxChunk = 0;
    let maxBuffered = 0;
    let text = "";
    for await (const chunk of stream) {
      const s = (chunk as Buffer).toString("utf8");
      chunks++;
      total += s.length;
      maxChunk = Math.max(maxChunk, s.length);
      text += s;
      // a slow consumer for the first chunks: the stream reads ahead at most one chunk meanwhile
      if (chunks <= 5) await delay(50);
      maxBuffered = Math.max(maxBuffered, stream.readableLength);
    }
    const coco = parseCoco(text);
    expect([coco.images.length, coco.annotations.length]).toEqual([N, 2 * N]);
    expect(chunks).toBeGreaterThanOrEqual(2 * (N / 500));
    // figures: the whole export against the most ever held in the stream's buffer
    expect(total).toBeGreaterThan(3_000_000);
    expect(maxBuffered).toBeLessThanOrEqual(maxChunk);
    expect(maxChunk).toBeLessThan(total / 15);
  });

  it("over HTTP every format that fits streams all 10,000 tasks", async () => {
    const hf = await exported(key, "batches", batchId, "hf");
    expect(hf.split("\n")).toHaveLength(N + 1);
    const ls = parseLabelStudio(await exported(key, "batches", batchId, "label-studio"));
    expect(ls).toHaveLength(N);
    expect(ls[N - 1]?.id).toBe(N);
    const lines = (await exported(key, "batches", batchId, "jsonl")).split("\n");
    expect(lines).toHaveLength(N + 1);
  });
});

describe("the tokenizer of conll and hf", () => {
  it("cuts at span bounds inside a word, opens a span starting in white space at its first token", () => {
    expect(tagTokens("NewYork rocks", [{ start: 0, end: 3, label: "LOC" }])).toEqual([
      { token: "New", start: 0, end: 3, tag: "B-LOC" },
      { token: "York", start: 3, end: 7, tag: "O" },
      { token: "rocks", start: 8, end: 13, tag: "O" },
    ]);
    const tags = tagTokens("a  Bob Smith and Jo Lee", [
      { start: 1, end: 12, label: "PER" },
      { start: 16, end: 23, label: "PER" },
    ]).map((t) => t.tag);
    expect(tags).toEqual(["O", "B-PER", "I-PER", "O", "B-PER", "I-PER"]);
  });
});
