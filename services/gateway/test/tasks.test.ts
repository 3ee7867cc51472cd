import { ADMIN_TOKEN, createLabeler, createTask, label, registerCustomer, type System, startSystem, taskBody } from "../../../test/system";

let sys: System;
beforeAll(async () => {
  sys = await startSystem({ workers: false });
});
afterAll(() => sys.close());

async function quotaUsed(key: string): Promise<number> {
  const me = await sys.api("GET", "/v1/customers/me", { token: key });
  return me.body.label_quota_used as number;
}

async function taskCount(customerId: string): Promise<number> {
  return sys.db.prisma.task.count({ where: { customerId } });
}

describe("POST /v1/tasks", () => {
  it("accepts a task: 202 {task_id, status: pending, created_at} and reserves consensus_threshold labels", async () => {
    const c = await registerCustomer(sys);
    const res = await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody({ metadata: { sku: "A-1" } }) });
    expect(res.status).toBe(202);
    expect(res.body.task_id).toMatch(/^tsk_/);
    expect(res.body.status).toBe("pending");
    expect(new Date(String(res.body.created_at)).toISOString()).toBe(res.body.created_at);
    expect(await quotaUsed(c.key)).toBe(3);

    const got = await sys.api("GET", `/v1/tasks/${res.body.task_id}`, { token: c.key });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      task_id: res.body.task_id,
      status: "pending",
      task_type: "image_classification",
      data_url: "https://images.example/1.jpg",
      label_spec: { question: "What animal is this?", options: ["cat", "dog", "bird"] },
      consensus_threshold: 3,
      max_labels: 7,
      metadata: { sku: "A-1" },
      labels_collected: 0,
      consensus_label: null,
      ledger_txid: null,
    });
  });

  it("takes consensus_threshold and max_labels from the body", async () => {
    const c = await registerCustomer(sys);
    const id = await createTask(sys, c.key, { consensus_threshold: 5, max_labels: 9 });
    const got = await sys.api("GET", `/v1/tasks/${id}`, { token: c.key });
    expect(got.body).toMatchObject({ consensus_threshold: 5, max_labels: 9 });
    expect(await quotaUsed(c.key)).toBe(5);
  });

  it.each([
    ["missing type", { type: undefined }, "type"],
    ["bad type", { type: "Image Classification" }, "type"],
    ["missing data_url", { data_url: undefined }, "data_url"],
    ["ftp data_url", { data_url: "ftp://x/y" }, "data_url"],
    ["non-URL data_url", { data_url: "not a url" }, "data_url"],
    ["s3:// data_url without bucket and key", { data_url: "s3://" }, "data_url"],
    ["gs:// data_url without a key", { data_url: "gs://b" }, "data_url"],
    ["s3:// data_url with an empty key", { data_url: "s3://b/" }, "data_url"],
    ["s3:// data_url without a bucket", { data_url: "s3:///k.jpg" }, "data_url"],
    ["one option", { label_spec: { question: "q", options: ["a"] } }, "label_spec.options"],
    ["duplicate options", { label_spec: { question: "q", options: ["a", "a"] } }, "label_spec.options"],
    ["empty question", { label_spec: { question: "", options: ["a", "b"] } }, "label_spec.question"],
    ["threshold 0", { consensus_threshold: 0 }, "consensus_threshold"],
    ["threshold 26", { consensus_threshold: 26 }, "consensus_threshold"],
    ["threshold not integer", { consensus_threshold: 2.5 }, "consensus_threshold"],
    ["max_labels below threshold", { consensus_threshold: 3, max_labels: 2 }, "max_labels"],
    ["max_labels 51", { max_labels: 51 }, "max_labels"],
    ["metadata not an object", { metadata: [1, 2] }, "metadata"],
    ["callback_url with credentials", { callback_url: "https://u:p@hooks.example/x" }, "callback_url"],
    ["unknown field", { priority: "high" }, ""],
  ])("rejects %s with 400 validation failed and creates nothing", async (_name, overrides, path) => {
    const c = await registerCustomer(sys);
    const body = taskBody(overrides);
    for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k];
    const res = await sys.api("POST", "/v1/tasks", { token: c.key, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("validation failed");
    expect((res.body.details as { path: string }[]).map((d) => d.path)).toContain(path);
    expect(await taskCount(c.id)).toBe(0);
    expect(await quotaUsed(c.key)).toBe(0);
  });

  it("answers 400 invalid JSON, 401 before parsing, and 413 over 1 MB", async () => {
    const c = await registerCustomer(sys);
    expect((await sys.api("POST", "/v1/tasks", { token: c.key, raw: "{oops" })).body).toEqual({ error: "invalid JSON" });
    expect((await sys.api("POST", "/v1/tasks", { raw: "{oops" })).status).toBe(401);
    const big = await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody({ metadata: { blob: "x".repeat(1_100_000) } }) });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ error: "payload too large" });
    expect(await taskCount(c.id)).toBe(0);
  });
});

