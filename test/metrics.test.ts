/**
 * Metrics and probes (docs/operations.md, "Operations"): every service, run as a real process, serves /metrics, /healthz and /readyz on
 * its own ops port (METRICS_PORT); under traffic the gateway's request counters and latency histograms move
 * by route PATTERN, the consensus worker counts settlements and consensus lag, the webhook worker counts
 * deliveries by outcome, every worker times its jobs, and queue depth is read at scrape time.
 */
import { randomBytes } from "node:crypto";
import { catalog, QueueClient, queueKeysOf } from "@labelgate/queue";
import { dropDatabase } from "@labelgate/store";
import { REDIS_URL, runPrefix } from "./env";
import { apiOf, ops, type ServiceName, type ServiceProcess, sample, startService } from "./processes";
import { ADMIN_TOKEN, eventually, isolatedDatabaseUrl, taskBody } from "./system";
import { json, newSecret, type Receiver, receiver } from "./webhooks";

const SERVICES: ServiceName[] = ["gateway", "consensus-worker", "webhook-worker", "manifest-worker"];
const procs = new Map<ServiceName, ServiceProcess>();
let r: Receiver;
let failingTask: string | undefined;
let procPrefix = "";

const proc = (name: ServiceName) => procs.get(name) as ServiceProcess;
const scrape = async (name: ServiceName) => {
  const res = await ops(proc(name), "/metrics");
  expect(res.status).toBe(200);
  return res.text;
};

let databaseUrl = "";

beforeAll(async () => {
  const prefix = `${runPrefix()}:${randomBytes(4).toString("hex")}`;
  procPrefix = prefix;
  // a database of its own: the consensus worker's reconciliation (run at start) re-enqueues the pending
  // deliveries it finds, and in the shared database those include other files' (a failed job of another
  // file's delivery, deleted meanwhile, was once counted here as this test's)
  databaseUrl = await isolatedDatabaseUrl();
  r = await receiver((q) => (json(q).task_id === failingTask ? 500 : 200));
  const started = await Promise.all(
    SERVICES.map((s) =>
      startService(s, {
        databaseUrl,
        prefix,
        // two attempts: the first is made by the routing job, the second (1 s later) by a webhook-delivery
        // job, which a failing receiver ends in the failed set
        env: { WEBHOOK_RETRY_MAX: "2", RECONCILE_INTERVAL_MS: "60000" },
      }),
    ),
  );
  for (const [i, p] of started.entries()) procs.set(SERVICES[i] as ServiceName, p);
}, 90000);
afterAll(async () => {
  await Promise.all([...procs.values()].map((p) => p.kill()));
  await r?.close();
  if (databaseUrl) await dropDatabase(databaseUrl);
});

it("every service serves /metrics, /healthz and /readyz on an ops port of its own", async () => {
  const ports = new Set(SERVICES.map((s) => proc(s).metricsPort));
  expect(ports.size).toBe(SERVICES.length);
  for (const s of SERVICES) {
    const health = await ops(proc(s), "/healthz");
    expect([health.status, JSON.parse(health.text)]).toEqual([200, { ok: true }]);
    const ready = await ops(proc(s), "/readyz");
    expect([ready.status, JSON.parse(ready.text)]).toEqual([
      200,
      // a worker's readiness also checks that its queue workers run (decision 0202)
      { ok: true, shutting_down: false, checks: { database: "ok", queue: "ok", ...(s === "gateway" ? {} : { workers: "ok" }) } },
    ]);
    expect((await ops(proc(s), "/nothing")).status).toBe(404);

    const text = await scrape(s);
    // process metrics on the process's own registry, labelled with the service
    expect(sample(text, "labelgate_process_resident_memory_bytes", { service: s })).toBeGreaterThan(0);
    // queue depth read at scrape time: the gateway reports every queue, a worker the queues it consumes
    const queues = s === "gateway" ? queueKeysOf() : queueKeysOf(s);
    for (const key of queues) {
      for (const state of ["waiting", "active", "delayed", "failed"]) {
        expect(sample(text, "labelgate_queue_jobs", { queue: catalog[key].name, state })).toBeGreaterThanOrEqual(0);
      }
    }
    expect(sample(text, "labelgate_queue_depth_errors_total")).toBeUndefined();
  }
});

