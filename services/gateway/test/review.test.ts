/**
 * Review, revisions and audits (docs/contract.md "Review and audits"; docs/decisions/0260 to 0262) end to end over
 * HTTP against this run's Postgres and Redis with every worker, LEDGER=local (the anchored case:
 * services/consensus-worker/test/revision-anchor.test.ts): an accepted result stays as it is; a rejection with
 * the right answer makes revision 2 for each task type, with its own ledger record, the earlier revision kept
 * and a signed `task.revised` delivered; a rejection alone reopens a single-choice task, which takes labels
 * from new labelers only and settles again never on the rejected option; every bad review is refused without
 * a trace; the audit queue draws settled tasks at the customer's rate, within binomial bounds per label space,
 * and a review closes the task's audit.
 */
import type { AuditPage, ReviewOutcome, SettledResult, Task } from "@labelgate/api/types";
import { verifyLedger } from "@labelgate/store";
import {
  createLabelers,
  createTask,
  eventually,
  type Labeler,
  label,
  registerCustomer,
  type System,
  settledResult,
  startSystem,
} from "../../../test/system";
import { json, newSecret, type Receiver, receiver, signedWith } from "../../../test/webhooks";

interface ErrorFields {
  error?: string;
  details?: { path: string; message: string }[];
  status?: string;
}

let sys: System;
let customer: { id: string; key: string };
let labelers: Labeler[];

beforeAll(async () => {
  sys = await startSystem();
  customer = await registerCustomer(sys);
  labelers = await createLabelers(sys, 4, "reviewer-test");
});
afterAll(() => sys.close());

const at = (i: number) => labelers[i] as Labeler;

function review(taskId: string, body: unknown, key = customer.key) {
  return sys.api<ReviewOutcome & ErrorFields>("POST", `/v1/tasks/${taskId}/review`, { token: key, body });
}

async function task(taskId: string): Promise<Task> {
  return (await sys.api<Task>("GET", `/v1/tasks/${taskId}`, { token: customer.key })).body;
}

/** A single-choice task settled on `value` by one label of labeler 0. */
async function settledOn(value: string, overrides: Record<string, unknown> = {}): Promise<{ taskId: string; result: SettledResult }> {
  const taskId = await createTask(sys, customer.key, { consensus_threshold: 1, ...overrides });
  const labeled = await label(sys, at(0).key, taskId, value);
  expect(labeled.status).toBe(201);
  return { taskId, result: (await settledResult(sys, customer.key, taskId)) as unknown as SettledResult };
}

/** Waits for the result of revision `revision`. */
function revisionResult(taskId: string, revision: number): Promise<SettledResult> {
  return eventually(
    async () => {
      const res = await sys.api<SettledResult>("GET", `/v1/tasks/${taskId}/result`, { token: customer.key });
      return res.status === 200 && res.body.revision === revision ? res.body : undefined;
    },
    20_000,
    `revision ${revision} of ${taskId}`,
  );
}

describe("accept", () => {
  it("keeps the result as it is, answers it with the review, and lists the review on the task", async () => {
    const { taskId, result } = await settledOn("cat");
    expect(result).toMatchObject({ revision: 1, revisions: [] });
    const res = await review(taskId, { verdict: "accept" });
    expect(res.status).toBe(200);
    expect(res.body.review).toMatchObject({
      task_id: taskId,
      verdict: "accept",
      answer: null,
      revision: 1,
      consensus_label: "cat",
      revised: false,
    });
    expect(res.body.review.review_id).toMatch(/^rvw_/);
    expect(res.body.result).toEqual(result);
    const t = await task(taskId);
    expect(t.revision).toBe(1);
    expect(t.reviews).toEqual([res.body.review]);
    // an answer equal to the result is an agreement: nothing changes either
    const same = await review(taskId, { verdict: "reject", answer: { label: "cat" } });
    expect(same.status).toBe(200);
    expect(same.body.review.revised).toBe(false);
    expect(same.body.result).toEqual(result);
    expect((await task(taskId)).reviews).toHaveLength(2);
  });
});

