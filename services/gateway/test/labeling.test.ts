/**
 * Labeler routes (contract §labelers): claims and labels, the claim invariants under concurrency, claim expiry,
 * and quota charging of labels (contract §accounts). Runs against this run's real Postgres and Redis.
 *
 * The database is shared with every other test file of the run, and a generic claim `{}` may pick up any
 * open task in it. So tests on specific tasks use the named form `{"task_id": ...}`, and where another
 * file's generic claim could take a slot of one of our tasks, assertions account for such foreign claims.
 */

import type { RecordedLabel } from "@labelgate/api/types";
import type { ClaimResult } from "@labelgate/store";
import {
  type ApiResponse,
  createLabeler,
  createLabelers,
  createTask,
  eventually,
  type Labeler,
  label,
  OPTIONS,
  registerCustomer,
  type System,
  settledResult,
  startSystem,
  taskBody,
} from "../../../test/system";

/** Error fields a response body may carry instead (contract §wire). */
interface ErrorFields {
  error?: string;
  details?: { path: string; message: string }[];
}

/** The wire shapes of the claim and label routes, as the gateway declares them, plus error fields. */
type ClaimBody = ErrorFields & Omit<ClaimResult, "job_id"> & { view_url?: string };
type LabelBody = ErrorFields & RecordedLabel;

let sys: System;
beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

function claim(s: System, labelerKey: string, body: Record<string, unknown> = {}): Promise<ApiResponse<ClaimBody>> {
  return s.api<ClaimBody>("POST", "/v1/labeling/claims", { token: labelerKey, body });
}

function labelClaim(s: System, labelerKey: string, claimId: string, value: unknown): Promise<ApiResponse<LabelBody>> {
  return s.api<LabelBody>("POST", `/v1/labeling/claims/${claimId}/label`, { token: labelerKey, body: { label: value } });
}

/**
 * On `s` (default: this file's system): a new customer's task (created with `overrides`), a new labeler, and
 * that labeler's claim on it (the response, whatever its status).
 */
async function claimedTask(overrides: Record<string, unknown> = {}, s: System = sys) {
  const c = await registerCustomer(s);
  const taskId = await createTask(s, c.key, overrides);
  const l = await createLabeler(s);
  const cl = await claim(s, l.key, { task_id: taskId });
  return { c, taskId, l, cl };
}

async function quotaUsed(s: System, customerKey: string): Promise<number> {
  const me = await s.api("GET", "/v1/customers/me", { token: customerKey });
  expect(me.status).toBe(200);
  return me.body.label_quota_used as number;
}

/** Live claims: status active and not yet expired (an expired claim no longer holds a slot). */
async function liveClaims(s: System, taskIds: string[]): Promise<{ id: string; task_id: string; labeler_id: string }[]> {
  return s.db.prisma.$queryRaw`
    SELECT id, task_id, labeler_id FROM claims
    WHERE task_id = ANY(${taskIds}::text[]) AND status = 'active' AND expires_at > now()`;
}

/** Live claims on `taskIds` held by labelers other than `ours` (other test files' generic claims). */
async function foreignLiveClaims(s: System, taskIds: string[], ours: Labeler[]): Promise<number> {
  const mine = new Set(ours.map((l) => l.id));
  return (await liveClaims(s, taskIds)).filter((c) => !mine.has(c.labeler_id)).length;
}

/**
 * Ends the live claims of `ls`: generic claims may sit on other test files' tasks, whose slots they
 * would otherwise hold for the whole claim TTL.
 */
async function releaseClaims(s: System, ls: Labeler[]): Promise<void> {
  await s.db.prisma.claim.updateMany({ where: { labelerId: { in: ls.map((l) => l.id) }, status: "active" }, data: { status: "expired" } });
}

/** How many labelers may hold a claim on the task at once (the decision rule's fewest labels that could decide it). */
async function claimCapOf(s: System, taskId: string): Promise<number> {
  return (await s.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } })).claimCap;
}

/** The task's `slots_full_until` hint (labeling.ts): set while live claims hold every slot. */
async function slotsFullUntilOf(s: System, taskId: string): Promise<Date | null> {
  return (await s.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } })).slotsFullUntil;
}

