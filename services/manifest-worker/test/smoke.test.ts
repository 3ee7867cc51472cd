import http from "node:http";
import type { AddressInfo } from "node:net";
import { createLabeler, eventually, label, registerCustomer, type System, startSystem } from "../../../test/system";

let sys: System;
beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

it("ingests an http manifest, labels it, completes, and exports JSONL in manifest order", async () => {
  const lines = [
    JSON.stringify({ "source-ref": "s3://bucket/a.jpg", sku: "a" }),
    "",
    JSON.stringify({ data_url: "https://img.example/b.jpg", sku: "b" }),
  ];
  const server = http.createServer((_req, res) => res.end(`${lines.join("\n")}\n`));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const c = await registerCustomer(sys);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/manifest.jsonl`;
    const created = await sys.api("POST", "/v1/jobs", {
      token: c.key,
      body: { manifest_url: url, label_spec: { question: "q?", options: ["x", "y"] }, consensus_threshold: 1 },
    });
    expect(created.status).toBe(202);
    const jobId = String(created.body.job_id);
    const labeling = await eventually(async () => {
      const j = await sys.api("GET", `/v1/jobs/${jobId}`, { token: c.key });
      return j.body.status === "labeling" ? j.body : undefined;
    });
    expect(labeling).toMatchObject({ task_count: 2, lines_ingested: 3 });
    expect((await sys.api("GET", `/v1/jobs/${jobId}/export`, { token: c.key })).status).toBe(409);
    const tasks = await sys.db.prisma.task.findMany({ where: { jobId }, orderBy: { manifestLine: "asc" } });
    const l = await createLabeler(sys);
    for (const t of tasks) expect((await label(sys, l.key, t.id, "y")).status).toBe(201);
    await eventually(async () => {
      const j = await sys.api("GET", `/v1/jobs/${jobId}`, { token: c.key });
      return j.body.status === "completed" ? j.body : undefined;
    }, 20000);
    const res = await fetch(`${sys.baseUrl}/v1/jobs/${jobId}/export`, { headers: { authorization: `Bearer ${c.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/x-ndjson");
    const out = (await res.text())
      .trim()
      .split("\n")
      .map((x) => JSON.parse(x));
    expect(out.map((o) => o.source.sku)).toEqual(["a", "b"]);
    expect(out.map((o) => o.data_url)).toEqual(["s3://bucket/a.jpg", "https://img.example/b.jpg"]);
    expect(out.every((o) => o.consensus_label === "y" && /^0x[0-9a-f]{64}$/.test(o.ledger_txid))).toBe(true);
  } finally {
    server.close();
  }
});
