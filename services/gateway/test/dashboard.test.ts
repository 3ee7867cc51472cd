/**
 * Dashboard (contract §routes, docs/decisions.md "Billing and dashboard"): overview, task list (pagination, status
 * filter, sorts), quality and daily usage; every error; isolation between customers; and EXPLAIN of every
 * statement on 100,000 tasks of one customer: no sequential scan of tasks, labels or deliveries.
 */

import { TASK_SORTS } from "@labelgate/api";
import { issueKey, KEY_PREFIX } from "@labelgate/core";
import {
  createDb,
  invoiceStateSql,
  monthEnd,
  monthOf,
  monthStart,
  overviewSql,
  Prisma,
  qualitySql,
  type TaskListOptions,
  taskCountSql,
  taskPageSql,
  usageByMonthSql,
  usageDaysSql,
} from "@labelgate/store";
import { type PlanNode, planNodes } from "../../../test/plans";
import {
  createLabeler,
  createTask,
  eventually,
  label,
  registerCustomer,
  type System,
  settledResult,
  startSystem,
  taskBody,
  useSystem,
} from "../../../test/system";

interface TaskItem {
  task_id: string;
  status: string;
  created_at: string;
  settled_at: string | null;
}
interface TaskPage {
  page: number;
  per_page: number;
  total: number;
  items: TaskItem[];
}