describe("reject with the right answer", () => {
  let rx: Receiver;
  const secret = newSecret();
  beforeAll(async () => {
    rx = await receiver();
    const hook = await sys.api("POST", "/v1/webhooks", {
      token: customer.key,
      body: { callback_url: rx.url, secret, events: ["task.settled", "task.revised"] },
    });
    expect(hook.status).toBe(201);
  });
  afterAll(() => rx.close());

  it("makes revision 2 (resolution review, confidence 1) on a ledger record of its own, keeps revision 1, and sends task.revised signed", async () => {
    const { taskId, result: first } = await settledOn("cat", { callback_url: rx.url });
    const res = await review(taskId, { verdict: "reject", answer: { label: "dog" } });
    expect(res.status).toBe(200);
    expect(res.body.review).toMatchObject({
      verdict: "reject",
      answer: { label: "dog" },
      revision: 1,
      consensus_label: "cat",
      revised: true,
    });
    // the answer is recorded as the next revision by the consensus worker
    expect(["settling", "settled"]).toContain(res.body.result.status);

    const revised = await revisionResult(taskId, 2);
    expect(revised).toMatchObject({
      status: "settled",
      revision: 2,
      consensus_label: "dog",
      confidence: 1,
      resolution: "review",
      posterior: { cat: 0, dog: 1, bird: 0 },
      labels_collected: 1,
    });
    // revision 1 as it was settled, with its own settlement; the new one has a record of its own
    const { revision: _r, revisions: _rs, status: _s, ...firstFields } = first;
    expect(revised.revisions).toEqual([{ ...firstFields, revision: 1 }]);
    expect(revised.settlement.ledger_txid).not.toBe(first.settlement.ledger_txid);
    expect(revised.settlement.sequence).toBeGreaterThan(first.settlement.sequence);
    expect(await verifyLedger(sys.db.prisma)).toMatchObject({ ok: true });
    const records = await sys.db.prisma.ledgerEntry.findMany({ where: { taskId }, orderBy: { revision: "asc" } });
    expect(records.map((r) => [r.revision, r.txid])).toEqual([
      [1, first.settlement.ledger_txid],
      [2, revised.settlement.ledger_txid],
    ]);

    // task.revised: signed like task.settled, with the revision and the one it replaced
    const delivered = await eventually(
      async () =>
        rx.received.find((r) => (json(r) as { event?: string; task_id?: string }).event === "task.revised" && json(r).task_id === taskId),
      20_000,
      "task.revised",
    );
    expect(signedWith(delivered.raw, delivered.headers["x-svc-signature"], secret)).toBe(true);
    expect(json(delivered)).toMatchObject({
      event: "task.revised",
      task_id: taskId,
      revision: 2,
      consensus_label: "dog",
      confidence: 1,
      ledger_txid: revised.settlement.ledger_txid,
      settled_at: revised.settled_at,
      previous: { consensus_label: "cat", confidence: first.confidence },
    });
    expect(delivered.headers["x-svc-event-id"]).toMatch(/^evt_/);
    const t = await task(taskId);
    expect(t).toMatchObject({ status: "settled", revision: 2, consensus_label: "dog", resolution: "review" });
    expect(t.reviews).toHaveLength(1);

    // the reviewed answer is a known truth of the space's model: the refit reads it with the reviewed truths
    // (decision 0266: a reviewed task enters the model as gold does, and the calibration once, as it settled)
    const row = await sys.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
    const input = await sys.store.spaces.fitInput(row.labelSpaceId);
    expect(input && "reviewed" in input ? input.reviewed : []).toContainEqual({ task: taskId, option: 1 });
  });

  it("revises each reserved type with its typed consensus", async () => {
    const cases: { body: Record<string, unknown>; first: unknown; answer: Record<string, unknown>; label: string; consensus: unknown }[] = [
      {
        body: { type: "multi_label_classification", label_spec: { question: "Which apply?", options: ["red", "round", "ripe"] } },
        first: { labels: ["red"] },
        answer: { labels: ["round", "red"] },
        label: '{"labels":["red","round"]}',
        consensus: { labels: ["red", "round"], confidence: { red: 1, round: 1, ripe: 1 } },
      },
      {
        body: { type: "bounding_box", label_spec: { question: "Boxes?", classes: ["car", "person"] } },
        first: { boxes: [{ label: "car", x: 1, y: 1, w: 10, h: 10 }] },
        answer: { boxes: [{ label: "person", x: 5, y: 5, w: 3, h: 8 }] },
        label: '{"boxes":[{"h":8,"label":"person","w":3,"x":5,"y":5}]}',
        consensus: { boxes: [{ label: "person", x: 5, y: 5, w: 3, h: 8, confidence: 1, support: 0 }] },
      },
      {
        body: { type: "text_span", label_spec: { question: "Names?", entity_types: ["PER", "ORG"] }, data_text: "Ada met Bob" },
        first: { spans: [{ start: 0, end: 3, label: "PER" }] },
        answer: { spans: [{ start: 8, end: 11, label: "PER" }] },
        label: '{"spans":[{"end":11,"label":"PER","start":8}]}',
        consensus: { spans: [{ start: 8, end: 11, label: "PER", confidence: 1 }] },
      },
    ];
    for (const c of cases) {
      const created = await sys.api<{ task_id: string }>("POST", "/v1/tasks", {
        token: customer.key,
        body: { data_url: "https://images.example/r.jpg", consensus_threshold: 1, ...c.body },
      });
      expect(created.status).toBe(202);
      const taskId = created.body.task_id;
      const claim = await sys.api<{ claim_id: string }>("POST", "/v1/labeling/claims", { token: at(0).key, body: { task_id: taskId } });
      expect(claim.status).toBe(201);
      const labeled = await sys.api("POST", `/v1/labeling/claims/${claim.body.claim_id}/label`, { token: at(0).key, body: c.first });
      expect(labeled.status).toBe(201);
      await settledResult(sys, customer.key, taskId);
      // a rejection alone is for single choice only
      const alone = await review(taskId, { verdict: "reject" });
      expect(alone.status).toBe(400);
      expect(alone.body.details?.[0]?.path).toBe("answer");
      const res = await review(taskId, { verdict: "reject", answer: c.answer });
      expect(res.status).toBe(200);
      const revised = await revisionResult(taskId, 2);
      expect(revised).toMatchObject({ consensus_label: c.label, confidence: 1, resolution: "review", consensus: c.consensus });
      expect(revised.revisions).toHaveLength(1);
      expect(revised.revisions[0]?.consensus).toBeDefined();
    }
  });
});

