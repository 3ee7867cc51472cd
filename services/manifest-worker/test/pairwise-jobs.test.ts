/**
 * Manifest jobs of `pairwise_comparison` tasks (contract §task-types, §jobs; docs/decisions/0305, 0306), against this
 * run's Postgres and Redis with every worker, manifests served by a local http server: lines carry item b
 * (`data_url_b`, or `data_text` and `data_text_b`) and ingest into tasks whose claims carry both items; labels
 * settle them; `GET /v1/jobs/{id}/ranking` ranks the job's items as the labels imply; the export names both
 * items. Errors: bad pairwise lines fail the job with the line and field and leave no task; the ranking of a job of
 * another type is 400, of another customer's job 404, of a job comparing more than 2,000 items 400.
 */
import { createHash } from "node:crypto";
import { createLabelers, eventually, type Labeler, registerCustomer, type System, startSystem } from "../../../test/system";
import { createJob, fetchExport, jobTasks, jsonl, type ManifestServer, serveManifest, waitForStatus } from "./helpers";

let sys: System;
let server: ManifestServer;
let labelers: Labeler[];
const routes = new Map<string, string>();

beforeAll(async () => {
  sys = await startSystem();
  labelers = await createLabelers(sys, 2, "pairwise-jobs");
  server = await serveManifest((req, res) => {
    const body = routes.get((req.url ?? "").split("?")[0] as string);
    if (body === undefined) res.writeHead(404).end("not found");
    else res.writeHead(200, { "content-type": "application/x-ndjson" }).end(body);
  });
});
afterAll(async () => {
  await server.close();
  await sys.close();
});

type Body = Record<string, unknown>;
const SPEC = { question: "Which photo is older?" };
const img = (name: string) => `https://images.example/${name}.jpg`;
type RankingBody = {
  items: { item: string; score: number; rank: number; ci_low: number; ci_high: number; comparisons: number }[];
  labels: number;
  tie_parameter: number;
};

/** Serves `lines` at /<name>.jsonl and creates a pairwise job of them; the job id. */
async function pairwiseJob(key: string, name: string, lines: Body[], extra: Body = {}): Promise<string> {
  routes.set(`/${name}.jsonl`, jsonl(lines.map((l) => JSON.stringify(l))));
  return createJob(sys, key, {
    manifest_url: server.url(`/${name}.jsonl`),
    type: "pairwise_comparison",
    label_spec: SPEC,
    consensus_threshold: 2,
    max_labels: 3,
    ...extra,
  });
}

async function answer(i: number, taskId: string, winner: string): Promise<Body> {
  const token = (labelers[i] as Labeler).key;
  const c = await sys.api<Body & { claim_id: string }>("POST", "/v1/labeling/claims", { token, body: { task_id: taskId } });
  if (c.status !== 201) throw new Error(`claim failed: ${c.status} ${JSON.stringify(c.body)}`);
  const l = await sys.api<Body>("POST", `/v1/labeling/claims/${c.body.claim_id}/label`, { token, body: { winner } });
  if (l.status !== 201) throw new Error(`label failed: ${l.status} ${JSON.stringify(l.body)}`);
  return c.body;
}

