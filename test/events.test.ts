/**
 * The event catalog end to end (contract §events; docs/decisions/0230, 0231): every event type is emitted
 * by its transaction (a settlement, a review's revision, a cancellation, a manifest job's completion and
 * failure), routed to the webhooks subscribed to it and to no other, delivered once per webhook with the
 * envelope (`event_id`, `created_at`, `timestamp`), signed, and verified by both verifiers
 * (@labelgate/webhook-verify and the Python client's `construct_event`). A webhook's `events` is changed with
 * PATCH; bad `events` values are 400 and store nothing. Real Postgres, Redis and local HTTP receivers.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { eventBodySchema, WEBHOOK_EVENTS, type WebhookEventType } from "@labelgate/api";
import { constructEvent } from "@labelgate/sdk";
import { createJob, jobTasks, jsonl, serveManifest, waitForStatus } from "../services/manifest-worker/test/helpers";
import { createLabeler, createTask, eventually, label, registerCustomer, type System, startSystem } from "./system";
import { json, newSecret, type Received, receivers, signedWith } from "./webhooks";

const ROOT = path.resolve(__dirname, "..");
const PYTHON = process.env.PYTHON ?? "python3";

let sys: System;
let labelerKey: string;
const { rx, closeAll } = receivers();

beforeAll(async () => {
  sys = await startSystem({ webhookRetryMax: 1 });
  labelerKey = (await createLabeler(sys)).key;
});
afterAll(async () => {
  await closeAll();
  await sys?.close();
});

async function registerWith(key: string, url: string, secret: string, events?: unknown) {
  return sys.api<Record<string, unknown>>("POST", "/v1/webhooks", {
    token: key,
    body: events === undefined ? { callback_url: url, secret } : { callback_url: url, secret, events },
  });
}

function patch(key: string, webhookId: string, body: unknown) {
  return sys.api<Record<string, unknown>>("PATCH", `/v1/webhooks/${webhookId}`, { token: key, body });
}

/** The Python client's verdict on each delivery: the event type construct_event returns, or its error. */
function pythonVerdicts(deliveries: Received[], secret: string): string[] {
  const input = JSON.stringify(deliveries.map((d) => ({ raw: d.body, headers: d.headers })));
  const script = [
    "import json, sys",
    "from labelgate.webhooks import construct_event",
    "from labelgate.errors import SignatureVerificationError",
    "out = []",
    "for d in json.load(sys.stdin):",
    "    try:",
    `        e = construct_event(d["raw"].encode("utf-8"), d["headers"], ${JSON.stringify(secret)})`,
    "        out.append(e.event if e.event_id == d['headers']['x-svc-event-id'] else 'event id differs')",
    "    except SignatureVerificationError as err:",
    "        out.append('refused: ' + str(err))",
    "print(json.dumps(out))",
  ].join("\n");
  const output = execFileSync(PYTHON, ["-c", script], {
    cwd: path.join(ROOT, "clients/python"),
    input,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
  });
  return JSON.parse(output.toString("utf8")) as string[];
}

/** The events a receiver got, by type. */
function byType(r: { received: Received[] }): Map<string, Received[]> {
  const out = new Map<string, Received[]>();
  for (const d of r.received) {
    const type = String(json(d).event);
    out.set(type, [...(out.get(type) ?? []), d]);
  }
  return out;
}

