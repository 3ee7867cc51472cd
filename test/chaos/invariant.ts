/**
 * The invariant every chaos scenario ends with, read from Postgres (the system of record) and the healthy
 * webhook receiver:
 *  - every accepted task (each task of a 2xx submission the load recorded, and each task of an accepted
 *    manifest job) is settled exactly once: exactly one ledger record and one `task.settled` event per
 *    task, and the ledger's hash chain verifies;
 *  - every settled task's event reached the healthy receiver at least once (signature verified);
 *  - no label is lost: every label answered 201 is in the labels table; a label whose answer was lost is
 *    there at most once (one per claim, one per task and labeler); each task's labels_collected is its
 *    number of labels;
 *  - the quota used equals the labels charged: with every task settled, `customers.quota_used` is
 *    Σ max(reserved, labels) over its tasks, which is its number of labels, and billing's usage of the
 *    month counts the same labels.
 * `checkInvariant` first waits (polling, up to `timeoutMs`) until every accepted task is settled and its
 * event delivered, then checks everything and throws one error listing every violation.
 */
import { createDb, verifyLedger } from "@labelgate/store";
import type { Receiver } from "./harness";
import type { Customer, LoadRecord } from "./load";

export interface InvariantInput {
  databaseUrl: string;
  customer: Customer;
  record: LoadRecord;
  healthy: Receiver;
  /** manifest jobs the gateway accepted (202) for this customer, with their manifest's line count */
  jobs?: { jobId: string; lines: number }[];
  /** how long to wait for settlement and delivery before checking (default 60 s) */
  timeoutMs?: number;
}