describe("POST /v1/labeling/claims", () => {
  it("claims a named task: 201 with the claim, the task's data and an expiry 10 minutes ahead", async () => {
    const c = await registerCustomer(sys);
    const taskId = await createTask(sys, c.key, { data_url: "https://images.example/claim.jpg" });
    const l = await createLabeler(sys);
    const before = Date.now();
    const res = await claim(sys, l.key, { task_id: taskId });
    expect(res.status).toBe(201);
    // no view_url: an https item (presigned view URLs: services/gateway/test/view-url.test.ts)
    expect(Object.keys(res.body).sort()).toEqual([
      "claim_id",
      "data_url",
      "expires_at",
      "instructions_version",
      "label_space",
      "label_spec",
      "task_id",
      "task_type",
    ]);
    expect(res.body.instructions_version).toBeNull();
    expect(res.body.claim_id).toMatch(/^clm_[A-Za-z0-9]+$/);
    expect(res.body).toMatchObject({
      task_id: taskId,
      task_type: "image_classification",
      data_url: "https://images.example/claim.jpg",
      label_spec: { question: "What animal is this?", options: OPTIONS },
    });
    expect(res.body.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const expiresIn = Date.parse(res.body.expires_at) - before;
    expect(expiresIn).toBeGreaterThan(600_000 - 15_000);
    expect(expiresIn).toBeLessThan(600_000 + 15_000);
    const row = await sys.db.prisma.claim.findUniqueOrThrow({ where: { id: res.body.claim_id } });
    expect(row).toMatchObject({ taskId, labelerId: l.id, status: "active" });
    expect(row.expiresAt.toISOString()).toBe(res.body.expires_at);
  });

  it("answers 404 task not found for an unknown task id", async () => {
    const l = await createLabeler(sys);
    const res = await claim(sys, l.key, { task_id: "tsk_doesnotexist000000" });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "task not found" });
  });

  it.each([
    [{ task_id: "tsk_x", extra: 1 }, ""],
    [{ foo: "bar" }, ""],
    [{ task_id: "abc_123" }, "task_id"],
    [{ task_id: 42 }, "task_id"],
  ])("rejects %j with 400 validation failed", async (body, path) => {
    const l = await createLabeler(sys);
    const res = await claim(sys, l.key, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: "validation failed" });
    const details = res.body.details ?? [];
    expect(details.length).toBeGreaterThan(0);
    expect(details.some((d) => d.path === path)).toBe(true);
  });

  it.each([
    ["no key", {}],
    ["an unknown labeler key", { authorization: `Bearer lk_${"0".repeat(43)}` }],
    ["a malformed key", { authorization: "Bearer not-a-key" }],
  ])("answers 401 invalid API key with %s", async (_name, headers) => {
    const res = await sys.api("POST", "/v1/labeling/claims", { headers, body: {} });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "invalid API key" });
  });

  it("answers 401 for a customer key", async () => {
    const c = await registerCustomer(sys);
    const res = await claim(sys, c.key, {});
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "invalid API key" });
  });

  it("answers 204 for a named task that is no longer open (canceled)", async () => {
    const c = await registerCustomer(sys);
    const taskId = await createTask(sys, c.key);
    expect((await sys.api("POST", `/v1/tasks/${taskId}/cancel`, { token: c.key })).status).toBe(200);
    const l = await createLabeler(sys);
    const res = await claim(sys, l.key, { task_id: taskId });
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
  });

  it("answers 204 for a named task that settled", async () => {
    const c = await registerCustomer(sys);
    const taskId = await createTask(sys, c.key, { consensus_threshold: 1 });
    const [a, b] = (await createLabelers(sys, 2)) as [Labeler, Labeler];
    expect((await label(sys, a.key, taskId, "dog")).status).toBe(201);
    expect((await settledResult(sys, c.key, taskId)).consensus_label).toBe("dog");
    expect((await claim(sys, b.key, { task_id: taskId })).status).toBe(204);
  });

  it("a generic claim returns an open task this labeler holds no claim on", async () => {
    const c = await registerCustomer(sys);
    await createTask(sys, c.key);
    const l = await createLabeler(sys);
    const res = await claim(sys, l.key, {});
    // Some open task exists (ours at least, unless other labelers filled it): 201 is expected, but only
    // its properties are asserted, since it may be any test file's task.
    if (res.status === 201) {
      const task = await sys.db.prisma.task.findUniqueOrThrow({ where: { id: res.body.task_id } });
      expect(["pending", "labeling"]).toContain(task.status);
      const mine = await sys.db.prisma.claim.findMany({ where: { labelerId: l.id } });
      expect(mine.map((m) => m.id)).toEqual([res.body.claim_id]);
    } else {
      expect(res.status).toBe(204);
    }
    await releaseClaims(sys, [l]);
  });
});