describe("reject alone (single choice)", () => {
  it("reopens the task: labels from new labelers only, up to max_labels more, never settling on the rejected option", async () => {
    const { taskId, result: first } = await settledOn("cat", { max_labels: 2 });
    const res = await review(taskId, { verdict: "reject" });
    expect(res.status).toBe(200);
    expect(res.body.review).toMatchObject({ verdict: "reject", answer: null, revised: true });
    expect(res.body.result).toMatchObject({ task_id: taskId, status: "labeling", labels_collected: 1 });
    expect((await sys.api("GET", `/v1/tasks/${taskId}/result`, { token: customer.key })).status).toBe(202);
    // a second review of a task no longer settled is refused
    const again = await review(taskId, { verdict: "accept" });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: "task not settled", status: "labeling" });
    // the labeler who labeled it gets nothing to claim there (204, as for any task not open to it)
    const claimAgain = await sys.api("POST", "/v1/labeling/claims", { token: at(0).key, body: { task_id: taskId } });
    expect(claimAgain.status).toBe(204);
    // a label on the rejected option does not settle it, though the threshold is 1
    const onRejected = await label(sys, at(1).key, taskId, "cat");
    expect(onRejected.status).toBe(201);
    expect((onRejected.body as { labels_needed: number }).labels_needed).toBeGreaterThan(0);
    expect((await task(taskId)).status).toBe("labeling");
    const deciding = await label(sys, at(2).key, taskId, "bird");
    expect(deciding.status).toBe(201);
    const revised = await revisionResult(taskId, 2);
    expect(revised).toMatchObject({
      revision: 2,
      consensus_label: "bird",
      resolution: "consensus",
      labels_collected: 3,
      label_counts: { cat: 2, dog: 0, bird: 1 },
    });
    expect(revised.posterior.cat).toBe(0);
    expect(revised.revisions[0]).toMatchObject({ revision: 1, consensus_label: "cat", settlement: first.settlement });
  });

  it("settles at max_labels more labels on the best option left", async () => {
    const { taskId } = await settledOn("dog", { max_labels: 2 });
    expect((await review(taskId, { verdict: "reject" })).status).toBe(200);
    // two more labels, both on the rejected option: the round is spent, the leader among the others settles it
    expect((await label(sys, at(1).key, taskId, "dog")).status).toBe(201);
    expect((await label(sys, at(2).key, taskId, "dog")).status).toBe(201);
    const revised = await revisionResult(taskId, 2);
    expect(revised.resolution).toBe("max_labels");
    expect(["cat", "bird"]).toContain(revised.consensus_label);
    // settled again: nothing to claim for a third labeler
    expect((await sys.api("POST", "/v1/labeling/claims", { token: at(3).key, body: { task_id: taskId } })).status).toBe(204);
  });

  it("refuses a rejection that would leave no option: the answer must be given", async () => {
    const taskId = await createTask(sys, customer.key, {
      consensus_threshold: 1,
      label_spec: { question: "Yes or no?", options: ["yes", "no"] },
    });
    expect((await label(sys, at(0).key, taskId, "yes")).status).toBe(201);
    await settledResult(sys, customer.key, taskId);
    expect((await review(taskId, { verdict: "reject" })).status).toBe(200);
    expect((await label(sys, at(1).key, taskId, "no")).status).toBe(201);
    await revisionResult(taskId, 2);
    const res = await review(taskId, { verdict: "reject" });
    expect(res.status).toBe(400);
    expect(res.body.details?.[0]).toMatchObject({ path: "answer" });
    expect((await task(taskId)).reviews).toHaveLength(1);
  });
});