describe("a body not sent as JSON", () => {
  /** POST `body` (a task, as JSON text) to `path` with the customer's key and the given headers. */
  const send = (path: string, key: string, body: string | Uint8Array, headers: Record<string, string>) =>
    fetch(sys.baseUrl + path, { method: "POST", headers: { authorization: `Bearer ${key}`, ...headers }, body });

  it("answers 415 content-type must be application/json, never a list of missing fields, and accepts nothing", async () => {
    const c = await registerCustomer(sys);
    const task = JSON.stringify(taskBody());
    const batch = JSON.stringify({ tasks: [taskBody()] });
    const refused: [string, string | Uint8Array, Record<string, string>][] = [
      ["/v1/tasks", task, { "content-type": "text/plain" }],
      ["/v1/tasks", task, { "content-type": "application/x-www-form-urlencoded" }],
      ["/v1/tasks", task, { "content-type": "multipart/form-data; boundary=x" }],
      // no Content-Type at all (curl -d sends form-urlencoded; a byte body sent by fetch has none)
      ["/v1/tasks", new TextEncoder().encode(task), {}],
      ["/v1/tasks/batch", batch, { "content-type": "text/plain" }],
    ];
    for (const [path, body, headers] of refused) {
      const res = await send(path, c.key, body, headers);
      expect({ path, headers, status: res.status, body: await res.json() }).toEqual({
        path,
        headers,
        status: 415,
        body: { error: "content-type must be application/json" },
      });
    }
    expect(await taskCount(c.id)).toBe(0);
    expect(await quotaUsed(c.key)).toBe(0);
    // the credential is checked first: a wrong key is told so, whatever the body
    expect((await send("/v1/tasks", "sk_sandbox_nobody", task, { "content-type": "text/plain" })).status).toBe(401);
  });

  it("reads JSON under any +json type and any charset parameter, and a request without a body as {}", async () => {
    const c = await registerCustomer(sys);
    const task = JSON.stringify(taskBody());
    for (const type of ["application/json; charset=utf-8", "Application/JSON", "application/vnd.api+json"]) {
      expect({ type, status: (await send("/v1/tasks", c.key, task, { "content-type": type })).status }).toEqual({ type, status: 202 });
    }
    // no body: the route's schema speaks (here: what is missing), whatever the Content-Type says
    const empty = await send("/v1/tasks", c.key, "", { "content-type": "text/plain" });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ error: "validation failed" });
    expect(await taskCount(c.id)).toBe(3);
  });

  it("answers 415 on the labeling routes too, and the claim stays open", async () => {
    const c = await registerCustomer(sys);
    const task = await createTask(sys, c.key, { consensus_threshold: 1 });
    const lab = await createLabeler(sys);
    const claim = await sys.api("POST", "/v1/labeling/claims", { token: lab.key, body: { task_id: task } });
    expect(claim.status).toBe(201);
    const res = await send(`/v1/labeling/claims/${claim.body.claim_id}/label`, lab.key, '{"label":"cat"}', {
      "content-type": "text/plain",
    });
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 415,
      body: { error: "content-type must be application/json" },
    });
    const ok = await sys.api("POST", `/v1/labeling/claims/${claim.body.claim_id}/label`, { token: lab.key, body: { label: "cat" } });
    expect(ok.status).toBe(201);
  });
});

