/**
 * Label spaces (contract §quality): a customer's (question, ordered options), and the Dawid-Skene model
 * of its labels (packages/quality). The model is rows: the space's parameters (`label_spaces.model`) and one
 * row per labeler of the space (`labeler_models.params`), written together by a refit; the label transaction
 * reads only the space row and the rows of a task's labelers. Each labeler row also keeps the labeler's live
 * gold record (answers, correct, exclusion), counted when each gold answer is recorded.
 *
 * A refit is safe to run twice or concurrently: it reads the space at version v and writes version v + 1 only
 * if the space is still at v (compare and set); the loser's work is dropped.
 */
import { createHash } from "node:crypto";
import { type AnyLabelSpec, choicesOf, isReservedTaskType, type ReservedTaskType } from "@labelgate/api";
import type * as wire from "@labelgate/api/types";
import {
  type AnyFitInput,
  type AnyFitOutput,
  type CalibrationBin,
  DEFAULT_POLICY,
  estimatedAccuracy,
  type FitInput,
  goldAccuracy,
  type LabelerParams,
  type Policy,
  type SpaceParams,
  type StoredLabelerRow,
  type StoredVote,
  taskKindOf,
} from "@labelgate/quality";
import type { Db } from "./database";
import { Prisma } from "./generated/client";
import { type PolicyColumns, policyOf } from "./policy";
import { transactionRows } from "./sql";

/**
 * The id of a customer's label space: "lsp_" + the first 32 hex digits of SHA-256 over the customer id and
 * the byte-length-prefixed question and options (so no two specs share an encoding). The migration
 * 20261124200000_label_quality computes the same in SQL for the tasks that existed before.
 */
export function labelSpaceId(customerId: string, question: string, options: readonly string[]): string {
  const part = (s: string) => `${Buffer.byteLength(s, "utf8")}:${s}`;
  const text = `${customerId}\n${part(question)}${options.map((o) => `\n${part(o)}`).join("")}`;
  return `lsp_${createHash("sha256").update(text, "utf8").digest("hex").slice(0, 32)}`;
}

/**
 * The label space of a task of `type` and `spec`: single choice as `labelSpaceId`; a reserved type (contract §task-types)
 * over the same fields after a `#type` line, which no single-choice encoding has (its second line starts with
 * a byte length), so a multi-label space never shares its id with a single-choice one of the same options.
 */
export function spaceIdOf(customerId: string, type: string, spec: AnyLabelSpec): string {
  if (!isReservedTaskType(type)) return labelSpaceId(customerId, spec.question, choicesOf(type, spec));
  return labelSpaceId(`${customerId}\n#${type}`, spec.question, choicesOf(type, spec));
}

/**
 * The dashboard's calibration of several spaces' bins (10 each): per bin, tasks, mean confidence and accuracy;
 * ECE = sum over bins of tasks / total × |accuracy − mean confidence| (Guo et al. 2017, eq. 3). Null when no
 * bin holds a task.
 */
export function calibrationSummary(spaces: CalibrationBin[][], goldTasks: number): wire.DashboardQuality["calibration"] {
  const sums = Array.from({ length: 10 }, () => ({ tasks: 0, sumConfidence: 0, correct: 0 }));
  for (const bins of spaces) {
    bins.slice(0, 10).forEach((b, i) => {
      const sum = sums[i] as CalibrationBin;
      sum.tasks += b.tasks;
      sum.sumConfidence += b.sumConfidence;
      sum.correct += b.correct;
    });
  }
  const total = sums.reduce((n, b) => n + b.tasks, 0);
  if (total === 0) return null;
  const round = (x: number) => Math.round(x * 10_000) / 10_000;
  let ece = 0;
  const bins = sums.map((b, i) => {
    const mean = b.tasks > 0 ? b.sumConfidence / b.tasks : null;
    const accuracy = b.tasks > 0 ? b.correct / b.tasks : null;
    if (mean !== null && accuracy !== null) ece += (b.tasks / total) * Math.abs(accuracy - mean);
    return {
      lower: i / 10,
      upper: (i + 1) / 10,
      tasks: b.tasks,
      mean_confidence: mean === null ? null : round(mean),
      accuracy: accuracy === null ? null : round(accuracy),
    };
  });
  return { gold_tasks: goldTasks, bins, ece: round(ece) };
}