/** What the check found (the figures of docs/reliability.md). */
export interface InvariantCounts {
  tasksAccepted: number;
  tasksSettled: number;
  ledgerRecords: number;
  events: number;
  /** distinct events of these tasks the healthy receiver got */
  eventsDelivered: number;
  /** labels in the labels table for these tasks */
  labels: number;
  labels201: number;
  /** label requests whose first answer was lost */
  labelsUncertain: number;
  quotaUsed: number;
  billedLabels: number;
  /** seconds waited for settlement and delivery */
  waitedSeconds: number;
  /**
   * drain time: seconds from the last label recorded to the moment every accepted task was settled and its
   * event delivered (the database's clock; null when the wait timed out)
   */
  drainSeconds: number | null;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Checks the invariant; returns the counts, or throws listing every violation. */
export async function checkInvariant(input: InvariantInput): Promise<InvariantCounts> {
  const db = createDb({ url: input.databaseUrl, poolMax: 2 });
  const sql = db.prisma;
  const started = Date.now();
  try {
    // The tasks of accepted manifest jobs count as accepted too.
    const accepted = new Set(input.record.acceptedTasks);
    for (const job of input.jobs ?? []) {
      const rows = await sql.$queryRaw<{ id: string }[]>`SELECT id FROM tasks WHERE job_id = ${job.jobId}`;
      for (const r of rows) accepted.add(r.id);
    }
    const ids = [...accepted];
    let drainSeconds: number | null = null;

    // Wait for settlement and delivery (bounded): the faults are over, the backlog drains.
    const deadline = started + (input.timeoutMs ?? 60_000);
    for (;;) {
      const [row] = await sql.$queryRaw<{ settled: number }[]>`
        SELECT count(*)::int AS settled FROM tasks WHERE id = ANY(${ids}::text[]) AND status = 'settled'`;
      const events = await sql.$queryRaw<{ id: string }[]>`
        SELECT id FROM events WHERE task_id = ANY(${ids}::text[]) AND type = 'task.settled'`;
      const got = input.healthy.eventIds();
      if ((row?.settled ?? 0) === ids.length && events.every((e) => got.has(e.id))) {
        const [drain] = await sql.$queryRaw<{ seconds: number | null }[]>`
          SELECT extract(epoch FROM now() - (SELECT max(created_at) FROM labels WHERE task_id = ANY(${ids}::text[])))::float8 AS seconds`;
        drainSeconds = drain?.seconds === null || drain?.seconds === undefined ? null : Math.round(drain.seconds * 10) / 10;
        break;
      }
      if (Date.now() > deadline) break;
      await sleep(250);
    }
    const waitedSeconds = (Date.now() - started) / 1000;

    const problems: string[] = [];
    const problem = (what: string, list: readonly string[]) => {
      if (list.length > 0) problems.push(`${what}: ${list.length} (${list.slice(0, 5).join(", ")})`);
    };

    // manifest jobs: completed, one task per line
    for (const job of input.jobs ?? []) {
      const [j] = await sql.$queryRaw<{ status: string; task_count: number }[]>`
        SELECT status::text AS status, task_count FROM jobs WHERE id = ${job.jobId}`;
      if (!j) problems.push(`job ${job.jobId} missing`);
      else if (j.status !== "completed") problems.push(`job ${job.jobId} is ${j.status}, not completed`);
      else if (j.task_count !== job.lines) problems.push(`job ${job.jobId}: ${j.task_count} tasks for ${job.lines} manifest lines`);
    }

    // tasks: every accepted one exists and is settled; the customer has no task nobody accepted
    const tasks = await sql.$queryRaw<{ id: string; status: string; labels_collected: number; quota_reserved: number; labels: number }[]>`
      SELECT t.id, t.status::text AS status, t.labels_collected, t.quota_reserved,
             (SELECT count(*)::int FROM labels l WHERE l.task_id = t.id) AS labels
      FROM tasks t WHERE t.customer_id = ${input.customer.id}`;
    const byId = new Map(tasks.map((t) => [t.id, t]));
    problem(
      "accepted tasks missing",
      ids.filter((id) => !byId.has(id)),
    );
    problem(
      "tasks nobody accepted",
      tasks.filter((t) => !accepted.has(t.id)).map((t) => t.id),
    );
    const unsettled = tasks.filter((t) => accepted.has(t.id) && t.status !== "settled");
    problem(
      "accepted tasks not settled",
      unsettled.map((t) => `${t.id} ${t.status} ${t.labels}/${t.labels_collected}`),
    );
    problem(
      "labels_collected differs from the labels table",
      tasks.filter((t) => t.labels !== t.labels_collected).map((t) => `${t.id} ${t.labels_collected} vs ${t.labels}`),
    );

    // settled exactly once: one ledger record and one event per task; the chain verifies
    const ledger = await sql.$queryRaw<{ task_id: string; n: number }[]>`
      SELECT task_id, count(*)::int AS n FROM ledger_entries WHERE task_id = ANY(${ids}::text[]) GROUP BY task_id`;
    const ledgerOf = new Map(ledger.map((l) => [l.task_id, l.n]));
    problem(
      "settled tasks without exactly one ledger record",
      tasks.filter((t) => t.status === "settled" && ledgerOf.get(t.id) !== 1).map((t) => `${t.id} ${ledgerOf.get(t.id) ?? 0}`),
    );
    problem(
      "ledger records of tasks not settled",
      ledger.filter((l) => byId.get(l.task_id)?.status !== "settled").map((l) => l.task_id),
    );
    const chain = await verifyLedger(sql);
    if (!chain.ok) problems.push(`ledger chain broken at seq ${chain.brokenAt}`);
    const events = await sql.$queryRaw<{ id: string; task_id: string }[]>`
      SELECT id, task_id FROM events WHERE task_id = ANY(${ids}::text[]) AND type = 'task.settled'`;
    const eventsPerTask = new Map<string, number>();
    for (const e of events) eventsPerTask.set(e.task_id, (eventsPerTask.get(e.task_id) ?? 0) + 1);
    problem(
      "settled tasks without exactly one task.settled event",
      tasks.filter((t) => t.status === "settled" && eventsPerTask.get(t.id) !== 1).map((t) => t.id),
    );

    // delivered at least once to the healthy receiver
    const got = input.healthy.eventIds();
    problem(
      "events never delivered to the healthy receiver",
      events.filter((e) => !got.has(e.id)).map((e) => `${e.id} (task ${e.task_id})`),
    );
    if (input.healthy.rejected > 0) problems.push(`healthy receiver rejected ${input.healthy.rejected} requests (bad signature or body)`);
    const eventsDelivered = events.filter((e) => got.has(e.id)).length;

    // no label lost, none twice
    const labels = await sql.$queryRaw<{ id: string; claim_id: string; task_id: string; labeler_id: string }[]>`
      SELECT id, claim_id, task_id, labeler_id FROM labels WHERE customer_id = ${input.customer.id}`;
    const labelIds = new Set(labels.map((l) => l.id));
    problem(
      "labels answered 201 but missing",
      [...input.record.labels201.keys()].filter((id) => !labelIds.has(id)),
    );
    const perClaim = new Map<string, number>();
    const perTaskLabeler = new Map<string, number>();
    for (const l of labels) {
      perClaim.set(l.claim_id, (perClaim.get(l.claim_id) ?? 0) + 1);
      const k = `${l.task_id}/${l.labeler_id}`;
      perTaskLabeler.set(k, (perTaskLabeler.get(k) ?? 0) + 1);
    }
    problem(
      "claims with more than one label",
      [...perClaim].filter(([, n]) => n > 1).map(([c]) => c),
    );
    problem(
      "labelers with two labels on one task",
      [...perTaskLabeler].filter(([, n]) => n > 1).map(([k]) => k),
    );
    const claimsWithLabel = new Set(labels.map((l) => l.claim_id));
    problem(
      "lost label answers said recorded but no label",
      [...input.record.recordedUnseen].filter((c) => !claimsWithLabel.has(c)),
    );
    problem(
      "labels of tasks nobody accepted",
      labels.filter((l) => !accepted.has(l.task_id)).map((l) => l.id),
    );

    // quota used = labels charged (with every task settled: reserved units were all spent on labels)
    const [cust] = await sql.$queryRaw<{ quota_used: number }[]>`SELECT quota_used FROM customers WHERE id = ${input.customer.id}`;
    const quotaUsed = cust?.quota_used ?? -1;
    const expectedQuota = tasks.reduce((s, t) => s + (t.status === "canceled" ? t.labels : Math.max(t.quota_reserved, t.labels)), 0);
    if (quotaUsed !== expectedQuota) problems.push(`quota_used ${quotaUsed} != Σ max(reserved, labels) ${expectedQuota}`);
    if (unsettled.length === 0 && quotaUsed !== labels.length) problems.push(`quota_used ${quotaUsed} != labels ${labels.length}`);
    const month = new Date().toISOString().slice(0, 7);
    const usage = await input.customer.client.billing.usage(month);
    if (usage.labels_collected !== labels.length)
      problems.push(`billing usage ${usage.labels_collected} labels != labels table ${labels.length}`);

    const counts: InvariantCounts = {
      tasksAccepted: ids.length,
      tasksSettled: tasks.filter((t) => accepted.has(t.id) && t.status === "settled").length,
      ledgerRecords: ledger.reduce((s, l) => s + l.n, 0),
      events: events.length,
      eventsDelivered,
      labels: labels.length,
      labels201: input.record.labels201.size,
      labelsUncertain: input.record.uncertainClaims.size,
      quotaUsed,
      billedLabels: usage.labels_collected,
      waitedSeconds: Math.round(waitedSeconds * 10) / 10,
      drainSeconds,
    };
    if (problems.length > 0) throw new Error(`invariant violated:\n  ${problems.join("\n  ")}\ncounts: ${JSON.stringify(counts)}`);
    return counts;
  } finally {
    await db.close();
  }
}