describe("idempotency", () => {
  it("a repeat with the same body field key returns the original task without a second charge", async () => {
    const c = await registerCustomer(sys);
    const body = taskBody({ idempotency_key: "order-1" });
    const first = await sys.api("POST", "/v1/tasks", { token: c.key, body });
    const second = await sys.api("POST", "/v1/tasks", { token: c.key, body });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body.task_id).toBe(first.body.task_id);
    expect(await taskCount(c.id)).toBe(1);
    expect(await quotaUsed(c.key)).toBe(3);
  });

  it("the Idempotency-Key header wins over the body field", async () => {
    const c = await registerCustomer(sys);
    const a = await sys.api("POST", "/v1/tasks", {
      token: c.key,
      body: taskBody({ idempotency_key: "body-key" }),
      headers: { "idempotency-key": "hdr-key" },
    });
    const b = await sys.api("POST", "/v1/tasks", {
      token: c.key,
      body: taskBody({ idempotency_key: "other" }),
      headers: { "idempotency-key": "hdr-key" },
    });
    expect(b.body.task_id).toBe(a.body.task_id);
    const got = await sys.api("GET", `/v1/tasks/${a.body.task_id}`, { token: c.key });
    expect(got.body.idempotency_key).toBe("hdr-key");
  });

  it("the same key with a different body is 422 and creates nothing", async () => {
    const c = await registerCustomer(sys);
    await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody({ idempotency_key: "k1" }) });
    const res = await sys.api("POST", "/v1/tasks", {
      token: c.key,
      body: taskBody({ idempotency_key: "k1", data_url: "https://images.example/2.jpg" }),
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: "idempotency key reused with a different request" });
    expect(await taskCount(c.id)).toBe(1);
  });

  it("keys are scoped per customer", async () => {
    const a = await registerCustomer(sys);
    const b = await registerCustomer(sys);
    const ra = await sys.api("POST", "/v1/tasks", { token: a.key, body: taskBody({ idempotency_key: "shared" }) });
    const rb = await sys.api("POST", "/v1/tasks", { token: b.key, body: taskBody({ idempotency_key: "shared" }) });
    expect(rb.status).toBe(202);
    expect(rb.body.task_id).not.toBe(ra.body.task_id);
  });

  it("concurrent identical requests create one task", async () => {
    const c = await registerCustomer(sys);
    const body = taskBody({ idempotency_key: "race" });
    const results = await Promise.all(Array.from({ length: 10 }, () => sys.api("POST", "/v1/tasks", { token: c.key, body })));
    expect(results.every((r) => r.status === 202)).toBe(true);
    expect(new Set(results.map((r) => r.body.task_id)).size).toBe(1);
    expect(await taskCount(c.id)).toBe(1);
    expect(await quotaUsed(c.key)).toBe(3);
  });

  it("rejects a malformed Idempotency-Key header", async () => {
    const c = await registerCustomer(sys);
    const res = await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody(), headers: { "idempotency-key": "has space" } });
    expect(res.status).toBe(400);
  });
});