describe("claim invariants", () => {
  it("a labeler never gets the same task twice: while claimed it gets its claim back, after labeling nothing", async () => {
    const { taskId, l, cl: first } = await claimedTask({ consensus_threshold: 3 });
    expect(first.status).toBe(201);
    const again = await claim(sys, l.key, { task_id: taskId });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect((await labelClaim(sys, l.key, first.body.claim_id, "cat")).status).toBe(201);
    expect((await claim(sys, l.key, { task_id: taskId })).status).toBe(204);
    // The task still needs labels: another labeler can claim it.
    const other = await createLabeler(sys);
    expect((await claim(sys, other.key, { task_id: taskId })).status).toBe(201);
    expect(await sys.db.prisma.claim.count({ where: { taskId, labelerId: l.id } })).toBe(1);
  });

  it("a generic claim never returns a task the labeler already labeled", async () => {
    const c = await registerCustomer(sys);
    const taskId = await createTask(sys, c.key, { consensus_threshold: 3 });
    const l = await createLabeler(sys);
    expect((await label(sys, l.key, taskId, "dog")).status).toBe(201);
    const seen = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const res = await claim(sys, l.key, {});
      if (res.status === 204) break;
      expect(res.status).toBe(201);
      expect(res.body.task_id).not.toBe(taskId);
      expect(seen.has(res.body.task_id)).toBe(false);
      seen.add(res.body.task_id);
    }
    await releaseClaims(sys, [l]);
  });

  it("a new task under the confidence policy admits min_labels claims; its first label sets the cap from the model", async () => {
    const c = await registerCustomer(sys);
    const one = await createTask(sys, c.key, { confidence_target: 0.95 });
    const two = await createTask(sys, c.key, { confidence_target: 0.95, min_labels: 2 });
    // the prior's typical labeler would need 5 agreeing labels (decision.test.ts): 5 claims before, min_labels now
    expect([await claimCapOf(sys, one), await claimCapOf(sys, two)]).toEqual([1, 2]);
    const [a, b, d] = (await createLabelers(sys, 3)) as [Labeler, Labeler, Labeler];
    const held = await claim(sys, a.key, { task_id: one });
    expect(held.status).toBe(201);
    expect((await claim(sys, b.key, { task_id: one })).status).toBe(204); // one live claim, one could settle it
    expect((await claim(sys, b.key, { task_id: two })).status).toBe(201);
    expect((await claim(sys, d.key, { task_id: two })).status).toBe(201);
    const first = await labelClaim(sys, a.key, held.body.claim_id, "cat");
    expect(first.status).toBe(201);
    expect(first.body.labels_needed).toBeGreaterThan(0);
    // one label of a labeler the model does not know: more than one more label of the typical labeler
    expect(await claimCapOf(sys, one)).toBeGreaterThan(1);
    expect((await claim(sys, b.key, { task_id: one })).status).toBe(201);
    await releaseClaims(sys, [b, d]);
  });

  it("a task is never claimed by more labelers than could decide it; labels_needed is what it may still take", async () => {
    const c = await registerCustomer(sys);
    const taskId = await createTask(sys, c.key, { consensus_threshold: 3 });
    expect(await claimCapOf(sys, taskId)).toBe(3);
    const [a, b, d, e] = (await createLabelers(sys, 4)) as [Labeler, Labeler, Labeler, Labeler];
    const claims: ClaimBody[] = [];
    for (const l of [a, b, d]) {
      const res = await claim(sys, l.key, { task_id: taskId });
      expect(res.status).toBe(201);
      claims.push(res.body);
    }
    const [ca, cb, cd] = claims as [ClaimBody, ClaimBody, ClaimBody];
    // 3 live claims and 3 labels could decide it: a 4th distinct labeler gets nothing.
    expect((await claim(sys, e.key, { task_id: taskId })).status).toBe(204);

    // labels_needed: the most labels the task may still take (max_labels 7 − labels), contract §quality
    const first = await labelClaim(sys, a.key, ca.claim_id, "cat");
    expect(first.status).toBe(201);
    expect(first.body.labels_needed).toBe(6);
    expect(await claimCapOf(sys, taskId)).toBe(2);
    expect((await claim(sys, e.key, { task_id: taskId })).status).toBe(204); // 2 could decide it, 2 live claims

    const second = await labelClaim(sys, b.key, cb.claim_id, "cat");
    expect(second.status).toBe(201);
    expect(second.body.labels_needed).toBe(5);
    expect(await claimCapOf(sys, taskId)).toBe(1); // two agreeing labels: one more could decide it
    expect((await claim(sys, e.key, { task_id: taskId })).status).toBe(204); // 1, and 1 live claim

    const third = await labelClaim(sys, d.key, cd.claim_id, "dog");
    expect(third.status).toBe(201);
    expect(third.body.labels_needed).toBe(4);
    expect(await claimCapOf(sys, taskId)).toBe(1); // cat 2, dog 1: still one cat away
    // No live claim left and one label could decide it: the 4th labeler gets the slot now.
    expect((await claim(sys, e.key, { task_id: taskId })).status).toBe(201);
  });

  it("labels_needed and the claim cap are bounded by max_labels; 0 exactly with the deciding label", async () => {
    const c = await registerCustomer(sys);
    const taskId = await createTask(sys, c.key, { consensus_threshold: 3, max_labels: 4 });
    const ls = await createLabelers(sys, 4);
    const values = ["cat", "dog", "bird", "cat"];
    const needed: number[] = [];
    const caps: number[] = [];
    for (const [i, l] of ls.entries()) {
      const res = await label(sys, l.key, taskId, values[i] as string);
      expect(res.status).toBe(201);
      needed.push(res.body.labels_needed as number);
      caps.push(await claimCapOf(sys, taskId));
    }
    // labels_needed = max_labels − n until the 4th label fills max_labels and decides the task (plurality cat)
    expect(needed).toEqual([3, 2, 1, 0]);
    // claim cap = min(max_labels − n, threshold − top): min(3, 2), min(2, 2), min(1, 2), then 0 (decided)
    expect(caps).toEqual([2, 2, 1, 0]);
    expect(await sys.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } })).toMatchObject({
      status: expect.stringMatching(/^(settling|settled)$/),
      consensusLabel: "cat",
      resolution: "max_labels",
    });
  });

  it("a label keeps the task full while the remaining claims hold the new cap; a release frees it at once", async () => {
    const c = await registerCustomer(sys);
    const taskId = await createTask(sys, c.key, { consensus_threshold: 2 });
    const [a, b, d] = (await createLabelers(sys, 3)) as [Labeler, Labeler, Labeler];
    const ca = await claim(sys, a.key, { task_id: taskId });
    const cb = await claim(sys, b.key, { task_id: taskId });
    expect(await slotsFullUntilOf(sys, taskId)).not.toBeNull(); // 2 live claims, cap 2
    // one cat: the cap is 1, and b's live claim holds it
    expect((await labelClaim(sys, a.key, ca.body.claim_id, "cat")).status).toBe(201);
    expect(await claimCapOf(sys, taskId)).toBe(1);
    expect((await slotsFullUntilOf(sys, taskId))?.toISOString()).toBe(cb.body.expires_at);
    expect((await claim(sys, d.key, { task_id: taskId })).status).toBe(204);
    expect((await sys.api("DELETE", `/v1/labeling/claims/${cb.body.claim_id}`, { token: b.key })).status).toBe(204);
    expect(await slotsFullUntilOf(sys, taskId)).toBeNull();
    const cd = await claim(sys, d.key, { task_id: taskId });
    expect(cd.body.task_id).toBe(taskId);
    // d's claim fills the one slot again; its label decides the task, which clears the hint
    expect(await slotsFullUntilOf(sys, taskId)).not.toBeNull();
    expect((await labelClaim(sys, d.key, cd.body.claim_id, "cat")).body.labels_needed).toBe(0);
    expect(await slotsFullUntilOf(sys, taskId)).toBeNull();
  });
});

