/**
 * Label space refits (services/consensus-worker/src/refit.ts, packages/store/src/spaces.ts) on real Postgres
 * and Redis: a refit writes the space's model and every labeler's row once; run twice or concurrently it
 * writes once (compare-and-set on the version); the sweep enqueues the spaces due and only those; the fit
 * thread (piscina) computes what the inline computation does; the next label is scored with the stored model.
 */
import { randomBytes } from "node:crypto";
import { createLogger, issueKey, KEY_PREFIX } from "@labelgate/core";
import { QueueClient } from "@labelgate/queue";
import { createStore, decide, type FitInput, type FitOutput, labelSpaceId, type Store } from "@labelgate/store";
import { refitSpace } from "@labelgate/store/refit";
import { REDIS_URL, testDatabaseUrl } from "../../../test/env";
import { createFitPool, type RefitDeps, refitLabelSpace, refitSweep } from "../src/refit";

let store: Store;
let queue: QueueClient;
const logger = createLogger("test", "silent");
const inline: RefitDeps["fit"] = async (input) => refitSpace(input);

beforeAll(() => {
  store = createStore({ url: testDatabaseUrl(), poolMax: 6 });
  queue = new QueueClient({ kind: "redis", url: REDIS_URL, prefix: `lgtest:refit:${randomBytes(4).toString("hex")}` }, 2000);
});
afterAll(async () => {
  await queue.close();
  await store.close();
});

const deps = (): RefitDeps => ({ store, queue, logger, fit: inline });

/**
 * A customer's label space with `tasks` tasks labeled by `labelers` labelers (labeler i answers correctly
 * unless i is the last, who always answers "no"), and one gold task answered by all. Returns the ids.
 */
async function labeledSpace(tasks: number, labelers: number) {
  const customer = await store.accounts.register({
    name: "refit",
    email: `refit-${Date.now()}-${randomBytes(3).toString("hex")}@example.com`,
    labelQuota: 1_000_000,
    key: issueKey(KEY_PREFIX.sandbox),
  });
  const question = `Refit ${randomBytes(4).toString("hex")}?`;
  const options = ["yes", "no"];
  const ids: string[] = [];
  for (let i = 0; i < labelers; i++) ids.push((await store.accounts.createLabeler(`refit-${i}`, issueKey(KEY_PREFIX.labeler))).id);
  const create = async (gold?: string) => {
    const input = {
      type: "image_classification",
      data_url: "https://img.example/r.jpg",
      label_spec: { question, options },
      ...(gold ? { gold_label: gold } : {}),
    };
    const policy = { consensus_threshold: labelers, max_labels: labelers, confidence_target: null, min_labels: null };
    return (await store.tasks.create(customer.id, { input, policy }, undefined)).task.id;
  };
  const taskIds: string[] = [];
  for (let t = 0; t < tasks; t++) taskIds.push(await create());
  const goldId = await create("yes");
  for (const [t, taskId] of [...taskIds, goldId].entries()) {
    const truth = taskId === goldId ? "yes" : t % 2 ? "yes" : "no";
    for (const [i, labelerId] of ids.entries()) {
      const claim = await store.labeling.claim(labelerId, taskId, 600);
      if (!claim) throw new Error("no claim");
      await store.labeling.label(labelerId, claim.claim_id, i === labelers - 1 ? "no" : truth);
    }
  }
  return { customerId: customer.id, spaceId: labelSpaceId(customer.id, question, options), labelerIds: ids, question, options };
}

it("writes the space's model and a row per labeler; run twice at once it writes once, the other finds the version moved", async () => {
  const s = await labeledSpace(6, 3);
  expect((await store.spaces.due(10_000)).map((d) => d.id)).toContain(s.spaceId);
  // two refits read version 0 before either writes: exactly one compare-and-set succeeds
  const inputs = await Promise.all([store.spaces.fitInput(s.spaceId), store.spaces.fitInput(s.spaceId)]);
  const [a, b] = inputs.map((input) => {
    if (!input) throw new Error("no space");
    return { input, output: refitSpace(input) };
  });
  const raced = await Promise.all([a, b].map((r) => store.spaces.writeFit(r?.input as FitInput, r?.output as FitOutput)));
  expect(raced.sort()).toEqual(["stale", "written"]);
  const space = await store.db.prisma.labelSpace.findUniqueOrThrow({ where: { id: s.spaceId } });
  expect(space).toMatchObject({ version: 1, fittedLabels: 21 });
  // run through the handler twice at once: each run either writes the next version or finds it moved
  const outcomes = await Promise.all([refitLabelSpace(deps(), s.spaceId), refitLabelSpace(deps(), s.spaceId)]);
  expect(outcomes).toContain("written");
  const after = await store.db.prisma.labelSpace.findUniqueOrThrow({ where: { id: s.spaceId } });
  expect(after.version).toBe(1 + outcomes.filter((o) => o === "written").length);
  expect((space.model as { version: number; counts: { labels: number; goldTasks: number } }).version).toBe(1);
  expect((space.model as { counts: { labels: number; goldTasks: number } }).counts).toMatchObject({ labels: 21, goldTasks: 1 });
  const rows = await store.db.prisma.labelerModel.findMany({ where: { labelSpaceId: s.spaceId }, orderBy: { labelerId: "asc" } });
  expect(rows.map((r) => r.labelerId)).toEqual([...s.labelerIds].sort());
  for (const r of rows) expect(r).toMatchObject({ version: after.version, params: expect.objectContaining({ labels: 7 }) });
  // the gold record counted at each gold answer is the labelers' live record, untouched by the refit
  expect(rows.map((r) => r.goldAnswers)).toEqual([1, 1, 1]);
  // nothing new: the space is no longer due; a refit run anyway writes version 2 from the same labels
  expect((await store.spaces.due(10_000)).map((d) => d.id)).not.toContain(s.spaceId);
  expect(await refitLabelSpace(deps(), s.spaceId)).toBe("written");
  expect((await store.db.prisma.labelSpace.findUniqueOrThrow({ where: { id: s.spaceId } })).version).toBe(after.version + 1);
});