describe("quota", () => {
  it("403 quota exhausted creates nothing, for single tasks and batches", async () => {
    const c = await registerCustomer(sys, 5);
    expect((await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody() })).status).toBe(202);
    const over = await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody() });
    expect(over.status).toBe(403);
    expect(over.body).toEqual({ error: "quota exhausted" });
    const batch = await sys.api("POST", "/v1/tasks/batch", {
      token: c.key,
      body: { tasks: [taskBody({ consensus_threshold: 1 }), taskBody({ consensus_threshold: 2 })] },
    });
    expect(batch.status).toBe(403);
    expect(await taskCount(c.id)).toBe(1);
    expect(await sys.db.prisma.batch.count({ where: { customerId: c.id } })).toBe(0);
    expect(await quotaUsed(c.key)).toBe(3);
    // what is left still fits a smaller task
    expect((await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody({ consensus_threshold: 2 }) })).status).toBe(202);
  });

  it("never oversells when many requests race for the last units", async () => {
    const c = await registerCustomer(sys, 30);
    const results = await Promise.all(Array.from({ length: 25 }, () => sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody() })));
    expect(results.filter((r) => r.status === 202)).toHaveLength(10);
    expect(results.filter((r) => r.status === 403)).toHaveLength(15);
    expect(await taskCount(c.id)).toBe(10);
    expect(await quotaUsed(c.key)).toBe(30);
  });

  it("submissions grouped into one statement: a customer short of quota for its group never holds up another's", async () => {
    // concurrent submissions of one gateway share one insert (group commit): A's quota fits 4 of its 12
    // tasks, B's all of its 12, C's tasks of 2 and 4 units must be taken or refused one by one
    const a = await registerCustomer(sys, 12);
    const b = await registerCustomer(sys, 36);
    const c = await registerCustomer(sys, 7);
    const send = (key: string, threshold: number) =>
      sys.api("POST", "/v1/tasks", { token: key, body: taskBody({ consensus_threshold: threshold, max_labels: threshold }) });
    const results = await Promise.all([
      ...Array.from({ length: 12 }, () => send(a.key, 3).then((r) => ({ who: "a", status: r.status }))),
      ...Array.from({ length: 12 }, () => send(b.key, 3).then((r) => ({ who: "b", status: r.status }))),
      ...[4, 2, 4, 2].map((t) => send(c.key, t).then((r) => ({ who: "c", status: r.status }))),
    ]);
    const accepted = (who: string) => results.filter((r) => r.who === who && r.status === 202).length;
    expect(results.every((r) => r.status === 202 || r.status === 403)).toBe(true);
    expect(accepted("a")).toBe(4);
    expect(accepted("b")).toBe(12);
    expect(await quotaUsed(a.key)).toBe(12);
    expect(await quotaUsed(b.key)).toBe(36);
    // C: each of its tasks is taken if it fits in what is left when it comes (4 + 2, or 2 + 2 and then
    // neither 4), never more than 7 units, and nothing is reserved without a task
    const cUsed = await quotaUsed(c.key);
    expect(cUsed).toBeLessThanOrEqual(7);
    const cTasks = await sys.db.prisma.task.findMany({ where: { customerId: c.id }, select: { quotaReserved: true } });
    expect(cTasks.reduce((n, t) => n + t.quotaReserved, 0)).toBe(cUsed);
    expect(cTasks.length).toBe(accepted("c"));
    expect(cUsed).toBeGreaterThanOrEqual(4);
    expect(await taskCount(a.id)).toBe(4);
    expect(await taskCount(b.id)).toBe(12);
  });

  it("other routes keep working when the quota is exhausted", async () => {
    const c = await registerCustomer(sys, 3);
    const id = await createTask(sys, c.key);
    expect((await sys.api("GET", `/v1/tasks/${id}`, { token: c.key })).status).toBe(200);
    expect((await sys.api("GET", "/v1/customers/me", { token: c.key })).body.label_quota_remaining).toBe(0);
  });
});