/**
 * New labels, as a share of the labels of a space's last fit, that make it due for a refit: the simulator
 * (docs/notes/quality.md §4) found 50 to 1,000 labels between refits change accuracy by under 0.5 pt.
 */
export const REFIT_NEW_LABEL_SHARE = 0.05;
/** A space with new labels is refitted at least this often, seconds (unless its cool-down is longer). */
export const REFIT_MAX_AGE_S = 60;
/**
 * The largest share of the time a space's refits may take: after a fit of `fit_ms`, the space is not due again
 * for (1 / share - 1) x fit_ms. The label-share rule alone refits a space growing faster than 5% a second at
 * every sweep, each refit reading the whole space: a free_text space of long answers spent most of a core on
 * refits (docs/benchmarks.md, "Task types: throughput"). A fit of under 1/3 s waits less than a sweep.
 */
export const REFIT_TIME_SHARE = 0.25;
/**
 * The most text a refit of a typed space reads, in code points: over the tasks read, the task's text (text_span)
 * once per answer plus the answers themselves (their stored JSON: a free_text answer is its text). A text_span
 * fit's cost follows its token labels (tokens x answers, a token about 5 code points), a free_text fit's the
 * words it aligns. Gold tasks first, then the newest tasks, until the budget is spent (at least one task). The 191
 * crowd-spans abstracts cost 1.87 M and fit in 1 s (docs/benchmarks.md, bench:types); the 4,740 abstracts of
 * the whole PICO set (9 M token labels, about 50 M) took 226 s (docs/notes/types.md section 3). With 10 M, a
 * space of 100,000-code-point texts answered 6 times reads its 16 newest, not all of them; a free_text space of
 * 2,000-code-point answers, 7 per task, its 724 newest (a fit of 3.5 s on the bench machine). A labeler seen only
 * in older tasks keeps the row of the last fit that read them.
 */
export const REFIT_TEXT_BUDGET = 10_000_000;

/** The newest task's policy of a space other than gold tasks (what its calibration replays). */
function newestPolicySql(spaceId: string): Prisma.Sql {
  return Prisma.sql`
    SELECT consensus_threshold, max_labels, confidence_target, min_labels, min_gain FROM tasks
    WHERE label_space_id = ${spaceId} AND gold_label IS NULL ORDER BY created_at DESC LIMIT 1`;
}

/** The policy the calibration replays: the space's newest task's (the default policy without one). */
function replayPolicyOf(row: PolicyColumns | undefined): Policy {
  return row ? policyOf(row) : DEFAULT_POLICY;
}

/**
 * The known truths reviews gave in a space (docs/decisions/0260), as a subquery of `(task_id, truth)`: for each
 * task other than gold tasks, its latest review that names the right answer, the reviewer's answer of a
 * rejection or the consensus it accepted (a rejection alone names none). The refit reads them as gold answers.
 */
export function reviewedTruthSql(spaceId: string): Prisma.Sql {
  return Prisma.sql`
    SELECT task_id, truth FROM (
      SELECT DISTINCT ON (r.task_id) r.task_id,
        CASE WHEN r.verdict = 'accept' THEN r.consensus_label ELSE r.value END AS truth
      FROM reviews r JOIN tasks t ON t.id = r.task_id
      WHERE r.label_space_id = ${spaceId} AND t.gold_label IS NULL
      ORDER BY r.task_id, r.created_at DESC, r.id DESC
    ) latest WHERE truth IS NOT NULL`;
}

