/**
 * Reviews, revisions and audits (docs/contract.md "Review and audits"; docs/decisions/0260 to 0262).
 *
 * - A review of a settled task is kept (table `reviews`, every one; the latest counts) and closes the task's
 *   audit. `accept`, or `reject` with an answer equal to the result, changes nothing else.
 * - `reject` with another answer makes the next revision at once: the revision it replaces is kept as it was
 *   settled (`task_revisions`), and the task goes back to `settling` with the answer as its consensus
 *   (confidence 1, resolution `review`); the settlement (settlement.ts, anchors.ts) appends its ledger record
 *   and writes `task.revised`. Its settlement job is keyed by the review (`consensus` job of `labelId` = review id).
 * - `reject` alone (single choice) reopens the task: the revision is kept, the rejected option excluded, the
 *   task `labeling` again with up to `max_labels` more labels (`labels_before`); the label that decides it
 *   makes the next revision through the usual settlement.
 * All in one transaction under the task's row lock, so two reviews of one task are serialized: the second
 * sees the first's outcome (a task no longer settled is refused with `taskNotSettled`).
 */
import { type AnswerBody, type AnyLabelSpec, type AuditStatus, type ReviewVerdict, storedLabelSpec } from "@labelgate/api";
import type * as wire from "@labelgate/api/types";
import { newId } from "@labelgate/core";
import { taskKindOf } from "@labelgate/quality";
import type { FollowUps } from "@labelgate/queue";
import type { Db } from "./database";
import { StoreError } from "./errors";
import { Prisma } from "./generated/client";
import { assertTransition, type TaskStatus } from "./lifecycle";
import { policyOf } from "./policy";
import { calibrationSummary } from "./spaces";
import { queryRows, transactionRows, withTransaction } from "./sql";

/** A review as the customer sent it (the body of `POST /v1/tasks/{id}/review`, already of the right shape). */
export interface ReviewInput {
  verdict: ReviewVerdict;
  answer?: AnswerBody;
}

/** One confidence bin of one label space's reviewed results (`reviewedBins`). */
export interface ReviewedBinRow {
  label_space_id: string;
  question: string;
  /** the space's task type; null for single choice */
  task_type: string | null;
  /** 0..9: confidences in [bin/10, (bin+1)/10), 1 in bin 9 */
  bin: number;
  tasks: number;
  sum_confidence: number;
  correct: number;
}

/** The reviewed-results figures of the dashboard (`GET /v1/dashboard/quality` `reviewed`). */
export type ReviewedQuality = wire.DashboardQuality["reviewed"];

/**
 * The dashboard's reviewed-results figures from `reviewedBins` rows: all spaces together, then each space (in
 * the rows' order): reviews, the share found right, the mean confidence, and the reliability table with its ECE
 * (as the gold one: `calibrationSummary`, Guo et al. 2017). Shares rounded to 4 decimals; null without reviews.
 */
export function reviewedQuality(rows: readonly ReviewedBinRow[]): ReviewedQuality {
  const figures = (of: readonly ReviewedBinRow[]) => {
    const bins = Array.from({ length: 10 }, () => ({ tasks: 0, sumConfidence: 0, correct: 0 }));
    for (const r of of) {
      const b = bins[Math.min(Math.max(r.bin, 0), 9)] as (typeof bins)[number];
      b.tasks += r.tasks;
      b.sumConfidence += r.sum_confidence;
      b.correct += r.correct;
    }
    const reviews = bins.reduce((n, b) => n + b.tasks, 0);
    const round = (x: number) => Math.round(x * 10_000) / 10_000;
    const summary = calibrationSummary([bins], 0);
    return {
      reviews,
      reviewed_accuracy: reviews > 0 ? round(bins.reduce((n, b) => n + b.correct, 0) / reviews) : null,
      mean_confidence_reviewed: reviews > 0 ? round(bins.reduce((n, b) => n + b.sumConfidence, 0) / reviews) : null,
      bins: summary?.bins ?? bins.map((_, i) => ({ lower: i / 10, upper: (i + 1) / 10, tasks: 0, mean_confidence: null, accuracy: null })),
      ece: summary?.ece ?? null,
    };
  };
  const spaces = new Map<string, ReviewedBinRow[]>();
  for (const r of rows) spaces.set(r.label_space_id, [...(spaces.get(r.label_space_id) ?? []), r]);
  return {
    ...figures(rows),
    label_spaces: [...spaces.values()].map((of) => {
      const first = of[0] as ReviewedBinRow;
      return { label_space_id: first.label_space_id, question: first.question, task_type: first.task_type, ...figures(of) };
    }),
  };
}