describe("POST /v1/tasks/batch", () => {
  it("creates every task atomically, applies callback_url to tasks without their own, and reports counts", async () => {
    const c = await registerCustomer(sys);
    for (const url of ["https://hooks.example/all", "https://hooks.example/own"]) {
      expect(
        (await sys.api("POST", "/v1/webhooks", { token: c.key, body: { callback_url: url, secret: "0123456789abcdef" } })).status,
      ).toBe(201);
    }
    const res = await sys.api("POST", "/v1/tasks/batch", {
      token: c.key,
      body: {
        callback_url: "https://hooks.example/all",
        tasks: [taskBody(), taskBody({ callback_url: "https://hooks.example/own" }), taskBody({ consensus_threshold: 1 })],
      },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ task_count: 3, status: "accepted" });
    expect(res.body.batch_id).toMatch(/^bat_/);
    const ids = res.body.task_ids as string[];
    expect(ids).toHaveLength(3);
    const tasks = await Promise.all(ids.map((id) => sys.api("GET", `/v1/tasks/${id}`, { token: c.key })));
    expect(tasks.map((t) => t.body.callback_url)).toEqual([
      "https://hooks.example/all",
      "https://hooks.example/own",
      "https://hooks.example/all",
    ]);
    expect(tasks.every((t) => t.body.batch_id === res.body.batch_id)).toBe(true);
    expect(await quotaUsed(c.key)).toBe(7);

    const batch = await sys.api("GET", `/v1/batches/${res.body.batch_id}`, { token: c.key });
    expect(batch.status).toBe(200);
    expect(batch.body).toMatchObject({
      batch_id: res.body.batch_id,
      task_count: 3,
      status: "accepted",
      counts: { pending: 3, labeling: 0, settled: 0, canceled: 0 },
    });
  });

  it("rejects a callback_url without an active webhook (400 naming the path) and creates nothing", async () => {
    const c = await registerCustomer(sys);
    await sys.api("POST", "/v1/webhooks", { token: c.key, body: { callback_url: "https://hooks.example/ok", secret: "0123456789abcdef" } });
    const single = await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody({ callback_url: "https://hooks.example/unknown" }) });
    expect(single.status).toBe(400);
    expect(single.body.details).toEqual([{ path: "callback_url", message: expect.stringContaining("no active webhook") }]);
    const batch = await sys.api("POST", "/v1/tasks/batch", {
      token: c.key,
      body: { callback_url: "https://hooks.example/ok", tasks: [taskBody(), taskBody({ callback_url: "https://hooks.example/unknown" })] },
    });
    expect(batch.status).toBe(400);
    expect((batch.body.details as { path: string }[]).map((d) => d.path)).toEqual(["tasks.1.callback_url"]);
    const top = await sys.api("POST", "/v1/tasks/batch", {
      token: c.key,
      body: { callback_url: "https://hooks.example/unknown", tasks: [taskBody()] },
    });
    expect((top.body.details as { path: string }[]).map((d) => d.path)).toEqual(["callback_url"]);
    expect(await taskCount(c.id)).toBe(0);
    expect(await quotaUsed(c.key)).toBe(0);
  });

  it("a storage data_url needs a bucket and a key: the message says so; s3://b/k and gs://b/a/k are accepted", async () => {
    const c = await registerCustomer(sys);
    const res = await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody({ data_url: "gs://b" }) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: "validation failed",
      details: [{ path: "data_url", message: "must name a bucket and a key: gs://bucket/key" }],
    });
    const batch = await sys.api("POST", "/v1/tasks/batch", {
      token: c.key,
      body: { tasks: [taskBody({ data_url: "s3://b/k.jpg" }), taskBody({ data_url: "s3://" }), taskBody({ data_url: "gs://b/" })] },
    });
    expect(batch.status).toBe(400);
    expect(batch.body.details).toEqual([
      { path: "tasks.1.data_url", message: "must name a bucket and a key: s3://bucket/key" },
      { path: "tasks.2.data_url", message: "must name a bucket and a key: gs://bucket/key" },
    ]);
    expect(await taskCount(c.id)).toBe(0);
    for (const url of ["s3://b/k.jpg", "gs://b/a/k.jpg"]) {
      expect((await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody({ data_url: url }) })).status).toBe(202);
    }
  });

  it("rejects the whole batch when one task is invalid, pointing at it", async () => {
    const c = await registerCustomer(sys);
    const res = await sys.api("POST", "/v1/tasks/batch", { token: c.key, body: { tasks: [taskBody(), taskBody({ data_url: "nope" })] } });
    expect(res.status).toBe(400);
    expect((res.body.details as { path: string }[]).map((d) => d.path)).toContain("tasks.1.data_url");
    expect(await taskCount(c.id)).toBe(0);
  });

  it.each([
    ["empty tasks", { tasks: [] }],
    ["no tasks", {}],
    ["duplicate task keys", { tasks: [taskBody({ idempotency_key: "x" }), taskBody({ idempotency_key: "x" })] }],
    ["bad callback_url", { tasks: [taskBody()], callback_url: "ftp://x" }],
  ])("400 for %s", async (_name, body) => {
    const c = await registerCustomer(sys);
    expect((await sys.api("POST", "/v1/tasks/batch", { token: c.key, body })).status).toBe(400);
  });

  it("replays a batch with the same Idempotency-Key and rejects a different body (422)", async () => {
    const c = await registerCustomer(sys);
    const body = { tasks: [taskBody(), taskBody()] };
    const a = await sys.api("POST", "/v1/tasks/batch", { token: c.key, body, headers: { "idempotency-key": "b-1" } });
    const b = await sys.api("POST", "/v1/tasks/batch", { token: c.key, body, headers: { "idempotency-key": "b-1" } });
    expect(b.status).toBe(202);
    expect(b.body.batch_id).toBe(a.body.batch_id);
    expect(b.body.task_ids).toEqual(a.body.task_ids);
    expect(await taskCount(c.id)).toBe(2);
    const c2 = await sys.api("POST", "/v1/tasks/batch", {
      token: c.key,
      body: { tasks: [taskBody()] },
      headers: { "idempotency-key": "b-1" },
    });
    expect(c2.status).toBe(422);
  });

  it("a task-level key that already exists fails the whole batch with 422", async () => {
    const c = await registerCustomer(sys);
    await createTask(sys, c.key, { idempotency_key: "taken" });
    const res = await sys.api("POST", "/v1/tasks/batch", {
      token: c.key,
      body: { tasks: [taskBody(), taskBody({ idempotency_key: "taken" })] },
    });
    expect(res.status).toBe(422);
    expect(await taskCount(c.id)).toBe(1);
    expect(await quotaUsed(c.key)).toBe(3);
  });

  it("accepts a 1,000-task batch and answers 413 over 10 MB", async () => {
    const c = await registerCustomer(sys, 10_000);
    const tasks = Array.from({ length: 1000 }, (_, i) => taskBody({ data_url: `https://images.example/${i}.jpg`, consensus_threshold: 1 }));
    const ok = await sys.api("POST", "/v1/tasks/batch", { token: c.key, body: { tasks } });
    expect(ok.status).toBe(202);
    expect(ok.body.task_count).toBe(1000);
    const huge = Array.from({ length: 40 }, () => taskBody({ metadata: { blob: "x".repeat(300_000) } }));
    const tooBig = await sys.api("POST", "/v1/tasks/batch", { token: c.key, body: { tasks: huge } });
    expect(tooBig.status).toBe(413);
    expect(await taskCount(c.id)).toBe(1000);
  });
});