async function batch(sys: System, key: string, n: number): Promise<string[]> {
  const res = await sys.api<{ task_ids: string[] }>("POST", "/v1/tasks/batch", {
    token: key,
    body: { tasks: Array.from({ length: n }, (_, i) => taskBody({ data_url: `https://images.example/${i}.jpg` })) },
  });
  if (res.status !== 202) throw new Error(`batch failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.task_ids;
}

interface TaskState {
  status: string;
  createdAt: Date;
  settledAt?: Date | null;
  confidence?: number;
  resolution?: "consensus" | "max_labels";
  labels?: number;
  counts?: Record<string, number>;
  consensus?: string;
}

/** Puts a task in a given state directly (the dashboard only reads these columns). */
async function setTask(sys: System, id: string, s: TaskState): Promise<void> {
  await sys.db.prisma.$executeRaw`
    UPDATE tasks SET status = ${s.status}::"TaskStatus", created_at = ${s.createdAt.toISOString()}::timestamptz,
      settled_at = ${s.settledAt ? s.settledAt.toISOString() : null}::timestamptz,
      confidence = ${s.confidence ?? null}::float8, resolution = ${s.resolution ?? null}::text::"Resolution",
      labels_collected = ${s.labels ?? 0}::int, label_counts = ${JSON.stringify(s.counts ?? {})}::jsonb,
      consensus_label = ${s.consensus ?? null}::text
    WHERE id = ${id}`;
}

const ago = (ms: number) => new Date(Date.now() - ms);
/** The `reviewed` figures of a customer without reviews. */
const NO_REVIEWS = {
  reviews: 0,
  reviewed_accuracy: null,
  mean_confidence_reviewed: null,
  bins: Array.from({ length: 10 }, (_, i) => ({ lower: i / 10, upper: (i + 1) / 10, tasks: 0, mean_confidence: null, accuracy: null })),
  ece: null,
  label_spaces: [],
};
const MIN = 60_000;
const DAY = 86_400_000;

describe("dashboard routes", () => {
  // a database of its own: the shared run database's customer list (newest first) is checked by other files
  const { sys } = useSystem({ workers: false }, { labelers: [] });

  it("401 without a customer key on every route", async () => {
    const labeler = await createLabeler(sys, "dash");
    for (const route of ["overview", "tasks", "quality", "usage"]) {
      expect(await sys.api("GET", `/v1/dashboard/${route}`)).toMatchObject({ status: 401, body: { error: "invalid API key" } });
      expect((await sys.api("GET", `/v1/dashboard/${route}`, { token: labeler.key })).status).toBe(401);
      expect((await sys.api("GET", `/v1/dashboard/${route}`, { token: "sk_live_unknown" })).status).toBe(401);
    }
  });

  it("400 validation failed on bad task-list parameters and on unknown parameters of every route", async () => {
    const c = await registerCustomer(sys);
    const bad: [string, string][] = [
      ["page=0", "page"],
      ["page=x", "page"],
      ["page=1.5", "page"],
      ["per_page=0", "per_page"],
      ["per_page=101", "per_page"],
      ["status=staged", "status"],
      ["status=done", "status"],
      ["sort=", "sort"],
      ["sort=settled_at_asc", "sort"],
      ["sort=CREATED_AT_DESC", "sort"],
      ["limit=5", ""],
    ];
    for (const [query, path] of bad) {
      const res = await sys.api<{ error: string; details: { path: string }[] }>("GET", `/v1/dashboard/tasks?${query}`, { token: c.key });
      expect([query, res.status, res.body.error]).toEqual([query, 400, "validation failed"]);
      expect(res.body.details.map((d) => d.path)).toEqual([path]);
    }
    for (const route of ["overview", "quality", "usage"]) {
      expect((await sys.api("GET", `/v1/dashboard/${route}?month=2026-01`, { token: c.key })).status).toBe(400);
    }
  });

  it("tasks: pagination, status filter (empty = none) and the three sorts, never another customer's tasks", async () => {
    const a = await registerCustomer(sys, 1000);
    const b = await registerCustomer(sys, 1000);
    const ids = await batch(sys, a.key, 8);
    const theirs = await batch(sys, b.key, 3);
    const base = ago(60 * MIN).getTime();
    const at = (m: number) => new Date(base + m * MIN);
    const states: TaskState[] = [
      { status: "pending", createdAt: at(0) },
      { status: "pending", createdAt: at(1) },
      { status: "labeling", createdAt: at(2) },
      { status: "settled", createdAt: at(3), settledAt: at(30) },
      { status: "settled", createdAt: at(4), settledAt: at(20) },
      // created and settled at the same instant as the previous one: ties are broken by id
      { status: "settled", createdAt: at(4), settledAt: at(20) },
      { status: "canceled", createdAt: at(6) },
      // staged (a manifest still ingesting) is never shown
      { status: "staged", createdAt: at(7) },
    ];
    for (const [i, s] of states.entries()) await setTask(sys, ids[i] as string, s);
    // B's tasks interleave with A's in time
    for (const [i, id] of theirs.entries()) await setTask(sys, id, { status: "settled", createdAt: at(i + 0.5), settledAt: at(25) });

    const rows = ids.slice(0, 7).map((id, i) => ({ id, ...(states[i] as TaskState) }));
    // ids compare as the database orders text (its collation)
    const ranked = await sys.db.prisma.$queryRaw<{ id: string }[]>`SELECT id FROM unnest(${ids}::text[]) AS id ORDER BY id`;
    const rank = new Map(ranked.map((r, i) => [r.id, i]));
    const byId = (x: string, y: string) => (rank.get(x) as number) - (rank.get(y) as number);
    const createdDesc = [...rows].sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime() || byId(y.id, x.id)).map((r) => r.id);
    const createdAsc = [...rows].sort((x, y) => x.createdAt.getTime() - y.createdAt.getTime() || byId(x.id, y.id)).map((r) => r.id);
    const settledDesc = [...rows]
      .sort((x, y) => {
        if (x.settledAt && y.settledAt) return y.settledAt.getTime() - x.settledAt.getTime() || byId(y.id, x.id);
        if (x.settledAt) return -1;
        if (y.settledAt) return 1;
        // tasks not settled: newest first
        return y.createdAt.getTime() - x.createdAt.getTime() || byId(y.id, x.id);
      })
      .map((r) => r.id);

    const list = async (query: string) => {
      const res = await sys.api<TaskPage>("GET", `/v1/dashboard/tasks${query}`, { token: a.key });
      expect(res.status).toBe(200);
      return res.body;
    };
    const all = async (query: string, perPage: number) => {
      const seen: string[] = [];
      for (let page = 1; ; page++) {
        const body = await list(`?per_page=${perPage}&page=${page}${query}`);
        expect(body).toMatchObject({ page, per_page: perPage, total: rows.length });
        if (body.items.length === 0) return seen;
        expect(body.items.length).toBeLessThanOrEqual(perPage);
        seen.push(...body.items.map((t) => t.task_id));
      }
    };

    const first = await list("");
    expect(first).toMatchObject({ page: 1, per_page: 20, total: 7 });
    expect(first.items.map((t) => t.task_id)).toEqual(createdDesc);
    expect(await all("", 3)).toEqual(createdDesc);
    expect(await all("&sort=created_at_desc&status=", 2)).toEqual(createdDesc);
    expect(await all("&sort=created_at_asc", 3)).toEqual(createdAsc);
    expect(await all("&sort=settled_at_desc", 3)).toEqual(settledDesc);
    expect(await all("&sort=settled_at_desc", 1)).toEqual(settledDesc);
    expect((await list("?page=9&per_page=3")).items).toEqual([]);

    const filtered = async (status: string, sort: string) => {
      const body = await list(`?status=${status}&sort=${sort}&per_page=100`);
      const expected = (sort === "created_at_asc" ? createdAsc : sort === "settled_at_desc" ? settledDesc : createdDesc).filter(
        (id) => rows.find((r) => r.id === id)?.status === status,
      );
      expect(body.total).toBe(expected.length);
      expect(body.items.map((t) => t.task_id)).toEqual(expected);
      expect(body.items.every((t) => t.status === status)).toBe(true);
    };
    for (const sort of TASK_SORTS)
      for (const status of ["pending", "labeling", "settling", "settled", "canceled"]) await filtered(status, sort);
    expect((await list("?status=settled&sort=settled_at_desc&per_page=2&page=2")).items.map((t) => t.task_id)).toEqual(
      settledDesc.filter((id) => rows.find((r) => r.id === id)?.status === "settled").slice(2),
    );

    // items are the task body of GET /v1/tasks/{id}
    const one = await sys.api("GET", `/v1/tasks/${createdDesc[0]}`, { token: a.key });
    expect(first.items[0]).toEqual(one.body);

    // isolation: B sees its 3 tasks only, A never sees them
    const theirsPage = await sys.api<TaskPage>("GET", "/v1/dashboard/tasks?sort=settled_at_desc", { token: b.key });
    expect(theirsPage.body.total).toBe(3);
    expect(theirsPage.body.items.map((t) => t.task_id).sort()).toEqual([...theirs].sort());
    expect(first.items.some((t) => theirs.includes(t.task_id))).toBe(false);
  });

  it("overview: tasks by status, labels this month, quota, median time to settle, webhook success rate", async () => {
    const a = await registerCustomer(sys, 1000);
    const b = await registerCustomer(sys, 1000);
    const labeler = await createLabeler(sys, "overview");
    const ids = await batch(sys, a.key, 6);
    for (const id of ids.slice(0, 2)) expect((await label(sys, labeler.key, id, "cat")).status).toBe(201);
    // B's labels and tasks never count for A
    const other = await createTask(sys, b.key);
    expect((await label(sys, labeler.key, other, "dog")).status).toBe(201);

    const settledAgo = (seconds: number, daysAgo = 0) => {
      const settledAt = ago(daysAgo * DAY + 60_000);
      return { status: "settled", createdAt: new Date(settledAt.getTime() - seconds * 1000), settledAt };
    };
    await setTask(sys, ids[0] as string, settledAgo(10));
    await setTask(sys, ids[1] as string, settledAgo(20));
    await setTask(sys, ids[2] as string, settledAgo(60));
    // settled 40 days ago: outside the 30-day window of the median
    await setTask(sys, ids[3] as string, settledAgo(1000, 40));
    await setTask(sys, ids[4] as string, { status: "canceled", createdAt: ago(MIN) });

    // deliveries of the last 30 days: 3 delivered, 1 failed (pending ones do not count), and an old failure
    const hook = await sys.api<{ webhook_id: string }>("POST", "/v1/webhooks", {
      token: a.key,
      body: { callback_url: "http://127.0.0.1:9/overview", secret: "overview-secret-0123456789" },
    });
    expect(hook.status).toBe(201);
    const theirHook = await sys.api<{ webhook_id: string }>("POST", "/v1/webhooks", {
      token: b.key,
      body: { callback_url: "http://127.0.0.1:9/overview", secret: "overview-secret-0123456789" },
    });
    const deliveries: [string, string, string, number][] = [
      [hook.body.webhook_id, a.id, "delivered", 1],
      [hook.body.webhook_id, a.id, "delivered", 2],
      [hook.body.webhook_id, a.id, "delivered", 3],
      [hook.body.webhook_id, a.id, "failed", 4],
      [hook.body.webhook_id, a.id, "pending", 5],
      [hook.body.webhook_id, a.id, "failed", 40 * 24 * 60],
      [theirHook.body.webhook_id, b.id, "failed", 1],
      [theirHook.body.webhook_id, b.id, "failed", 2],
    ];
    for (const [n, [webhookId, customerId, status, minutesAgo]] of deliveries.entries()) {
      await sys.db.prisma.$executeRaw`
        INSERT INTO deliveries (id, event_id, webhook_id, customer_id, task_id, status, created_at)
        VALUES (${`dlv_ov${n}${webhookId.slice(4, 14)}`}, ${`evt_ov${n}${webhookId.slice(4, 14)}`}, ${webhookId}, ${customerId},
          ${ids[0]}, ${status}::"WebhookStatus", now() - make_interval(mins => ${minutesAgo}::int))`;
    }

    const res = await sys.api("GET", "/v1/dashboard/overview", { token: a.key });
    expect(res.status).toBe(200);
    const me = await sys.api("GET", "/v1/customers/me", { token: a.key });
    expect(res.body).toEqual({
      tasks_by_status: { pending: 1, labeling: 0, settling: 0, settled: 4, canceled: 1 },
      labels_this_month: 2,
      label_quota: 1000,
      label_quota_remaining: me.body.label_quota_remaining,
      median_seconds_to_settle: 20,
      webhook_delivery_success_rate: 0.75,
    });
    expect(res.body.labels_this_month).toBe(
      await sys.db.prisma.label.count({ where: { customerId: a.id, createdAt: { gte: monthStart(monthOf(new Date())) } } }),
    );

    const theirs = await sys.api("GET", "/v1/dashboard/overview", { token: b.key });
    expect(theirs.body).toMatchObject({
      tasks_by_status: { pending: 0, labeling: 1, settling: 0, settled: 0, canceled: 0 },
      labels_this_month: 1,
      median_seconds_to_settle: null,
      webhook_delivery_success_rate: 0,
    });

    const empty = await registerCustomer(sys);
    expect((await sys.api("GET", "/v1/dashboard/overview", { token: empty.key })).body).toEqual({
      tasks_by_status: { pending: 0, labeling: 0, settling: 0, settled: 0, canceled: 0 },
      labels_this_month: 0,
      label_quota: 500,
      label_quota_remaining: 500,
      median_seconds_to_settle: null,
      webhook_delivery_success_rate: null,
    });
  });

  it("quality: over tasks settled in the last 90 days", async () => {
    const a = await registerCustomer(sys, 1000);
    const b = await registerCustomer(sys, 1000);
    const ids = await batch(sys, a.key, 5);
    const [theirs] = await batch(sys, b.key, 1);
    const settled = (
      conf: number,
      resolution: "consensus" | "max_labels",
      counts: Record<string, number>,
      consensus: string,
      daysAgo = 1,
    ) => ({
      status: "settled",
      createdAt: ago(daysAgo * DAY + MIN),
      settledAt: ago(daysAgo * DAY),
      confidence: conf,
      resolution,
      labels: Object.values(counts).reduce((s, n) => s + n, 0),
      counts,
      consensus,
    });
    await setTask(sys, ids[0] as string, settled(0.9, "consensus", { cat: 3 }, "cat"));
    await setTask(sys, ids[1] as string, settled(0.6, "max_labels", { cat: 2, dog: 2, bird: 1 }, "cat"));
    await setTask(sys, ids[2] as string, settled(0.99, "consensus", { dog: 3 }, "dog"));
    await setTask(sys, ids[3] as string, settled(0.1, "max_labels", { cat: 1, dog: 3, bird: 3 }, "dog", 100));
    await setTask(sys, theirs as string, settled(0.2, "max_labels", { cat: 1, dog: 1, bird: 1 }, "bird"));

    const res = await sys.api("GET", "/v1/dashboard/quality", { token: a.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      window_days: 90,
      tasks_settled: 3,
      mean_confidence: 0.83,
      resolution: { consensus: { tasks: 2, share: 0.6667 }, confidence: { tasks: 0, share: 0 }, max_labels: { tasks: 1, share: 0.3333 } },
      labels_per_task: [
        { labels: 3, tasks: 2 },
        { labels: 5, tasks: 1 },
      ],
      agreement_rate: Math.round((8 / 11) * 10_000) / 10_000,
      calibration: null,
      reviewed: NO_REVIEWS,
    });
    expect((await sys.api("GET", "/v1/dashboard/quality", { token: b.key })).body).toMatchObject({
      tasks_settled: 1,
      mean_confidence: 0.2,
      labels_per_task: [{ labels: 3, tasks: 1 }],
      agreement_rate: 0.3333,
    });
    const empty = await registerCustomer(sys);
    expect((await sys.api("GET", "/v1/dashboard/quality", { token: empty.key })).body).toEqual({
      window_days: 90,
      tasks_settled: 0,
      mean_confidence: null,
      resolution: { consensus: { tasks: 0, share: null }, confidence: { tasks: 0, share: null }, max_labels: { tasks: 0, share: null } },
      labels_per_task: [],
      agreement_rate: null,
      calibration: null,
      reviewed: NO_REVIEWS,
    });
  });

  it("usage: labels per UTC day for the last 30 days, oldest first, zeros included", async () => {
    const a = await registerCustomer(sys, 1000);
    const b = await registerCustomer(sys, 1000);
    const labeler = await createLabeler(sys, "usage");
    const ids = await batch(sys, a.key, 4);
    for (const id of ids) expect((await label(sys, labeler.key, id, "cat")).status).toBe(201);
    const other = await createTask(sys, b.key);
    expect((await label(sys, labeler.key, other, "cat")).status).toBe(201);
    const move = (id: string, days: number) =>
      sys.db.prisma.$executeRaw`UPDATE labels SET created_at = now() - make_interval(days => ${days}::int) WHERE task_id = ${id}`;
    await move(ids[1] as string, 3);
    await move(ids[2] as string, 29);
    await move(ids[3] as string, 40);
    const [{ today }] = (await sys.db.prisma.$queryRaw<{ today: string }[]>`
      SELECT to_char((now() AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS today`) as [{ today: string }];

    const res = await sys.api<{ days: { date: string; labels: number }[] }>("GET", "/v1/dashboard/usage", { token: a.key });
    expect(res.status).toBe(200);
    const { days } = res.body;
    expect(days).toHaveLength(30);
    expect(days[29]?.date).toBe(today);
    for (let i = 1; i < 30; i++) {
      expect(Date.parse(`${days[i]?.date}T00:00:00Z`) - Date.parse(`${days[i - 1]?.date}T00:00:00Z`)).toBe(DAY);
    }
    expect(days.map((d) => d.labels)).toEqual(Array.from({ length: 30 }, (_, i) => (i === 29 || i === 26 || i === 0 ? 1 : 0)));
    const theirs = await sys.api<{ days: { labels: number }[] }>("GET", "/v1/dashboard/usage", { token: b.key });
    expect(theirs.body.days.map((d) => d.labels).reduce((s, n) => s + n, 0)).toBe(1);
  });
});

// --- plans on a large customer --------------------------------------------------------------------

describe("dashboard quality of reviewed results (settling workers)", () => {
  const { sys } = useSystem({}, { labelers: [] });

  it("quality: reviewed results per label space, the latest review of a result the labels decided counting", async () => {
    const c = await registerCustomer(sys, 1000);
    const labeler = await createLabeler(sys, "dash-reviewer");
    const other = await createLabeler(sys, "dash-reviewer-2");
    const SPACE_A = { question: "Reviewed A?", options: ["cat", "dog", "bird"] };
    const SPACE_B = { question: "Reviewed B?", options: ["cat", "dog"] };
    /** a task of `spec` settled on "cat" by one label; its confidence */
    const settledCat = async (spec: typeof SPACE_A) => {
      const id = await createTask(sys, c.key, { label_spec: spec, consensus_threshold: 1 });
      expect((await label(sys, labeler.key, id, "cat")).status).toBe(201);
      const result = await settledResult(sys, c.key, id);
      return { id, confidence: result.confidence as number };
    };
    const review = async (id: string, body: Record<string, unknown>) =>
      expect((await sys.api("POST", `/v1/tasks/${id}/review`, { token: c.key, body })).status).toBe(200);

    const a = await Promise.all(Array.from({ length: 6 }, () => settledCat(SPACE_A)));
    const [b] = await Promise.all([settledCat(SPACE_B)]);
    const [a0, a1, a2, a3, a4, a5] = a as [(typeof a)[0], (typeof a)[0], (typeof a)[0], (typeof a)[0], (typeof a)[0], (typeof a)[0]];
    await review(a0.id, { verdict: "accept" }); // right
    await review(a1.id, { verdict: "reject", answer: { label: "cat" } }); // an answer equal to the result: right
    await review(a2.id, { verdict: "reject", answer: { label: "dog" } }); // wrong (revision 2, resolution review)
    await review(a3.id, { verdict: "reject" }); // wrong (reopened)
    // the latest review of revision 1 (wrong) counts, not the later review of the revision a review made
    await review(a4.id, { verdict: "reject", answer: { label: "bird" } });
    const revised = await eventually(
      async () => {
        const r = await sys.api("GET", `/v1/tasks/${a4.id}/result`, { token: c.key });
        return r.status === 200 && r.body.revision === 2 ? r.body : undefined;
      },
      20_000,
      "revision 2",
    );
    expect(revised.resolution).toBe("review");
    await review(a4.id, { verdict: "accept" });
    // two reviews of one result: the latest (right) counts, once
    await review(a5.id, { verdict: "reject", answer: { label: "dog" } });
    await eventually(
      async () => ((await sys.api("GET", `/v1/tasks/${a5.id}/result`, { token: c.key })).body.revision === 2 ? true : undefined),
      20_000,
      "revision 2 of a5",
    );
    // a5's latest review is of revision 2 (made by a review): its latest review of revision 1 (wrong) counts
    await review(a5.id, { verdict: "accept" });
    await review(b.id, { verdict: "accept" });
    // the reopened task settles again on a new labeler's label; its review-free revision 2 adds nothing
    expect((await label(sys, other.key, a3.id, "dog")).status).toBe(201);

    const right = new Map([
      [a0, true],
      [a1, true],
      [a2, false],
      [a3, false],
      [a4, false],
      [a5, false],
    ]);
    const expected = (entries: [{ confidence: number }, boolean][]) => {
      const bins = Array.from({ length: 10 }, (_, i) => ({ lower: i / 10, upper: (i + 1) / 10, n: 0, sum: 0, correct: 0 }));
      for (const [t, ok] of entries) {
        const bin = bins[Math.min(Math.floor(t.confidence * 10), 9)] as (typeof bins)[number];
        bin.n += 1;
        bin.sum += t.confidence;
        bin.correct += ok ? 1 : 0;
      }
      const r4 = (x: number) => Math.round(x * 10_000) / 10_000;
      const n = entries.length;
      return {
        reviews: n,
        reviewed_accuracy: r4(entries.filter(([, ok]) => ok).length / n),
        mean_confidence_reviewed: r4(entries.reduce((s, [t]) => s + t.confidence, 0) / n),
        bins: bins.map((x) => ({
          lower: x.lower,
          upper: x.upper,
          tasks: x.n,
          mean_confidence: x.n ? r4(x.sum / x.n) : null,
          accuracy: x.n ? r4(x.correct / x.n) : null,
        })),
        ece: r4(bins.reduce((e, x) => (x.n ? e + (x.n / n) * Math.abs(x.correct / x.n - x.sum / x.n) : e), 0)),
      };
    };
    const res = await sys.api("GET", "/v1/dashboard/quality", { token: c.key });
    expect(res.status).toBe(200);
    const reviewed = res.body.reviewed as { label_spaces: { question: string }[] };
    expect(reviewed).toMatchObject({ ...expected([...right.entries(), [b, true]]) });
    expect(reviewed.label_spaces.map((s) => s.question).sort()).toEqual([SPACE_A.question, SPACE_B.question]);
    const byQuestion = new Map(reviewed.label_spaces.map((s) => [s.question, s]));
    expect(byQuestion.get(SPACE_A.question)).toEqual({
      label_space_id: expect.stringMatching(/^lsp_/),
      question: SPACE_A.question,
      task_type: null,
      ...expected([...right.entries()]),
    });
    expect(byQuestion.get(SPACE_B.question)).toMatchObject({ task_type: null, ...expected([[b, true]]) });
    // another customer sees none of it
    const stranger = await registerCustomer(sys);
    expect((await sys.api("GET", "/v1/dashboard/quality", { token: stranger.key })).body.reviewed).toEqual(NO_REVIEWS);
  });
});

describe("every dashboard and billing statement is an index range scan on 100,000 tasks", () => {
  let sys: System;
  const BIG = "cust_bigdashboard";
  const SMALL = "cust_smalldashboard";
  beforeAll(async () => {
    sys = await startSystem({ workers: false });
    // The bulk setup (400,000 tasks and their labels) may outlast the service's 15 s statement timeout on a
    // busy machine: it runs on a connection of its own with a generous one.
    const setup = createDb({ url: sys.databaseUrl, poolMax: 2, statementTimeoutMs: 600_000 });
    const p = setup.prisma;
    await p.$executeRaw`INSERT INTO customers (id, name, email, tier, label_quota) VALUES
      (${BIG}, 'Big', 'big@example.com', 'production', 10000000), (${SMALL}, 'Small', 'small@example.com', 'sandbox', 1000)`;
    await p.$executeRaw`INSERT INTO api_keys (id, customer_id, key_hash, hint, tier, created_at) VALUES
      ('key_big1', ${BIG}, 'hash-big-1', 'h', 'sandbox', now() - interval '400 days'),
      ('key_big2', ${BIG}, 'hash-big-2', 'h', 'production', now() - interval '200 days'),
      ('key_small', ${SMALL}, 'hash-small', 'h', 'sandbox', now() - interval '400 days')`;
    await p.$executeRaw`INSERT INTO labelers (id, name, key_hash, hint) VALUES ('lbl_plan', 'plan', 'hash-labeler', 'h')`;
    await p.$executeRaw`INSERT INTO label_spaces (id, customer_id, question, options) VALUES
      ('lsp_big', ${BIG}, 'q', ARRAY['a', 'b']), ('lsp_small', ${SMALL}, 'q', ARRAY['a', 'b'])`;
    await p.$executeRaw`INSERT INTO webhooks (id, customer_id, callback_url, secret_ciphertext, events) VALUES
      ('whk_big', ${BIG}, 'https://big.example/hook', 'x', ARRAY['task.settled']),
      ('whk_small', ${SMALL}, 'https://small.example/hook', 'x', ARRAY['task.settled'])`;
    // One statement: 100,000 tasks of BIG and 300,000 of SMALL (the big customer is a quarter of the table, as
    // in a multi-tenant database: a minority the planner must reach by index), one every 5 minutes, 60% settled.
    await p.$executeRaw`
      INSERT INTO tasks (id, customer_id, label_space_id, task_type, data_url, question, options, consensus_threshold, max_labels, claim_cap,
        quota_reserved, status, labels_collected, label_counts, consensus_label, confidence, resolution, settled_at, created_at)
      SELECT 'tsk_' || s.tag || lpad(i::text, 7, '0'), s.customer, 'lsp_' || s.tag, 'image_classification', 'https://x.example/' || i, 'q',
        ARRAY['a', 'b'], 3, 7, CASE WHEN i % 10 >= 4 THEN 0 ELSE 3 END, 3,
        (CASE i % 10 WHEN 0 THEN 'pending' WHEN 1 THEN 'pending' WHEN 2 THEN 'labeling' WHEN 3 THEN 'canceled' ELSE 'settled' END)::"TaskStatus",
        CASE WHEN i % 10 >= 4 THEN 3 + i % 3 ELSE 0 END,
        CASE WHEN i % 10 >= 4 THEN jsonb_build_object('a', 3, 'b', i % 3) ELSE '{}'::jsonb END,
        CASE WHEN i % 10 >= 4 THEN 'a' END,
        CASE WHEN i % 10 >= 4 THEN 0.9 END,
        (CASE WHEN i % 10 >= 4 THEN CASE WHEN i % 3 = 2 THEN 'max_labels' ELSE 'consensus' END END)::"Resolution",
        CASE WHEN i % 10 >= 4 THEN now() - i * interval '5 minutes' + interval '10 minutes' END,
        now() - i * interval '5 minutes'
      FROM (VALUES ('big', ${BIG}, 100000), ('small', ${SMALL}, 300000)) AS s(tag, customer, n), generate_series(1, s.n) AS i`;
    // a label (and its claim) and a delivery for every settled task
    await p.$executeRaw`
      INSERT INTO claims (id, task_id, labeler_id, status, expires_at, created_at)
      SELECT 'clm_' || substr(id, 5), id, 'lbl_plan', 'labeled', created_at + interval '10 minutes', created_at FROM tasks WHERE status = 'settled'`;
    await p.$executeRaw`
      INSERT INTO labels (id, task_id, customer_id, label_space_id, labeler_id, claim_id, value, created_at)
      SELECT 'lab_' || substr(id, 5), id, customer_id, label_space_id, 'lbl_plan', 'clm_' || substr(id, 5), 'a', created_at + interval '1 minute'
      FROM tasks WHERE status = 'settled'`;
    await p.$executeRaw`
      INSERT INTO deliveries (id, event_id, webhook_id, customer_id, task_id, status, created_at)
      SELECT 'dlv_' || substr(id, 5), 'evt_' || substr(id, 5), CASE WHEN customer_id = ${BIG} THEN 'whk_big' ELSE 'whk_small' END,
        customer_id, id, (CASE WHEN labels_collected % 2 = 0 THEN 'failed' ELSE 'delivered' END)::"WebhookStatus", settled_at
      FROM tasks WHERE status = 'settled'`;
    await p.$executeRawUnsafe("VACUUM (ANALYZE) tasks, labels, claims, deliveries, customers, api_keys, webhooks, label_spaces");
    await setup.close();
  }, 300_000);
  afterAll(() => sys.close());

  it("EXPLAIN shows no sequential scan of tasks, labels or deliveries", async () => {
    const month = monthOf(new Date());
    const statements: [string, Prisma.Sql][] = [
      ["overview", overviewSql(BIG)],
      ["quality", qualitySql(BIG)],
      ["usage days", usageDaysSql(BIG)],
      ["task count", taskCountSql(BIG, undefined)],
      ["task count pending", taskCountSql(BIG, "pending")],
      ["billing usage", usageByMonthSql(BIG, monthStart(month), monthEnd(month))],
      ["billing usage, two months", usageByMonthSql(BIG, monthStart(monthOf(new Date(Date.now() - 31 * DAY))), monthEnd(month))],
      ["invoice state", invoiceStateSql(BIG)],
    ];
    for (const sort of TASK_SORTS) {
      for (const status of [undefined, "pending", "labeling", "settled", "canceled"] as const) {
        for (const offset of [0, 2000]) {
          const o: TaskListOptions = { status, sort, limit: 100, offset };
          statements.push([`tasks ${sort} ${status ?? "all"} offset ${offset}`, taskPageSql(BIG, o)]);
        }
      }
    }
    const report: string[] = [];
    for (const [name, sql] of statements) {
      const rows = await sys.db.prisma.$queryRaw<{ "QUERY PLAN": { Plan: PlanNode }[] }[]>(Prisma.sql`EXPLAIN (FORMAT JSON) ${sql}`);
      const plan = rows[0]?.["QUERY PLAN"][0]?.Plan as PlanNode;
      const all = planNodes(plan);
      const seq = all.filter((n) => n["Node Type"] === "Seq Scan" && ["tasks", "labels", "deliveries"].includes(n["Relation Name"] ?? ""));
      const indexes = all.flatMap((n) => (n["Index Name"] ? [n["Index Name"]] : []));
      report.push(`${name}: ${seq.length > 0 ? "SEQ SCAN" : "ok"} (${[...new Set(indexes)].join(", ")})`);
      expect([name, seq.map((n) => n["Relation Name"])]).toEqual([name, []]);
      expect([name, indexes.length > 0]).toEqual([name, true]);
    }
    if (process.env.SHOW_PLANS) console.log(report.join("\n"));
  });

  it("the routes answer for the large customer with its own numbers only", async () => {
    const live = issueKey(KEY_PREFIX.production);
    expect(await sys.db.prisma.$executeRaw`UPDATE api_keys SET key_hash = ${live.hash} WHERE id = 'key_big2'`).toBe(1);
    const token = live.key;
    const overview = await sys.api("GET", "/v1/dashboard/overview", { token });
    expect(overview.status).toBe(200);
    expect(overview.body.tasks_by_status).toEqual({ pending: 20000, labeling: 10000, settling: 0, settled: 60000, canceled: 10000 });
    const tasks = await sys.api<TaskPage>("GET", "/v1/dashboard/tasks?status=labeling&sort=created_at_asc&per_page=100&page=50", { token });
    expect(tasks.body).toMatchObject({ total: 10000, page: 50 });
    expect(tasks.body.items).toHaveLength(100);
    expect(tasks.body.items.every((t) => t.status === "labeling" && t.task_id.startsWith("tsk_big"))).toBe(true);
    const sorted = await sys.api<TaskPage>("GET", "/v1/dashboard/tasks?sort=settled_at_desc&per_page=100&page=601", { token });
    // 60,000 settled tasks fill pages 1..600; page 601 starts with the tasks not settled
    expect(sorted.body.items.every((t) => t.settled_at === null)).toBe(true);
    const quality = await sys.api("GET", "/v1/dashboard/quality", { token });
    expect(quality.body.tasks_settled).toBeGreaterThan(10000);
    const month = monthOf(new Date());
    const usage = await sys.api("GET", `/v1/billing/usage?month=${month}`, { token });
    const counted = await sys.db.prisma.label.count({
      where: { customerId: BIG, createdAt: { gte: monthStart(month), lt: monthEnd(month) } },
    });
    expect(usage.body).toMatchObject({ labels_collected: counted, amount_cents: counted * 8, tier: "production" });
  });
});
