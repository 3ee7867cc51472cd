/**
 * @labelgate/sdk against the real gateway (startSystem: real Postgres, Redis and workers): every client
 * method is called with a real answer, the typed errors (400 with details, 401, 403, 404, 409, 413, 422,
 * 429, 503), retries honoring Retry-After (timed from the gateway's own request log), the webhook verifier
 * on a real delivery, and a coverage check: every route registered in the gateway's express app is called
 * by some SDK method in this file (the express app's route layers, cross-checked with the OpenAPI ROUTES).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createLogger } from "@labelgate/core";
import { ROUTES as OPENAPI_ROUTES } from "@labelgate/gateway/openapi";
import {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  constructEvent,
  ForbiddenError,
  LabelgateClient,
  LabelgateError,
  NotFoundError,
  PayloadTooLargeError,
  parseRetryAfter,
  RateLimitError,
  type ResponseEvent,
  ServiceUnavailableError,
  type TaskRequest,
  UnprocessableError,
  ValidationError,
  verifyWebhookSignature,
} from "@labelgate/sdk";
import type { Router } from "express";
import { serveManifest } from "../services/manifest-worker/test/helpers";
import { freePort } from "./chaos/harness";
import { ADMIN_TOKEN, eventually, type System, startSystem } from "./system";
import { receivers } from "./webhooks";

/** `METHOD /path/{}`: a route with its parameters anonymized, comparable between express and the SDK. */
const norm = (method: string, route: string) => `${method.toUpperCase()} ${route.replace(/\{\w+\}|:\w+/g, "{}")}`;

/** Every route answered (status > 0) through an SDK client of this file. */
const called = new Set<string>();
const hooks = { onResponse: (e: ResponseEvent) => (e.status > 0 ? called.add(norm(e.method, e.route)) : undefined) };

const email = () => `sdk-${Date.now()}-${randomBytes(3).toString("hex")}@example.com`;
const SPEC = { question: "What animal is this?", options: ["cat", "dog", "bird"] };
const task = (overrides: Partial<TaskRequest> = {}): TaskRequest =>
  ({
    type: "image_classification",
    data_url: `https://images.example/${randomBytes(4).toString("hex")}.jpg`,
    label_spec: SPEC,
    ...overrides,
  }) as TaskRequest;

/** Parses JSONL text. */
const jsonl = (text: string): unknown[] =>
  text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as unknown);

/** Expects `promise` to reject with an instance of `cls`; returns the error. */
async function rejection<E extends LabelgateError>(promise: Promise<unknown>, cls: new (...args: never[]) => E): Promise<E> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(cls);
  expect(err).toBeInstanceOf(LabelgateError);
  return err as E;
}

