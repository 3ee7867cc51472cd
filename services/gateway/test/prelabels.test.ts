/**
 * Pre-labels (docs/contract.md §prelabels): a task's `prelabel` is the vote of the customer's labeler
 * `model:<model>` (created on first use, marked as a model): it counts in the consensus, is never charged, and
 * never settles a task alone (a person's label is needed, under both policies); claims carry it when the label
 * spec says `show_prelabel`; the bad inputs (an answer of another type, not an option, a bad model name) are
 * 400 with details, nothing stored. Runs against this run's real Postgres and Redis.
 */
import {
  createLabeler,
  eventually,
  label,
  OPTIONS,
  registerCustomer,
  type System,
  settledResult,
  startSystem,
  taskBody,
} from "../../../test/system";

let sys: System;
beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

interface Details {
  task_id?: string;
  task_ids?: string[];
  error?: string;
  details?: { path: string; message: string }[];
}

async function submit(key: string, overrides: Record<string, unknown>) {
  return sys.api<Details>("POST", "/v1/tasks", { token: key, body: taskBody(overrides) });
}

/** What a refused request must not have written: the customer's tasks, labels and model labelers. */
async function stored(customerId: string): Promise<{ tasks: number; labels: number; models: number }> {
  const [row] = await sys.db.prisma.$queryRaw<{ tasks: bigint; labels: bigint; models: bigint }[]>`
    SELECT (SELECT count(*) FROM tasks WHERE customer_id = ${customerId}) AS tasks,
           (SELECT count(*) FROM labels WHERE customer_id = ${customerId}) AS labels,
           (SELECT count(*) FROM labelers WHERE customer_id = ${customerId}) AS models`;
  return { tasks: Number(row?.tasks), labels: Number(row?.labels), models: Number(row?.models) };
}

async function quotaUsed(key: string): Promise<number> {
  const me = await sys.api<{ label_quota_used: number }>("GET", "/v1/customers/me", { token: key });
  return me.body.label_quota_used;
}

const PRELABEL = { answer: { label: "cat" }, model: "resnet-v2", score: 0.91 };