/** A stored review. */
export interface ReviewRow {
  id: string;
  task_id: string;
  verdict: ReviewVerdict;
  answer: AnswerBody | null;
  revision: number;
  consensus_label: string;
  confidence: number;
  revised: boolean;
  created_at: Date;
}

/** A revision a later one replaced, with its ledger record (for its settlement object). */
export interface RevisionRow {
  task_id: string;
  revision: number;
  consensus_label: string;
  confidence: number;
  resolution: string;
  label_counts: Record<string, number>;
  posterior: Record<string, number>;
  labels_collected: number;
  consensus: unknown;
  ledger_txid: string;
  settled_at: Date;
  /** its ledger record: payload, sequence, previous hash, txid, when appended */
  entry: { payload: unknown; seq: bigint; prevHash: string; txid: string; createdAt: Date };
}

/** An audit with what the review page shows of its task. */
export interface AuditRow {
  task_id: string;
  status: AuditStatus;
  label_space_id: string;
  task_type: string;
  data_url: string;
  question: string;
  options: string[];
  label_spec: unknown;
  data_text: string | null;
  consensus_label: string | null;
  consensus: unknown;
  confidence: number | null;
  resolution: string | null;
  revision: number;
  settled_at: Date | null;
  created_at: Date;
  closed_at: Date | null;
  review_id: string | null;
}

/** The task row as the review reads it under its lock. */
interface ReviewedTask {
  id: string;
  status: TaskStatus;
  task_type: string;
  question: string;
  options: string[];
  label_spec: AnyLabelSpec | null;
  data_text: string | null;
  consensus_label: string | null;
  confidence: number | null;
  revision: number;
  excluded_options: string[];
  label_space_id: string;
  consensus_threshold: number;
  max_labels: number;
  confidence_target: number | null;
  min_labels: number | null;
  min_gain: number | null;
}

/** What a review came to: the stored review and what must follow its commit (a revision's settlement). */
export interface ReviewDone {
  review: ReviewRow;
  /** `answer`: a new revision is settling; `reopen`: the task is labeling again; undefined: nothing changed */
  change?: "answer" | "reopen";
  followUps: FollowUps;
}

