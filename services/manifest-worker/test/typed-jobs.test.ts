/**
 * Manifest jobs of the reserved task types (contract §task-types) and the item fetch of text_span tasks created without
 * their text (docs/decisions/0194), against this run's Postgres and Redis with every worker, manifests and
 * texts served by a local http server (ALLOW_PRIVATE_URLS=true): a job of each type ingests tasks of its type
 * (label_spec, options, label space, claim cap), claimable with its label_spec, labeled to settlement and
 * exported with `consensus` (and COCO `annotations` for boxes); a gold line gives `gold_answer`; a text_span
 * line without `data_text` gets the body of its data_url and becomes claimable only then; a text that cannot be
 * fetched (404, too long, not UTF-8, transient failures on the last attempt) cancels its task with the reason,
 * shown in the task and the export; the reconciliation finds tasks left waiting for their item.
 */
import type http from "node:http";
import { storageOptions } from "@labelgate/storage";
import { spaceIdOf } from "@labelgate/store";
import {
  createLabelers,
  eventually,
  type Labeler,
  registerCustomer,
  type System,
  startSystem,
  TEST_SECRET_BOX,
} from "../../../test/system";
import { fetchItem } from "../src/items";
import {
  createJob,
  EXPORT_KEYS,
  fetchExport,
  gate,
  getJob,
  jobTasks,
  jsonl,
  type ManifestServer,
  serveManifest,
  waitForStatus,
} from "./helpers";

let sys: System;
let server: ManifestServer;
let labelers: Labeler[];
/** path → body (string) or status code (number) of the local server; `/held/...` waits for `held` */
const routes = new Map<string, string | number | Buffer>();
let held = gate();

beforeAll(async () => {
  sys = await startSystem();
  labelers = await createLabelers(sys, 2, "typed-jobs");
  server = await serveManifest((req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? "").split("?")[0] as string;
    const send = () => {
      const route = routes.get(path);
      if (route === undefined) {
        res.writeHead(404).end("not found");
      } else if (typeof route === "number") {
        res.writeHead(route).end("unavailable");
      } else {
        res.writeHead(200, { "content-type": path.endsWith(".jsonl") ? "application/x-ndjson" : "text/plain; charset=utf-8" });
        res.end(route);
      }
    };
    if (path.startsWith("/held/")) void held.promise.then(send);
    else send();
  });
});
afterAll(async () => {
  held.open();
  await server.close();
  await sys.close();
});

type Body = Record<string, unknown>;

