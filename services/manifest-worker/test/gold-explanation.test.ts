/**
 * A manifest line's `gold_explanation` (docs/contract.md §qualification, docs/decisions/0317): a gold line's
 * explanation is stored on its task as a task body's is; a bad one (not a string, empty, over 2,000
 * characters, or on a line that is not gold) fails the job naming the line, with no task left.
 * Runs against this run's real Postgres and Redis, the manifest served by a local http server.
 */
import { registerCustomer, type System, startSystem } from "../../../test/system";
import { createJob, jsonl, type ManifestServer, SPEC, serveManifest, waitForStatus } from "./helpers";

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

test("a gold line's explanation is stored on its task; other lines have none", async () => {
  const c = await registerCustomer(sys);
  const lines = [
    JSON.stringify({ data_url: "https://img.example/1.jpg", gold_label: "cat", gold_explanation: "Pointed ears and whiskers: a cat." }),
    JSON.stringify({ data_url: "https://img.example/2.jpg" }),
    JSON.stringify({ data_url: "https://img.example/3.jpg", gold_label: "dog" }),
    JSON.stringify({ data_url: "https://img.example/4.jpg", gold_label: "dog", gold_explanation: null }),
  ];
  const server = await served(lines);
  const jobId = await createJob(sys, c.key, { manifest_url: server.url(), label_spec: SPEC });
  await waitForStatus(sys, c.key, jobId, "labeling");
  const rows = await sys.db.prisma.$queryRaw<{ manifest_line: number; gold_label: string | null; gold_explanation: string | null }[]>`
    SELECT manifest_line, gold_label, gold_explanation FROM tasks WHERE job_id = ${jobId} ORDER BY manifest_line`;
  expect(rows).toEqual([
    { manifest_line: 1, gold_label: "cat", gold_explanation: "Pointed ears and whiskers: a cat." },
    { manifest_line: 2, gold_label: null, gold_explanation: null },
    { manifest_line: 3, gold_label: "dog", gold_explanation: null },
    { manifest_line: 4, gold_label: "dog", gold_explanation: null },
  ]);
});

test.each([
  ["not a string", { gold_label: "cat", gold_explanation: 42 }, /line 2: "gold_explanation" must be a non-empty string/],
  ["empty", { gold_label: "cat", gold_explanation: "" }, /line 2: "gold_explanation" must be a non-empty string/],
  ["over the limit", { gold_label: "cat", gold_explanation: "x".repeat(2001) }, /line 2: "gold_explanation" longer than 2000 characters/],
  ["on a line that is not gold", { gold_explanation: "why" }, /line 2: only a gold line .* has a "gold_explanation"/],
])("an explanation %s fails the job naming its line, no task left", async (_name, extra, error) => {
  const c = await registerCustomer(sys);
  const lines = [
    JSON.stringify({ data_url: "https://img.example/1.jpg", gold_label: "dog", gold_explanation: "Floppy ears." }),
    JSON.stringify({ data_url: "https://img.example/2.jpg", ...extra }),
    JSON.stringify({ data_url: "https://img.example/3.jpg" }),
  ];
  const server = await served(lines);
  const jobId = await createJob(sys, c.key, { manifest_url: server.url(), label_spec: SPEC });
  const failed = await waitForStatus(sys, c.key, jobId, "failed");
  expect(failed.error).toMatch(error);
  expect(await sys.db.prisma.task.count({ where: { jobId } })).toBe(0);
});
