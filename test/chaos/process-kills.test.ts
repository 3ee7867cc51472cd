/**
 * Chaos, process kills: `kill -9` of each service during a load of real crowd labels, restarted after a
 * 5 s outage; every scenario ends with the invariant (test/chaos/invariant.ts).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ServiceName } from "../processes";
import { eventually } from "../system";
import { chaosFile, explainFailure } from "./harness";
import { checkInvariant, type InvariantCounts } from "./invariant";
import { customerWithWebhook, dogItems, faultDuring, type Item, Load } from "./load";

jest.setTimeout(150_000);

const OUTAGE_MS = 5000;
/** most seconds from the last label to the last task settled and delivered, after a kill (docs/reliability.md "Recovery time") */
const DRAIN_BOUND_S = 30;
const chaos = chaosFile<InvariantCounts & { outageMs?: number }>();

describe.each<[ServiceName, number]>([
  ["consensus-worker", 0],
  ["webhook-worker", 120],
  ["gateway", 240],
])("kill -9 of the %s during the load", (service, skip) => {
  it("loses nothing: every accepted task settles once, every event is delivered, no label is lost", async () => {
    const { cluster, healthy, results } = chaos;
    await explainFailure(cluster, async () => {
      const load = new Load(cluster.baseUrl);
      const { items, options } = dogItems(120, skip);
      const customer = await customerWithWebhook(load, healthy, 10_000);
      const run = load.run(customer, items, options);
      await faultDuring(load, run, 60, () => cluster.killAndRestart(service, OUTAGE_MS));
      const restart = cluster.restarts.at(-1);
      expect(restart?.service).toBe(service);
      expect(restart?.outageMs).toBeGreaterThanOrEqual(OUTAGE_MS);
      const counts = await checkInvariant({ databaseUrl: cluster.pg.databaseUrl, customer, record: load.record, healthy });
      results[service] = { ...counts, outageMs: restart?.outageMs };
      expect(counts.tasksSettled).toBe(120);
      // recovered with the runtime's defaults: the last task settled and delivered within 30 s of the last label
      expect(counts.drainSeconds).not.toBeNull();
      expect(counts.drainSeconds as number).toBeLessThanOrEqual(DRAIN_BOUND_S);
    });
  });
});

describe("kill -9 of the manifest-worker during a manifest job's ingestion", () => {
  let manifestServer: Server;
  let release: () => void = () => undefined;
  let requests = 0;
  const { items, options } = dogItems(100, 400);
  const lines = items.map((it) =>
    JSON.stringify({ "source-ref": `https://data.example/dog/${encodeURIComponent(it.item)}?run=manifest`, item: it.item }),
  );

  beforeAll(async () => {
    // The first request gets half of the manifest, then the stream stays open until released (after the
    // kill); later requests get all of it at once.
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    manifestServer = createServer((_req, res) => {
      requests++;
      res.setHeader("content-type", "application/x-ndjson");
      if (requests > 1) {
        res.end(`${lines.join("\n")}\n`);
        return;
      }
      res.write(`${lines.slice(0, 50).join("\n")}\n`);
      void gate.then(() => {
        if (!res.destroyed) res.end(`${lines.slice(50).join("\n")}\n`);
      });
    });
    await new Promise<void>((resolve) => manifestServer.listen(0, "127.0.0.1", () => resolve()));
  });

  afterAll(async () => {
    release();
    manifestServer.closeAllConnections();
    await new Promise<void>((resolve) => manifestServer.close(() => resolve()));
  });

  it("resumes the ingestion after the restart; the job's tasks settle once, events delivered", async () => {
    const { cluster, healthy, results } = chaos;
    await explainFailure(cluster, async () => {
      const load = new Load(cluster.baseUrl);
      const customer = await customerWithWebhook(load, healthy, 10_000);
      const port = (manifestServer.address() as AddressInfo).port;
      const job = await load.call("job", () =>
        customer.client.jobs.create({
          manifest_url: `http://127.0.0.1:${port}/manifest.jsonl`,
          label_spec: { question: "Which dog breed is this?", options },
          consensus_threshold: 3,
          max_labels: 7,
        }),
      );
      // the worker is reading the manifest (the first half is sent, the rest held back)
      await eventually(
        async () => ((await customer.client.jobs.get(job.job_id)).status === "ingesting" && requests === 1 ? true : undefined),
        20_000,
        "ingestion to start",
      );
      const kill = cluster.killAndRestart("manifest-worker", OUTAGE_MS);
      await cluster.procs["manifest-worker"].exited;
      release();
      await kill;
      const restart = cluster.restarts.at(-1);
      expect(restart?.service).toBe("manifest-worker");
      const ingested = await eventually(
        async () => {
          const j = await customer.client.jobs.get(job.job_id);
          if (j.status === "failed") throw new Error(`job failed: ${j.error}`);
          return j.status === "labeling" ? j : undefined;
        },
        60_000,
        "the job to be ingested after the restart",
      );
      expect(ingested.task_count).toBe(100);
      expect(requests).toBeGreaterThanOrEqual(2);
      // label the job's tasks with the crowd's answers (found through the dashboard's task list)
      const byUrl = new Map(items.map((it) => [`https://data.example/dog/${encodeURIComponent(it.item)}?run=manifest`, it]));
      const open: { taskId: string; item: Item }[] = [];
      for (let page = 1; ; page++) {
        const listed = await customer.client.dashboard.tasks({ page, per_page: 100 });
        for (const t of listed.items) {
          const it = byUrl.get(t.data_url);
          if (it) open.push({ taskId: t.task_id, item: it });
        }
        if (page * 100 >= listed.total) break;
      }
      expect(open).toHaveLength(100);
      await load.ensureLabelers(items);
      const queue = [...open];
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let next = queue.shift(); next; next = queue.shift()) await load.labelTask(customer, next.taskId, next.item);
        }),
      );
      const counts = await checkInvariant({
        databaseUrl: cluster.pg.databaseUrl,
        customer,
        record: load.record,
        healthy,
        jobs: [{ jobId: job.job_id, lines: 100 }],
      });
      results["manifest-worker"] = { ...counts, outageMs: restart?.outageMs };
      expect(counts.tasksSettled).toBe(100);
    });
  });
});