it("drops a refit whose version moved while it fitted (compare-and-set), writing no labeler row of it", async () => {
  const s = await labeledSpace(4, 3);
  const input = await store.spaces.fitInput(s.spaceId);
  if (!input) throw new Error("no space");
  const output = refitSpace(input);
  expect(await store.spaces.writeFit(input, output)).toBe("written");
  // the same input again (read at version 0) is stale now
  const tampered = { ...output, labelers: output.labelers.map((l) => ({ ...l, labels: 999 })) };
  expect(await store.spaces.writeFit(input, tampered)).toBe("stale");
  const rows = await store.db.prisma.labelerModel.findMany({ where: { labelSpaceId: s.spaceId } });
  for (const r of rows) expect((r.params as { labels: number }).labels).toBe(5);
});

it("the sweep enqueues a refit of each space due, once per version", async () => {
  const s = await labeledSpace(3, 2);
  expect(await refitSweep(deps())).toBeGreaterThanOrEqual(1);
  const counts = await queue.counts("modelRefit");
  const enqueued = counts.waiting ?? 0;
  expect(enqueued).toBeGreaterThanOrEqual(1);
  // the same versions again: BullMQ dedupes by job id (refit-<space>-<version>)
  await refitSweep(deps());
  expect((await queue.counts("modelRefit")).waiting).toBe(enqueued);
  expect(await refitLabelSpace(deps(), s.spaceId)).toBe("written");
});

it("computes in a worker thread what it computes inline", async () => {
  const s = await labeledSpace(5, 3);
  const input = await store.spaces.fitInput(s.spaceId);
  if (!input) throw new Error("no space");
  const pool = createFitPool(1);
  try {
    const threaded = await pool.fit(input);
    const direct = refitSpace(input);
    expect({ ...threaded, fitMs: 0 }).toEqual({ ...direct, fitMs: 0 });
  } finally {
    await pool.close();
  }
});

it("scores the next label of the space with the stored model", async () => {
  const s = await labeledSpace(8, 3);
  expect(await refitLabelSpace(deps(), s.spaceId)).toBe("written");
  const input = await store.spaces.fitInput(s.spaceId);
  if (!input?.model) throw new Error("no fitted model");
  const policy = { consensus_threshold: 1, max_labels: 1, confidence_target: null, min_labels: null };
  const { task } = await store.tasks.create(
    s.customerId,
    {
      input: {
        type: "image_classification",
        data_url: "https://img.example/n.jpg",
        label_spec: { question: s.question, options: s.options },
      },
      policy,
    },
    undefined,
  );
  const labelerId = s.labelerIds[0] as string;
  const claim = await store.labeling.claim(labelerId, task.id, 600);
  if (!claim) throw new Error("no claim");
  await store.labeling.label(labelerId, claim.claim_id, "yes");
  const row = await store.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
  const labelers = new Map(input.labelers.map((l) => [l.labelerId, l]));
  const expected = decide({ options: s.options, consensusThreshold: 1, maxLabels: 1 }, [{ labelerId, value: "yes" }], {
    space: input.model,
    labelers,
  });
  if (!expected.done) throw new Error("expected a decision");
  expect(row.confidence).toBe(expected.confidence);
  expect(row.posterior).toEqual(expected.posterior);
  // the labeler's own row mattered: as a labeler the model does not know, the same label scores otherwise
  const unknown = decide({ options: s.options, consensusThreshold: 1, maxLabels: 1 }, [{ labelerId, value: "yes" }], {
    space: input.model,
    labelers: new Map(),
  });
  if (!unknown.done) throw new Error("expected a decision");
  expect(unknown.confidence).not.toBe(expected.confidence);
});
