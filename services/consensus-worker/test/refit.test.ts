/**
 * Label space refits (services/consensus-worker/src/refit.ts, packages/store/src/spaces.ts) on real Postgres
 * and Redis: a refit writes the space's model and every labeler's row once; run twice or concurrently it
 * writes once (compare-and-set on the version); the sweep enqueues the spaces due and only those; the fit
 * thread (piscina) computes what the inline computation does; the next label is scored with the stored model.
 */
import { randomBytes } from "node:crypto";
import { createLogger, issueKey, KEY_PREFIX } from "@labelgate/core";
import { type AnyFitInput, decide, type FitOutput, refitAny, refitSpace, taskPosterior } from "@labelgate/quality";
import { FollowUpRelay } from "@labelgate/queue";
import { labelSpaceId, REFIT_TIME_SHARE, type Store } from "@labelgate/store";
import { useOwnStore } from "../../../test/system";
import { createFitPool, type RefitDeps, refitLabelSpace, refitSweep } from "../src/refit";

type SingleChoiceInput = Extract<AnyFitInput, { kind: "single_choice" }>;

/** The refit input of a single-choice space (spaces.ts `fitInput`). @throws when the space is missing or of a reserved type */
async function singleChoiceInput(spaceId: string): Promise<SingleChoiceInput> {
  const input = await store.spaces.fitInput(spaceId);
  if (input?.kind !== "single_choice") throw new Error(`no single-choice space ${spaceId}`);
  return input;
}

// a database of its own: the consensus workers of other files' systems sweep their own databases only, so no
// space of this file is refitted behind its back
const { store, queue } = useOwnStore("refit", 6);
const logger = createLogger("test", "silent");
const inline: RefitDeps["fit"] = async (input) => refitAny(input);

const deps = (): RefitDeps => ({ store, logger, fit: inline });

/**
 * A new customer `name` (an email unique to this run) with `labelers` labelers named `<name>-<i>`.
 * @returns the customer and the labelers' ids, in order
 */
async function customerWithLabelers(name: string, labelers: number) {
  const customer = await store.accounts.register({
    name,
    email: `${name}-${Date.now()}-${randomBytes(3).toString("hex")}@example.com`,
    labelQuota: 1_000_000,
    key: issueKey(KEY_PREFIX.sandbox),
  });
  const labelerIds: string[] = [];
  for (let i = 0; i < labelers; i++) labelerIds.push((await store.accounts.createLabeler(`${name}-${i}`, issueKey(KEY_PREFIX.labeler))).id);
  return { customer, labelerIds };
}

/**
 * A customer's label space with `tasks` tasks labeled by `labelers` labelers (labeler i answers correctly
 * unless i is the last, who always answers "no"), and one gold task answered by all. Returns the ids.
 */
async function labeledSpace(tasks: number, labelers: number) {
  const { customer, labelerIds: ids } = await customerWithLabelers("refit", labelers);
  const question = `Refit ${randomBytes(4).toString("hex")}?`;
  const options = ["yes", "no"];
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
      await store.labeling.label(labelerId, claim.claim_id, { label: i === labelers - 1 ? "no" : truth });
    }
  }
  return { customerId: customer.id, spaceId: labelSpaceId(customer.id, question, options), labelerIds: ids, question, options };
}

