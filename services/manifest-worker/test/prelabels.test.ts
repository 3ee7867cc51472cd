/**
 * Pre-labels on manifest lines (docs/contract.md §prelabels): a line's `prelabel` becomes the vote of the
 * customer's labeler `model:<model>` on its task, and the job's `label_spec.show_prelabel` puts it in claims;
 * a line whose pre-label does not fit the job's type fails the job naming the line, with no task left.
 * Runs against this run's real Postgres and Redis, the manifest served by a local http server.
 */
import { createLabeler, registerCustomer, type System, startSystem } from "../../../test/system";
import { createJob, getJob, jobTasks, jsonl, type ManifestServer, SPEC, serveManifest, waitForStatus } from "./helpers";

let sys: System;
const servers: ManifestServer[] = [];
beforeAll(async () => {
  sys = await startSystem({ manifestChunkSize: 2 });
});
afterAll(async () => {
  for (const s of servers) await s.close();
  await sys.close();
});

async function served(lines: string[]): Promise<ManifestServer> {
  const server = await serveManifest(jsonl(lines));
  servers.push(server);
  return server;
}

test("a line's pre-label is its model labeler's label; claims carry it with show_prelabel", async () => {
  const c = await registerCustomer(sys);
  const lines = [
    JSON.stringify({ data_url: "https://img.example/1.jpg", prelabel: { answer: { label: "cat" }, model: "detector-3", score: 0.7 } }),
    JSON.stringify({ data_url: "https://img.example/2.jpg" }),
    JSON.stringify({ data_url: "https://img.example/3.jpg", prelabel: { answer: { label: "dog" }, model: "detector-3" } }),
  ];
  const server = await served(lines);
  const jobId = await createJob(sys, c.key, { manifest_url: server.url(), label_spec: { ...SPEC, show_prelabel: true } });
  await waitForStatus(sys, c.key, jobId, "labeling");
  const tasks = await jobTasks(sys, jobId);
  expect(tasks).toHaveLength(3);
  const rows = await sys.db.prisma.$queryRaw<{ manifest_line: number; value: string; name: string }[]>`
    SELECT t.manifest_line, l.value, lr.name FROM labels l JOIN tasks t ON t.id = l.task_id JOIN labelers lr ON lr.id = l.labeler_id
    WHERE t.job_id = ${jobId} ORDER BY t.manifest_line`;
  expect(rows).toEqual([
    { manifest_line: 1, value: "cat", name: "model:detector-3" },
    { manifest_line: 3, value: "dog", name: "model:detector-3" },
  ]);
  // one labeler for the model, whatever the number of lines
  expect(await sys.db.prisma.labeler.count({ where: { customerId: c.id } })).toBe(1);
  const first = tasks.find((t) => t.manifestLine === 1);
  const person = await createLabeler(sys);
  const claim = await sys.api<Record<string, unknown>>("POST", "/v1/labeling/claims", { token: person.key, body: { task_id: first?.id } });
  expect(claim.status).toBe(201);
  expect(claim.body.prelabel).toEqual({ answer: { label: "cat" }, model: "detector-3", score: 0.7 });
  expect((await getJob(sys, c.key, jobId)).task_count).toBe(3);
});

test("a line whose pre-label does not fit fails the job naming the line, no task left", async () => {
  const c = await registerCustomer(sys);
  const lines = [
    JSON.stringify({ data_url: "https://img.example/1.jpg", prelabel: { answer: { label: "cat" }, model: "m" } }),
    JSON.stringify({ data_url: "https://img.example/2.jpg", prelabel: { answer: { label: "cat" }, model: "m" } }),
    JSON.stringify({ data_url: "https://img.example/3.jpg", prelabel: { answer: { labels: ["cat"] }, model: "m" } }),
  ];
  const server = await served(lines);
  const jobId = await createJob(sys, c.key, { manifest_url: server.url(), label_spec: SPEC });
  const failed = await waitForStatus(sys, c.key, jobId, "failed");
  expect(failed.error).toMatch(/line 3: "prelabel.answer"/);
  expect(await sys.db.prisma.task.count({ where: { jobId } })).toBe(0);
  expect(await sys.db.prisma.label.count({ where: { customerId: c.id } })).toBe(0);
});