describe("cancel", () => {
  it("cancels a pending task, releases its reservation, and is idempotent", async () => {
    const c = await registerCustomer(sys);
    const id = await createTask(sys, c.key);
    expect(await quotaUsed(c.key)).toBe(3);
    const res = await sys.api("POST", `/v1/tasks/${id}/cancel`, { token: c.key });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("canceled");
    expect(res.body.canceled_at).toBeTruthy();
    expect(await quotaUsed(c.key)).toBe(0);
    const again = await sys.api("POST", `/v1/tasks/${id}/cancel`, { token: c.key });
    expect(again.status).toBe(200);
    expect(await quotaUsed(c.key)).toBe(0);
    const result = await sys.api("GET", `/v1/tasks/${id}/result`, { token: c.key });
    expect(result.status).toBe(409);
    expect(result.body).toMatchObject({ error: "task canceled", status: "canceled" });
  });

  it("a labeled task releases only the unused part of the reservation; a canceled task is not claimable", async () => {
    const c = await registerCustomer(sys);
    const id = await createTask(sys, c.key);
    const l = await createLabeler(sys);
    expect((await label(sys, l.key, id, "cat")).status).toBe(201);
    await sys.api("POST", `/v1/tasks/${id}/cancel`, { token: c.key });
    expect(await quotaUsed(c.key)).toBe(1);
    const l2 = await createLabeler(sys);
    expect((await sys.api("POST", "/v1/labeling/claims", { token: l2.key, body: { task_id: id } })).status).toBe(204);
  });

  it("a settled task cannot be canceled (409 with its status)", async () => {
    const c = await registerCustomer(sys);
    const id = await createTask(sys, c.key);
    await sys.db.prisma.task.update({ where: { id }, data: { status: "settled" } });
    const res = await sys.api("POST", `/v1/tasks/${id}/cancel`, { token: c.key });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: "task cannot be canceled", status: "settled" });
  });
});