describe("pre-labels", () => {
  test("the pre-label is the vote of labeler model:<name>, created once per customer and model", async () => {
    const c = await registerCustomer(sys);
    const a = await submit(c.key, { prelabel: PRELABEL });
    expect(a.status).toBe(202);
    const b = await submit(c.key, { prelabel: { ...PRELABEL, answer: { label: "dog" } } });
    expect(b.status).toBe(202);
    const rows = await sys.db.prisma.$queryRaw<{ task_id: string; value: string; name: string; model: string; customer_id: string }[]>`
      SELECT l.task_id, l.value, lr.name, lr.model, lr.customer_id FROM labels l JOIN labelers lr ON lr.id = l.labeler_id
      WHERE l.customer_id = ${c.id} ORDER BY l.value`;
    expect(rows).toEqual([
      { task_id: a.body.task_id, value: "cat", name: "model:resnet-v2", model: "resnet-v2", customer_id: c.id },
      { task_id: b.body.task_id, value: "dog", name: "model:resnet-v2", model: "resnet-v2", customer_id: c.id },
    ]);
    // another customer's model of the same name is another labeler
    const other = await registerCustomer(sys);
    expect((await submit(other.key, { prelabel: PRELABEL })).status).toBe(202);
    expect((await stored(other.id)).models).toBe(1);
    expect((await stored(c.id)).models).toBe(1);
    // the task is still pending for people: no person labeled it, and it counts no collected label
    const task = await sys.api<{ status: string; labels_collected: number }>("GET", `/v1/tasks/${a.body.task_id}`, { token: c.key });
    expect(task.body).toMatchObject({ status: "pending", labels_collected: 0 });
  });

  test("confidence policy: never settles on the pre-label alone; one agreeing person settles what two would", async () => {
    const c = await registerCustomer(sys);
    // min_labels 1, T 0.8: under the prior (a typical labeler right 2/3 of the time) one vote of 3 options gives
    // its option 0.67, two agreeing votes 0.89
    const policy = { confidence_target: 0.8, min_labels: 1, max_labels: 5 };
    const plain = await submit(c.key, policy);
    const pre = await submit(c.key, { ...policy, prelabel: PRELABEL });
    const p1 = await createLabeler(sys);
    const alone = await label(sys, p1.key, plain.body.task_id as string, "cat");
    expect(alone.status).toBe(201);
    expect(alone.body.labels_needed).toBeGreaterThan(0);
    const withModel = await label(sys, p1.key, pre.body.task_id as string, "cat");
    expect(withModel.status).toBe(201);
    expect(withModel.body.labels_needed).toBe(0);
    const result = await settledResult(sys, c.key, pre.body.task_id as string);
    expect(result).toMatchObject({ consensus_label: "cat", resolution: "confidence", labels_collected: 1 });
    // the model's vote is in the counts and the posterior
    expect((result.label_counts as Record<string, number>).cat).toBe(2);
  });

  test("threshold policy: the pre-label counts toward the quorum, a person's label is still needed", async () => {
    const c = await registerCustomer(sys);
    const pre = await submit(c.key, { consensus_threshold: 2, max_labels: 3, prelabel: PRELABEL });
    const one = await submit(c.key, { consensus_threshold: 1, max_labels: 1, prelabel: PRELABEL });
    // with a quorum of 1, the pre-label alone would reach it: the task waits for a person
    const task = await sys.api<{ status: string }>("GET", `/v1/tasks/${one.body.task_id}`, { token: c.key });
    expect(task.body.status).toBe("pending");
    const p1 = await createLabeler(sys);
    // a person disagreeing with the model settles the quorum-1 task on their own label
    const res = await label(sys, p1.key, one.body.task_id as string, "dog");
    expect(res.body.labels_needed).toBe(0);
    expect(await settledResult(sys, c.key, one.body.task_id as string)).toMatchObject({ labels_collected: 1 });
    const agree = await label(sys, p1.key, pre.body.task_id as string, "cat");
    expect(agree.body.labels_needed).toBe(0);
    expect(await settledResult(sys, c.key, pre.body.task_id as string)).toMatchObject({
      consensus_label: "cat",
      resolution: "consensus",
      labels_collected: 1,
    });
  });

  test("a pre-label is never charged: quota and billed labels count people only", async () => {
    const c = await registerCustomer(sys, 10);
    const created = await submit(c.key, { consensus_threshold: 1, max_labels: 1, prelabel: PRELABEL });
    // the reservation is the policy's (1), not one more for the model
    expect(await quotaUsed(c.key)).toBe(1);
    const p1 = await createLabeler(sys);
    await label(sys, p1.key, created.body.task_id as string, "cat");
    await settledResult(sys, c.key, created.body.task_id as string);
    expect(await quotaUsed(c.key)).toBe(1);
    const month = new Date().toISOString().slice(0, 7);
    const usage = await sys.api<{ labels_collected: number }>("GET", `/v1/billing/usage?month=${month}`, { token: c.key });
    expect(usage.body.labels_collected).toBe(1);
  });

  test("a batch's pre-labels, and claims carry them only with show_prelabel", async () => {
    const c = await registerCustomer(sys);
    const shown = { question: "What animal is this?", options: OPTIONS, show_prelabel: true };
    const batch = await sys.api<Details>("POST", "/v1/tasks/batch", {
      token: c.key,
      body: {
        tasks: [
          taskBody({ label_spec: shown, prelabel: PRELABEL }),
          taskBody({ prelabel: { answer: { label: "bird" }, model: "other-model" } }),
          taskBody({}),
        ],
      },
    });
    expect(batch.status).toBe(202);
    const [first, second, third] = batch.body.task_ids as string[];
    expect((await stored(c.id)).models).toBe(2);
    expect((await stored(c.id)).labels).toBe(2);
    const p1 = await createLabeler(sys);
    const claimOf = async (taskId: string) =>
      (await sys.api<Record<string, unknown>>("POST", "/v1/labeling/claims", { token: p1.key, body: { task_id: taskId } })).body;
    const a = await claimOf(first as string);
    expect(a.prelabel).toEqual(PRELABEL);
    // the spec the labeler sees is the space's: show_prelabel is the task's setting, not part of it
    expect(a.label_spec).toEqual({ question: "What animal is this?", options: OPTIONS });
    expect((await claimOf(second as string)).prelabel).toBeUndefined();
    expect((await claimOf(third as string)).prelabel).toBeUndefined();
  });

  test("the model labeler's estimated accuracy is listed beside people's, marked as a model", async () => {
    const c = await registerCustomer(sys);
    const people = await Promise.all([createLabeler(sys, "p1"), createLabeler(sys, "p2")]);
    // truths over every option; the model is wrong on one item in three, the people never
    const truths = ["cat", "dog", "bird", "cat", "dog", "bird", "cat", "dog", "bird"];
    for (const [i, truth] of truths.entries()) {
      const guess = i % 3 === 2 ? OPTIONS[(OPTIONS.indexOf(truth) + 1) % 3] : truth;
      const t = await submit(c.key, {
        consensus_threshold: 2,
        max_labels: 3,
        prelabel: { answer: { label: guess }, model: "resnet-v2" },
        data_url: `https://images.example/${i}.jpg`,
      });
      for (const p of people) {
        const res = await label(sys, p.key, t.body.task_id as string, truth);
        if (res.body.labels_needed === 0) break;
      }
      await settledResult(sys, c.key, t.body.task_id as string);
    }
    const rows = await eventually(
      async () => {
        const res = await sys.api<{ items: { model: string | null; estimated_accuracy: number | null }[] }>(
          "GET",
          "/v1/dashboard/labelers",
          {
            token: c.key,
          },
        );
        const model = res.body.items.find((r) => r.model === "resnet-v2");
        return model && model.estimated_accuracy !== null ? res.body.items : undefined;
      },
      30_000,
      "the model labeler's fitted row",
    );
    const model = rows.find((r) => r.model === "resnet-v2");
    const person = rows.find((r) => r.model === null && r.estimated_accuracy !== null);
    expect(person).toBeDefined();
    // the model is estimated below the people, who agree with each other every time
    expect(model?.estimated_accuracy as number).toBeLessThan(person?.estimated_accuracy as number);
  });

  test("bad pre-labels: 400 with details, nothing stored", async () => {
    const c = await registerCustomer(sys);
    const cases: [Record<string, unknown>, string][] = [
      // a pre-label for another type
      [{ prelabel: { answer: { labels: ["cat"] }, model: "m" } }, "prelabel.answer"],
      // not an option
      [{ prelabel: { answer: { label: "horse" }, model: "m" } }, "prelabel.answer.label"],
      // bad model name, score outside 0..1, missing answer, unknown field
      [{ prelabel: { answer: { label: "cat" }, model: "has space" } }, "prelabel.model"],
      [{ prelabel: { answer: { label: "cat" }, model: "m", score: 1.5 } }, "prelabel.score"],
      [{ prelabel: { model: "m" } }, "prelabel.answer"],
      [{ prelabel: { answer: { label: "cat" }, model: "m", extra: 1 } }, "prelabel"],
      // a multi-label task's pre-label with an unknown option, and a box task's pre-label of another type
      [
        {
          type: "multi_label_classification",
          label_spec: { question: "Which apply?", options: ["a", "b"] },
          prelabel: { answer: { labels: ["c"] }, model: "m" },
        },
        "prelabel.answer.labels.0",
      ],
      [
        { type: "bounding_box", label_spec: { question: "Boxes", classes: ["car"] }, prelabel: { answer: { label: "car" }, model: "m" } },
        "prelabel.answer",
      ],
    ];
    for (const [overrides, path] of cases) {
      const res = await submit(c.key, overrides);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("validation failed");
      expect(res.body.details?.map((d) => d.path)).toContain(path);
    }
    // in a batch: the whole batch is refused, at the task's path
    const batch = await sys.api<Details>("POST", "/v1/tasks/batch", {
      token: c.key,
      body: { tasks: [taskBody({ prelabel: PRELABEL }), taskBody({ prelabel: { answer: { label: "horse" }, model: "m" } })] },
    });
    expect(batch.status).toBe(400);
    expect(batch.body.details?.map((d) => d.path)).toContain("tasks.1.prelabel.answer.label");
    expect(await stored(c.id)).toEqual({ tasks: 0, labels: 0, models: 0 });
  });

  test("a reserved type takes a pre-label of its own answer", async () => {
    const c = await registerCustomer(sys);
    const res = await submit(c.key, {
      type: "multi_label_classification",
      label_spec: { question: "Which apply?", options: ["a", "b"] },
      prelabel: { answer: { labels: ["b", "a"] }, model: "m" },
    });
    expect(res.status).toBe(202);
    const [row] = await sys.db.prisma.$queryRaw<{ value: string }[]>`SELECT value FROM labels WHERE task_id = ${res.body.task_id}`;
    expect(JSON.parse(row?.value as string)).toEqual({ labels: ["a", "b"] });
  });
});