/** The store of reviews, revisions and audits over the store's database. */
export function reviewsStore(db: Db) {
  const { pool } = db;
  return {
    /**
     * Records a customer's review of its task (see the module comment).
     * @throws StoreError taskNotFound (no such task of this customer), taskNotSettled (with `status`), invalid
     *   (an answer that is not right for the task, `answer.<path>`; a rejection without answer of a type other
     *   than single choice, or one that would leave no option)
     */
    async review(customerId: string, taskId: string, input: ReviewInput): Promise<ReviewDone> {
      return withTransaction(pool, async (run) => {
        const [, rows] = await run<[object, ReviewedTask]>([
          Prisma.sql`SELECT id FROM tasks WHERE id = ${taskId} AND customer_id = ${customerId} FOR UPDATE`,
          Prisma.sql`
            SELECT id, status::text AS status, task_type, question, options, label_spec, data_text, consensus_label, confidence,
              revision, excluded_options, label_space_id, consensus_threshold, max_labels, confidence_target, min_labels, min_gain
            FROM tasks WHERE id = ${taskId} AND customer_id = ${customerId}`,
        ]);
        const task = rows[0];
        if (!task) throw new StoreError("taskNotFound");
        if (task.status !== "settled" || task.consensus_label === null || task.confidence === null)
          throw new StoreError("taskNotSettled", undefined, { status: task.status });
        const kind = taskKindOf(task.task_type);
        const spec = storedLabelSpec({ labelSpec: task.label_spec, question: task.question, options: task.options });

        let value: string | undefined;
        if (input.answer !== undefined) {
          const read = kind.readAnswer(spec, input.answer, { text: task.data_text ?? undefined });
          if ("issues" in read)
            throw new StoreError(
              "invalid",
              read.issues.map((i) => ({ path: ["answer", ...i.path].join("."), message: i.message })),
            );
          value = read.value;
        }
        let change: ReviewDone["change"];
        if (input.verdict === "reject" && value === undefined) {
          if (kind.name !== "single_choice")
            throw new StoreError("invalid", [
              { path: "answer", message: `a ${task.task_type} result is rejected with the right answer (an answer body of its type)` },
            ]);
          const excluded = new Set([...task.excluded_options, task.consensus_label]);
          if (excluded.size >= task.options.length)
            throw new StoreError("invalid", [
              { path: "answer", message: "every other option was rejected already: reject with the right answer" },
            ]);
          change = "reopen";
        } else if (input.verdict === "reject" && value !== task.consensus_label) {
          change = "answer";
        }

        const reviewId = newId("review");
        const statements: Prisma.Sql[] = [
          Prisma.sql`
            INSERT INTO reviews (id, task_id, customer_id, label_space_id, verdict, answer, value, revision, consensus_label, confidence, revised)
            VALUES (${reviewId}, ${task.id}, ${customerId}, ${task.label_space_id}, ${input.verdict},
              ${input.answer === undefined ? null : JSON.stringify(input.answer)}::jsonb, ${value ?? null}, ${task.revision},
              ${task.consensus_label}, ${task.confidence}, ${change !== undefined})
            RETURNING id, task_id, verdict, answer, revision, consensus_label, confidence, revised, created_at`,
          Prisma.sql`
            UPDATE audits SET status = 'done', closed_at = now(), review_id = ${reviewId}
            WHERE task_id = ${task.id} AND status = 'open'`,
        ];
        if (change !== undefined) {
          // the revision as it was settled, kept before the task row moves on
          statements.push(Prisma.sql`
            INSERT INTO task_revisions (task_id, revision, consensus_label, confidence, resolution, label_counts, posterior,
              labels_collected, consensus, ledger_txid, settled_at)
            SELECT id, revision, consensus_label, confidence, resolution, label_counts, posterior, labels_collected, consensus,
              ledger_txid, settled_at
            FROM tasks WHERE id = ${task.id}`);
        }
        if (change === "answer") {
          assertTransition(task.status, "settling");
          const reviewed = kind.reviewed(spec, value as string);
          statements.push(Prisma.sql`
            UPDATE tasks SET status = 'settling'::"TaskStatus", revision = revision + 1, consensus_label = ${value as string},
              confidence = 1, resolution = 'review'::"Resolution", posterior = ${JSON.stringify(reviewed.posterior)}::jsonb,
              consensus = ${reviewed.consensus === undefined ? null : JSON.stringify(reviewed.consensus)}::jsonb,
              last_label_id = ${reviewId}, last_label_at = now(), updated_at = now()
            WHERE id = ${task.id}`);
        } else if (change === "reopen") {
          assertTransition(task.status, "labeling");
          const claimCap = kind.initialClaimCap(spec, { policy: policyOf(task), gold: false });
          statements.push(Prisma.sql`
            UPDATE tasks SET status = 'labeling'::"TaskStatus", revision = revision + 1,
              excluded_options = array_append(excluded_options, consensus_label), labels_before = labels_collected,
              consensus_label = NULL, confidence = NULL, resolution = NULL, posterior = NULL, consensus = NULL,
              ledger_txid = NULL, settled_at = NULL, claim_cap = ${claimCap}, slots_full_until = NULL, updated_at = now()
            WHERE id = ${task.id}`);
        }
        const [inserted] = await run<[ReviewRow]>(statements as [Prisma.Sql], { commit: true });
        const review = inserted[0];
        if (!review) throw new Error(`review of ${task.id} was not recorded`);
        return {
          review,
          change,
          followUps: { consensus: change === "answer" ? [{ taskId: task.id, labelId: reviewId }] : [] },
        };
      });
    },

    /** Every review of a task, oldest first. */
    async reviewsOf(taskId: string): Promise<ReviewRow[]> {
      return queryRows<ReviewRow>(
        pool,
        Prisma.sql`
          SELECT id, task_id, verdict, answer, revision, consensus_label, confidence, revised, created_at
          FROM reviews WHERE task_id = ${taskId} ORDER BY created_at, id`,
      );
    },

    /** The reviews of each of `taskIds` (a page of tasks), oldest first per task; a task without reviews maps to []. */
    async reviewsOfTasks(taskIds: readonly string[]): Promise<Map<string, ReviewRow[]>> {
      const byTask = new Map<string, ReviewRow[]>(taskIds.map((id) => [id, []]));
      if (taskIds.length === 0) return byTask;
      const rows = await queryRows<ReviewRow>(
        pool,
        Prisma.sql`
          SELECT id, task_id, verdict, answer, revision, consensus_label, confidence, revised, created_at
          FROM reviews WHERE task_id = ANY(${[...taskIds]}::text[]) ORDER BY created_at, id`,
      );
      for (const row of rows) byTask.get(row.task_id)?.push(row);
      return byTask;
    },

    /** The revisions of a task a later one replaced, oldest first, each with its ledger record. */
    async revisionsOf(taskId: string): Promise<RevisionRow[]> {
      const rows = await queryRows<
        Omit<RevisionRow, "entry"> & { payload: unknown; seq: string; prev_hash: string; txid: string; recorded_at: Date }
      >(
        pool,
        Prisma.sql`
          SELECT r.task_id, r.revision, r.consensus_label, r.confidence, r.resolution::text AS resolution, r.label_counts, r.posterior,
            r.labels_collected, r.consensus, r.ledger_txid, r.settled_at,
            l.payload, l.seq::text AS seq, l.prev_hash, l.txid, l.created_at AS recorded_at
          FROM task_revisions r JOIN ledger_entries l ON l.task_id = r.task_id AND l.revision = r.revision
          WHERE r.task_id = ${taskId} ORDER BY r.revision`,
      );
      return rows.map(({ payload, seq, prev_hash, txid, recorded_at, ...r }) => ({
        ...r,
        entry: { payload, seq: BigInt(seq), prevHash: prev_hash, txid, createdAt: recorded_at },
      }));
    },

    /**
     * The customer's reviewed results by label space and confidence bin (docs/decisions/0263): for each task, its
     * latest review of a result the labels decided (not one an earlier review made, resolution `review`); it
     * found the result right unless it revised it (accept, or reject with an answer equal to the result).
     * Bin i of 10 holds confidences in [i/10, (i+1)/10), 1 in the last. One row per space and non-empty bin:
     * `tasks`, `sum_confidence` (of the confidences when reviewed), `correct` (found right).
     */
    async reviewedBins(customerId: string): Promise<ReviewedBinRow[]> {
      return queryRows<ReviewedBinRow>(
        pool,
        Prisma.sql`
          WITH latest AS (
            SELECT DISTINCT ON (r.task_id) r.task_id, r.label_space_id, r.confidence, NOT r.revised AS right_result
            FROM label_spaces ls
            JOIN reviews r ON r.label_space_id = ls.id
            JOIN tasks t ON t.id = r.task_id
            LEFT JOIN task_revisions v ON v.task_id = r.task_id AND v.revision = r.revision
            WHERE ls.customer_id = ${customerId} AND r.customer_id = ${customerId}
              AND (CASE WHEN v.task_id IS NOT NULL THEN v.resolution::text ELSE t.resolution::text END) IS DISTINCT FROM 'review'
            ORDER BY r.task_id, r.created_at DESC, r.id DESC
          )
          SELECT l.label_space_id, s.question, s.task_type, LEAST(floor(l.confidence * 10)::int, 9) AS bin, count(*)::int AS tasks,
            sum(l.confidence)::float8 AS sum_confidence, count(*) FILTER (WHERE l.right_result)::int AS correct
          FROM latest l JOIN label_spaces s ON s.id = l.label_space_id
          GROUP BY l.label_space_id, s.question, s.task_type, bin
          ORDER BY l.label_space_id, bin`,
      );
    },

    /** One page of the customer's audits of `status`, oldest first, and how many there are. */
    async audits(customerId: string, status: AuditStatus, page: number, perPage: number): Promise<{ total: number; items: AuditRow[] }> {
      const [counted, items] = await transactionRows<[{ total: number }, AuditRow]>(pool, [
        Prisma.sql`SELECT count(*)::int AS total FROM audits WHERE customer_id = ${customerId} AND status = ${status}`,
        Prisma.sql`
          SELECT a.task_id, a.status, a.label_space_id, t.task_type, t.data_url, t.question, t.options, t.label_spec, t.data_text,
            t.consensus_label, t.consensus, t.confidence, t.resolution::text AS resolution, t.revision, t.settled_at,
            a.created_at, a.closed_at, a.review_id
          FROM audits a JOIN tasks t ON t.id = a.task_id
          WHERE a.customer_id = ${customerId} AND a.status = ${status}
          ORDER BY a.created_at, a.task_id
          LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`,
      ]);
      return { total: counted[0]?.total ?? 0, items };
    },
  };
}

export type ReviewsStore = ReturnType<typeof reviewsStore>;
