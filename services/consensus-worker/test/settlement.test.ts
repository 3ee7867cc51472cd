/**
 * Settlement end to end (contract §lifecycle, §settlement): the gateway, the consensus and webhook workers, Postgres and Redis,
 * all real. Exactly-once settlement under concurrency and duplicate jobs, the hash-chained ledger, and the
 * reconciliation of consensus jobs lost by Redis.
 *
 * The database is shared with every other test file of the run: each test uses its own customer, labelers
 * and tasks, never rewrites shared rows, and checks the ledger chain as a whole (others append concurrently).
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "@labelgate/canonical-json";
import { priorModel, refitAny, taskPosterior } from "@labelgate/quality";
import { type HandlersFor, type QueueKey, type RunningWorkers, startWorkers } from "@labelgate/queue";
import { GENESIS_HASH, type LedgerEntry, type LedgerRecord, recordHash, verifyLedger } from "@labelgate/store";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { REDIS_URL } from "../../../test/env";
import {
  createLabelers,
  createTask,
  eventually,
  label,
  registerCustomer,
  type System,
  settledResult,
  startConsensusWorkers,
  startSystem,
  useSystem,
} from "../../../test/system";
import { consensusHandlers, reconcile, type SettlementDeps, settleTask } from "../src";

const HASH = /^[0-9a-f]{64}$/;
const TXID = /^0x[0-9a-f]{64}$/;

function depsOf(s: System): SettlementDeps {
  return { store: s.store, relay: s.relay, logger: s.logger };
}

/** SHA-256 of prev ‖ canonical JSON of the payload: the ledger's hash rule over any stored payload. */
function chainHash(prevHash: string, payload: unknown): string {
  return createHash("sha256").update(prevHash).update(canonicalJson(payload)).digest("hex");
}

/** Labels `taskId` once per value, each by its own labeler (in order); every label must be accepted (201). */
async function labelAll(s: System, labelers: { key: string }[], taskId: string, values: string[]): Promise<void> {
  for (const [i, value] of values.entries()) {
    const labeler = labelers[i];
    if (!labeler) throw new Error(`no labeler #${i}`);
    const res = await label(s, labeler.key, taskId, value);
    expect(res.status).toBe(201);
  }
}

async function counts(s: System, taskId: string): Promise<{ ledger: number; events: number }> {
  const [ledger, events] = await Promise.all([
    s.db.prisma.ledgerEntry.count({ where: { taskId } }),
    s.db.prisma.event.count({ where: { taskId, type: "task.settled" } }),
  ]);
  return { ledger, events };
}

/** Every queue of this system's prefix is idle (nothing waiting, delayed or active). */
async function queueIdle(s: System, key: QueueKey): Promise<true | undefined> {
  const c = await s.queue.counts(key);
  return (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0) === 0 ? true : undefined;
}

// --- a pure chain check over an array of records, the same rules as verifyLedger ----------------------

interface ChainRecord {
  seq: bigint;
  txid: string;
  prevHash: string;
  hash: string;
  payload: unknown;
}

/** Verifies a contiguous run of records starting after `startPrev`. @returns the index of the first bad record, or -1. */
function firstBroken(records: readonly ChainRecord[], startPrev: string): number {
  let prev = startPrev;
  for (const [i, r] of records.entries()) {
    if (r.prevHash !== prev || chainHash(r.prevHash, r.payload) !== r.hash || r.txid !== `0x${r.hash}`) return i;
    prev = r.hash;
  }
  return -1;
}

/** A deep copy of ledger rows (bigint seq kept), so tampering never touches the shared table. */
function copyOf(entries: readonly LedgerEntry[]): ChainRecord[] {
  return entries.map((e) => ({
    seq: e.seq,
    txid: e.txid,
    prevHash: e.prevHash,
    hash: e.hash,
    payload: JSON.parse(JSON.stringify(e.payload)) as unknown,
  }));
}