describe("DELETE /v1/labeling/claims/{claim_id} (skip)", () => {
  it("releases the claim: its slot returns at once to another labeler; again answers 204", async () => {
    const c = await registerCustomer(sys);
    const taskId = await createTask(sys, c.key, { consensus_threshold: 1, max_labels: 1 });
    const [a, b] = (await createLabelers(sys, 2)) as [Labeler, Labeler];
    const held = await claim(sys, a.key, { task_id: taskId });
    expect(held.status).toBe(201);
    // one label decides it: the one slot is taken
    expect((await claim(sys, b.key, { task_id: taskId })).status).toBe(204);
    const released = await sys.api("DELETE", `/v1/labeling/claims/${held.body.claim_id}`, { token: a.key });
    expect(released.status).toBe(204);
    expect(released.body).toBeNull();
    expect(await sys.db.prisma.claim.findUniqueOrThrow({ where: { id: held.body.claim_id } })).toMatchObject({ status: "expired" });
    // the slot is free: b gets it; a released claim cannot be labeled
    expect((await claim(sys, b.key, { task_id: taskId })).status).toBe(201);
    const late = await labelClaim(sys, a.key, held.body.claim_id, "cat");
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ error: "claim expired" });
    expect((await sys.api("DELETE", `/v1/labeling/claims/${held.body.claim_id}`, { token: a.key })).status).toBe(204);
  });

  it("answers 409 for a labeled claim, 404 for another labeler's or an unknown claim, 401 without a labeler key", async () => {
    const c = await registerCustomer(sys);
    const taskId = await createTask(sys, c.key);
    const [a, b] = (await createLabelers(sys, 2)) as [Labeler, Labeler];
    const held = await claim(sys, a.key, { task_id: taskId });
    const other = await sys.api("DELETE", `/v1/labeling/claims/${held.body.claim_id}`, { token: b.key });
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ error: "claim not found" });
    expect((await sys.api("DELETE", "/v1/labeling/claims/clm_unknown", { token: a.key })).status).toBe(404);
    expect((await sys.api("DELETE", "/v1/labeling/claims/not-a-claim", { token: a.key })).status).toBe(404);
    expect((await sys.api("DELETE", `/v1/labeling/claims/${held.body.claim_id}`, { token: c.key })).status).toBe(401);
    expect((await labelClaim(sys, a.key, held.body.claim_id, "cat")).status).toBe(201);
    const labeled = await sys.api("DELETE", `/v1/labeling/claims/${held.body.claim_id}`, { token: a.key });
    expect(labeled.status).toBe(409);
    expect(labeled.body).toMatchObject({ error: "claim already labeled" });
    expect(await sys.db.prisma.claim.findUniqueOrThrow({ where: { id: held.body.claim_id } })).toMatchObject({ status: "labeled" });
  });

  it("a release and a label of the same claim at once: exactly one succeeds, and the claim says which", async () => {
    for (let i = 0; i < 10; i++) {
      const { l, cl } = await claimedTask();
      expect(cl.status).toBe(201);
      const [released, labeled] = await Promise.all([
        sys.api("DELETE", `/v1/labeling/claims/${cl.body.claim_id}`, { token: l.key }),
        labelClaim(sys, l.key, cl.body.claim_id, "cat"),
      ]);
      expect([released.status, labeled.status].sort()).toEqual(labeled.status === 201 ? [201, 409] : [204, 409]);
      const row = await sys.db.prisma.claim.findUniqueOrThrow({ where: { id: cl.body.claim_id } });
      expect(row.status).toBe(labeled.status === 201 ? "labeled" : "expired");
    }
  });
});