describe("bad reviews", () => {
  it("answers 404 for another customer's task or an unknown id, 409 for a task not settled, 400 for a bad body, and keeps nothing", async () => {
    const { taskId } = await settledOn("bird");
    const other = await registerCustomer(sys);
    const foreign = await review(taskId, { verdict: "accept" }, other.key);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe("task not found");
    expect((await review("tsk_doesNotExist000000000", { verdict: "accept" })).status).toBe(404);
    expect((await review("not-a-task-id", { verdict: "accept" })).status).toBe(404);

    const open = await createTask(sys, customer.key, {});
    const notSettled = await review(open, { verdict: "accept" });
    expect(notSettled.status).toBe(409);
    expect(notSettled.body).toMatchObject({ error: "task not settled", status: "pending" });

    const bad: [unknown, string][] = [
      [{}, "verdict"],
      [{ verdict: "maybe" }, "verdict"],
      [{ verdict: "accept", answer: { label: "cat" } }, "answer"],
      [{ verdict: "reject", answer: { label: "zebra" } }, "answer.label"],
      [{ verdict: "reject", answer: { labels: ["cat"] } }, "answer"],
      [{ verdict: "accept", extra: 1 }, ""],
    ];
    for (const [body, path] of bad) {
      const res = await review(taskId, body);
      expect(res.status).toBe(400);
      expect(res.body.details?.some((d) => d.path === path)).toBe(true);
    }
    const t = await task(taskId);
    expect(t.reviews).toEqual([]);
    expect(t.revision).toBe(1);
  });
});

