/**
 * The on-call queue dashboard (bull-board at /admin/queues): locked without the admin token (bearer or
 * Basic password), lists every catalog queue through bull-board's API, and retries a failed job.
 */
import { catalog, type HandlersFor, type RunningWorkers, startWorkers } from "@labelgate/queue";
import { ADMIN_TOKEN, eventually, type System, startSystem } from "./system";

let sys: System;
let workers: RunningWorkers | undefined;
beforeAll(async () => {
  sys = await startSystem({ workers: false });
});
afterAll(async () => {
  await workers?.close();
  await sys?.close();
});

const basic = (password: string) => `Basic ${Buffer.from(`oncall:${password}`).toString("base64")}`;

interface QueuesBody {
  queues: { name: string; counts: Record<string, number>; jobs: { id: string; failedReason?: string }[] }[];
}

describe("/admin/queues", () => {
  it("answers 401 without the admin token, with a wrong one, and challenges browsers with Basic", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong-token-0123456789" },
      { authorization: basic("wrong-token-0123456789") },
    ];
    for (const headers of attempts) {
      const res = await sys.api("GET", "/admin/queues/api/queues", { headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: "invalid API key" });
      expect(res.headers.get("www-authenticate")).toMatch(/^Basic realm="labelgate queues"/);
    }
    expect((await sys.api("GET", "/admin/queues", {})).status).toBe(401);
  });

  it("lists every queue of the catalog through bull-board's API (bearer token or Basic password)", async () => {
    const expected = Object.values(catalog)
      .map((spec) => spec.name)
      .sort();
    for (const headers of [{ authorization: `Bearer ${ADMIN_TOKEN}` }, { authorization: basic(ADMIN_TOKEN) }]) {
      const res = await sys.api<QueuesBody>("GET", "/admin/queues/api/queues", { headers });
      expect(res.status).toBe(200);
      expect(res.body.queues.map((q) => q.name).sort()).toEqual(expected);
    }
    // the page itself (the UI a browser opens after the Basic prompt)
    const page = await fetch(`${sys.baseUrl}/admin/queues`, { headers: { authorization: basic(ADMIN_TOKEN) } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    await page.text();
  });

  it("retries a failed job through bull-board's retry route", async () => {
    let runs = 0;
    const failFirst = async () => {
      runs++;
      if (runs === 1) throw new Error("export target unavailable (test)");
    };
    const handlers: HandlersFor<"manifest-worker"> = {
      manifestExport: failFirst,
      manifestIngest: async () => undefined,
      itemFetch: async () => undefined,
    };
    workers = startWorkers(sys.backend, handlers, { concurrency: { manifestExport: 1 } });
    const payload = { manifestJobId: "job_dashboardretry" };
    const jobId = catalog.manifestExport.jobId(payload);
    await sys.queue.enqueue("manifestExport", payload, { attempts: 1 });
    const bull = await sys.queue.bullmqQueue("manifestExport");
    const stateOf = async () => (await bull.getJob(jobId))?.getState();
    await eventually(async () => ((await stateOf()) === "failed" ? true : undefined), 15000, "the job to fail");

    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const listed = await sys.api<QueuesBody>("GET", `/admin/queues/api/queues?activeQueue=${catalog.manifestExport.name}&status=failed`, {
      headers: auth,
    });
    expect(listed.status).toBe(200);
    const queue = listed.body.queues.find((q) => q.name === catalog.manifestExport.name);
    expect(queue?.counts.failed).toBe(1);
    expect(queue?.jobs.map((j) => [j.id, j.failedReason])).toEqual([[jobId, "export target unavailable (test)"]]);

    const retry = await sys.api("PUT", `/admin/queues/api/queues/${catalog.manifestExport.name}/${jobId}/retry`, { headers: auth });
    expect(retry.status).toBe(204);
    await eventually(async () => ((await stateOf()) === "completed" ? true : undefined), 15000, "the retried job to complete");
    expect(runs).toBe(2);
  });
});