const { sys } = useSystem({}, { labelers: [] });

/** tasks settled by this file's shared system `sys` (its ledger must hold at least these) */
const settledHere: string[] = [];

/**
 * Waits until the task's result is 200 (`settledResult`), records it in `settledHere`, and checks the result:
 * the task, status settled, `fields`, and a ledger txid. @returns the result and its `settlement`
 */
async function settledHereAs(
  customerKey: string,
  taskId: string,
  fields: Record<string, unknown>,
): Promise<{ result: Record<string, unknown>; settlement: Record<string, unknown> }> {
  const result = await settledResult(sys, customerKey, taskId);
  settledHere.push(taskId);
  expect(result).toMatchObject({ task_id: taskId, status: "settled", ...fields });
  const settlement = result.settlement as Record<string, unknown>;
  expect(settlement.ledger_txid).toMatch(TXID);
  return { result, settlement };
}

describe("settlement with the workers running", () => {
  it("settles three agreeing labels on a threshold-3 task: result 200, task view and ledger agree", async () => {
    const customer = await registerCustomer(sys);
    const [l0, l1, l2] = await createLabelers(sys, 3, "settlement");
    if (!l0 || !l1 || !l2) throw new Error("labelers");
    const taskId = await createTask(sys, customer.key, { consensus_threshold: 3 });

    const before = await sys.api("GET", `/v1/tasks/${taskId}/result`, { token: customer.key });
    expect(before.status).toBe(202);
    expect(before.body).toEqual({ task_id: taskId, status: "pending", labels_collected: 0, consensus_threshold: 3 });

    await labelAll(sys, [l0, l1], taskId, ["cat", "cat"]);
    const midway = await sys.api("GET", `/v1/tasks/${taskId}/result`, { token: customer.key });
    expect(midway.status).toBe(202);
    expect(midway.body).toEqual({ task_id: taskId, status: "labeling", labels_collected: 2, consensus_threshold: 3 });

    await labelAll(sys, [l2], taskId, ["cat"]);
    const { result, settlement } = await settledHereAs(customer.key, taskId, {
      consensus_label: "cat",
      resolution: "consensus",
      label_counts: { cat: 3, dog: 0, bird: 0 },
      labels_collected: 3,
      settlement: { ledger: "local" },
    });
    // the calibrated posterior of the label space's model at the deciding label (docs/decisions.md "Label quality")
    const confidence = result.confidence as number;
    expect(confidence).toBeGreaterThan(0.5);
    expect(confidence).toBeLessThanOrEqual(1);
    expect(confidence).toBe((result.posterior as Record<string, number>).cat);
    expect(new Date(result.settled_at as string).toISOString()).toBe(result.settled_at);
    expect(settlement.prev_hash).toMatch(HASH);

    const view = await sys.api("GET", `/v1/tasks/${taskId}`, { token: customer.key });
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({
      task_id: taskId,
      status: "settled",
      consensus_label: "cat",
      resolution: "consensus",
      ledger_txid: settlement.ledger_txid,
      settled_at: result.settled_at,
      labels_collected: 3,
    });

    // the ledger record is the settlement: same txid, the record is exactly the result's fields
    const entry = await sys.db.prisma.ledgerEntry.findUniqueOrThrow({ where: { taskId_revision: { taskId, revision: 1 } } });
    expect(entry.txid).toBe(settlement.ledger_txid);
    const record = entry.payload as unknown as LedgerRecord;
    expect(entry.txid).toBe(`0x${recordHash(record)}`);
    expect(record).toEqual({
      task_id: taskId,
      consensus_label: "cat",
      confidence,
      resolution: "consensus",
      label_counts: { cat: 3, dog: 0, bird: 0 },
      posterior: result.posterior,
      labels_collected: 3,
      settled_at: result.settled_at,
      sequence: settlement.sequence,
      prev_hash: settlement.prev_hash,
    });
    expect(await counts(sys, taskId)).toEqual({ ledger: 1, events: 1 });

    // the webhook worker records the task.settled event, whose payload carries the same txid
    const event = await eventually(
      async () => {
        const e = await sys.db.prisma.event.findFirstOrThrow({ where: { taskId, type: "task.settled" } });
        return e.recordedAt ? e : undefined;
      },
      15000,
      "task.settled recorded",
    );
    expect(event.customerId).toBe(customer.id);
    expect(event.payload).toEqual({
      event: "task.settled",
      task_id: taskId,
      consensus_label: "cat",
      confidence,
      ledger_txid: entry.txid,
      settled_at: result.settled_at,
    });
  });

  it("settles a disagreement at max_labels with resolution max_labels (threshold 2, labels cat, dog, bird)", async () => {
    const customer = await registerCustomer(sys);
    const ls = await createLabelers(sys, 3, "settlement");
    const taskId = await createTask(sys, customer.key, { consensus_threshold: 2, max_labels: 3 });
    await labelAll(sys, ls.slice(0, 2), taskId, ["cat", "dog"]);
    const open = await sys.api("GET", `/v1/tasks/${taskId}/result`, { token: customer.key });
    expect(open.status).toBe(202);
    expect(open.body).toMatchObject({ status: "labeling", labels_collected: 2, consensus_threshold: 2 });

    await labelAll(sys, ls.slice(2), taskId, ["bird"]);
    // a three-way tie of counts: the posterior decides (packages/quality/test/rule.test.ts covers its ties)
    const { result } = await settledHereAs(customer.key, taskId, {
      resolution: "max_labels",
      label_counts: { cat: 1, dog: 1, bird: 1 },
      labels_collected: 3,
    });
    const posterior = result.posterior as Record<string, number>;
    expect(result.confidence).toBe(posterior[result.consensus_label as string]);
    // a three-way tie: the chosen option's posterior equals the highest one up to quality's POSTERIOR_TIE, 1e-9 (rounding of
    // sums of the same log terms in another order), and no option's posterior is above it by more
    expect(Math.max(...Object.values(posterior)) - (result.confidence as number)).toBeLessThanOrEqual(1e-9);
  });
});