describe("result and isolation", () => {
  it("result is 202 {task_id, status, labels_collected, consensus_threshold} while labeling", async () => {
    const c = await registerCustomer(sys);
    const id = await createTask(sys, c.key);
    const res = await sys.api("GET", `/v1/tasks/${id}/result`, { token: c.key });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ task_id: id, status: "pending", labels_collected: 0, consensus_threshold: 3 });
  });

  it("another customer's ids are 404 on every route", async () => {
    const owner = await registerCustomer(sys);
    const other = await registerCustomer(sys);
    const id = await createTask(sys, owner.key);
    const batch = await sys.api("POST", "/v1/tasks/batch", { token: owner.key, body: { tasks: [taskBody()] } });
    for (const [method, path, error] of [
      ["GET", `/v1/tasks/${id}`, "task not found"],
      ["GET", `/v1/tasks/${id}/result`, "task not found"],
      ["POST", `/v1/tasks/${id}/cancel`, "task not found"],
      ["GET", `/v1/batches/${batch.body.batch_id}`, "batch not found"],
    ] as const) {
      const res = await sys.api(method, path, { token: other.key });
      expect([path, res.status, res.body]).toEqual([path, 404, { error }]);
    }
    // idempotency keys do not leak either
    await sys.api("POST", "/v1/tasks", { token: owner.key, body: taskBody({ idempotency_key: "secret-order" }) });
    const theirs = await sys.api("POST", "/v1/tasks", {
      token: other.key,
      body: taskBody({ idempotency_key: "secret-order", data_url: "https://x.example/a" }),
    });
    expect(theirs.status).toBe(202);
  });

  it("unknown and malformed ids are 404", async () => {
    const c = await registerCustomer(sys);
    for (const path of ["/v1/tasks/tsk_doesnotexist", "/v1/tasks/garbage", "/v1/tasks/tsk_x/result", "/v1/batches/bat_nope"]) {
      expect((await sys.api("GET", path, { token: c.key })).status).toBe(404);
    }
  });

  it("admin token is not a customer key", async () => {
    expect((await sys.api("GET", "/v1/customers/me", { token: ADMIN_TOKEN })).status).toBe(401);
  });
});

describe("GET /v1/batches", () => {
  it("lists the customer's batches newest first, each as GET /v1/batches/{id}, paged", async () => {
    const c = await registerCustomer(sys);
    const other = await registerCustomer(sys);
    await sys.api("POST", "/v1/tasks/batch", { token: other.key, body: { tasks: [taskBody()] } });
    const empty = await sys.api("GET", "/v1/batches", { token: c.key });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ page: 1, per_page: 20, total: 0, items: [] });

    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const tasks = i === 1 ? [taskBody(), taskBody(), taskBody({ gold_label: "cat" })] : [taskBody()];
      const res = await sys.api("POST", "/v1/tasks/batch", { token: c.key, body: { tasks } });
      expect(res.status).toBe(202);
      ids.push(String(res.body.batch_id));
      if (i === 1) await sys.api("POST", `/v1/tasks/${(res.body.task_ids as string[])[0]}/cancel`, { token: c.key });
    }
    const all = await sys.api("GET", "/v1/batches", { token: c.key });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ page: 1, per_page: 20, total: 3 });
    const items = all.body.items as { batch_id: string }[];
    expect(items.map((b) => b.batch_id)).toEqual([...ids].reverse());
    // each item is exactly what the batch's own route answers (counts without gold tasks, gold counted apart)
    for (const item of items) {
      expect(item).toEqual((await sys.api("GET", `/v1/batches/${item.batch_id}`, { token: c.key })).body);
    }
    expect(items[1]).toMatchObject({
      batch_id: ids[1],
      task_count: 3,
      gold_tasks: 1,
      counts: { pending: 1, labeling: 0, settling: 0, settled: 0, canceled: 1 },
    });

    const second = await sys.api("GET", "/v1/batches?page=2&per_page=2", { token: c.key });
    expect(second.body).toMatchObject({ page: 2, per_page: 2, total: 3 });
    expect((second.body.items as { batch_id: string }[]).map((b) => b.batch_id)).toEqual([ids[0]]);
    const past = await sys.api("GET", "/v1/batches?page=9", { token: c.key });
    expect(past.body).toMatchObject({ page: 9, total: 3, items: [] });
  });

  it.each([
    ["page=0", "page"],
    ["page=-1", "page"],
    ["page=abc", "page"],
    ["page=1.5", "page"],
    ["per_page=0", "per_page"],
    ["per_page=101", "per_page"],
    ["sort=created_at", ""], // an unknown parameter: the whole query is named
  ])("400 for ?%s naming %s", async (query, path) => {
    const c = await registerCustomer(sys);
    const res = await sys.api("GET", `/v1/batches?${query}`, { token: c.key });
    expect(res.status).toBe(400);
    expect(res.body.error).toBeDefined();
    expect((res.body.details as { path: string }[]).map((d) => d.path)).toContain(path);
  });

  it("401 without a customer key", async () => {
    expect((await sys.api("GET", "/v1/batches")).status).toBe(401);
  });
});