describe("audits", () => {
  /** `n` tasks of one label space (its own question) settled by labeler 3; their ids. */
  async function settleMany(key: string, question: string, n: number): Promise<string[]> {
    const batch = await sys.api<{ task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: key,
      body: {
        tasks: Array.from({ length: n }, (_, i) => ({
          type: "image_classification",
          data_url: `https://images.example/${question.length}-${i}.jpg`,
          label_spec: { question, options: ["cat", "dog"] },
          consensus_threshold: 1,
        })),
      },
    });
    expect(batch.status).toBe(202);
    for (const id of batch.body.task_ids) expect((await label(sys, at(3).key, id, "cat")).status).toBe(201);
    for (const id of batch.body.task_ids) await settledResult(sys, key, id);
    return batch.body.task_ids;
  }

  async function audits(key: string, status = "open", perPage = 100): Promise<AuditPage["items"]> {
    const items: AuditPage["items"] = [];
    for (let page = 1; ; page++) {
      const res = await sys.api<AuditPage>("GET", `/v1/audits?status=${status}&page=${page}&per_page=${perPage}`, { token: key });
      expect(res.status).toBe(200);
      items.push(...res.body.items);
      if (items.length >= res.body.total || res.body.items.length === 0) return items;
    }
  }

  it("draws settled tasks at quality.audit_rate in each label space (binomial bounds), and a review closes the audit", async () => {
    const auditor = await registerCustomer(sys, 2000);
    const patched = await sys.api("PATCH", "/v1/customers/me/settings", { token: auditor.key, body: { quality: { audit_rate: 0.5 } } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ quality: { audit_rate: 0.5 } });
    const n = 60;
    const spaces = [await settleMany(auditor.key, "Space A?", n), await settleMany(auditor.key, "Space B?", n)];
    const open = await audits(auditor.key);
    for (const ids of spaces) {
      const drawn = open.filter((a) => ids.includes(a.task_id)).length;
      // Binomial(60, 0.5): mean 30, sd 3.9; 4.5 sd either way (a false failure about once in 150,000 runs)
      expect(drawn).toBeGreaterThanOrEqual(13);
      expect(drawn).toBeLessThanOrEqual(47);
    }
    expect(new Set(open.map((a) => a.label_space_id)).size).toBe(2);
    const first = open[0] as AuditPage["items"][number];
    expect(first).toMatchObject({
      status: "open",
      consensus_label: "cat",
      resolution: "consensus",
      revision: 1,
      closed_at: null,
      review_id: null,
    });
    expect(first.confidence).toBeGreaterThan(0);
    expect(first.label_spec).toMatchObject({ options: ["cat", "dog"] });

    // a page answers {page, per_page, total, items}
    const page = await sys.api<AuditPage>("GET", "/v1/audits?per_page=5&page=2", { token: auditor.key });
    expect(page.body).toMatchObject({ page: 2, per_page: 5, total: open.length });
    expect(page.body.items.map((a) => a.task_id)).toEqual(open.slice(5, 10).map((a) => a.task_id));

    const reviewed = await review(first.task_id, { verdict: "accept" }, auditor.key);
    expect(reviewed.status).toBe(200);
    const done = await audits(auditor.key, "done");
    expect(done).toEqual([expect.objectContaining({ task_id: first.task_id, status: "done", review_id: reviewed.body.review.review_id })]);
    expect((await audits(auditor.key)).map((a) => a.task_id)).not.toContain(first.task_id);
    // the other customer's queue (rate unset: 0) is empty, and a bad status is a 400
    expect(await audits(customer.key)).toEqual([]);
    expect((await sys.api("GET", "/v1/audits?status=closed", { token: auditor.key })).status).toBe(400);
  });
});