describe("the SDK against a running gateway", () => {
  let sys: System;
  const { rx, closeAll } = receivers();
  let admin: LabelgateClient;
  let customer: LabelgateClient;
  let customerId: string;

  beforeAll(async () => {
    sys = await startSystem();
    admin = new LabelgateClient({ baseUrl: sys.baseUrl, adminToken: ADMIN_TOKEN, hooks });
  });
  afterAll(async () => {
    await closeAll();
    await sys.close();
  });

  it("health, registration, profile and the admin routes", async () => {
    // the in-process workers are checked too (decision 0202)
    expect(await admin.health()).toEqual({
      ok: true,
      service: "labelgate-gateway",
      checks: { database: "ok", queue: "ok", workers: "ok" },
    });
    const doc = await admin.openapi();
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toContain("/v1/tasks/{id}");
    const address = email();
    const registered = await admin.customers.register({ name: "SDK Co", email: address });
    expect(registered).toMatchObject({ name: "SDK Co", email: address, tier: "sandbox" });
    expect(registered.api_key).toMatch(/^sk_sandbox_/);
    expect(typeof registered.created_at).toBe("number");
    customerId = registered.customer_id;
    customer = admin.withCredentials({ apiKey: registered.api_key });

    const me = await customer.customers.me();
    expect(me).toMatchObject({ customer_id: customerId, tier: "sandbox", label_quota_used: 0 });

    const dup = await rejection(admin.customers.register({ name: "Again", email: address }), ConflictError);
    expect(dup).toMatchObject({ status: 409, error: "email already registered" });
    expect(dup.requestId).toEqual(expect.any(String));

    expect(await admin.admin.updateCustomer(customerId, { label_quota: 1000 })).toMatchObject({
      customer_id: customerId,
      label_quota: 1000,
    });
    const list = await admin.admin.listCustomers({ tier: "sandbox", per_page: 100 });
    expect(list.items.map((c) => c.customer_id)).toContain(customerId);
    const labeler = await admin.admin.createLabeler("Ann");
    expect(labeler.api_key).toMatch(/^lk_/);
    // the parked follow-ups of this system's own database: none; a retry of none retries none
    expect(await admin.admin.listParkedFollowUps({ limit: 10 })).toEqual({ parked: 0, items: [] });
    expect(await admin.admin.retryFollowUps(["1"])).toEqual({ retried: 0 });
    await rejection(admin.admin.retryFollowUps(["x"]), ValidationError);

    const notFound = await rejection(admin.admin.updateCustomer("cust_nope", { label_quota: 1 }), NotFoundError);
    expect(notFound.error).toBe("customer not found");
  });

  it("typed errors: 400 with details, 401, 403, 404, 413, 422", async () => {
    const invalid = await rejection(customer.tasks.create(task({ data_url: "ftp://x/y" })), ValidationError);
    expect(invalid).toMatchObject({ status: 400, error: "validation failed" });
    expect(invalid.details).toEqual([{ path: "data_url", message: expect.any(String) }]);
    const batchInvalid = await rejection(
      customer.tasks.createBatch({ tasks: [task(), task({ consensus_threshold: 99 })] }),
      ValidationError,
    );
    expect(batchInvalid.details.map((d) => d.path)).toEqual(["tasks.1.consensus_threshold"]);

    const wrongKey = customer.withCredentials({ apiKey: "sk_sandbox_wrongwrongwrong" });
    const unauth = await rejection(wrongKey.customers.me(), AuthenticationError);
    expect(unauth).toMatchObject({ status: 401, error: "invalid API key" });
    await rejection(admin.withCredentials({ adminToken: "not-the-admin-token-000" }).admin.listCustomers(), AuthenticationError);
    await expect(new LabelgateClient({ baseUrl: sys.baseUrl }).customers.me()).rejects.toThrow(/needs apiKey/);

    const missing = await rejection(customer.tasks.get("tsk_doesnotexist"), NotFoundError);
    expect(missing).toMatchObject({ status: 404, error: "task not found", method: "GET", path: "/v1/tasks/tsk_doesnotexist" });
    await rejection(customer.batches.get("bat_doesnotexist"), NotFoundError);
    // the ranking of a batch's pairwise comparisons (test/pairwise.test.ts ranks a real batch)
    await rejection(customer.batches.ranking("bat_doesnotexist"), NotFoundError);
    await rejection(customer.jobs.get("job_doesnotexist"), NotFoundError);
    // a job's ranking (services/manifest-worker/test/pairwise-jobs.test.ts ranks a real pairwise job)
    await rejection(customer.jobs.ranking("job_doesnotexist"), NotFoundError);

    const big = await rejection(customer.tasks.create(task({ metadata: { blob: "x".repeat(1_100_000) } })), PayloadTooLargeError);
    expect(big.status).toBe(413);

    const key = `k-${randomBytes(4).toString("hex")}`;
    const first = await customer.tasks.create(task({ data_url: "https://images.example/a.jpg" }), { idempotencyKey: key });
    const again = await customer.tasks.create(task({ data_url: "https://images.example/a.jpg" }), { idempotencyKey: key });
    expect(again.task_id).toBe(first.task_id);
    const reused = await rejection(
      customer.tasks.create(task({ data_url: "https://images.example/b.jpg" }), { idempotencyKey: key }),
      UnprocessableError,
    );
    expect(reused).toMatchObject({ status: 422, error: "idempotency key reused with a different request" });
    await customer.tasks.cancel(first.task_id);

    const poor = await admin.customers.register({ name: "Poor Co", email: email() });
    await admin.admin.updateCustomer(poor.customer_id, { label_quota: 0 });
    const exhausted = await rejection(admin.withCredentials({ apiKey: poor.api_key }).tasks.create(task()), ForbiddenError);
    expect(exhausted).toMatchObject({ status: 403, error: "quota exhausted" });
  });

  it("tasks, batches, labeling, results, cancel, webhooks with a verified delivery and redelivery", async () => {
    const secret = `whsec-${randomBytes(12).toString("hex")}`;
    const receiver = await rx(() => 200);
    const hook = await customer.webhooks.create({ callback_url: receiver.url, secret });
    expect(hook).toMatchObject({ callback_url: receiver.url, events: ["task.settled"], active: true });
    await rejection(customer.webhooks.create({ callback_url: receiver.url, secret }), ConflictError);
    expect((await customer.webhooks.list()).map((w) => w.webhook_id)).toContain(hook.webhook_id);
    // the events it subscribes to: changed, then back to task.settled
    expect(await customer.webhooks.update(hook.webhook_id, { events: ["task.settled", "task.canceled"] })).toMatchObject({
      webhook_id: hook.webhook_id,
      events: ["task.settled", "task.canceled"],
    });
    await rejection(customer.webhooks.update(hook.webhook_id, { events: ["task.expired" as "task.settled"] }), ValidationError);
    expect((await customer.webhooks.update(hook.webhook_id, { events: ["task.settled"] })).events).toEqual(["task.settled"]);

    // a task with a generated idempotency key (retries are on by default)
    const accepted = await customer.tasks.create(task({ consensus_threshold: 1, callback_url: receiver.url }));
    expect(accepted).toMatchObject({ status: "pending" });
    const stored = await customer.tasks.get(accepted.task_id);
    expect(stored).toMatchObject({ task_id: accepted.task_id, status: "pending", consensus_threshold: 1, max_labels: 3 });
    expect(stored.idempotency_key).toMatch(/^sdk_/);
    expect(await customer.tasks.result(accepted.task_id)).toEqual({
      task_id: accepted.task_id,
      status: "pending",
      labels_collected: 0,
      consensus_threshold: 1,
    });

    const batch = await customer.tasks.createBatch({ tasks: [task(), task(), task()] });
    expect(batch).toMatchObject({ task_count: 3, status: "accepted" });
    expect(batch.task_ids).toHaveLength(3);
    expect(await customer.batches.get(batch.batch_id)).toMatchObject({
      batch_id: batch.batch_id,
      status: "accepted",
      counts: { pending: 3, labeling: 0, settling: 0, settled: 0, canceled: 0 },
    });
    const batches = await customer.batches.list({ per_page: 5 });
    expect(batches.items[0]).toEqual(await customer.batches.get(batch.batch_id));
    await rejection(customer.batches.list({ page: 0 }), ValidationError);
    const notDone = await rejection(customer.batches.exportStream(batch.batch_id), ConflictError);
    expect(notDone).toMatchObject({ error: "batch not completed", body: { status: "accepted" } });
    for (const id of batch.task_ids) expect((await customer.tasks.cancel(id)).status).toBe("canceled");
    // the batch's export (contract §exports): JSON Lines by default and in hf, a Label Studio file, refusals
    const batchLines = [];
    for await (const line of customer.batches.exportLines(batch.batch_id)) batchLines.push(line);
    expect(batchLines.map((l) => l.task_id)).toEqual([...batch.task_ids].sort());
    expect(batchLines.every((l) => l.consensus_label === null && l.metadata === null)).toBe(true);
    const hfRecords = [];
    for await (const r of customer.batches.exportLines<{ task_id: string; label: string | null }>(batch.batch_id, { format: "hf" }))
      hfRecords.push(r);
    expect(hfRecords.map((r) => [r.task_id, r.label])).toEqual(batchLines.map((l) => [l.task_id, null]));
    const lsFile = path.join(mkdtempSync(path.join(tmpdir(), "lg-sdk-")), "batch.json");
    await customer.batches.exportToFile(batch.batch_id, lsFile, { format: "label-studio" });
    expect((JSON.parse(readFileSync(lsFile, "utf8")) as { data: { task_id: string } }[]).map((t) => t.data.task_id)).toEqual(
      batchLines.map((l) => l.task_id),
    );
    rmSync(path.dirname(lsFile), { recursive: true, force: true });
    const unfit = await rejection(customer.batches.exportStream(batch.batch_id, { format: "coco" }), ValidationError);
    expect(unfit.body).toMatchObject({ formats: ["jsonl", "label-studio", "hf"] });
    await expect(customer.batches.exportLines(batch.batch_id, { format: "conll" }).next()).rejects.toThrow(TypeError);
    const canceled = await rejection(customer.tasks.result(batch.task_ids[0] as string), ConflictError);
    expect(canceled).toMatchObject({ error: "task canceled", body: { status: "canceled" } });

    const labeler = admin.withCredentials({ labelerKey: (await admin.admin.createLabeler("Bo")).api_key });
    // a claim released (skip) frees its slot: the same labeler may claim the task again
    const skipped = await labeler.labeling.claim(accepted.task_id);
    await labeler.labeling.release(skipped?.claim_id as string);
    await labeler.labeling.release(skipped?.claim_id as string); // again: the same answer
    await rejection(labeler.labeling.release("clm_nope"), NotFoundError);
    const claim = await labeler.labeling.claim(accepted.task_id);
    expect(claim?.claim_id).not.toBe(skipped?.claim_id);
    expect(claim).toMatchObject({ task_id: accepted.task_id, label_spec: SPEC });
    const notAnOption = await rejection(labeler.labeling.label(claim?.claim_id as string, "zebra"), ValidationError);
    expect(notAnOption.details).toEqual([{ path: "label", message: expect.stringContaining("cat, dog, bird") }]);
    const recorded = await labeler.labeling.label(claim?.claim_id as string, "dog");
    expect(recorded).toMatchObject({ task_id: accepted.task_id, label: "dog", labels_needed: 0 });
    const twice = await rejection(labeler.labeling.label(claim?.claim_id as string, "dog"), ConflictError);
    expect(twice.error).toBe("claim already labeled");
    await rejection(labeler.labeling.label("clm_nope", "dog"), NotFoundError);
    expect(await rejection(labeler.labeling.release(claim?.claim_id as string), ConflictError)).toMatchObject({
      error: "claim already labeled",
    });

    const settled = await customer.tasks.waitForResult(accepted.task_id, { intervalMs: 50, timeoutMs: 20_000 });
    expect(settled).toMatchObject({ status: "settled", consensus_label: "dog", resolution: "consensus", label_counts: { dog: 1 } });
    expect(settled.settlement.ledger_txid).toMatch(/^0x[0-9a-f]{64}$/);
    await rejection(customer.tasks.cancel(accepted.task_id), ConflictError);
    // nothing is open for this labeler any more: 204 → null
    expect(await labeler.labeling.claim()).toBeNull();
    // a review that accepts the consensus keeps the result; at audit_rate 0 (the default) no task is drawn for audit
    const reviewed = await customer.tasks.review(accepted.task_id, { verdict: "accept" });
    expect(reviewed.review).toMatchObject({ task_id: accepted.task_id, verdict: "accept", revised: false });
    expect(await customer.audits.list({ status: "open" })).toMatchObject({ page: 1, total: 0, items: [] });

    // a label space's instructions: the claim names the space and its version; the labeler reads them
    const guided = await customer.tasks.create({
      type: "image_classification",
      data_url: "https://images.example/guided.jpg",
      label_spec: { ...SPEC, instructions: "Pick **cat** for kittens.", examples: [{ data_text: "a kitten", answer: { label: "cat" } }] },
    });
    const guidedClaim = await labeler.labeling.claim(guided.task_id);
    expect(guidedClaim?.instructions_version).toBe(1);
    expect(await labeler.labeling.instructions(guidedClaim?.label_space as string)).toMatchObject({
      version: 1,
      instructions: "Pick **cat** for kittens.",
      examples: [{ data_text: "a kitten", answer: { label: "cat" } }],
    });
    await labeler.labeling.release(guidedClaim?.claim_id as string);
    await rejection(labeler.labeling.instructions("lsp_none"), NotFoundError);
    await customer.tasks.cancel(guided.task_id); // not left open for the generic claims below

    // the delivery verifies with the re-exported verifier, on the raw bytes received
    const delivery = await eventually(async () => receiver.forTask(accepted.task_id)[0], 20_000, "the webhook delivery");
    const signature = delivery.headers["x-svc-signature"] as string;
    const event = constructEvent(delivery.raw, signature, secret);
    expect(event).toMatchObject({
      event: "task.settled",
      task_id: accepted.task_id,
      consensus_label: "dog",
      ledger_txid: settled.settlement.ledger_txid,
    });
    expect(verifyWebhookSignature(delivery.raw, signature, "another-secret-0123456789")).toBe(false);

    const page = await eventually(async () => {
      const p = await customer.webhooks.deliveries(hook.webhook_id, { status: "delivered" });
      return p.total > 0 ? p : undefined;
    });
    const item = page.items[0];
    expect(item).toMatchObject({ task_id: accepted.task_id, status: "delivered", attempts: 1 });
    const queued = await customer.webhooks.redeliver(hook.webhook_id, item?.delivery_id as string);
    expect(queued).toMatchObject({ delivery_id: item?.delivery_id, status: "queued" });
    const second = await eventually(async () => receiver.forTask(accepted.task_id)[1], 20_000, "the redelivery");
    expect(second.headers["x-svc-event-id"]).toBe(delivery.headers["x-svc-event-id"]);
    expect(constructEvent(second.raw, second.headers["x-svc-signature"] as string, secret)).toMatchObject({
      event: "task.settled",
      task_id: accepted.task_id,
    });

    const deleted = await customer.webhooks.delete(hook.webhook_id);
    expect(deleted).toMatchObject({ webhook_id: hook.webhook_id, active: false, deleted_at: expect.any(String) });
    const inactive = await rejection(customer.webhooks.redeliver(hook.webhook_id, item?.delivery_id as string), ConflictError);
    expect(inactive.error).toBe("webhook is not active");
    await rejection(customer.webhooks.delete("whk_nope"), NotFoundError);
  });

  it("a claim whose answer was lost is retried with its generated Idempotency-Key: the same claim, one slot", async () => {
    // the next tests' generic claims must find their own tasks: these two are canceled at the end
    const mine: string[] = [];
    for (const n of [1, 2])
      mine.push((await customer.tasks.create(task({ data_url: `https://images.example/lost-answer-${n}.jpg` }))).task_id);
    const created = await admin.admin.createLabeler("Lost answer");
    const sent: (string | null)[] = [];
    // the gateway answers the first claim, and the answer is lost on the way back
    const lossy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input).endsWith("/v1/labeling/claims")) return res;
      sent.push(new Headers(init?.headers).get("idempotency-key"));
      if (sent.length > 1) return res;
      await res.arrayBuffer();
      throw new TypeError("fetch failed: the answer was lost");
    };
    const labeler = new LabelgateClient({ baseUrl: sys.baseUrl, labelerKey: created.api_key, fetch: lossy, initialBackoffMs: 10 });
    const claim = await labeler.labeling.claim();
    expect(claim).not.toBeNull();
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/^sdk_/);
    expect(sent[1]).toBe(sent[0]);
    const rows = await sys.db.prisma.claim.findMany({ where: { labelerId: created.labeler_id } });
    expect(rows.map((r) => r.id)).toEqual([claim?.claim_id]);
    // an explicit key: the same claim again; naming its task: the same claim
    const key = `claim-${randomBytes(4).toString("hex")}`;
    const keyed = await labeler.labeling.claim(undefined, { idempotencyKey: key });
    expect(keyed?.task_id).not.toBe(claim?.task_id);
    expect(await labeler.labeling.claim(undefined, { idempotencyKey: key })).toEqual(keyed);
    expect(await labeler.labeling.claim(keyed?.task_id, { idempotencyKey: key })).toEqual(keyed);
    for (const c of [claim, keyed]) if (c) await labeler.labeling.release(c.claim_id);
    for (const id of mine) await customer.tasks.cancel(id);
  });

  it("manifest jobs: create, list, get, export as lines and to a file", async () => {
    const lines = [
      JSON.stringify({ data_url: "https://img.example/1.jpg", sku: "a" }),
      JSON.stringify({ "source-ref": "s3://bucket/2.jpg", sku: "b" }),
    ];
    const server = await serveManifest(`${lines.join("\n")}\n`);
    try {
      const created = await customer.jobs.create({ manifest_url: server.url(), label_spec: SPEC, consensus_threshold: 1 });
      expect(created.status).toBe("queued");
      const early = await customer.jobs
        .exportLines(created.job_id)
        .next()
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(early).toBeInstanceOf(ConflictError);
      expect((early as ConflictError).error).toBe("job not completed");

      await eventually(
        async () => ((await customer.jobs.get(created.job_id)).status === "labeling" ? true : undefined),
        30_000,
        "ingestion",
      );
      const labeler = admin.withCredentials({ labelerKey: (await admin.admin.createLabeler("Dee")).api_key });
      for (let i = 0; i < 2; i++) {
        const c = await labeler.labeling.claim();
        expect(c).not.toBeNull();
        await labeler.labeling.label(c?.claim_id as string, "cat");
      }
      const done = await eventually(async () => {
        const j = await customer.jobs.get(created.job_id);
        return j.status === "completed" ? j : undefined;
      }, 30_000);
      expect(done).toMatchObject({ task_count: 2, tasks_settled: 2, progress: 1, error: null });
      expect((await customer.jobs.list({ per_page: 5 })).items.map((j) => j.job_id)).toContain(created.job_id);

      const exported = [];
      for await (const line of customer.jobs.exportLines(created.job_id)) exported.push(line);
      expect(exported.map((l) => l.source)).toEqual(lines.map((l) => JSON.parse(l)));
      expect(exported.every((l) => l.consensus_label === "cat" && /^0x/.test(String(l.ledger_txid)))).toBe(true);

      const raw: Buffer[] = [];
      for await (const chunk of await customer.jobs.exportStream(created.job_id)) raw.push(chunk as Buffer);
      expect(jsonl(Buffer.concat(raw).toString("utf8"))).toEqual(exported);
      // format= (contract §exports): hf records, a COCO refusal naming the formats that fit
      const hf = [];
      for await (const r of customer.jobs.exportLines<{ label: string }>(created.job_id, { format: "hf" })) hf.push(r.label);
      expect(hf).toEqual(["cat", "cat"]);
      const coco = await rejection(customer.jobs.exportStream(created.job_id, { format: "coco" }), ValidationError);
      expect(coco.body).toMatchObject({ error: "validation failed", formats: ["jsonl", "label-studio", "hf"] });

      const file = path.join(mkdtempSync(path.join(tmpdir(), "lg-sdk-")), "out.jsonl");
      const written = await customer.jobs.exportToFile(created.job_id, file);
      expect(written).toMatchObject({ path: file, lines: 2 });
      const text = readFileSync(file, "utf8");
      rmSync(path.dirname(file), { recursive: true, force: true });
      expect(written.bytes).toBe(Buffer.byteLength(text));
      expect(
        text
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l)),
      ).toEqual(exported);
    } finally {
      await server.close();
    }
  });

  it("billing and dashboard", async () => {
    const month = new Date().toISOString().slice(0, 7);
    const usage = await customer.billing.usage(month);
    expect(usage).toMatchObject({ month, currency: "usd", tier: "sandbox", labels_collected: 3, amount_cents: 0 });
    const badMonth = await rejection(customer.billing.usage("2024-13"), ValidationError);
    expect(badMonth.details[0]?.path).toBe("month");
    const invoices = await customer.billing.invoices();
    expect(invoices.items[0]).toMatchObject({ month, status: "open", labels_collected: 3 });

    const overview = await customer.dashboard.overview();
    expect(overview).toMatchObject({ labels_this_month: 3, tasks_by_status: { settled: 3 } });
    const tasks = await customer.dashboard.tasks({ status: "settled", sort: "settled_at_desc", per_page: 10 });
    expect(tasks).toMatchObject({ page: 1, per_page: 10, total: 3 });
    expect(tasks.items.every((t) => t.status === "settled")).toBe(true);
    await rejection(customer.dashboard.tasks({ sort: "nope" as never }), ValidationError);
    expect((await customer.dashboard.quality()).tasks_settled).toBe(3);
    expect((await customer.dashboard.usage()).days).toHaveLength(30);
    // the labeler rows appear with the label space's first background refit
    const labelers = await eventually(async () => {
      const list = await customer.dashboard.labelers();
      return list.items.length > 0 ? list : undefined;
    }, 15_000);
    expect(labelers.items[0]).toMatchObject({ labels: expect.any(Number), status: "active" });
  });

  it("settings: get, update (null clears), and a refused patch", async () => {
    const before = await customer.settings.get();
    expect(before.task_defaults.confidence_target).toBeNull();
    const after = await customer.settings.update({ task_defaults: { confidence_target: 0.9, min_labels: 2 }, quality: { gold_rate: 0.2 } });
    expect(after).toMatchObject({ task_defaults: { confidence_target: 0.9, min_labels: 2 }, quality: { gold_rate: 0.2 } });
    const bad = await rejection(customer.settings.update({ quality: { gold_rate: 2 } }), ValidationError);
    expect(bad.details[0]?.path).toBe("quality.gold_rate");
    expect((await customer.settings.update({ task_defaults: { confidence_target: null, min_labels: null } })).task_defaults).toMatchObject({
      confidence_target: null,
      min_labels: null,
    });
  });

  it("upgrade to production; the live key works", async () => {
    const up = await admin.admin.upgradeCustomer(customerId, { keep_sandbox_key: false });
    expect(up).toMatchObject({ customer_id: customerId, tier: "production", sandbox_keys_revoked: 1 });
    await rejection(customer.customers.me(), AuthenticationError);
    expect((await customer.withCredentials({ apiKey: up.api_key }).customers.me()).tier).toBe("production");
    await rejection(admin.admin.upgradeCustomer(customerId), ConflictError);
  });

  it("every route registered in the gateway is called by some SDK method", () => {
    const app = sys.app;
    const routes = expressRoutes((app as unknown as { router: Router }).router).filter((r) => r.split(" ")[1]?.startsWith("/v1/"));
    expect(routes.length).toBeGreaterThanOrEqual(30);
    // the routes the app registers under /v1 are exactly those of the OpenAPI document, and the SDK called each one
    const documented = OPENAPI_ROUTES.map((r) => norm(r.method, r.path));
    expect([...routes].sort()).toEqual([...documented].sort());
    expect(routes.filter((r) => !called.has(r))).toEqual([]);
  });
});