describe("exactly-once settlement", () => {
  let off: System;
  beforeEach(async () => {
    // a database of its own: another file's relay would otherwise move this system's follow_up rows (its
    // routing and consensus jobs) to that file's queues, and the checks of this system's queues below fail
    off = await startSystem({ workers: false });
  });
  afterEach(() => off.close());

  it("10 concurrent settlements of a decided task: one settles, nine find it closed; one ledger row, one event", async () => {
    const customer = await registerCustomer(off);
    const ls = await createLabelers(off, 2, "settlement");
    const taskId = await createTask(off, customer.key, { consensus_threshold: 2 });
    await labelAll(off, ls, taskId, ["dog", "dog"]);
    // workers are off: the deciding label decided the task (settling), nothing is settled yet
    const task = await off.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(task).toMatchObject({ status: "settling", claimCap: 0, labelsCollected: 2, consensusLabel: "dog", resolution: "consensus" });
    expect(await counts(off, taskId)).toEqual({ ledger: 0, events: 0 });

    const outcomes = await Promise.all(Array.from({ length: 10 }, () => settleTask(depsOf(off), taskId)));
    expect(outcomes.filter((o) => o === "settled")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "closed")).toHaveLength(9);
    expect(await counts(off, taskId)).toEqual({ ledger: 1, events: 1 });

    const settled = await off.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
    const entry = await off.db.prisma.ledgerEntry.findUniqueOrThrow({ where: { taskId_revision: { taskId, revision: 1 } } });
    expect(settled).toMatchObject({ status: "settled", consensusLabel: "dog", resolution: "consensus", ledgerTxid: entry.txid });
    // one more settlement afterwards is still a no-op
    expect(await settleTask(depsOf(off), taskId)).toBe("closed");
    expect(await counts(off, taskId)).toEqual({ ledger: 1, events: 1 });
  });

  it("settlements run at once share one transaction and keep what each deciding label decided", async () => {
    // a database of its own: the other files' consensus workers sweep the shared database for label spaces to
    // refit, and a refit between the labels and the check below would change the model the confidences used
    const own = await startSystem({ workers: false });
    try {
      const customer = await registerCustomer(own);
      const [a, b, c] = await createLabelers(own, 3, "settlement");
      if (!a || !b || !c) throw new Error("labelers");
      const plan: [{ id: string; key: string }, string][][] = [
        [
          [a, "cat"],
          [b, "cat"],
        ],
        [
          [a, "dog"],
          [c, "dog"],
        ],
        [
          [b, "cat"],
          [c, "dog"],
          [a, "cat"],
        ],
        [
          [c, "bird"],
          [b, "bird"],
        ],
      ];
      const decidable: string[] = [];
      for (const labels of plan) {
        const taskId = await createTask(own, customer.key, { consensus_threshold: 2, max_labels: 3 });
        for (const [l, value] of labels) expect((await label(own, l.key, taskId, value)).status).toBe(201);
        decidable.push(taskId);
      }
      const open = await createTask(own, customer.key, { consensus_threshold: 2 });
      expect((await label(own, a.key, open, "cat")).status).toBe(201);

      // one store: one batcher; the first task is settled twice (the second waits and finds it closed)
      const deps = depsOf(own);
      const calls = [...decidable, open, decidable[0] as string];
      const outcomes = await Promise.all(calls.map((id) => settleTask(deps, id)));
      expect(outcomes).toEqual(["settled", "settled", "settled", "settled", "open", "closed"]);

      // one transaction wrote every ledger record (one xmin), each task once, and the chain still verifies
      const { rows } = await own.db.pool.query<{ records: number; transactions: number }>(
        "SELECT count(*)::int AS records, count(DISTINCT xmin::text)::int AS transactions FROM ledger_entries WHERE task_id = ANY($1)",
        [decidable],
      );
      expect(rows[0]).toEqual({ records: 4, transactions: 1 });
      for (const taskId of decidable) expect(await counts(own, taskId)).toEqual({ ledger: 1, events: 1 });
      expect((await verifyLedger(off.db.prisma)).ok).toBe(true);

      // each confidence was fixed by its deciding label under the space's prior model (its own database: no other file's refit sweep reaches it)
      const ordered = await own.db.pool.query<{ id: string; consensus_label: string; confidence: number }>(
        "SELECT id, consensus_label, confidence FROM tasks WHERE id = ANY($1) ORDER BY id",
        [decidable],
      );
      for (const task of ordered.rows) {
        const votes = (plan[decidable.indexOf(task.id)] ?? []).map(([l, value]) => ({ labelerId: l.id, value }));
        const rule = { options: ["cat", "dog", "bird"], consensusThreshold: 2, maxLabels: 3 };
        const expected = taskPosterior(rule, votes, priorModel(3))[task.consensus_label] as number;
        expect({ task: task.id, confidence: task.confidence }).toEqual({ task: task.id, confidence: expect.closeTo(expected, 10) });
      }
    } finally {
      await own.close();
    }
  });

  it("duplicate consensus jobs and two racing worker sets settle once; the event is recorded once", async () => {
    const customer = await registerCustomer(off);
    const ls = await createLabelers(off, 3, "settlement");
    const taskId = await createTask(off, customer.key, { consensus_threshold: 3 });
    await labelAll(off, ls, taskId, ["bird", "bird", "bird"]);
    const labels = await off.db.prisma.label.findMany({ where: { taskId } });
    expect(labels).toHaveLength(3);
    // the gateway enqueued one job, for the deciding label; enqueue one per label (as a replayed or
    // duplicated job would), each twice (deduplicated by job id)
    for (const l of labels) {
      await off.queue.enqueue("consensus", { taskId, labelId: l.id });
      await off.queue.enqueue("consensus", { taskId, labelId: l.id });
    }
    const waiting = await off.queue.counts("consensus");
    expect(waiting.waiting).toBe(3);

    const failures: string[] = [];
    let recording = true;
    const onFailed = (q: QueueKey, jobId: string | undefined, err: Error) => {
      if (recording) failures.push(`${q} ${jobId ?? "-"}: ${err.message}`);
    };
    const recorded: string[] = [];
    const webhook: HandlersFor<"webhook-worker"> = {
      routeEvent: async ({ eventId }) => {
        if ((await off.store.deliveries.route(eventId)).recorded) recorded.push(eventId);
      },
      // no webhook is registered in this test: nothing is ever delivered
      webhookDelivery: async () => undefined,
    };
    const consensusSets: { close(): Promise<void> }[] = [];
    const running: RunningWorkers[] = [];
    try {
      // two consensus worker sets, each a runtime of its own (its own store and batchers), racing
      for (let i = 0; i < 2; i++) {
        consensusSets.push(await startConsensusWorkers(off, 4, { RECONCILE_GRACE_MS: "60000" }));
        running.push(startWorkers(off.backend, webhook, { concurrency: { routeEvent: 4 }, onFailed }));
      }
      const event = await eventually(
        async () => {
          const e = await off.db.prisma.event.findFirst({ where: { taskId, type: "task.settled" } });
          return e?.recordedAt ? e : undefined;
        },
        20000,
        "the task.settled event to be recorded",
      );
      await eventually(() => queueIdle(off, "consensus"), 15000, "consensus queue idle");
      // the routing job records the event before it completes: wait until it has
      await eventually(() => queueIdle(off, "routeEvent"), 15000, "task-settled queue idle");

      // deliver the event twice more (a duplicate enqueue is a no-op; a requeue re-runs the completed job)
      await off.queue.enqueue("routeEvent", { eventId: event.id });
      expect(await off.queue.requeue("routeEvent", { eventId: event.id })).toBe("retried");
      await eventually(() => queueIdle(off, "routeEvent"), 15000, "task-settled queue idle");
      // and the consensus jobs too
      for (const l of labels) await off.queue.requeue("consensus", { taskId, labelId: l.id });
      await eventually(() => queueIdle(off, "consensus"), 15000, "consensus queue idle");

      expect(recorded).toEqual([event.id]);
      const after = await off.db.prisma.event.findUniqueOrThrow({ where: { id: event.id } });
      expect(after.recordedAt).toEqual(event.recordedAt);
      expect(await counts(off, taskId)).toEqual({ ledger: 1, events: 1 });
      const task = await off.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
      expect(task).toMatchObject({ status: "settled", consensusLabel: "bird", resolution: "consensus" });
      expect(failures).toEqual([]);
    } finally {
      recording = false;
      await Promise.all([...running.map((w) => w.close()), ...consensusSets.map((c) => c.close())]);
    }
  });
});