it("writes the space's model and a row per labeler; run twice at once it writes once, the other finds the version moved", async () => {
  const s = await labeledSpace(6, 3);
  expect((await store.spaces.due(10_000)).map((d) => d.id)).toContain(s.spaceId);
  // two refits read version 0 before either writes: exactly one compare-and-set succeeds
  const inputs = await Promise.all([singleChoiceInput(s.spaceId), singleChoiceInput(s.spaceId)]);
  const [a, b] = inputs.map((input) => {
    if (!input) throw new Error("no space");
    return { input, output: refitSpace(input) };
  });
  const raced = await Promise.all(
    [a, b].map((r) => store.spaces.writeFit(r?.input as SingleChoiceInput, { kind: "single_choice", ...(r?.output as FitOutput) })),
  );
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

it("waits out a long refit's cool-down (REFIT_TIME_SHARE) before the space is due again", async () => {
  const s = await labeledSpace(3, 2);
  expect(await refitLabelSpace(deps(), s.spaceId)).toBe("written");
  const dueIds = async () => (await store.spaces.due(10_000)).map((d) => d.id);
  // just after the fit (of some ms) the space waits 3 x that: not due even with every label new again
  const since = new Date(Date.now() - 3_600_000);
  await store.db.prisma.labelSpace.update({ where: { id: s.spaceId }, data: { fittedThrough: since, fittedLabels: 1, fitMs: 60_000 } });
  expect(await dueIds()).not.toContain(s.spaceId);
  // a fit of 10 ms that ended a second ago: due by the label share
  await store.db.prisma.labelSpace.update({ where: { id: s.spaceId }, data: { fitMs: 10, fittedAt: new Date(Date.now() - 1_000) } });
  expect(await dueIds()).toContain(s.spaceId);
  // a fit of 100 s: not due for 3 x 100 s after it ended
  await store.db.prisma.labelSpace.update({ where: { id: s.spaceId }, data: { fitMs: 100_000, fittedAt: new Date(Date.now() - 200_000) } });
  expect(REFIT_TIME_SHARE).toBe(0.25);
  expect(await dueIds()).not.toContain(s.spaceId);
  await store.db.prisma.labelSpace.update({ where: { id: s.spaceId }, data: { fittedAt: new Date(Date.now() - 301_000) } });
  expect(await dueIds()).toContain(s.spaceId);
});

it("drops a refit whose version moved while it fitted (compare-and-set), writing no labeler row of it", async () => {
  const s = await labeledSpace(4, 3);
  const input = await singleChoiceInput(s.spaceId);
  if (!input) throw new Error("no space");
  const output = refitSpace(input);
  expect(await store.spaces.writeFit(input, { kind: "single_choice", ...output })).toBe("written");
  // the same input again (read at version 0) is stale now
  const tampered = { ...output, labelers: output.labelers.map((l) => ({ ...l, labels: 999 })) };
  expect(await store.spaces.writeFit(input, { kind: "single_choice", ...tampered })).toBe("stale");
  const rows = await store.db.prisma.labelerModel.findMany({ where: { labelSpaceId: s.spaceId } });
  for (const r of rows) expect((r.params as { labels: number }).labels).toBe(5);
});

it("the sweep enqueues a refit of each space due, once per version", async () => {
  const s = await labeledSpace(3, 2);
  expect(await refitSweep(deps())).toBeGreaterThanOrEqual(1);
  // the sweep writes follow_up rows; a relay moves them to the queue
  const relay = new FollowUpRelay(store.followUps, queue, logger);
  await relay.drain();
  const counts = await queue.counts("modelRefit");
  const enqueued = counts.waiting ?? 0;
  expect(enqueued).toBeGreaterThanOrEqual(1);
  // the same versions again: BullMQ dedupes by job id (refit-<space>-<version>)
  await refitSweep(deps());
  await relay.drain();
  expect((await queue.counts("modelRefit")).waiting).toBe(enqueued);
  expect(await refitLabelSpace(deps(), s.spaceId)).toBe("written");
});

it("computes in a worker thread what it computes inline", async () => {
  const s = await labeledSpace(5, 3);
  const input = await singleChoiceInput(s.spaceId);
  if (!input) throw new Error("no space");
  const pool = createFitPool(1);
  try {
    const threaded = await pool.fit(input);
    if (threaded.kind !== "single_choice") throw new Error("a single-choice fit");
    const direct = refitSpace(input);
    expect({ ...threaded, fitMs: 0 }).toEqual({ kind: "single_choice", ...direct, fitMs: 0 });
  } finally {
    await pool.close();
  }
});

it("scores the next label of the space with the stored model", async () => {
  const s = await labeledSpace(8, 3);
  expect(await refitLabelSpace(deps(), s.spaceId)).toBe("written");
  const input = await singleChoiceInput(s.spaceId);
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
  await store.labeling.label(labelerId, claim.claim_id, { label: "yes" });
  const row = await store.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
  const labelers = new Map(input.labelers.map((l) => [l.labelerId, l]));
  const expected = decide(
    { options: s.options, policy: { kind: "threshold", consensusThreshold: 1, maxLabels: 1 } },
    [{ labelerId, value: "yes" }],
    {
      space: input.model,
      labelers,
    },
  );
  if (!expected.done) throw new Error("expected a decision");
  expect(row.confidence).toBe(expected.confidence);
  expect(row.posterior).toEqual(expected.posterior);
  // the labeler's own row mattered: as a labeler the model does not know, the same label scores otherwise
  const unknown = decide(
    { options: s.options, policy: { kind: "threshold", consensusThreshold: 1, maxLabels: 1 } },
    [{ labelerId, value: "yes" }],
    {
      space: input.model,
      labelers: new Map(),
    },
  );
  if (!unknown.done) throw new Error("expected a decision");
  expect(unknown.confidence).not.toBe(expected.confidence);
});

// --- issue 27: identified refits and the threshold rule, on the stored model ---

/** A customer with a label space of `options` and `labelers` labelers; tasks created by `task()`. */
async function space(labelers: number, options = ["yes", "no"], policy = { consensus_threshold: 7, max_labels: 7 }) {
  const { customer, labelerIds: ids } = await customerWithLabelers("issue27", labelers);
  const question = `Issue 27 ${randomBytes(4).toString("hex")}?`;
  const task = async (over: Partial<typeof policy> = {}, gold?: string) => {
    const input = {
      type: "image_classification",
      data_url: "https://img.example/i27.jpg",
      label_spec: { question, options },
      ...(gold ? { gold_label: gold } : {}),
    };
    const created = await store.tasks.create(
      customer.id,
      { input, policy: { ...policy, confidence_target: null, min_labels: null, ...over } },
      undefined,
    );
    return created.task.id;
  };
  const label = async (labelerId: string, taskId: string, value: string) => {
    const claim = await store.labeling.claim(labelerId, taskId, 600);
    if (!claim) throw new Error(`no claim of ${taskId} for ${labelerId}`);
    return (await store.labeling.label(labelerId, claim.claim_id, { label: value })).label;
  };
  return { customerId: customer.id, spaceId: labelSpaceId(customer.id, question, options), ids, options, task, label };
}

/** Share of `tasks` whose stored model's posterior leader is their truth. */
async function storedAccuracy(
  spaceId: string,
  options: string[],
  tasks: { truth: string; votes: { labelerId: string; value: string }[] }[],
) {
  const input = await singleChoiceInput(spaceId);
  if (!input?.model) throw new Error("no fitted model");
  const model = { space: input.model, labelers: new Map(input.labelers.map((l) => [l.labelerId, l])) };
  const task = { options, consensusThreshold: 99, maxLabels: 99 };
  let right = 0;
  for (const t of tasks) {
    const posterior = taskPosterior(task, t.votes, model);
    const leader = options.reduce((a, b) => ((posterior[b] as number) > (posterior[a] as number) ? b : a));
    if (leader === t.truth) right++;
  }
  return right / tasks.length;
}

describe("issue 27: refits never flip a label space", () => {
  // 4 good labelers (accuracy 0.9) and 3 adversaries (0.1) on 40 binary tasks: the true reading and its
  // inversion are both fixed points of EM. Warm refits that saw the adversaries first kept the inversion.
  const ORDERS = ["adversaries first", "good first", "interleaved"] as const;
  it.each(ORDERS.flatMap((order) => [13, 60].map((every) => [order, every] as const)))(
    "%s, a refit every %i labels: the stored model ends on the true side",
    async (order, every) => {
      const s = await space(7);
      let seed = 7;
      const rand = () => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed / 2147483648;
      };
      const tasks: { id: string; truth: string; votes: { labelerId: string; value: string }[] }[] = [];
      for (let t = 0; t < 40; t++) tasks.push({ id: await s.task(), truth: t % 2 ? "yes" : "no", votes: [] });
      const planned: { t: number; labeler: number }[] = [];
      const adversaries = [0, 1, 2];
      const good = [3, 4, 5, 6];
      const group = (ls: number[]) => ls.flatMap((labeler) => tasks.map((_, t) => ({ t, labeler })));
      if (order === "adversaries first") planned.push(...group(adversaries), ...group(good));
      else if (order === "good first") planned.push(...group(good), ...group(adversaries));
      else planned.push(...group([...adversaries, ...good]).sort(() => rand() - 0.5));
      let done = 0;
      for (const p of planned) {
        const task = tasks[p.t] as (typeof tasks)[number];
        const right = rand() < (adversaries.includes(p.labeler) ? 0.1 : 0.9);
        const value = right ? task.truth : task.truth === "yes" ? "no" : "yes";
        await s.label(s.ids[p.labeler] as string, task.id, value);
        task.votes.push({ labelerId: s.ids[p.labeler] as string, value });
        if (++done % every === 0) expect(["written", "stale"]).toContain(await refitLabelSpace(deps(), s.spaceId));
      }
      await refitLabelSpace(deps(), s.spaceId);
      expect(await storedAccuracy(s.spaceId, s.options, tasks)).toBeGreaterThanOrEqual(0.9);
    },
    120_000,
  );
});

describe("issue 27: the threshold policy settles on the stored model's leader", () => {
  it("agreeing spammers do not settle a task the model rejects; fresh labelers who agree settle at 3", async () => {
    // labelers 0, 1: spammers (answer "yes" whatever the truth); 2: reliable. 24 gold tasks teach the model.
    const s = await space(6, ["yes", "no"], { consensus_threshold: 3, max_labels: 7 });
    for (let t = 0; t < 24; t++) {
      const truth = t % 2 ? "yes" : "no";
      const id = await s.task({}, truth);
      await s.label(s.ids[0] as string, id, "yes");
      await s.label(s.ids[1] as string, id, "yes");
      await s.label(s.ids[2] as string, id, truth);
    }
    expect(await refitLabelSpace(deps(), s.spaceId)).toBe("written");
    // the reliable labeler says no, the two spammers say yes twice... and a third spammer vote would reach 3
    const rejected = await s.task({ consensus_threshold: 2, max_labels: 5 });
    expect((await s.label(s.ids[2] as string, rejected, "no")).labelsNeeded).toBeGreaterThan(0);
    expect((await s.label(s.ids[0] as string, rejected, "yes")).labelsNeeded).toBeGreaterThan(0);
    const third = await s.label(s.ids[1] as string, rejected, "yes");
    // "yes" holds 2 = consensus_threshold, but the model puts "no" ahead: the task keeps collecting labels
    expect(third.labelsNeeded).toBe(2);
    const open = await store.db.prisma.task.findUniqueOrThrow({ where: { id: rejected } });
    expect(open.status).toBe("labeling");
    // three labelers the model knows nothing about agree: they settle at the threshold
    const fresh = await s.task();
    const answers = [];
    for (const i of [3, 4, 5]) answers.push(await s.label(s.ids[i] as string, fresh, "no"));
    expect(answers.map((a) => a.labelsNeeded)).toEqual([expect.any(Number), expect.any(Number), 0]);
    const settled = await store.db.prisma.task.findUniqueOrThrow({ where: { id: fresh } });
    expect(settled).toMatchObject({ status: "settling", consensusLabel: "no", resolution: "consensus" });
  });
});

describe("a space of a reserved type (contract §task-types)", () => {
  /**
   * A customer's bounding-box space: `tasks` tasks each answered by 3 labelers, the last of whom misses every
   * second car, and one gold task. Returns the ids.
   */
  async function boxSpace(tasks: number) {
    const { customer, labelerIds: ids } = await customerWithLabelers("refit-boxes", 3);
    const spec = { question: `Cars ${randomBytes(4).toString("hex")}?`, classes: ["car", "person"] };
    const policy = { consensus_threshold: 3, max_labels: 3, confidence_target: null, min_labels: null };
    const car = (t: number, jitter: number) => ({ label: "car", x: 10 * t + jitter, y: 20 + jitter, w: 80, h: 40 });
    const create = async (gold?: { boxes: ReturnType<typeof car>[] }) => {
      const input = {
        type: "bounding_box",
        data_url: "https://img.example/b.jpg",
        label_spec: spec,
        ...(gold ? { gold_answer: gold } : {}),
      };
      return (await store.tasks.create(customer.id, { input, policy } as Parameters<Store["tasks"]["create"]>[1], undefined)).task.id;
    };
    const taskIds: string[] = [];
    for (let t = 0; t < tasks; t++) taskIds.push(await create());
    const goldId = await create({ boxes: [car(99, 0)] });
    for (const [t, taskId] of [...taskIds, goldId].entries()) {
      const n = taskId === goldId ? 99 : t;
      for (const [i, labelerId] of ids.entries()) {
        const claim = await store.labeling.claim(labelerId, taskId, 600);
        if (!claim) throw new Error("no claim");
        const boxes = i === 2 && t % 2 === 1 ? [] : [car(n, i)];
        await store.labeling.label(labelerId, claim.claim_id, { boxes });
      }
    }
    const task = await store.db.prisma.task.findUniqueOrThrow({ where: { id: goldId } });
    return { customerId: customer.id, spaceId: task.labelSpaceId, labelerIds: ids, spec, policy };
  }

  it("fits the type's model into the space row and a row per labeler, in a thread as inline, and scores the next label with it", async () => {
    const s = await boxSpace(6);
    const input = await store.spaces.fitInput(s.spaceId);
    if (input?.kind !== "typed") throw new Error("a typed input");
    expect(input).toMatchObject({ type: "bounding_box", labels: 21 });
    expect(input.tasks).toHaveLength(7);
    const pool = createFitPool(1);
    try {
      const threaded = await pool.fit(input);
      expect({ ...threaded, fitMs: 0 }).toEqual({ ...refitAny(input), fitMs: 0 });
    } finally {
      await pool.close();
    }
    expect(await refitLabelSpace(deps(), s.spaceId)).toBe("written");
    const space = await store.db.prisma.labelSpace.findUniqueOrThrow({ where: { id: s.spaceId } });
    expect(space).toMatchObject({ version: 1, fittedLabels: 21, taskType: "bounding_box" });
    expect((space.model as { parts: unknown[] }).parts).toHaveLength(3);
    // the gold task was decided by the new model: one task in the calibration bins
    expect((space.calibrationBins as { tasks: number }[]).reduce((n, b) => n + b.tasks, 0)).toBe(1);
    const rows = await store.db.prisma.labelerModel.findMany({ where: { labelSpaceId: s.spaceId }, orderBy: { labelerId: "asc" } });
    expect(rows.map((r) => r.labelerId)).toEqual([...s.labelerIds].sort());
    for (const r of rows) expect(r.params).toMatchObject({ labels: 7, parts: expect.any(Array) });
    // the labeler who missed cars has a lower recall in the stored rows: the fitted model knows it
    const recall = (id: string) => {
      const p = rows.find((r) => r.labelerId === id)?.params as { parts: ({ counts: number[][] } | null)[] };
      const counts = p.parts.flatMap((c) => (c ? [c.counts[1] as number[]] : []));
      const found = counts.reduce((n, c) => n + (c[1] as number), 0);
      const all = counts.reduce((n, c) => n + (c[0] as number) + (c[1] as number), 0);
      return found / all;
    };
    expect(recall(s.labelerIds[2] as string)).toBeLessThan(recall(s.labelerIds[0] as string));
    // the next task is decided in the label transaction with the stored model
    const { task } = await store.tasks.create(
      s.customerId,
      { input: { type: "bounding_box", data_url: "https://img.example/n.jpg", label_spec: s.spec }, policy: s.policy } as Parameters<
        Store["tasks"]["create"]
      >[1],
      undefined,
    );
    for (const [i, labelerId] of s.labelerIds.entries()) {
      const claim = await store.labeling.claim(labelerId, task.id, 600);
      if (!claim) throw new Error("no claim");
      await store.labeling.label(labelerId, claim.claim_id, { boxes: [{ label: "car", x: 5 + i, y: 5, w: 50, h: 50 }] });
    }
    const decided = await store.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(decided.status).toBe("settling");
    expect((decided.consensus as { boxes: { support: number }[] }).boxes).toEqual([expect.objectContaining({ label: "car", support: 3 })]);
  });

  it("a text_span refit reads its texts within REFIT_TEXT_BUDGET: gold first, then the newest; it counts every label", async () => {
    const { customer, labelerIds } = await customerWithLabelers("refit-spans", 2);
    const spec = { question: `Who ${randomBytes(4).toString("hex")}?`, entity_types: ["P"] };
    const policy = { consensus_threshold: 3, max_labels: 3, confidence_target: null, min_labels: null };
    const text = "a".repeat(95) + " Bob."; // 100 code points
    const answer = { spans: [{ start: 96, end: 99, label: "P" }] };
    const create = async (gold?: typeof answer) => {
      const input = {
        type: "text_span",
        data_url: "https://text.example/t.txt",
        data_text: text,
        label_spec: spec,
        ...(gold ? { gold_answer: gold } : {}),
      };
      return (await store.tasks.create(customer.id, { input, policy } as Parameters<Store["tasks"]["create"]>[1], undefined)).task.id;
    };
    const goldId = await create(answer);
    const taskIds: string[] = [];
    for (let t = 0; t < 4; t++) taskIds.push(await create());
    for (const taskId of [goldId, ...taskIds])
      for (const labelerId of labelerIds) {
        const claim = await store.labeling.claim(labelerId, taskId, 600);
        if (!claim) throw new Error("no claim");
        await store.labeling.label(labelerId, claim.claim_id, answer);
      }
    const spaceId = (await store.db.prisma.task.findUniqueOrThrow({ where: { id: goldId } })).labelSpaceId;
    // each task costs 100 code points x 2 answers + its 2 answers of 45 = 290: 950 reads the gold task and the 2 newest
    const bounded = await store.spaces.fitInput(spaceId, { textBudget: 950 });
    if (bounded?.kind !== "typed") throw new Error("a typed input");
    expect(bounded.tasks.map((t) => t.id)).toEqual([goldId, taskIds[2], taskIds[3]]);
    expect(bounded.tasks.every((t) => t.answers.length === 2 && t.text === text)).toBe(true);
    expect(bounded.labels).toBe(10); // the refit cadence counts every label of the space
    // the first task is read whatever the budget; the default budget reads all five
    const one = await store.spaces.fitInput(spaceId, { textBudget: 1 });
    expect(one?.kind === "typed" ? one.tasks.map((t) => t.id) : []).toEqual([goldId]);
    const all = await store.spaces.fitInput(spaceId);
    expect(all?.kind === "typed" ? all.tasks.map((t) => t.id) : []).toEqual([goldId, ...taskIds]);
    // a bounded input still fits
    expect(refitAny(bounded).kind).toBe("typed");
  });

  it("a free_text refit counts its answers' text against REFIT_TEXT_BUDGET", async () => {
    const { customer, labelerIds } = await customerWithLabelers("refit-text", 2);
    const spec = { question: `Transcribe ${randomBytes(4).toString("hex")}` };
    const policy = { consensus_threshold: 3, max_labels: 3, confidence_target: null, min_labels: null };
    const answer = { text: "w".repeat(989) }; // stored as {"text":"www..."}: 1,000 code points
    const taskIds: string[] = [];
    for (let t = 0; t < 4; t++) {
      const input = { type: "free_text", data_url: "https://audio.example/a.wav", label_spec: spec };
      const taskId = (await store.tasks.create(customer.id, { input, policy } as Parameters<Store["tasks"]["create"]>[1], undefined)).task
        .id;
      taskIds.push(taskId);
      for (const labelerId of labelerIds) {
        const claim = await store.labeling.claim(labelerId, taskId, 600);
        if (!claim) throw new Error("no claim");
        await store.labeling.label(labelerId, claim.claim_id, answer);
      }
    }
    const spaceId = (await store.db.prisma.task.findUniqueOrThrow({ where: { id: taskIds[0] as string } })).labelSpaceId;
    // no task text: each task costs its 2 answers of 1,000 code points
    const bounded = await store.spaces.fitInput(spaceId, { textBudget: 4_500 });
    expect(bounded?.kind === "typed" ? bounded.tasks.map((t) => t.id) : []).toEqual(taskIds.slice(2));
    const all = await store.spaces.fitInput(spaceId);
    expect(all?.kind === "typed" ? all.tasks.map((t) => t.id) : []).toEqual(taskIds);
  });
});