it("counters and histograms move under traffic; the route label is the pattern", async () => {
  const gw = apiOf(`http://127.0.0.1:${proc("gateway").port}`);
  const before = await scrape("gateway");
  const requestsBefore = sample(before, "labelgate_http_requests_total", { method: "GET", route: "/v1/tasks/:id", status: "200" }) ?? 0;

  const customer = await gw<{ api_key: string }>("POST", "/v1/customers", {
    body: { name: "Metrics Co", email: `m-${randomBytes(4).toString("hex")}@example.com` },
  });
  expect(customer.status).toBe(201);
  const key = customer.body.api_key;
  expect((await gw("POST", "/v1/webhooks", { token: key, body: { callback_url: r.url, secret: newSecret() } })).status).toBe(201);
  const labeler = await gw<{ api_key: string }>("POST", "/v1/admin/labelers", { token: ADMIN_TOKEN, body: { name: "metrics" } });
  expect(labeler.status).toBe(201);

  const settle = async (): Promise<string> => {
    const task = await gw<{ task_id: string }>("POST", "/v1/tasks", {
      token: key,
      body: taskBody({ consensus_threshold: 1, callback_url: r.url }),
    });
    expect(task.status).toBe(202);
    return task.body.task_id;
  };
  const labelIt = async (taskId: string) => {
    const claim = await gw<{ claim_id: string }>("POST", "/v1/labeling/claims", { token: labeler.body.api_key, body: { task_id: taskId } });
    expect(claim.status).toBe(201);
    expect(
      (await gw("POST", `/v1/labeling/claims/${claim.body.claim_id}/label`, { token: labeler.body.api_key, body: { label: "cat" } }))
        .status,
    ).toBe(201);
  };
  const delivered = await settle();
  failingTask = await settle();
  for (const id of [delivered, failingTask]) {
    expect((await gw("GET", `/v1/tasks/${id}`, { token: key })).status).toBe(200);
    await labelIt(id);
  }
  expect((await gw("GET", "/v1/no-such-route/tsk_abc", { token: key })).status).toBe(404);

  // the delivered task reaches its receiver; the failing one ends in the failed set (after two attempts)
  await eventually(async () => (r.received.some((q) => json(q).task_id === delivered) ? true : undefined), 30000, "the delivery");
  await eventually(
    async () =>
      (sample(await scrape("webhook-worker"), "labelgate_webhook_deliveries_total", { outcome: "failed" }) ?? 0) >= 1 || undefined,
    30000,
    "the failed delivery to be counted",
  );

  const gateway = await scrape("gateway");
  expect(sample(gateway, "labelgate_http_requests_total", { method: "GET", route: "/v1/tasks/:id", status: "200" })).toBe(
    requestsBefore + 2,
  );
  expect(sample(gateway, "labelgate_http_requests_total", { method: "POST", route: "/v1/tasks", status: "202" })).toBeGreaterThanOrEqual(2);
  expect(
    sample(gateway, "labelgate_http_requests_total", { method: "POST", route: "/v1/labeling/claims/:claimId/label", status: "201" }),
  ).toBeGreaterThanOrEqual(2);
  expect(sample(gateway, "labelgate_http_request_duration_seconds_count", { method: "GET", route: "/v1/tasks/:id", status: "200" })).toBe(
    requestsBefore + 2,
  );
  expect(sample(gateway, "labelgate_http_request_duration_seconds_bucket", { route: "/v1/tasks/:id", le: "+Inf" })).toBeGreaterThanOrEqual(
    2,
  );
  expect(sample(gateway, "labelgate_http_requests_total", { route: "unmatched", status: "404" })).toBeGreaterThanOrEqual(1);
  // never a raw URL (ids) in a label
  expect(gateway).not.toMatch(/route="[^"]*(tsk_|clm_)/);
  // queue depth at scrape time: the exhausted delivery waits in the failed set
  const failedJobs = sample(gateway, "labelgate_queue_jobs", { queue: "webhook-delivery", state: "failed" });
  if (failedJobs !== 1) {
    // name what failed, for the failure message
    const probe = new QueueClient({ kind: "redis", url: REDIS_URL, prefix: procPrefix });
    const jobs = await (await probe.bullmqQueue("webhookDelivery")).getJobs(["failed"]);
    await probe.close();
    throw new Error(
      `failed webhook-delivery jobs: ${JSON.stringify(jobs.map((j) => ({ id: j.id, data: j.data, reason: j.failedReason, made: j.attemptsMade })))}`,
    );
  }

  const consensus = await scrape("consensus-worker");
  expect(sample(consensus, "labelgate_tasks_settled_total")).toBeGreaterThanOrEqual(2);
  expect(sample(consensus, "labelgate_consensus_lag_seconds_count")).toBeGreaterThanOrEqual(2);
  expect(sample(consensus, "labelgate_consensus_lag_seconds_sum")).toBeGreaterThan(0);
  expect(sample(consensus, "labelgate_job_duration_seconds_count", { queue: "consensus", outcome: "completed" })).toBeGreaterThanOrEqual(2);

  const webhook = await scrape("webhook-worker");
  expect(sample(webhook, "labelgate_webhook_deliveries_total", { outcome: "delivered" })).toBeGreaterThanOrEqual(1);
  expect(sample(webhook, "labelgate_webhook_deliveries_total", { outcome: "failed" })).toBe(1);
  expect(sample(webhook, "labelgate_webhook_deliveries_total", { outcome: "retried" })).toBe(1);
  expect(sample(webhook, "labelgate_job_duration_seconds_count", { queue: "task-settled", outcome: "completed" })).toBeGreaterThanOrEqual(
    2,
  );
  expect(sample(webhook, "labelgate_job_duration_seconds_count", { queue: "webhook-delivery", outcome: "failed" })).toBe(1);
  expect(sample(webhook, "labelgate_queue_jobs", { queue: "webhook-delivery", state: "failed" })).toBe(1);
});
