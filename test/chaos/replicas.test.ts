/**
 * Two of everything (docs/operations.md: every service may run as several replicas): two gateways behind a
 * small balancer and two processes of each worker, on one Postgres and one Redis. A load of real crowd labels
 * with webhooks and a manifest job runs through them; mid-run one replica of each service is killed with
 * `kill -9` and not restarted, so its work is left to its twin. It ends with the invariant
 * (test/chaos/invariant.ts: every accepted task settled exactly once, one ledger record and one event each,
 * every event delivered, no label lost, quota and billing agree) and one check of the receiver: no task was
 * delivered under two event ids.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { scaled } from "../env";
import { type ServiceProcess, startService } from "../processes";
import { eventually } from "../system";
import { CHAOS_ENV, type Cluster, explainFailure, freePort, type Receiver, SERVICES, startCluster, startReceiver } from "./harness";
import { checkInvariant } from "./invariant";
import { customerWithWebhook, dogItems, faultDuring, type Item, Load } from "./load";

jest.setTimeout(scaled(300_000));

/**
 * An HTTP balancer over the gateways' ports: each request goes to the next port in turn, and to the other
 * one when its connection is refused (a dead replica); any other upstream error resets the client's
 * connection, as a load balancer's would (the load retries it).
 */
async function startBalancer(ports: readonly number[]): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const first = next++;
      const attempt = (i: number) => {
        const port = ports[(first + i) % ports.length] as number;
        const upstream = request({ host: "127.0.0.1", port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        upstream.on("error", (err: NodeJS.ErrnoException) => {
          if (!res.headersSent && err.code === "ECONNREFUSED" && i + 1 < ports.length) attempt(i + 1);
          else res.destroy();
        });
        upstream.end(body);
      };
      attempt(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("two of every service, one of each killed mid-run", () => {
  let cluster: Cluster;
  let healthy: Receiver;
  let balancer: { url: string; close(): Promise<void> };
  let manifestServer: Server;
  /** the second replica of each service (the cluster holds the first) */
  const twins: ServiceProcess[] = [];
  const { items, options } = dogItems(160, 500);
  const jobItems = items.slice(120);
  const loadItems = items.slice(0, 120);
  const urlOf = (it: Item) => `https://data.example/dog/${encodeURIComponent(it.item)}?run=replicas`;

  beforeAll(async () => {
    cluster = await startCluster();
    const twinPort = await freePort();
    for (const service of SERVICES) {
      twins.push(
        await startService(service, {
          databaseUrl: cluster.pg.databaseUrl,
          redisUrl: cluster.redis.url,
          prefix: cluster.prefix,
          env: { ...CHAOS_ENV, ...(service === "gateway" ? { PORT: String(twinPort) } : {}) },
          startTimeoutMs: scaled(60_000),
        }),
      );
    }
    balancer = await startBalancer([cluster.gatewayPort, twinPort]);
    healthy = await startReceiver("healthy");
    const lines = jobItems.map((it) => JSON.stringify({ "source-ref": urlOf(it), item: it.item }));
    manifestServer = createServer((_req, res) => {
      res.setHeader("content-type", "application/x-ndjson");
      res.end(`${lines.join("\n")}\n`);
    });
    await new Promise<void>((resolve) => manifestServer.listen(0, "127.0.0.1", () => resolve()));
  }, scaled(240_000));

  afterAll(async () => {
    await Promise.all(twins.map((p) => p.kill()));
    manifestServer?.closeAllConnections();
    await new Promise<void>((resolve) => (manifestServer ? manifestServer.close(() => resolve()) : resolve()));
    await balancer?.close();
    await healthy?.close();
    await cluster?.close();
  });

  it("loses nothing, settles every task once, delivers no task under two event ids", async () => {
    await explainFailure(cluster, async () => {
      const load = new Load(balancer.url, scaled(60_000));
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
      const run = load.run(customer, loadItems, options);
      // a third of the way in, one replica of each service dies and stays dead
      await faultDuring(load, run, 120, async () => {
        for (const service of SERVICES) cluster.procs[service].signal("SIGKILL");
        await Promise.all(SERVICES.map((s) => cluster.procs[s].exited));
      });
      expect(twins.every((p) => p.child.exitCode === null && p.child.signalCode === null)).toBe(true);

      // the job, ingested by whichever manifest worker holds it, is labeled through the surviving gateway
      await eventually(
        async () => {
          const j = await customer.client.jobs.get(job.job_id);
          if (j.status === "failed") throw new Error(`job failed: ${j.error}`);
          return j.status === "labeling" ? j : undefined;
        },
        scaled(90_000),
        "the manifest job to be ingested",
      );
      const byUrl = new Map(jobItems.map((it) => [urlOf(it), it]));
      const open: { taskId: string; item: Item }[] = [];
      for (let page = 1; ; page++) {
        const listed = await load.call("tasks", () => customer.client.dashboard.tasks({ page, per_page: 100 }));
        for (const t of listed.items) {
          const it = byUrl.get(t.data_url);
          if (it) open.push({ taskId: t.task_id, item: it });
        }
        if (page * 100 >= listed.total) break;
      }
      expect(open).toHaveLength(jobItems.length);
      await load.ensureLabelers(jobItems);
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
        jobs: [{ jobId: job.job_id, lines: jobItems.length }],
        timeoutMs: scaled(120_000),
      });
      expect(counts.tasksSettled).toBe(loadItems.length + jobItems.length);
      // a redelivery keeps its event id: one id per task at the receiver, however many deliveries
      const idsByTask = new Map<string, Set<string>>();
      for (const d of healthy.received) idsByTask.set(d.taskId, (idsByTask.get(d.taskId) ?? new Set()).add(d.eventId));
      const twice = [...idsByTask].filter(([, ids]) => ids.size > 1).map(([task, ids]) => `${task}: ${[...ids].join(", ")}`);
      expect(twice).toEqual([]);
      expect(idsByTask.size).toBe(loadItems.length + jobItems.length);
      console.log(`chaos replicas: ${JSON.stringify({ ...counts, deliveries: healthy.received.length })}`);
    });
  });
});