describe("ledger", () => {
  beforeAll(async () => {
    // self-sufficient when run alone (-t ledger): two settlements of its own, the first with a successor
    const customer = await registerCustomer(sys);
    const [l0] = await createLabelers(sys, 1, "settlement");
    if (!l0) throw new Error("labeler");
    for (const value of ["cat", "dog"]) {
      const taskId = await createTask(sys, customer.key, { consensus_threshold: 1 });
      await labelAll(sys, [l0], taskId, [value]);
      await settledResult(sys, customer.key, taskId);
      settledHere.push(taskId);
    }
  });

  it("verifies as a whole chain holding at least every settlement of this file", async () => {
    expect(settledHere.length).toBeGreaterThan(0);
    const ours = await sys.db.prisma.ledgerEntry.count({ where: { taskId: { in: settledHere } } });
    expect(ours).toBe(settledHere.length);
    const total = await sys.db.prisma.ledgerEntry.count();
    const verification = await verifyLedger(sys.db.prisma);
    expect(verification).toMatchObject({ ok: true });
    expect(verification.brokenAt).toBeUndefined();
    expect(verification.records).toBeGreaterThanOrEqual(total);
    expect(verification.records).toBeGreaterThanOrEqual(settledHere.length);
  });

  it("chains every record to the previous one: txid = 0x + hash, prev_hash = previous hash, genesis first", async () => {
    const entries = await sys.db.prisma.ledgerEntry.findMany({ orderBy: { seq: "asc" } });
    expect(entries.length).toBeGreaterThanOrEqual(settledHere.length);
    const first = entries[0];
    if (!first) throw new Error("empty ledger");
    const minSeq = await sys.db.prisma.ledgerEntry.aggregate({ _min: { seq: true } });
    expect(first.seq).toBe(minSeq._min.seq);
    expect(first.prevHash).toBe(GENESIS_HASH);
    expect(GENESIS_HASH).toBe("0".repeat(64));
    for (const [i, e] of entries.entries()) {
      expect(e.hash).toMatch(HASH);
      expect(e.txid).toBe(`0x${e.hash}`);
      expect(chainHash(e.prevHash, e.payload)).toBe(e.hash);
      if (i > 0) expect(e.prevHash).toBe(entries[i - 1]?.hash);
    }
    expect(firstBroken(copyOf(entries), GENESIS_HASH)).toBe(-1);
    // hashes are unique: no fork, no replay
    expect(new Set(entries.map((e) => e.hash)).size).toBe(entries.length);
    expect(new Set(entries.map((e) => e.prevHash)).size).toBe(entries.length);
  });

  it("detects tampering (on an in-memory copy): an altered payload no longer matches its hash nor the next link", async () => {
    const entries = copyOf(await sys.db.prisma.ledgerEntry.findMany({ orderBy: { seq: "asc" } }));
    // tamper with one of this file's records that has a successor
    const index = entries.findIndex((e, i) => i < entries.length - 1 && settledHere.includes((e.payload as { task_id: string }).task_id));
    expect(index).toBeGreaterThanOrEqual(0);
    const target = entries[index] as ChainRecord;
    const next = entries[index + 1] as ChainRecord;
    expect(firstBroken(entries, GENESIS_HASH)).toBe(-1);

    // 1. rewrite the consensus label and leave the hashes: the record itself no longer verifies
    const original = target.payload as Record<string, unknown>;
    const forged = { ...original, consensus_label: original.consensus_label === "cat" ? "dog" : "cat" };
    const tampered = entries.map((e, i) => (i === index ? { ...e, payload: forged } : e));
    const forgedHash = chainHash(target.prevHash, forged);
    expect(forgedHash).not.toBe(target.hash);
    expect(forgedHash).not.toBe(next.prevHash);
    expect(firstBroken(tampered, GENESIS_HASH)).toBe(index);

    // 2. rewrite it and recompute its hash and txid: the next record's prev_hash exposes it
    const rehashed = entries.map((e, i) => (i === index ? { ...e, payload: forged, hash: forgedHash, txid: `0x${forgedHash}` } : e));
    expect(firstBroken(rehashed, GENESIS_HASH)).toBe(index + 1);

    // 3. even a change of a number in the payload (confidence) is detected
    const nudged = { ...original, confidence: (original.confidence as number) - 1e-9 };
    expect(chainHash(target.prevHash, nudged)).not.toBe(target.hash);
    expect(
      firstBroken(
        entries.map((e, i) => (i === index ? { ...e, payload: nudged } : e)),
        GENESIS_HASH,
      ),
    ).toBe(index);

    // 4. dropping a record breaks the chain at its successor; swapping two breaks it too
    expect(firstBroken([...entries.slice(0, index), ...entries.slice(index + 1)], GENESIS_HASH)).toBe(index);
    const swapped = [...entries];
    swapped[index] = next;
    swapped[index + 1] = target;
    expect(firstBroken(swapped, GENESIS_HASH)).toBe(index);

    // the stored table is untouched
    expect((await verifyLedger(sys.db.prisma)).ok).toBe(true);
  });
});