interface LayerLike {
  route?: { path: string; methods: Record<string, boolean> };
  rawPath?: string;
  handle?: { stack?: LayerLike[] };
}

/** `METHOD /path/{}` of every route of an express 5 router, mounted sub-routers included. */
function expressRoutes(router: { stack: unknown[] }, prefix = ""): string[] {
  const out: string[] = [];
  for (const layer of router.stack as LayerLike[]) {
    if (layer.route) {
      for (const [method, on] of Object.entries(layer.route.methods)) {
        if (on && method !== "_all") out.push(norm(method, `${prefix}${layer.route.path}`.replace(/\/$/, "") || "/"));
      }
    } else if (layer.handle?.stack) {
      const mount = typeof layer.rawPath === "string" && layer.rawPath !== "/" ? layer.rawPath : "";
      out.push(...expressRoutes(layer.handle as { stack: unknown[] }, prefix + mount));
    }
  }
  return [...new Set(out)];
}

describe("retries honor Retry-After (429), measured from the gateway's request log", () => {
  let sys: System;
  const log: { url: string; status: number; time: number; retryAfter?: string }[] = [];
  beforeAll(async () => {
    const logger = createLogger("test", "info", {
      write: (line: string) => {
        const entry = JSON.parse(line) as {
          req?: { url: string };
          res?: { statusCode: number; headers?: Record<string, string> };
          time: number;
        };
        if (entry.req && entry.res) {
          log.push({ url: entry.req.url, status: entry.res.statusCode, time: entry.time, retryAfter: entry.res.headers?.["retry-after"] });
        }
      },
    });
    sys = await startSystem({ workers: false, logger, rateLimits: { perKey: { sandbox: 2, production: 2 }, windowSeconds: 2 } });
  });
  afterAll(() => sys.close());

  it("a 429 is thrown as RateLimitError with retryAfter, and retried after Retry-After when retries are on", async () => {
    const registered = await new LabelgateClient({ baseUrl: sys.baseUrl }).customers.register({ name: "Busy Co", email: email() });
    const noRetry = new LabelgateClient({ baseUrl: sys.baseUrl, apiKey: registered.api_key, maxAttempts: 1, hooks });
    await noRetry.customers.me();
    await noRetry.customers.me();
    const limited = await rejection(noRetry.customers.me(), RateLimitError);
    expect(limited).toMatchObject({ status: 429, error: "rate limit exceeded", attempts: 1 });
    expect(limited.retryAfter).toBeGreaterThanOrEqual(1);

    // still inside the window: the next request is limited, then retried once the window has passed
    const events: ResponseEvent[] = [];
    const retrying = new LabelgateClient({ baseUrl: sys.baseUrl, apiKey: registered.api_key, maxAttempts: 4 });
    const me = await retrying.customers.me({ onResponse: (e) => events.push(e) });
    expect(me.customer_id).toBe(registered.customer_id);
    const requests = await eventually(async () => {
      const mine = log.filter((l) => l.url === "/v1/customers/me");
      return mine.length >= 5 ? mine : undefined;
    }, 5000);
    expect(requests.map((r) => r.status)).toEqual([200, 200, 429, 429, 200]);
    expect(events).toEqual([expect.objectContaining({ status: 200, attempts: 2 })]);
    const limitedAgain = requests[3] as (typeof log)[number];
    const retried = requests[4] as (typeof log)[number];
    const retryAfterSeconds = Number(limitedAgain.retryAfter);
    expect(retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // the retry reached the gateway no earlier than Retry-After after the 429 was answered
    expect(retried.time - limitedAgain.time).toBeGreaterThanOrEqual(retryAfterSeconds * 1000 - 20);
  });

  it("parses Retry-After as delta seconds or an HTTP date", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    expect(parseRetryAfter("0.5")).toBe(500);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:07 GMT", now)).toBe(7000);
    expect(parseRetryAfter("Wed, 31 Dec 2025 23:59:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe("503 when the queue (Redis) is down, and connection errors", () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem({ workers: false, redisUrl: `redis://127.0.0.1:${await freePort()}` });
  });
  afterAll(() => sys.close());

  it("health answers 503: ServiceUnavailableError with retryAfter and the failing check; GET is retried after Retry-After", async () => {
    const once = new LabelgateClient({ baseUrl: sys.baseUrl, maxAttempts: 1 });
    const down = await rejection(once.health(), ServiceUnavailableError);
    expect(down).toMatchObject({ status: 503, error: "service unavailable", retryAfter: 5, attempts: 1 });
    expect(down.body?.checks).toEqual({ database: "ok", queue: "unavailable" });

    const started = Date.now();
    const twice = await rejection(new LabelgateClient({ baseUrl: sys.baseUrl, maxAttempts: 2 }).health(), ServiceUnavailableError);
    expect(twice.attempts).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5000);
    // a Retry-After beyond maxRetryAfterMs is not waited for
    const impatient = await rejection(
      new LabelgateClient({ baseUrl: sys.baseUrl, maxAttempts: 5, maxRetryAfterMs: 1000 }).health(),
      ServiceUnavailableError,
    );
    expect(impatient.attempts).toBe(1);
  }, 30_000);

  it("a refused connection is a ConnectionError (status 0), retried for safe requests only", async () => {
    const dead = new LabelgateClient({
      baseUrl: `http://127.0.0.1:${await freePort()}`,
      apiKey: "sk_sandbox_x",
      initialBackoffMs: 10,
      maxAttempts: 3,
    });
    const get = await rejection(dead.tasks.get("tsk_x"), ConnectionError);
    expect(get).toMatchObject({ status: 0, attempts: 3 });
    const post = await rejection(
      dead.webhooks.create({ callback_url: "https://x.example/h", secret: "0123456789abcdef" }),
      ConnectionError,
    );
    expect(post.attempts).toBe(1);
    // a task submission carries a generated idempotency key, so it is retried
    expect((await rejection(dead.tasks.create(task()), ConnectionError)).attempts).toBe(3);

    // without Retry-After: capped exponential backoff with jitter, half the cap plus a random half
    const at: number[] = [];
    const timed = new LabelgateClient({
      baseUrl: dead.baseUrl,
      maxAttempts: 4,
      initialBackoffMs: 100,
      maxBackoffMs: 150,
      hooks: { onAttempt: () => at.push(performance.now()) },
    });
    await rejection(timed.health(), ConnectionError);
    const gaps = at.slice(1).map((t, i) => t - (at[i] as number));
    const caps = [100, 150, 150];
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual((caps[i] as number) / 2 - 5);
      expect(gap).toBeLessThan((caps[i] as number) + 100);
    });
  });
});