/** Claims `taskId` for `labeler`; the claim body (201) or undefined (204: not claimable). */
async function claim(labeler: Labeler, taskId: string): Promise<(Body & { claim_id: string }) | undefined> {
  const res = await sys.api<Body & { claim_id: string }>("POST", "/v1/labeling/claims", { token: labeler.key, body: { task_id: taskId } });
  if (res.status === 204) return undefined;
  if (res.status !== 201) throw new Error(`claim failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Claims `taskId` and answers it with `body`: the claim body. */
async function answer(labeler: Labeler, taskId: string, body: unknown): Promise<Body> {
  const c = await claim(labeler, taskId);
  if (!c) throw new Error(`task ${taskId} is not claimable`);
  const res = await sys.api("POST", `/v1/labeling/claims/${c.claim_id}/label`, { token: labeler.key, body });
  if (res.status !== 201) throw new Error(`label failed: ${res.status} ${JSON.stringify(res.body)}`);
  return c;
}

async function task(key: string, taskId: string): Promise<Body> {
  const res = await sys.api("GET", `/v1/tasks/${taskId}`, { token: key });
  expect(res.status).toBe(200);
  return res.body;
}

/** The export of a completed job, parsed line by line. */
async function exportLines(key: string, jobId: string): Promise<Body[]> {
  const exp = await fetchExport(sys, key, jobId);
  expect(exp.status).toBe(200);
  expect(exp.text.endsWith("\n")).toBe(true);
  return exp.text
    .slice(0, -1)
    .split("\n")
    .map((l) => JSON.parse(l) as Body);
}

/** Serves `lines` as a manifest at a fresh path and creates a job of it; the job id. */
async function typedJob(key: string, name: string, lines: string[], body: Body): Promise<string> {
  routes.set(`/${name}.jsonl`, jsonl(lines));
  return createJob(sys, key, { manifest_url: server.url(`/${name}.jsonl`), consensus_threshold: 2, ...body });
}

describe("a manifest job of each reserved type", () => {
  it("multi_label_classification: tasks of the type, a gold line, settled and exported with consensus", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Which apply?", options: ["red", "round", "ripe"] };
    const lines = [
      JSON.stringify({ data_url: "https://img.example/ml/1.jpg", sku: 1 }),
      JSON.stringify({ "source-ref": "s3://bucket/ml/2.jpg" }),
      JSON.stringify({ data_url: "https://img.example/ml/gold.jpg", gold_answer: { labels: ["round", "red"] } }),
    ];
    const jobId = await typedJob(c.key, "ml", lines, { type: "multi_label_classification", label_spec: spec });
    const job = await waitForStatus(sys, c.key, jobId, "labeling");
    expect(job).toMatchObject({ task_count: 3, type: "multi_label_classification", label_spec: spec });
    const rows = await sys.db.prisma.task.findMany({ where: { jobId }, orderBy: { manifestLine: "asc" } });
    const spaceId = spaceIdOf(c.id, "multi_label_classification", spec);
    // the type's claim cap of a new task: threshold 2 of max_labels 5, so 2 labelers at once
    const cap = 2;
    for (const r of rows.slice(0, 2)) {
      expect(r).toMatchObject({ taskType: "multi_label_classification", labelSpec: spec, options: spec.options, labelSpaceId: spaceId });
      expect(r).toMatchObject({ claimCap: cap, itemPending: false, goldLabel: null });
    }
    // the gold line's answer stored canonical (options in the spec's order)
    expect(rows[2]?.goldLabel).toBe('{"labels":["red","round"]}');
    expect((await getJob(sys, c.key, jobId)).gold_tasks).toBe(1);
    const space = await sys.db.pool.query("SELECT task_type, label_spec FROM label_spaces WHERE id = $1", [spaceId]);
    expect(space.rows[0]).toEqual({ task_type: "multi_label_classification", label_spec: spec });

    const [first, second] = rows.map((r) => ({ id: r.id })) as [{ id: string }, { id: string }];
    const claimed = await answer(labelers[0] as Labeler, first.id, { labels: ["red", "round"] });
    expect(claimed).toMatchObject({ task_type: "multi_label_classification", label_spec: spec });
    await answer(labelers[1] as Labeler, first.id, { labels: ["round", "red"] });
    for (const l of labelers) await answer(l, second.id, { labels: [] });
    await waitForStatus(sys, c.key, jobId, "completed");

    const out = await exportLines(c.key, jobId);
    expect(out).toHaveLength(2);
    expect(Object.keys(out[0] as Body).sort()).toEqual([...EXPORT_KEYS, "consensus"].sort());
    // the fields in the order of the schema: consensus right after confidence
    expect(Object.keys(out[0] as Body)).toEqual([
      "task_id",
      "data_url",
      "consensus_label",
      "confidence",
      "consensus",
      "ledger_txid",
      "settled_at",
      "source",
    ]);
    expect(out[0]).toMatchObject({
      task_id: first.id,
      consensus_label: '{"labels":["red","round"]}',
      consensus: { labels: ["red", "round"] },
      source: JSON.parse(lines[0] as string),
    });
    expect(Object.keys(((out[0] as Body).consensus as { confidence: Body }).confidence).sort()).toEqual(["red", "ripe", "round"]);
    expect(out[1]).toMatchObject({ task_id: second.id, consensus_label: '{"labels":[]}', consensus: { labels: [] } });
    expect((await task(c.key, first.id)).consensus).toEqual(out[0]?.consensus);
  });

  it("bounding_box: settled and exported with the consensus boxes as COCO detection results", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Box every car and person", classes: ["person", "car"] };
    const lines = [
      JSON.stringify({ data_url: "https://img.example/bb/1.jpg" }),
      "",
      JSON.stringify({ data_url: "https://img.example/bb/2.jpg" }),
    ];
    const jobId = await typedJob(c.key, "bb", lines, { type: "bounding_box", label_spec: spec });
    await waitForStatus(sys, c.key, jobId, "labeling");
    const [one, two] = (await jobTasks(sys, jobId)).map((t) => ({ id: t.id })) as [{ id: string }, { id: string }];
    const c0 = await answer(labelers[0] as Labeler, one.id, {
      boxes: [
        { label: "car", x: 100, y: 50, w: 200, h: 100 },
        { label: "person", x: 10, y: 10, w: 40, h: 120 },
      ],
    });
    expect(c0).toMatchObject({ task_type: "bounding_box", label_spec: spec });
    await answer(labelers[1] as Labeler, one.id, {
      boxes: [
        { label: "person", x: 11, y: 12, w: 39, h: 118 },
        { label: "car", x: 104, y: 52, w: 196, h: 98 },
      ],
    });
    for (const l of labelers) await answer(l, two.id, { boxes: [] });
    await waitForStatus(sys, c.key, jobId, "completed");

    const out = await exportLines(c.key, jobId);
    expect(out).toHaveLength(2);
    expect(Object.keys(out[0] as Body)).toEqual([
      "task_id",
      "data_url",
      "consensus_label",
      "confidence",
      "consensus",
      "annotations",
      "ledger_txid",
      "settled_at",
      "source",
    ]);
    const boxes = (
      (out[0] as Body).consensus as { boxes: { label: string; x: number; y: number; w: number; h: number; confidence: number }[] }
    ).boxes;
    expect(boxes.map((b) => b.label).sort()).toEqual(["car", "person"]);
    const annotations = out[0]?.annotations as { bbox: number[]; category_id: number; category: string; score: number }[];
    expect(annotations).toEqual(
      boxes.map((b) => ({
        bbox: [b.x, b.y, b.w, b.h],
        category_id: spec.classes.indexOf(b.label) + 1,
        category: b.label,
        score: b.confidence,
      })),
    );
    expect(annotations.find((a) => a.category === "person")?.category_id).toBe(1);
    expect(annotations.find((a) => a.category === "car")?.category_id).toBe(2);
    for (const a of annotations) {
      expect(a.score).toBeGreaterThan(0);
      expect(a.score).toBeLessThanOrEqual(1);
    }
    expect(out[1]).toMatchObject({ task_id: two.id, consensus: { boxes: [] }, annotations: [] });
  });

  it("text_span: a line's data_text, a text fetched from its data_url, and a text that cannot be fetched", async () => {
    const c = await registerCustomer(sys);
    const spec = { question: "Mark the drugs and the people", entity_types: ["DRUG", "PERSON"] };
    const fetched = "😀 Aspirin helped Maria sleep.";
    routes.set("/texts/1.txt", fetched);
    const lines = [
      JSON.stringify({ data_url: "https://texts.example/0.txt", data_text: "Maria took Aspirin." }),
      JSON.stringify({ data_url: server.url("/texts/1.txt") }),
      JSON.stringify({ "source-ref": server.url("/texts/missing.txt") }),
    ];
    const jobId = await typedJob(c.key, "spans", lines, { type: "text_span", label_spec: spec });
    await waitForStatus(sys, c.key, jobId, "labeling");
    const [given, fetchedTask, missing] = (await jobTasks(sys, jobId)).map((t) => ({ id: t.id })) as [
      { id: string },
      { id: string },
      { id: string },
    ];
    // the text arrives, the task becomes claimable with it
    const row = await eventually(async () => {
      const t = await sys.db.prisma.task.findUniqueOrThrow({ where: { id: fetchedTask.id } });
      return t.itemPending ? undefined : t;
    });
    expect(row).toMatchObject({ dataText: fetched, labelSpaceId: spaceIdOf(c.id, "text_span", spec), status: "pending" });
    // the missing text cancels its task with the reason
    const canceled = await eventually(async () => {
      const t = await task(c.key, missing.id);
      return t.status === "canceled" ? t : undefined;
    });
    expect(canceled.item_error).toMatch(
      /^the text at data_url could not be read: object http:\/\/127\.0\.0\.1:\d+\/texts\/missing\.txt not found$/,
    );
    expect(canceled).not.toHaveProperty("data_text");

    const spans = [
      { start: 2, end: 9, label: "DRUG" },
      { start: 17, end: 22, label: "PERSON" },
    ];
    const c0 = await answer(labelers[0] as Labeler, fetchedTask.id, { spans });
    expect(c0).toMatchObject({ task_type: "text_span", label_spec: spec, data_text: fetched });
    await answer(labelers[1] as Labeler, fetchedTask.id, { spans });
    const g0 = await answer(labelers[0] as Labeler, given.id, { spans: [{ start: 0, end: 5, label: "PERSON" }] });
    expect(g0.data_text).toBe("Maria took Aspirin.");
    await answer(labelers[1] as Labeler, given.id, { spans: [{ start: 0, end: 5, label: "PERSON" }] });
    await waitForStatus(sys, c.key, jobId, "completed");

    const out = await exportLines(c.key, jobId);
    expect(out).toHaveLength(3);
    expect(out[0]).toMatchObject({ task_id: given.id, consensus: { spans: [{ start: 0, end: 5, label: "PERSON" }] } });
    expect(((out[1] as Body).consensus as { spans: Body[] }).spans.map(({ start, end, label }) => ({ start, end, label }))).toEqual(spans);
    expect(out[2]).toMatchObject({
      task_id: missing.id,
      consensus_label: null,
      confidence: null,
      consensus: null,
      item_error: canceled.item_error,
      ledger_txid: null,
    });
    expect(Object.keys(out[1] as Body)).not.toContain("item_error");
  });

  it("refuses a text_span line whose data_text is too long, and a typed line with a bad gold answer, like any bad line", async () => {
    const c = await registerCustomer(sys);
    const long = JSON.stringify({ data_url: "https://texts.example/long.txt", data_text: "a".repeat(100_001) });
    const spans = await typedJob(c.key, "long", [JSON.stringify({ data_url: "https://texts.example/ok.txt", data_text: "ok" }), long], {
      type: "text_span",
      label_spec: { question: "Mark", entity_types: ["X"] },
    });
    const failed = await waitForStatus(sys, c.key, spans, "failed");
    expect(failed.error).toBe('line 2: "data_text" longer than 100000 code points');
    const boxes = await typedJob(
      c.key,
      "badgold",
      [JSON.stringify({ data_url: "https://img.example/1.jpg", gold_answer: { boxes: [{ label: "bus", x: 0, y: 0, w: 1, h: 1 }] } })],
      { type: "bounding_box", label_spec: { question: "Box", classes: ["car"] } },
    );
    expect((await waitForStatus(sys, c.key, boxes, "failed")).error).toBe('line 1: "gold_answer" boxes.0.label: unknown class "bus"');
  });
});

describe("the item fetch of a text_span task created without data_text", () => {
  const spec = { question: "Mark the people", entity_types: ["PERSON"] };

  it("POST /v1/tasks: not claimable until its text is fetched, then claimable with it; the reconciliation finds it meanwhile", async () => {
    const c = await registerCustomer(sys);
    held = gate();
    routes.set("/held/a.txt", "Ada met Grace.");
    const res = await sys.api<{ task_id: string }>("POST", "/v1/tasks", {
      token: c.key,
      body: { type: "text_span", data_url: server.url("/held/a.txt"), label_spec: spec, consensus_threshold: 1 },
    });
    expect(res.status).toBe(202);
    const taskId = res.body.task_id;
    expect(await sys.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } })).toMatchObject({ itemPending: true, dataText: null });
    expect(await claim(labelers[0] as Labeler, taskId)).toBeUndefined();
    expect(await task(c.key, taskId)).not.toHaveProperty("data_text");
    expect((await sys.store.reconcile.lostWork(0, 3_600_000, 1000)).itemFetch.map((p) => p.taskId)).toContain(taskId);
    held.open();
    await eventually(async () => ((await task(c.key, taskId)).data_text === "Ada met Grace." ? true : undefined));
    expect((await sys.store.reconcile.lostWork(0, 3_600_000, 1000)).itemFetch.map((p) => p.taskId)).not.toContain(taskId);
    const claimed = await answer(labelers[0] as Labeler, taskId, { spans: [{ start: 0, end: 3, label: "PERSON" }] });
    expect(claimed.data_text).toBe("Ada met Grace.");
    expect(await eventually(async () => ((await task(c.key, taskId)).status === "settled" ? true : undefined))).toBe(true);
  });

  it("a batch: each task without data_text fetched; one too long and one not UTF-8 canceled with the reason, quota returned", async () => {
    const c = await registerCustomer(sys);
    routes.set("/texts/b1.txt", "Linus wrote it.");
    routes.set("/texts/long.txt", "x".repeat(400_001));
    routes.set("/texts/latin1.txt", Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    const quota = async () =>
      (await sys.api<{ label_quota_used: number }>("GET", "/v1/customers/me", { token: c.key })).body.label_quota_used;
    const res = await sys.api<{ task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: c.key,
      body: {
        tasks: [
          { type: "text_span", data_url: server.url("/texts/b1.txt"), label_spec: spec, consensus_threshold: 1 },
          { type: "text_span", data_url: server.url("/texts/long.txt"), label_spec: spec, consensus_threshold: 1 },
          { type: "text_span", data_url: server.url("/texts/latin1.txt"), label_spec: spec, consensus_threshold: 1 },
          { type: "text_span", data_url: "https://texts.example/given.txt", data_text: "given", label_spec: spec, consensus_threshold: 1 },
        ],
      },
    });
    expect(res.status).toBe(202);
    const [ok, long, latin1, given] = res.body.task_ids as [string, string, string, string];
    expect((await task(c.key, given)).data_text).toBe("given");
    await eventually(async () => ((await task(c.key, ok)).data_text === "Linus wrote it." ? true : undefined));
    const longTask = await eventually(async () => {
      const t = await task(c.key, long);
      return t.status === "canceled" ? t : undefined;
    });
    expect(longTask.item_error).toBe(
      "the text at data_url could not be read: longer than 400000 bytes (a text is at most 100000 code points)",
    );
    const latinTask = await eventually(async () => {
      const t = await task(c.key, latin1);
      return t.status === "canceled" ? t : undefined;
    });
    expect(latinTask.item_error).toBe("the text at data_url could not be read: not valid UTF-8");
    // 4 reserved (one label each), the 2 canceled tasks' returned
    expect(await quota()).toBe(2);
  });

  it("POST /v1/tasks refuses an s3:// or gs:// data_url without data_text: no credentials read it", async () => {
    const c = await registerCustomer(sys);
    for (const data_url of ["s3://bucket/texts/1.txt", "gs://bucket/texts/1.txt"]) {
      const res = await sys.api<{ details: { path: string; message: string }[] }>("POST", "/v1/tasks", {
        token: c.key,
        body: { type: "text_span", data_url, label_spec: spec },
      });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([
        { path: "data_text", message: "required when data_url is s3:// or gs:// (no credentials read it)" },
      ]);
    }
  });

  it("a fetch whose enqueue was lost is sent by the reconciliation, and the text arrives", async () => {
    const c = await registerCustomer(sys);
    routes.set("/texts/lost.txt", "Lost and found.");
    // the store answers the fetch as a follow-up; not dispatching it is a lost enqueue
    const input = { type: "text_span" as const, data_url: server.url("/texts/lost.txt"), label_spec: spec };
    const policy = { consensus_threshold: 1, max_labels: 1, confidence_target: null, min_labels: null };
    const created = await sys.store.tasks.create(c.id, { input, policy }, undefined);
    expect(created.followUps).toEqual({ itemFetch: [{ taskId: created.task.id }] });
    expect((await sys.store.reconcile.lostWork(0, 3_600_000, 1000)).itemFetch.map((p) => p.taskId)).toContain(created.task.id);
    // the system's consensus worker runs the reconciliation as production schedules it (grace 1 s)
    await sys.queue.schedule("reconcile", 500, {});
    await eventually(async () => ((await task(c.key, created.task.id)).data_text === "Lost and found." ? true : undefined));
  });

  it("a transient failure is retried, and cancels the task on the last attempt; a second run changes nothing", async () => {
    const c = await registerCustomer(sys);
    routes.set("/texts/down.txt", 503);
    held = gate();
    // created while the fetch is held, so the worker's own job does not race the direct runs below
    const res = await sys.api<{ task_id: string }>("POST", "/v1/tasks", {
      token: c.key,
      body: { type: "text_span", data_url: server.url("/held/down.txt"), label_spec: spec, consensus_threshold: 1 },
    });
    const taskId = res.body.task_id;
    await sys.db.pool.query("UPDATE tasks SET data_url = $2 WHERE id = $1", [taskId, server.url("/texts/down.txt")]);
    const deps = {
      store: sys.store,
      queue: sys.queue,
      secretBox: TEST_SECRET_BOX,
      logger: sys.logger,
      storage: storageOptions({ allowPrivateUrls: true }),
    };
    await expect(fetchItem(deps, taskId, { attemptsMade: 0, maxAttempts: 5 })).rejects.toThrow(/answered 503/);
    expect((await task(c.key, taskId)).status).toBe("pending");
    expect(await fetchItem(deps, taskId, { attemptsMade: 4, maxAttempts: 5 })).toBe("canceled");
    const t = await task(c.key, taskId);
    expect(t).toMatchObject({ status: "canceled" });
    expect(t.item_error).toMatch(/^the text at data_url could not be read after 5 attempts: GET .* answered 503$/);
    // safe to run twice: a canceled task is left alone
    expect(await fetchItem(deps, taskId, { attemptsMade: 4, maxAttempts: 5 })).toBe("skipped");
    expect(await sys.store.items.storeText(taskId, "late")).toBe("skipped");
    held.open();
  });
});