describe("every event of the catalog", () => {
  it("is emitted once by its transaction, delivered signed to the webhooks subscribed to it, and verified by both verifiers", async () => {
    const c = await registerCustomer(sys);
    const all = await rx();
    const settledOnly = await rx();
    const secretAll = newSecret();
    const secretSettled = newSecret();
    const hookAll = await registerWith(c.key, all.url, secretAll, [...WEBHOOK_EVENTS]);
    expect(hookAll.status).toBe(201);
    expect(hookAll.body.events).toEqual([...WEBHOOK_EVENTS]);
    // the default subscription: task.settled only
    const hookSettled = await registerWith(c.key, settledOnly.url, secretSettled);
    expect(hookSettled.body.events).toEqual(["task.settled"]);

    // task.settled, then task.revised (a review that changes the result)
    const settledTask = await createTask(sys, c.key, { consensus_threshold: 1 });
    expect((await label(sys, labelerKey, settledTask, "cat")).status).toBe(201);
    await eventually(async () => all.forTask(settledTask)[0], 20_000, "task.settled at the subscribed webhook");
    const reviewed = await sys.api("POST", `/v1/tasks/${settledTask}/review`, {
      token: c.key,
      body: { verdict: "reject", answer: { label: "dog" } },
    });
    expect(reviewed.status).toBe(200);

    // task.canceled, by the customer; canceling again emits nothing more
    const canceledTask = await createTask(sys, c.key, { consensus_threshold: 3 });
    for (let i = 0; i < 2; i++) {
      expect((await sys.api("POST", `/v1/tasks/${canceledTask}/cancel`, { token: c.key })).status).toBe(200);
    }

    // job.completed: a one-line manifest whose task settles; job.failed: a manifest that is not there
    const manifest = await serveManifest((req, res) => {
      if (req.url !== "/manifest.jsonl") {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.end(jsonl([JSON.stringify({ data_url: "https://img.example/1.jpg" })]));
    });
    let completedJob: string;
    let failedJob: string;
    try {
      completedJob = await createJob(sys, c.key, { manifest_url: manifest.url() });
      await waitForStatus(sys, c.key, completedJob, "labeling");
      const [jobTask] = await jobTasks(sys, completedJob);
      expect((await label(sys, labelerKey, jobTask?.id as string, "cat")).status).toBe(201);
      await waitForStatus(sys, c.key, completedJob, "completed");
      failedJob = await createJob(sys, c.key, { manifest_url: manifest.url("/missing.jsonl") });
      await waitForStatus(sys, c.key, failedJob, "failed");
    } finally {
      await manifest.close();
    }

    const want: Record<WebhookEventType, number> = {
      "task.settled": 2,
      "task.revised": 1,
      "task.canceled": 1,
      "job.completed": 1,
      "job.failed": 1,
    };
    const received = await eventually(
      async () => {
        const got = byType(all);
        return WEBHOOK_EVENTS.every((e) => (got.get(e)?.length ?? 0) >= want[e]) ? got : undefined;
      },
      30_000,
      "every event at the webhook subscribed to all",
    );
    for (const e of WEBHOOK_EVENTS) expect([e, received.get(e)?.length]).toEqual([e, want[e]]);
    // once per cause: one row per event in the outbox, each delivered once (distinct event ids)
    const ids = all.received.map((d) => d.headers["x-svc-event-id"]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(await sys.db.prisma.event.count({ where: { taskId: canceledTask, type: "task.canceled" } })).toBe(1);
    expect(await sys.db.prisma.event.count({ where: { jobId: completedJob, type: "job.completed" } })).toBe(1);
    expect(await sys.db.prisma.event.count({ where: { jobId: failedJob, type: "job.failed" } })).toBe(1);

    for (const d of all.received) {
      const body = json(d);
      const type = body.event as WebhookEventType;
      // signed as every delivery is, with the envelope and the catalog's payload
      expect(signedWith(d.raw, d.headers["x-svc-signature"], secretAll)).toBe(true);
      expect(body.event_id).toBe(d.headers["x-svc-event-id"]);
      expect(eventBodySchema(type).safeParse(body).error).toBeUndefined();
      // @labelgate/webhook-verify accepts it as the same event
      expect(constructEvent(d.raw, d.headers["x-svc-signature"] as string, secretAll)).toEqual(body);
    }
    expect(json((received.get("task.canceled") ?? [])[0] as Received)).toMatchObject({ task_id: canceledTask, reason: "customer" });
    expect(json((received.get("task.revised") ?? [])[0] as Received)).toMatchObject({
      task_id: settledTask,
      revision: 2,
      consensus_label: "dog",
      previous: { consensus_label: "cat" },
    });
    expect(json((received.get("job.completed") ?? [])[0] as Received)).toMatchObject({
      job_id: completedJob,
      task_count: 1,
      tasks_settled: 1,
    });
    expect(json((received.get("job.failed") ?? [])[0] as Received)).toMatchObject({ job_id: failedJob, task_count: 0, tasks_settled: 0 });
    expect(String(json((received.get("job.failed") ?? [])[0] as Received).error)).toMatch(/missing.jsonl not found/);

    // the Python client verifies every one of them
    const verdicts = pythonVerdicts(all.received, secretAll);
    expect(verdicts.sort()).toEqual(all.received.map((d) => String(json(d).event)).sort());

    // the webhook subscribed to task.settled only got the two task.settled events, nothing else
    await eventually(async () => (settledOnly.received.length >= 2 ? true : undefined), 20_000, "task.settled at the default webhook");
    expect([...byType(settledOnly).keys()]).toEqual(["task.settled"]);
    expect(settledOnly.received).toHaveLength(2);

    // the delivery log names each delivery's event, and a job event's job (no task)
    const log = await sys.api<{ items: Record<string, unknown>[] }>(
      "GET",
      `/v1/webhooks/${hookAll.body.webhook_id}/deliveries?per_page=100`,
      {
        token: c.key,
      },
    );
    expect(log.status).toBe(200);
    const jobDelivery = log.body.items.find((d) => d.event === "job.completed");
    expect(jobDelivery).toMatchObject({ task_id: null, job_id: completedJob, status: "delivered" });
    expect(log.body.items.find((d) => d.event === "task.canceled")).toMatchObject({ task_id: canceledTask, job_id: null });

    // a job completed once is not completed (nor announced) again by the reconciliation
    expect(await sys.store.jobs.completeIfDone(completedJob)).toEqual({ completed: false, followUps: { routeEvent: [] } });
  }, 120_000);
});

describe("task.canceled", () => {
  it("of an item that cannot be read: reason item_unreadable with the item's error, to a subscribed webhook only", async () => {
    const c = await registerCustomer(sys);
    const r = await rx();
    const other = await rx();
    const secret = newSecret();
    expect((await registerWith(c.key, r.url, secret, ["task.canceled"])).status).toBe(201);
    expect((await registerWith(c.key, other.url, newSecret(), ["task.settled", "job.failed"])).status).toBe(201);
    const texts = await serveManifest((_req, res) => res.writeHead(404).end());
    try {
      const created = await sys.api<{ task_id: string }>("POST", "/v1/tasks", {
        token: c.key,
        body: {
          type: "text_span",
          data_url: texts.url("/texts/missing.txt"),
          label_spec: { question: "Mark the drugs", entity_types: ["DRUG"] },
        },
      });
      expect(created.status).toBe(202);
      const taskId = created.body.task_id;
      const got = await eventually(async () => r.forTask(taskId)[0], 30_000, "task.canceled of the unreadable item");
      const body = json(got);
      expect(body).toMatchObject({ event: "task.canceled", task_id: taskId, reason: "item_unreadable" });
      expect(String(body.item_error)).toMatch(/missing\.txt not found/);
      expect(constructEvent(got.raw, got.headers["x-svc-signature"] as string, secret)).toEqual(body);
      expect(pythonVerdicts([got], secret)).toEqual(["task.canceled"]);
      expect(await sys.db.prisma.event.count({ where: { taskId, type: "task.canceled" } })).toBe(1);
      expect(other.received).toEqual([]);
    } finally {
      await texts.close();
    }
  }, 60_000);
});

describe("PATCH /v1/webhooks/{id}", () => {
  it("replaces the webhook's events: events emitted afterwards follow the new list", async () => {
    const c = await registerCustomer(sys);
    const r = await rx();
    const created = await registerWith(c.key, r.url, newSecret());
    const webhookId = String(created.body.webhook_id);

    const changed = await patch(c.key, webhookId, { events: ["task.canceled", "task.canceled"] });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ webhook_id: webhookId, events: ["task.canceled"], active: true, deleted_at: null });
    const listed = await sys.api<Record<string, unknown>[]>("GET", "/v1/webhooks", { token: c.key });
    expect(listed.body[0]?.events).toEqual(["task.canceled"]);

    // a settled task is no longer delivered; a canceled one is
    const settled = await createTask(sys, c.key, { consensus_threshold: 1 });
    expect((await label(sys, labelerKey, settled, "cat")).status).toBe(201);
    await eventually(
      async () =>
        (await sys.db.prisma.event.findFirst({ where: { taskId: settled, type: "task.settled", recordedAt: { not: null } } })) ?? undefined,
      20_000,
      "the task.settled event routed",
    );
    const canceled = await createTask(sys, c.key, {});
    expect((await sys.api("POST", `/v1/tasks/${canceled}/cancel`, { token: c.key })).status).toBe(200);
    await eventually(async () => r.forTask(canceled)[0], 20_000, "task.canceled at the webhook");
    expect(r.forTask(settled)).toEqual([]);
    expect(r.received.map((d) => json(d).event)).toEqual(["task.canceled"]);
  }, 60_000);

  it("400 for bad events (unknown, empty, not a list, other fields), nothing stored; 404 for unknown and others' webhooks; 409 once deleted", async () => {
    const c = await registerCustomer(sys);
    const other = await registerCustomer(sys);
    const r = await rx();
    const webhookId = String((await registerWith(c.key, r.url, newSecret())).body.webhook_id);
    for (const body of [
      { events: ["task.expired"] },
      { events: [] },
      { events: "task.settled" },
      { events: [7] },
      {},
      { events: ["task.settled"], callback_url: r.url },
      [],
    ]) {
      const res = await patch(c.key, webhookId, body);
      expect([JSON.stringify(body), res.status, res.body.error]).toEqual([JSON.stringify(body), 400, "validation failed"]);
    }
    const unknown = await patch(c.key, webhookId, { events: ["task.expired"] });
    expect(JSON.stringify(unknown.body.details)).toContain(
      "known events: task.settled, task.revised, task.canceled, job.completed, job.failed",
    );
    expect((await sys.db.prisma.webhook.findUniqueOrThrow({ where: { id: webhookId } })).events).toEqual(["task.settled"]);

    expect((await patch(other.key, webhookId, { events: ["task.canceled"] })).status).toBe(404);
    expect((await patch(c.key, "whk_0000000000000000000000", { events: ["task.canceled"] })).status).toBe(404);
    expect((await patch(c.key, "nope", { events: ["task.canceled"] })).status).toBe(404);
    expect((await sys.api("DELETE", `/v1/webhooks/${webhookId}`, { token: c.key })).status).toBe(200);
    const inactive = await patch(c.key, webhookId, { events: ["task.canceled"] });
    expect([inactive.status, inactive.body.error]).toEqual([409, "webhook is not active"]);
    expect((await sys.db.prisma.webhook.findUniqueOrThrow({ where: { id: webhookId } })).events).toEqual(["task.settled"]);
  });

  it("POST /v1/webhooks: 400 for bad events, nothing stored", async () => {
    const c = await registerCustomer(sys);
    const r = await rx();
    for (const events of [["task.expired"], [], "task.settled", [null], ["Task.Settled"]]) {
      const res = await registerWith(c.key, r.url, newSecret(), events);
      expect([JSON.stringify(events), res.status, res.body.error]).toEqual([JSON.stringify(events), 400, "validation failed"]);
    }
    expect(await sys.db.prisma.webhook.count({ where: { customerId: c.id } })).toBe(0);
  });
});