describe("claim concurrency", () => {
  // Proves the row lock + re-check under the lock: 20 simultaneous claims on one task that needs 3 labels
  // create exactly 3 live claims, and every other request answers 204 (no over-assignment, no errors).
  it("20 labelers claiming one threshold-3 task at once: exactly 3 get it", async () => {
    const c = await registerCustomer(sys);
    const taskId = await createTask(sys, c.key, { consensus_threshold: 3 });
    const ls = await createLabelers(sys, 20);
    const results = await Promise.all(ls.map((l) => claim(sys, l.key, { task_id: taskId })));
    const created = results.filter((r) => r.status === 201);
    expect(results.filter((r) => r.status !== 201 && r.status !== 204)).toEqual([]);
    const foreign = await foreignLiveClaims(sys, [taskId], ls); // 0 unless another file's generic claim got in
    expect(created.length).toBe(3 - foreign);
    expect(created.every((r) => r.body.task_id === taskId)).toBe(true);
    const live = await liveClaims(sys, [taskId]);
    expect(live).toHaveLength(3);
    expect(new Set(live.map((cl) => cl.labeler_id)).size).toBe(3);
    expect(await sys.db.prisma.claim.count({ where: { taskId, status: "active" } })).toBe(3);
  });

  // Proves the invariants hold across many tasks claimed at once, with each labeler racing itself on
  // every task: per task never more live claims than labels needed (2), never one labeler twice.
  it("15 labelers × 10 tasks (threshold 2), all named claims at once: at most 2 per task, never a labeler twice", async () => {
    const c = await registerCustomer(sys);
    const taskIds: string[] = [];
    for (let i = 0; i < 10; i++) taskIds.push(await createTask(sys, c.key, { consensus_threshold: 2, max_labels: 5 }));
    const ls = await createLabelers(sys, 15);
    const requests = ls.flatMap((l) =>
      taskIds.map(async (t) => ({ labeler: l.id, task: t, res: await claim(sys, l.key, { task_id: t }) })),
    );
    const results = await Promise.all(requests);
    expect(results.filter((r) => r.res.status !== 201 && r.res.status !== 204).map((r) => r.res.status)).toEqual([]);

    const rows = await sys.db.prisma.claim.findMany({ where: { taskId: { in: taskIds } } });
    const live = await liveClaims(sys, taskIds);
    const mine = new Set(ls.map((l) => l.id));
    for (const t of taskIds) {
      const onTask = live.filter((cl) => cl.task_id === t);
      expect(onTask.length).toBe(2); // 15 claimers for 2 slots: the slots fill, and no more
      const createdHere = results.filter((r) => r.task === t && r.res.status === 201);
      expect(createdHere.length).toBe(onTask.filter((cl) => mine.has(cl.labeler_id)).length);
      expect(createdHere.every((r) => r.res.body.task_id === t)).toBe(true);
    }
    const pairs = rows.map((r) => `${r.labelerId}/${r.taskId}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    // Every 201 is a distinct claim row of that labeler on that task.
    const createdIds = results.filter((r) => r.res.status === 201).map((r) => r.res.body.claim_id);
    expect(new Set(createdIds).size).toBe(createdIds.length);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const r of results.filter((x) => x.res.status === 201)) {
      expect(byId.get(r.res.body.claim_id)).toMatchObject({ labelerId: r.labeler, taskId: r.task, status: "active" });
    }
  });

  // Proves the generic claim (SKIP LOCKED scan + re-check) under contention, including a labeler racing
  // itself: no labeler ever receives one task twice, and no task ends up with more live claims than it needs.
  it("12 labelers × 5 generic claims at once: never a task twice per labeler, never over the claim cap", async () => {
    const c = await registerCustomer(sys);
    for (let i = 0; i < 10; i++) await createTask(sys, c.key, { consensus_threshold: 2, max_labels: 5 });
    const ls = await createLabelers(sys, 12);
    try {
      const requests = ls.flatMap((l) => Array.from({ length: 5 }, async () => ({ labeler: l.id, res: await claim(sys, l.key, {}) })));
      const results = await Promise.all(requests);
      expect(results.filter((r) => r.res.status !== 201 && r.res.status !== 204).map((r) => r.res.status)).toEqual([]);
      const created = results.filter((r) => r.res.status === 201);
      expect(created.length).toBeGreaterThan(0); // our 10 tasks alone offer 20 slots

      for (const l of ls) {
        const tasks = created.filter((r) => r.labeler === l.id).map((r) => r.res.body.task_id);
        expect(new Set(tasks).size).toBe(tasks.length);
      }
      const rows = await sys.db.prisma.claim.findMany({ where: { labelerId: { in: ls.map((l) => l.id) } } });
      expect(rows).toHaveLength(created.length);
      const pairs = rows.map((r) => `${r.labelerId}/${r.taskId}`);
      expect(new Set(pairs).size).toBe(pairs.length);

      const claimedTasks = [...new Set(created.map((r) => r.res.body.task_id))];
      const over = await sys.db.prisma.$queryRaw<{ id: string; live: bigint; claim_cap: number }[]>`
        SELECT t.id, count(c.id) AS live, t.claim_cap FROM tasks t
        JOIN claims c ON c.task_id = t.id AND c.status = 'active' AND c.expires_at > now()
        WHERE t.id = ANY(${claimedTasks}::text[])
        GROUP BY t.id, t.claim_cap
        HAVING count(c.id) > t.claim_cap`;
      expect(over).toEqual([]);
    } finally {
      await releaseClaims(sys, ls);
    }
  });
});

describe("retry-safe claims (Idempotency-Key, contract §labelers)", () => {
  // A system of its own: the generic claims here must meet only this describe's tasks.
  let own: System;
  beforeAll(async () => {
    own = await startSystem({ workers: false });
  });
  afterAll(() => own.close());

  function keyedClaim(labelerKey: string, key: string, body: Record<string, unknown> = {}): Promise<ApiResponse<ClaimBody>> {
    return own.api<ClaimBody>("POST", "/v1/labeling/claims", { token: labelerKey, body, headers: { "idempotency-key": key } });
  }

  async function claimsOf(labelerId: string) {
    return own.db.prisma.claim.findMany({ where: { labelerId }, orderBy: { createdAt: "asc" } });
  }

  it("the same labeler and key get the same live claim back (201, same claim_id), generic or naming its task", async () => {
    const c = await registerCustomer(own);
    const [t1, t2] = [await createTask(own, c.key), await createTask(own, c.key)];
    const [l, other] = (await createLabelers(own, 2)) as [Labeler, Labeler];
    const first = await keyedClaim(l.key, "retry-1");
    expect(first.status).toBe(201);
    expect([t1, t2]).toContain(first.body.task_id);
    // the gateway's answer was lost: the retry gets the same claim, not a second slot
    for (let i = 0; i < 3; i++) {
      const retry = await keyedClaim(l.key, "retry-1");
      expect(retry.status).toBe(201);
      expect(retry.body).toEqual(first.body);
    }
    expect((await keyedClaim(l.key, "retry-1", { task_id: first.body.task_id })).body).toEqual(first.body);
    // the key's claim is of another task than the one named: 422
    const otherTask = first.body.task_id === t1 ? t2 : t1;
    const mismatch = await keyedClaim(l.key, "retry-1", { task_id: otherTask });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body).toEqual({ error: "idempotency key reused with a different request" });
    const rows = await claimsOf(l.id);
    expect(rows.map((r) => ({ id: r.id, key: r.idempotencyKey, status: r.status }))).toEqual([
      { id: first.body.claim_id, key: "retry-1", status: "active" },
    ]);
    // keys are per labeler: another labeler's claim with the same key is its own
    const others = await keyedClaim(other.key, "retry-1");
    expect(others.status).toBe(201);
    expect(others.body.claim_id).not.toBe(first.body.claim_id);
    // a new key is a new claim
    const next = await keyedClaim(l.key, "retry-2");
    expect(next.status).toBe(201);
    expect(next.body.task_id).toBe(otherTask);
    await releaseClaims(own, [l, other]);
  });

  it("concurrent requests with one key make one claim, generic or named", async () => {
    const c = await registerCustomer(own);
    const named = await createTask(own, c.key, { consensus_threshold: 3 });
    await createTask(own, c.key, { consensus_threshold: 3 });
    const l = await createLabeler(own);
    const generic = await Promise.all(Array.from({ length: 10 }, () => keyedClaim(l.key, "burst-generic")));
    expect(generic.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(generic.map((r) => r.body.claim_id)).size).toBe(1);
    const l2 = await createLabeler(own);
    const byName = await Promise.all(Array.from({ length: 10 }, () => keyedClaim(l2.key, "burst-named", { task_id: named })));
    expect(byName.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(byName.map((r) => r.body.claim_id)).size).toBe(1);
    expect((await claimsOf(l.id)).length).toBe(1);
    expect((await claimsOf(l2.id)).length).toBe(1);
    await releaseClaims(own, [l, l2]);
  });

  it("without a key, naming a task the labeler holds a live claim on returns that claim; once labeled, 204", async () => {
    const c = await registerCustomer(own);
    const taskId = await createTask(own, c.key, { consensus_threshold: 3 });
    const l = await createLabeler(own);
    const first = await claim(own, l.key, { task_id: taskId });
    expect(first.status).toBe(201);
    const again = await claim(own, l.key, { task_id: taskId });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    // with a key of its own, too: the held claim comes back
    expect((await keyedClaim(l.key, "held-1", { task_id: taskId })).body).toEqual(first.body);
    expect((await claimsOf(l.id)).length).toBe(1);
    expect((await labelClaim(own, l.key, first.body.claim_id, "cat")).status).toBe(201);
    expect((await claim(own, l.key, { task_id: taskId })).status).toBe(204);
    expect((await keyedClaim(l.key, "held-1", { task_id: taskId })).status).toBe(204);
  });

  it("a labeled or released claim is not live: its key claims anew, and its task is refused once labeled", async () => {
    const c = await registerCustomer(own);
    const t1 = await createTask(own, c.key, { consensus_threshold: 3 });
    const t2 = await createTask(own, c.key, { consensus_threshold: 3 });
    const l = await createLabeler(own);
    const labeled = await keyedClaim(l.key, "done-1", { task_id: t1 });
    expect((await labelClaim(own, l.key, labeled.body.claim_id, "dog")).status).toBe(201);
    // asking for the labeled task again is refused as before, key or not
    expect((await keyedClaim(l.key, "done-1", { task_id: t1 })).status).toBe(204);
    // the key may claim another task (the oldest open one of this describe)
    const fresh = await keyedClaim(l.key, "done-1");
    expect(fresh.status).toBe(201);
    expect(fresh.body.task_id).not.toBe(t1);
    // released: not live either; the same key makes a new claim
    expect((await own.api("DELETE", `/v1/labeling/claims/${fresh.body.claim_id}`, { token: l.key })).status).toBe(204);
    const reclaimed = await keyedClaim(l.key, "done-1", { task_id: t2 });
    expect(reclaimed.status).toBe(201);
    expect(reclaimed.body.task_id).toBe(t2);
    expect(new Set([labeled.body.claim_id, fresh.body.claim_id, reclaimed.body.claim_id]).size).toBe(3);
    const rows = await claimsOf(l.id);
    expect(rows.map((r) => [r.status, r.idempotencyKey])).toEqual([
      ["labeled", "done-1"],
      ["expired", "done-1"],
      ["active", "done-1"],
    ]);
    await releaseClaims(own, [l]);
  });

  it.each([
    ["a space", "two words"],
    ["256 characters", "k".repeat(256)],
    ["a non-ASCII character", "clé"],
  ])("rejects an Idempotency-Key with %s: 400 validation failed naming the header", async (_what, key) => {
    const l = await createLabeler(own);
    const res = await own.api<ClaimBody>("POST", "/v1/labeling/claims", {
      token: l.key,
      body: {},
      headers: { "idempotency-key": key },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: "validation failed", details: [{ path: "Idempotency-Key" }] });
    expect(await claimsOf(l.id)).toEqual([]);
  });
});

describe("claim expiry", () => {
  let short: System;
  beforeAll(async () => {
    short = await startSystem({ claimTtlSeconds: 1, workers: false });
  });
  afterAll(() => short.close());

  it("an expired claim returns its slot, and its label is refused with 409 claim expired", async () => {
    const c = await registerCustomer(short);
    const taskId = await createTask(short, c.key, { consensus_threshold: 1 });
    const [a, b] = (await createLabelers(short, 2)) as [Labeler, Labeler];
    const held = await claim(short, a.key, { task_id: taskId });
    expect(held.status).toBe(201);
    expect(Date.parse(held.body.expires_at) - Date.now()).toBeLessThanOrEqual(1_500);
    expect((await claim(short, b.key, { task_id: taskId })).status).toBe(204);

    const taken = await eventually(
      async () => {
        const res = await claim(short, b.key, { task_id: taskId });
        if (res.status === 201) return res;
        expect(res.status).toBe(204);
        return undefined;
      },
      10_000,
      "the expired claim's slot",
    );
    expect(taken.body.task_id).toBe(taskId);

    const late = await labelClaim(short, a.key, held.body.claim_id, "cat");
    expect(late.status).toBe(409);
    expect(late.body).toEqual({ error: "claim expired" });
    const row = await short.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(row.labelsCollected).toBe(0);
  });

  it("a key whose claim expired claims anew: a new claim, the old one marked expired", async () => {
    const c = await registerCustomer(short);
    const taskId = await createTask(short, c.key, { consensus_threshold: 1 });
    const l = await createLabeler(short);
    const headers = { "idempotency-key": "expiring-1" };
    const first = await short.api<ClaimBody>("POST", "/v1/labeling/claims", { token: l.key, body: { task_id: taskId }, headers });
    expect(first.status).toBe(201);
    const again = await eventually(async () => {
      const res = await short.api<ClaimBody>("POST", "/v1/labeling/claims", { token: l.key, body: { task_id: taskId }, headers });
      expect(res.status).toBe(201);
      return res.body.claim_id !== first.body.claim_id ? res : undefined;
    }, 10_000);
    expect(again.body.task_id).toBe(taskId);
    const old = await short.db.prisma.claim.findUniqueOrThrow({ where: { id: first.body.claim_id } });
    expect(old).toMatchObject({ status: "expired", idempotencyKey: "expiring-1" });
  });

  it("a labeler whose claim expired may claim the task again", async () => {
    const { taskId, l, cl: first } = await claimedTask({ consensus_threshold: 1 }, short);
    expect(first.status).toBe(201);
    // while the claim is live, asking again returns it; once it expired, a new claim
    const again = await eventually(async () => {
      const res = await claim(short, l.key, { task_id: taskId });
      expect(res.status).toBe(201);
      return res.body.claim_id !== first.body.claim_id ? res : undefined;
    }, 10_000);
    const res = await labelClaim(short, l.key, again.body.claim_id, "dog");
    // The second claim may itself have expired (1 s TTL) before the label: both outcomes are coherent.
    if (res.status === 201) expect(res.body.task_id).toBe(taskId);
    else expect(res.body).toEqual({ error: "claim expired" });
  });
});

describe("generic claims pass full tasks (slots_full_until)", () => {
  // A system of its own: generic claims here must meet only this describe's tasks.
  let own: System;
  beforeAll(async () => {
    own = await startSystem({ claimTtlSeconds: 3, workers: false });
  });
  afterAll(() => own.close());

  const hintOf = (taskId: string) => slotsFullUntilOf(own, taskId);

  it("the claim that fills the last slot marks the task full until that claim expires; then it is served again", async () => {
    const c = await registerCustomer(own);
    const older = await createTask(own, c.key, { consensus_threshold: 1 });
    const newer = await createTask(own, c.key, { consensus_threshold: 1 });
    const [a, b, d] = (await createLabelers(own, 3)) as [Labeler, Labeler, Labeler];
    const first = await claim(own, a.key);
    expect(first.body.task_id).toBe(older);
    expect((await hintOf(older))?.toISOString()).toBe(first.body.expires_at);
    expect(await hintOf(newer)).toBeNull();
    expect((await claim(own, b.key)).body.task_id).toBe(newer);
    expect((await claim(own, d.key)).status).toBe(204);
    // a's claim expires at the hint: the slot returns by itself
    const served = await eventually(
      async () => {
        const res = await claim(own, d.key);
        return res.status === 201 ? res : undefined;
      },
      10_000,
      "the expired claim's slot",
    );
    expect(served.body.task_id).toBe(older);
  });
});

describe("POST /v1/labeling/claims/{claim_id}/label", () => {
  it("records a label: 201 with the label, and the task is updated", async () => {
    const { c, taskId, l, cl } = await claimedTask({ consensus_threshold: 3 });
    expect(cl.status).toBe(201);
    const before = Date.now();
    const res = await labelClaim(sys, l.key, cl.body.claim_id, "bird");
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["claim_id", "created_at", "label", "label_id", "labels_needed", "task_id"]);
    expect(res.body.label_id).toMatch(/^lab_[A-Za-z0-9]+$/);
    expect(res.body).toMatchObject({ claim_id: cl.body.claim_id, task_id: taskId, label: "bird", labels_needed: 6 });
    expect(Math.abs(Date.parse(res.body.created_at) - before)).toBeLessThan(15_000);

    const stored = await sys.db.prisma.label.findUniqueOrThrow({ where: { id: res.body.label_id } });
    expect(stored).toMatchObject({ taskId, labelerId: l.id, claimId: cl.body.claim_id, value: "bird", customerId: c.id });
    expect(await sys.db.prisma.claim.findUniqueOrThrow({ where: { id: cl.body.claim_id } })).toMatchObject({ status: "labeled" });
    const task = await sys.api("GET", `/v1/tasks/${taskId}`, { token: c.key });
    expect(task.body).toMatchObject({ status: "labeling", labels_collected: 1 });
  });

  it("rejects a label outside the task's options with 400 (path label), and the claim stays usable", async () => {
    const { taskId, l, cl } = await claimedTask();
    expect(cl.status).toBe(201);
    const res = await labelClaim(sys, l.key, cl.body.claim_id, "horse");
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: "validation failed" });
    const details = res.body.details ?? [];
    expect(details.map((d) => d.path)).toContain("label");
    expect(await sys.db.prisma.label.count({ where: { taskId } })).toBe(0);
    expect((await labelClaim(sys, l.key, cl.body.claim_id, "cat")).status).toBe(201);
  });

  it.each([
    ["no label", {}],
    ["an empty label", { label: "" }],
    ["a non-string label", { label: 3 }],
    ["an unknown field", { label: "cat", extra: true }],
  ])("rejects a body with %s with 400 validation failed", async (_name, body) => {
    const { l, cl } = await claimedTask();
    const res = await sys.api("POST", `/v1/labeling/claims/${cl.body.claim_id}/label`, { token: l.key, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("validation failed");
  });

  it("answers 409 claim already labeled for a second label on the same claim", async () => {
    const { taskId, l, cl } = await claimedTask({ consensus_threshold: 3 });
    expect((await labelClaim(sys, l.key, cl.body.claim_id, "cat")).status).toBe(201);
    for (const value of ["cat", "dog"]) {
      const again = await labelClaim(sys, l.key, cl.body.claim_id, value);
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ error: "claim already labeled" });
    }
    expect(await sys.db.prisma.label.count({ where: { taskId } })).toBe(1);
  });

  // Proves the one-label-per-claim rule under a race: the same claim labeled 10 times at once yields one label.
  it("the same claim labeled 10 times concurrently records exactly one label", async () => {
    const { taskId, l, cl } = await claimedTask({ consensus_threshold: 3 });
    const results = await Promise.all(Array.from({ length: 10 }, () => labelClaim(sys, l.key, cl.body.claim_id, "cat")));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    const refused = results.filter((r) => r.status === 409);
    expect(refused).toHaveLength(9);
    expect(refused.every((r) => r.body.error === "claim already labeled")).toBe(true);
    expect(await sys.db.prisma.label.count({ where: { taskId } })).toBe(1);
    const task = await sys.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(task.labelsCollected).toBe(1);
  });

  it("answers 404 claim not found for another labeler's claim", async () => {
    const c = await registerCustomer(sys);
    const taskId = await createTask(sys, c.key);
    const [owner, thief] = (await createLabelers(sys, 2)) as [Labeler, Labeler];
    const cl = await claim(sys, owner.key, { task_id: taskId });
    const res = await labelClaim(sys, thief.key, cl.body.claim_id, "cat");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "claim not found" });
    expect((await labelClaim(sys, owner.key, cl.body.claim_id, "cat")).status).toBe(201);
  });

  it.each([["clm_doesnotexist0000"], ["not-a-claim-id"], ["tsk_abc"]])("answers 404 claim not found for %s", async (claimId) => {
    const l = await createLabeler(sys);
    const res = await labelClaim(sys, l.key, claimId, "cat");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "claim not found" });
  });

  it("answers 401 without a labeler key", async () => {
    const { c, cl } = await claimedTask();
    for (const token of [undefined, c.key]) {
      const res = await sys.api("POST", `/v1/labeling/claims/${cl.body.claim_id}/label`, { token, body: { label: "cat" } });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: "invalid API key" });
    }
  });

  it("answers 409 task no longer accepts labels once the customer canceled the task", async () => {
    const { c, taskId, l, cl } = await claimedTask();
    expect(cl.status).toBe(201);
    const cancel = await sys.api("POST", `/v1/tasks/${taskId}/cancel`, { token: c.key });
    expect(cancel.status).toBe(200);
    expect(cancel.body.status).toBe("canceled");
    const res = await labelClaim(sys, l.key, cl.body.claim_id, "cat");
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: "task no longer accepts labels", status: "canceled" });
    expect(await sys.db.prisma.label.count({ where: { taskId } })).toBe(0);
  });
});

describe("quota charging (contract §accounts)", () => {
  it("a task reserves consensus_threshold units; labels within it are free, each one beyond costs 1", async () => {
    const c = await registerCustomer(sys);
    expect(await quotaUsed(sys, c.key)).toBe(0);
    const taskId = await createTask(sys, c.key, { consensus_threshold: 2 });
    const [a, b, d] = (await createLabelers(sys, 3)) as [Labeler, Labeler, Labeler];
    const used = [await quotaUsed(sys, c.key)];
    for (const [l, value] of [
      [a, "cat"],
      [b, "dog"],
      [d, "cat"],
    ] as const) {
      expect((await label(sys, l.key, taskId, value)).status).toBe(201);
      used.push(await quotaUsed(sys, c.key));
    }
    expect(used).toEqual([2, 2, 2, 3]);
    const result = await settledResult(sys, c.key, taskId);
    expect(result).toMatchObject({ consensus_label: "cat", labels_collected: 3 });
    expect(await quotaUsed(sys, c.key)).toBe(3); // settlement charges nothing more
  });

  it("agreeing labels within the reservation cost nothing beyond it", async () => {
    const c = await registerCustomer(sys);
    const taskId = await createTask(sys, c.key, { consensus_threshold: 3 });
    expect(await quotaUsed(sys, c.key)).toBe(3);
    for (const l of await createLabelers(sys, 3)) {
      expect((await label(sys, l.key, taskId, "bird")).status).toBe(201);
      expect(await quotaUsed(sys, c.key)).toBe(3);
    }
    await settledResult(sys, c.key, taskId);
    const me = await sys.api("GET", "/v1/customers/me", { token: c.key });
    expect(me.body).toMatchObject({ label_quota: 500, label_quota_used: 3, label_quota_remaining: 497 });
  });

  it("canceling returns the unused part of the reservation", async () => {
    const c = await registerCustomer(sys);
    const taskId = await createTask(sys, c.key, { consensus_threshold: 3 });
    const l = await createLabeler(sys);
    expect((await label(sys, l.key, taskId, "cat")).status).toBe(201);
    expect(await quotaUsed(sys, c.key)).toBe(3);
    expect((await sys.api("POST", `/v1/tasks/${taskId}/cancel`, { token: c.key })).status).toBe(200);
    expect(await quotaUsed(sys, c.key)).toBe(1);
  });

  it("labels recorded at once, many to a transaction: each customer pays exactly its labels beyond the reservations", async () => {
    // Concurrent labels share one transaction (group commit), several of them on one task and of two
    // customers; the batch's charges are computed after its labels, so they must come out as if each label
    // had been recorded alone: reservation (threshold) + every label beyond it, per task.
    const customers = [await registerCustomer(sys), await registerCustomer(sys)];
    const tasks = customers.flatMap((c) => Array.from({ length: 4 }, () => ({ key: c.key, id: "" })));
    for (const t of tasks) t.id = await createTask(sys, t.key, { consensus_threshold: 3, max_labels: 7 });
    const ls = await createLabelers(sys, 7);
    const labelsOn = new Map(tasks.map((t) => [t.id, 0]));
    let concurrentMax = 0;
    for (let round = 0; round < 7; round++) {
      // every labeler claims every task it can (named claims), then all the claims are labeled at once,
      // spread over the options so that tasks go past their reservation before deciding
      const claims = (
        await Promise.all(
          tasks.flatMap((t) =>
            ls.map(async (l) => {
              const res = await claim(sys, l.key, { task_id: t.id });
              return res.status === 201 ? { task: t.id, labeler: l, claimId: res.body.claim_id } : undefined;
            }),
          ),
        )
      ).filter((x) => x !== undefined);
      if (claims.length === 0) break;
      concurrentMax = Math.max(concurrentMax, claims.length);
      const results = await Promise.all(
        claims.map((cl, i) => labelClaim(sys, cl.labeler.key, cl.claimId, OPTIONS[(i + round) % OPTIONS.length])),
      );
      for (const [i, r] of results.entries()) {
        // a task may settle before all of its claims are labeled: 409 task no longer accepts labels
        if (r.status === 201)
          labelsOn.set((claims[i] as { task: string }).task, (labelsOn.get((claims[i] as { task: string }).task) ?? 0) + 1);
        else expect([r.status, r.body.error]).toEqual([409, "task no longer accepts labels"]);
      }
    }
    expect(concurrentMax).toBeGreaterThan(1);
    const rows = await sys.db.prisma.task.findMany({ where: { id: { in: tasks.map((t) => t.id) } } });
    for (const row of rows) expect(row.labelsCollected).toBe(labelsOn.get(row.id));
    expect(rows.some((r) => r.labelsCollected > 3)).toBe(true); // some labels were charged
    for (const c of customers) {
      const own = rows.filter((r) => r.customerId === c.id);
      const expected = own.reduce((sum, r) => sum + Math.max(3, r.labelsCollected), 0);
      expect(await quotaUsed(sys, c.key)).toBe(expected);
      const stored = await sys.db.prisma.label.count({ where: { taskId: { in: own.map((r) => r.id) } } });
      expect(stored).toBe(own.reduce((sum, r) => sum + r.labelsCollected, 0));
    }
  });

  it("labels beyond the reservation are charged even past the quota: an in-flight task finishes", async () => {
    const c = await registerCustomer(sys, 2);
    const taskId = await createTask(sys, c.key, { consensus_threshold: 2, max_labels: 4 });
    expect(await quotaUsed(sys, c.key)).toBe(2);
    const ls = await createLabelers(sys, 3);
    for (const [i, value] of ["cat", "dog", "bird"].entries()) {
      expect((await label(sys, (ls[i] as Labeler).key, taskId, value)).status).toBe(201);
    }
    const me = await sys.api("GET", "/v1/customers/me", { token: c.key });
    expect(me.body).toMatchObject({ label_quota: 2, label_quota_used: 3, label_quota_remaining: 0 });
    const more = await sys.api("POST", "/v1/tasks", { token: c.key, body: taskBody() });
    expect(more.status).toBe(403);
    expect(more.body).toEqual({ error: "quota exhausted" });
  });
});