it("ingests pairwise lines with item b, ranks the job's items as its labels imply, and exports both items", async () => {
  const customer = await registerCustomer(sys);
  // true order p1 > p2 > p3 > p4; every pair once, a and b alternating; one line compares two texts
  const names = ["p1", "p2", "p3", "p4"];
  const pairs: [string, string][] = [];
  for (let i = 0; i < names.length; i++)
    for (let j = i + 1; j < names.length; j++)
      pairs.push(pairs.length % 2 === 0 ? [names[i] as string, names[j] as string] : [names[j] as string, names[i] as string]);
  const lines: Body[] = pairs.map(([a, b]) => ({ data_url: img(a), data_url_b: img(b), note: `${a}-${b}` }));
  lines.push({ data_url: "https://prompts.example/7", data_text: "Paris.", data_text_b: "Lyon." });
  const jobId = await pairwiseJob(customer.key, "pairs", lines);
  await waitForStatus(sys, customer.key, jobId, "labeling");
  const tasks = await jobTasks(sys, jobId);
  expect(tasks).toHaveLength(7);

  // a claim carries both items of its line
  const first = await answer(0, tasks[0]?.id as string, "a");
  expect(first).toMatchObject({ task_type: "pairwise_comparison", data_url: img("p1"), data_url_b: img("p2") });
  const textTask = await sys.api<Body>("GET", `/v1/tasks/${tasks[6]?.id}`, { token: customer.key });
  expect(textTask.body).toMatchObject({ data_text: "Paris.", data_text_b: "Lyon.", data_url: "https://prompts.example/7" });

  for (const [k, [a, b]] of pairs.entries()) {
    const winner = names.indexOf(a) < names.indexOf(b) ? "a" : "b";
    if (k > 0) await answer(0, tasks[k]?.id as string, winner);
    await answer(1, tasks[k]?.id as string, winner);
  }
  await answer(0, tasks[6]?.id as string, "a");
  await answer(1, tasks[6]?.id as string, "a");

  const ranking = await sys.api<RankingBody>("GET", `/v1/jobs/${jobId}/ranking`, { token: customer.key });
  expect(ranking.status).toBe(200);
  expect(ranking.body.labels).toBe(14);
  const photos = ranking.body.items.filter((i) => i.item.startsWith("https://images.example/"));
  expect(photos.map((i) => i.item)).toEqual(names.map(img));
  for (const item of ranking.body.items) {
    expect(item.ci_low).toBeLessThan(item.score);
    expect(item.ci_high).toBeGreaterThan(item.score);
  }
  // the text items are named by their hash (docs/decisions/0287), the winner first
  const textId = (t: string) => `text:${createHash("sha256").update(t, "utf8").digest("hex").slice(0, 16)}`;
  const texts = ranking.body.items.filter((i) => i.item.startsWith("text:")).map((i) => i.item);
  expect(texts).toEqual([textId("Paris."), textId("Lyon.")]);

  // the export, once the job completes, names both items of each line
  await waitForStatus(sys, customer.key, jobId, "completed", 60_000);
  const exp = await fetchExport(sys, customer.key, jobId);
  expect(exp.status).toBe(200);
  const rows = exp.text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Body);
  expect(rows).toHaveLength(7);
  expect(rows[0]).toMatchObject({ data_url: img("p1"), consensus: { winner: "a" } });
  expect(JSON.stringify(rows[0])).toContain(img("p2"));
  expect(JSON.stringify(rows[6])).toContain("Lyon.");

  // another customer's job: 404, the spec's error body
  const other = await registerCustomer(sys);
  const foreign = await sys.api<Body>("GET", `/v1/jobs/${jobId}/ranking`, { token: other.key });
  expect(foreign.status).toBe(404);
  expect(foreign.body.error).toEqual(expect.any(String));
  expect((await sys.api("GET", "/v1/jobs/job_unknown000000000000000/ranking", { token: customer.key })).status).toBe(404);
});

it("fails a job on a bad pairwise line, naming the line and field, and stores no task", async () => {
  const customer = await registerCustomer(sys);
  const good = { data_url: img("g1"), data_url_b: img("g2") };
  const cases: [Body, string][] = [
    [{ data_url: img("x") }, '"data_url_b": required'],
    [{ data_url: img("x"), data_text_b: "only b" }, '"data_text": required with data_text_b'],
    [{ data_url: img("x"), data_text: "only a" }, '"data_text_b": required with data_text'],
    [{ data_url: img("x"), data_url_b: img("x") }, '"data_url_b": must differ'],
    [{ data_url: img("x"), data_url_b: "ftp://images.example/y.jpg" }, '"data_url_b":'],
    [{ data_url: img("x"), data_text: "", data_text_b: "b" }, '"data_text":'],
  ];
  for (const [k, [line, message]] of cases.entries()) {
    const jobId = await pairwiseJob(customer.key, `bad-${k}`, [good, line]);
    const failed = await waitForStatus(sys, customer.key, jobId, "failed");
    expect({ line, error: failed.error }).toEqual({ line, error: expect.stringContaining(`line 2: ${message}`) });
    expect(await jobTasks(sys, jobId)).toHaveLength(0);
  }
});

it("refuses the ranking of a job of another type (400) and of one comparing more than 2,000 items (400)", async () => {
  const customer = await registerCustomer(sys, 10_000);
  routes.set("/single.jsonl", jsonl([JSON.stringify({ data_url: img("s1") })]));
  const single = await createJob(sys, customer.key, {
    manifest_url: server.url("/single.jsonl"),
    label_spec: { question: "What is it?", options: ["cat", "dog"] },
  });
  const refused = await sys.api<{ error: string; details: { path: string; message: string }[] }>("GET", `/v1/jobs/${single}/ranking`, {
    token: customer.key,
  });
  expect(refused.status).toBe(400);
  expect(refused.body).toEqual({
    error: "validation failed",
    details: [{ path: "id", message: expect.stringContaining("a ranking ranks the items of pairwise_comparison tasks") }],
  });

  // 1,001 lines of distinct pairs, each pre-labeled by a model (a label at ingestion): 2,002 items
  const lines = Array.from({ length: 1001 }, (_, i) => ({
    data_url: img(`big-a${i}`),
    data_url_b: img(`big-b${i}`),
    prelabel: { answer: { winner: "a" }, model: "judge-v1" },
  }));
  const big = await pairwiseJob(customer.key, "big", lines);
  await waitForStatus(sys, customer.key, big, "labeling", 60_000);
  const tooLarge = await eventually(
    async () => {
      const res = await sys.api<{ error: string; details: { path: string; message: string }[] }>("GET", `/v1/jobs/${big}/ranking`, {
        token: customer.key,
      });
      return res.status === 400 ? res : undefined;
    },
    30_000,
    "the big job's ranking refused",
  );
  expect(tooLarge.body).toEqual({
    error: "validation failed",
    details: [{ path: "id", message: expect.stringContaining("the job compares 2002 items; a ranking takes at most 2000") }],
  });
});