export function spacesStore(db: Db) {
  const { pool } = db;
  /** A single-choice space's refit input (refit-space.ts), or undefined. */
  async function singleChoiceFitInput(spaceId: string): Promise<FitInput | undefined> {
    const [spaces, labelers, labels, gold, reviewed, newest] = await transactionRows<
      [
        { id: string; options: string[]; version: number; model: SpaceParams | null },
        { params: LabelerParams },
        { task_id: string; labeler_id: string; option: number; created_at: string },
        { id: string; option: number },
        { id: string; option: number },
        PolicyColumns,
      ]
    >(pool, [
      Prisma.sql`SELECT id, options, version, model FROM label_spaces WHERE id = ${spaceId}`,
      Prisma.sql`SELECT params FROM labeler_models WHERE label_space_id = ${spaceId} AND params IS NOT NULL ORDER BY labeler_id`,
      Prisma.sql`
        SELECT l.task_id, l.labeler_id, array_position(s.options, l.value) - 1 AS option,
               to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
        FROM labels l JOIN label_spaces s ON s.id = l.label_space_id
        WHERE l.label_space_id = ${spaceId}
        ORDER BY l.created_at, l.id`,
      Prisma.sql`
        SELECT t.id, array_position(t.options, t.gold_label) - 1 AS option FROM tasks t
        WHERE t.label_space_id = ${spaceId} AND t.gold_label IS NOT NULL`,
      Prisma.sql`
        SELECT t.id, array_position(t.options, r.truth) - 1 AS option
        FROM (${reviewedTruthSql(spaceId)}) r JOIN tasks t ON t.id = r.task_id`,
      newestPolicySql(spaceId),
    ]);
    const space = spaces[0];
    if (!space) return undefined;
    return {
      id: space.id,
      options: space.options,
      version: space.version,
      policy: replayPolicyOf(newest[0]),
      model: space.model,
      labelers: labelers.map((l) => l.params),
      labels: labels.map((l) => ({ task: l.task_id, labeler: l.labeler_id, option: l.option })),
      gold: gold.map((g) => ({ task: g.id, option: g.option })),
      reviewed: reviewed.map((r) => ({ task: r.id, option: r.option })),
      through: labels.length > 0 ? (labels[labels.length - 1] as { created_at: string }).created_at : null,
    };
  }

  /**
   * A reserved type's space refit input (task-kinds.ts `refitTyped`), or undefined. Every task with a label or a
   * gold answer, except that the texts read stay within `textBudget` (REFIT_TEXT_BUDGET, the sum of text length x
   * answers): gold tasks first, then the newest, the first always; in creation order, each with its answers in
   * recording order. `labels` and `through` count every label of the space (the refit cadence).
   */
  async function typedFitInput(spaceId: string, textBudget: number): Promise<AnyFitInput | undefined> {
    const [spaces, labelers, counted, tasks, newest] = await transactionRows<
      [
        { id: string; task_type: ReservedTaskType; label_spec: AnyLabelSpec; version: number; model: unknown },
        StoredLabelerRow,
        { labels: number; through: string | null },
        { id: string; gold_label: string | null; data_text: string | null; answers: StoredVote[] },
        PolicyColumns,
      ]
    >(pool, [
      Prisma.sql`SELECT id, task_type, label_spec, version, model FROM label_spaces WHERE id = ${spaceId}`,
      Prisma.sql`SELECT labeler_id, params FROM labeler_models WHERE label_space_id = ${spaceId} AND params IS NOT NULL ORDER BY labeler_id`,
      Prisma.sql`
        SELECT count(*)::int AS labels,
               to_char(max(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS through
        FROM labels WHERE label_space_id = ${spaceId}`,
      Prisma.sql`
        SELECT id, gold_label, data_text, answers FROM (
          SELECT t.id, COALESCE(t.gold_label, rv.truth) AS gold_label, t.data_text, t.created_at, a.answers,
                 sum(COALESCE(length(t.data_text), 0)::bigint * a.n + a.chars)
                   OVER (ORDER BY (t.gold_label IS NOT NULL) DESC, t.created_at DESC, t.id DESC) AS spent,
                 row_number() OVER (ORDER BY (t.gold_label IS NOT NULL) DESC, t.created_at DESC, t.id DESC) AS rank
          FROM tasks t
          CROSS JOIN LATERAL (
            SELECT count(*)::bigint AS n, COALESCE(sum(length(l.value)), 0)::bigint AS chars,
                   COALESCE(json_agg(json_build_object('labelerId', l.labeler_id, 'value', l.value) ORDER BY l.created_at, l.id), '[]'::json) AS answers
            FROM labels l WHERE l.task_id = t.id
          ) a
          LEFT JOIN (${reviewedTruthSql(spaceId)}) rv ON rv.task_id = t.id
          WHERE t.label_space_id = ${spaceId} AND (t.gold_label IS NOT NULL OR a.n > 0)
        ) ranked
        WHERE rank = 1 OR spent <= ${textBudget}
        ORDER BY created_at, id`,
      newestPolicySql(spaceId),
    ]);
    const space = spaces[0];
    if (!space) return undefined;
    return {
      kind: "typed",
      id: space.id,
      type: space.task_type,
      spec: space.label_spec,
      version: space.version,
      policy: replayPolicyOf(newest[0]),
      space: space.model,
      labelers,
      tasks: tasks.map((t) => ({ id: t.id, answers: t.answers, gold: t.gold_label, text: t.data_text })),
      labels: counted[0]?.labels ?? 0,
      through: counted[0]?.through ?? null,
    };
  }

  return {
    /**
     * The spaces due for a refit, oldest fit first (at most `limit`): those with a label newer than their fit
     * and either never fitted, or with new labels amounting to `REFIT_NEW_LABEL_SHARE` of the labels of
     * their last fit, or fitted more than `REFIT_MAX_AGE_S` ago. A small space is refitted at every sweep
     * with a new label; a space of 100,000 labels after 5,000 new ones (or 60 s), so refits cost a bounded
     * share of the worker's CPU whatever the space's size. In every case the last fit's cool-down must have passed
     * (`REFIT_TIME_SHARE`): a space's refits take at most that share of a fit thread's time.
     */
    async due(limit: number): Promise<{ id: string; version: number }[]> {
      const [rows] = await transactionRows<[{ id: string; version: number }]>(pool, [
        Prisma.sql`
          SELECT s.id, s.version FROM label_spaces s
          WHERE EXISTS (SELECT 1 FROM labels l WHERE l.label_space_id = s.id
                          AND l.created_at > COALESCE(s.fitted_through, '-infinity'::timestamptz))
            AND (s.fitted_at IS NULL OR s.fitted_at < now() - make_interval(secs => ${REFIT_MAX_AGE_S})
                 OR (SELECT count(*) FROM (SELECT 1 FROM labels l WHERE l.label_space_id = s.id AND l.created_at > s.fitted_through
                                           LIMIT GREATEST(1, ceil(s.fitted_labels * ${REFIT_NEW_LABEL_SHARE}::float8))) n)
                    >= GREATEST(1, ceil(s.fitted_labels * ${REFIT_NEW_LABEL_SHARE}::float8)))
            AND (s.fitted_at IS NULL OR s.fit_ms IS NULL
                 OR s.fitted_at <= now() - make_interval(secs => s.fit_ms * ${1 / REFIT_TIME_SHARE - 1}::float8 / 1000))
          ORDER BY s.fitted_at NULLS FIRST, s.id
          LIMIT ${limit}`,
      ]);
      return rows;
    },

    /**
     * The space's current model, labelers and labels for a refit (undefined: no such space): single choice's
     * (`kind: "single_choice"`, refit-space.ts) or, for a space of a reserved type, every task with its answers,
     * gold answer and text (`kind: "typed"`, task-kinds.ts `refitTyped`).
     */
    async fitInput(spaceId: string, options: { textBudget?: number } = {}): Promise<AnyFitInput | undefined> {
      const [kinds] = await transactionRows<[{ task_type: string | null }]>(pool, [
        Prisma.sql`SELECT task_type FROM label_spaces WHERE id = ${spaceId}`,
      ]);
      const kind = kinds[0];
      if (!kind) return undefined;
      if (kind.task_type !== null && isReservedTaskType(kind.task_type))
        return typedFitInput(spaceId, options.textBudget ?? REFIT_TEXT_BUDGET);
      const single = await singleChoiceFitInput(spaceId);
      return single && { kind: "single_choice", ...single };
    },

    /**
     * Writes a refit of the space read at `input.version`: the space row (version + 1) and every labeler row
     * of the fit, in one transaction, only when the space is still at that version.
     * @returns `written`, or `stale` when another refit wrote first (nothing written)
     */
    async writeFit(input: AnyFitInput, output: AnyFitOutput): Promise<"written" | "stale"> {
      const next = input.version + 1;
      const space = output.kind === "single_choice" ? { ...output.space, version: next } : output.space;
      const rows =
        output.kind === "single_choice"
          ? output.labelers.map((l) => ({ labeler_id: l.labelerId, params: l }))
          : output.labelers.map((l) => ({ labeler_id: l.labelerId, params: l.params }));
      const fittedLabels = input.kind === "single_choice" ? input.labels.length : input.labels;
      // one statement: the labeler rows are written only by the fit whose compare-and-set on the space
      // row succeeded (a stale fit updates nothing, so its INSERT selects nothing)
      const [updated] = await transactionRows<[{ id: string }]>(pool, [
        Prisma.sql`
          WITH updated AS (
            UPDATE label_spaces SET model = ${JSON.stringify(space)}::jsonb, version = ${next}, fitted_through = ${input.through}::timestamptz,
              fitted_labels = ${fittedLabels}, fitted_at = now(), fit_ms = ${Math.round(output.fitMs)},
              calibration_bins = ${JSON.stringify(output.calibrationBins)}::jsonb
            WHERE id = ${input.id} AND version = ${input.version}
            RETURNING id
          ), labelers AS (
            INSERT INTO labeler_models (label_space_id, labeler_id, params, version)
            SELECT ${input.id}, r.labeler_id, r.params, ${next}
            FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(labeler_id text, params jsonb)
            WHERE EXISTS (SELECT 1 FROM updated)
            ON CONFLICT (label_space_id, labeler_id) DO UPDATE SET params = EXCLUDED.params, version = EXCLUDED.version
          )
          SELECT id FROM updated`,
      ]);
      return updated.length > 0 ? "written" : "stale";
    },

    /**
     * The labelers of the customer's label spaces, one row per labeler and space, oldest space first:
     * labels (as of the last fit), gold record (live), estimated accuracy (last fit) and exclusion; `model`
     * names the model of a model labeler (pre-labels, contract §prelabels), null for a person.
     */
    async labelers(customerId: string): Promise<wire.LabelerQuality[]> {
      const [rows] = await transactionRows<
        [
          {
            labeler_id: string;
            label_space: string;
            question: string;
            task_type: string | null;
            model: SpaceParams | null;
            params: LabelerParams | null;
            gold_answers: number;
            gold_correct: number;
            excluded: boolean;
            model_name: string | null;
            excluded_reason: string | null;
          },
        ]
      >(pool, [
        Prisma.sql`
          SELECT m.labeler_id, s.id AS label_space, s.question, s.task_type, s.model, m.params, m.gold_answers, m.gold_correct,
                 m.excluded_at IS NOT NULL AS excluded, m.excluded_reason, (SELECT l.model FROM labelers l WHERE l.id = m.labeler_id) AS model_name
          FROM label_spaces s JOIN labeler_models m ON m.label_space_id = s.id
          WHERE s.customer_id = ${customerId}
          ORDER BY s.created_at, s.id, m.labeler_id`,
      ]);
      return rows.map((r) => {
        // a reserved type's rows have no single accuracy figure: its labels, and the gold record
        const typed = r.task_type === null ? undefined : taskKindOf(r.task_type).labelerSummary(r.model, r.params);
        return {
          labeler_id: r.labeler_id,
          label_space: r.label_space,
          question: r.question,
          labels: typed ? typed.labels : (r.params?.labels ?? 0),
          gold_answers: r.gold_answers,
          gold_accuracy: goldAccuracy({ goldAnswers: r.gold_answers, goldCorrect: r.gold_correct }),
          estimated_accuracy: typed ? typed.estimatedAccuracy : r.model && r.params ? estimatedAccuracy(r.model, r.params) : null,
          // a failed qualification exam (contract §qualification) is its own reason
          status: !r.excluded ? "active" : r.excluded_reason === "failed_qualification" ? "failed_qualification" : "excluded",
          model: r.model_name,
        };
      });
    },

    /**
     * The calibration of `confidence` on the customer's gold tasks: the bins of its spaces' last fits added
     * up, with the ECE; null when no gold task has been decided by a replay yet.
     */
    async calibration(customerId: string): Promise<wire.DashboardQuality["calibration"]> {
      const [rows] = await transactionRows<[{ calibration_bins: CalibrationBin[] | null; gold_tasks: number }]>(pool, [
        Prisma.sql`
          SELECT s.calibration_bins, COALESCE((s.model #>> '{counts,goldTasks}')::int, 0) AS gold_tasks
          FROM label_spaces s WHERE s.customer_id = ${customerId} AND s.calibration_bins IS NOT NULL`,
      ]);
      return calibrationSummary(
        rows.map((r) => r.calibration_bins ?? []),
        rows.reduce((n, r) => n + r.gold_tasks, 0),
      );
    },
  };
}

export type SpacesStore = ReturnType<typeof spacesStore>;