describe("reconciliation", () => {
  it("requeues the settlement job of a decided task after Redis lost it, and the task then settles", async () => {
    // a database of its own: another file's relay would otherwise take this system's follow_up rows
    const off = await startSystem({ workers: false });
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const consensusQueue = new Queue("consensus", { connection: redis, prefix: off.prefix });
    let workers: RunningWorkers | undefined;
    try {
      const customer = await registerCustomer(off);
      const ls = await createLabelers(off, 2, "settlement");
      const taskId = await createTask(off, customer.key, { consensus_threshold: 2 });
      await labelAll(off, ls, taskId, ["cat", "cat"]);
      const task = await off.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
      expect(task).toMatchObject({ status: "settling", claimCap: 0 });
      const lastLabelId = task.lastLabelId as string;
      const jobId = `consensus-${lastLabelId}`;
      // the deciding label's follow_up row, relayed just after its commit
      await eventually(
        async () => ((await (await consensusQueue.getJob(jobId))?.getState()) === "waiting" ? true : undefined),
        10_000,
        "consensus job relayed",
      );

      // Redis loses the work
      await consensusQueue.obliterate({ force: true });
      expect(await consensusQueue.getJob(jobId)).toBeUndefined();
      expect(await queueIdle(off, "consensus")).toBe(true);

      // work younger than the grace period is left alone
      const reconcileDeps = { store: off.store, queue: off.queue, relay: off.relay, logger: off.logger, webhookRetryMax: 3 };
      await reconcile({ ...reconcileDeps, graceMs: 3_600_000, deliveryGraceMs: 3_600_000 });
      expect(await consensusQueue.getJob(jobId)).toBeUndefined();

      const report = await reconcile({ ...reconcileDeps, graceMs: 0, deliveryGraceMs: 3_600_000 });
      expect(report.tasks).toBeGreaterThanOrEqual(1);
      expect(report.requeued).toBeGreaterThanOrEqual(1);
      const requeued = await consensusQueue.getJob(jobId);
      expect(requeued?.data).toEqual({ taskId, labelId: lastLabelId });
      expect(await requeued?.getState()).toBe("waiting");
      // a job still pending is not queued twice
      expect(await off.queue.requeue("consensus", { taskId, labelId: lastLabelId })).toBe("pending");

      // The reconciliation is global (the database is shared with other test files): it may have requeued
      // their decided tasks into this prefix too. Run the real handlers, but only for this test's task,
      // so that other files' open tasks are not settled behind their back.
      const handlers = consensusHandlers({
        ...reconcileDeps,
        graceMs: 0,
        deliveryGraceMs: 3_600_000,
        fit: async (input) => refitAny(input),
      });
      const onlyThisTask: HandlersFor<"consensus-worker"> = {
        consensus: (payload, ctx) => (payload.taskId === taskId ? handlers.consensus(payload, ctx) : Promise.resolve()),
        reconcile: handlers.reconcile,
        refitSweep: async () => undefined,
        modelRefit: async () => undefined,
      };
      workers = startWorkers(off.backend, onlyThisTask, {});
      const result = await settledResult(off, customer.key, taskId);
      expect(result).toMatchObject({ status: "settled", consensus_label: "cat", resolution: "consensus", labels_collected: 2 });
      expect(await counts(off, taskId)).toEqual({ ledger: 1, events: 1 });
    } finally {
      await workers?.close();
      await consensusQueue.close();
      redis.disconnect();
      await off.close();
    }
  });
});
