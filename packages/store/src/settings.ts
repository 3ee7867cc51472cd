/**
 * Customer settings (contract §quality): task defaults (the least specific layer of a task's policy,
 * @labelgate/quality `resolvePolicy`) and quality settings (gold rate, labeler exclusion). Stored as one jsonb
 * column (`customers.settings`) holding only the fields that are set; read with the customer's key on every
 * request (accounts.ts), so a change applies from the next request on.
 *
 * A change of `min_labeler_accuracy` or `min_gold_answers` re-evaluates every labeler of the customer's
 * label spaces at once, in the same transaction: a labeler excluded under the old settings and not under
 * the new ones gets tasks again, and the reverse.
 */
import type { SettingsPatch } from "@labelgate/api";
import { type ExclusionSettings, isExcluded, POLICY_FIELDS, type PolicyLayer, resolvePolicy } from "@labelgate/quality";
import type { Db } from "./database";
import { StoreError } from "./errors";
import { Prisma } from "./generated/client";
import { withTransaction } from "./sql";

/** The quality settings the label and claim transactions apply. */
export interface QualitySettings {
  gold_rate?: number | null;
  min_labeler_accuracy?: number | null;
  min_gold_answers?: number | null;
  /** share of settled tasks drawn into the audit queue (docs/decisions/0262; unset: 0) */
  audit_rate?: number | null;
  /** the qualification exam of a labeler new to a label space (contract §qualification); absent: none */
  qualification?: Qualification | null;
}

/** `quality.qualification`: the exam's gold answers and the Beta(1, 1) posterior mean of gold accuracy that passes. */
export interface Qualification {
  gold_tasks: number;
  min_accuracy: number;
}

/** The stored qualification of a settings value, or undefined (unset or malformed). */
export function qualificationOf(quality: Record<string, unknown> | undefined): Qualification | undefined {
  const q = quality?.qualification;
  if (q === null || typeof q !== "object") return undefined;
  const { gold_tasks, min_accuracy } = q as Record<string, unknown>;
  const gold = numberOrNull(gold_tasks);
  const min = numberOrNull(min_accuracy);
  return gold !== null && min !== null ? { gold_tasks: gold, min_accuracy: min } : undefined;
}

/** The stored settings (only set fields present). */
export interface StoredSettings {
  task_defaults?: PolicyLayer;
  quality?: QualitySettings;
}

const QUALITY_FIELDS = ["gold_rate", "min_labeler_accuracy", "min_gold_answers", "audit_rate"] as const;

/** A finite number or null from a stored JSON value (anything else: unset). */
function numberOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** The stored settings of a `customers.settings` value (unknown or malformed fields are dropped). */
export function storedSettingsOf(value: unknown): StoredSettings {
  const root = value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
  const section = (key: string): Record<string, unknown> => {
    const v = root[key];
    return v !== null && typeof v === "object" ? (v as Record<string, unknown>) : {};
  };
  const pick = <F extends string>(from: Record<string, unknown>, fields: readonly F[]) => {
    const out: Partial<Record<F, number>> = {};
    for (const f of fields) {
      const n = numberOrNull(from[f]);
      if (n !== null) out[f] = n;
    }
    return out;
  };
  const qualification = qualificationOf(section("quality"));
  return {
    task_defaults: pick(section("task_defaults"), POLICY_FIELDS),
    quality: { ...pick(section("quality"), QUALITY_FIELDS), ...(qualification ? { qualification } : {}) },
  };
}

/** The quality settings of a `customers.settings` value. */
export function qualitySettingsOf(value: unknown): QualitySettings {
  return storedSettingsOf(value).quality ?? {};
}

/** The exclusion rule's settings (@labelgate/quality `isExcluded`) of a customer's quality settings. */
export function exclusionSettingsOf(quality: QualitySettings | undefined): ExclusionSettings {
  return { minLabelerAccuracy: quality?.min_labeler_accuracy, minGoldAnswers: quality?.min_gold_answers };
}

/** `stored` with `patch` merged: a field given replaces, `null` clears. */
export function mergeSettings(stored: StoredSettings, patch: SettingsPatch): StoredSettings {
  const merge = <T extends object>(base: T | undefined, changes: Record<string, unknown> | undefined): T => {
    const out: Record<string, unknown> = { ...(base ?? {}) };
    for (const [key, value] of Object.entries(changes ?? {})) {
      if (value === undefined) continue;
      if (value === null) delete out[key];
      else out[key] = value;
    }
    return out as T;
  };
  return { task_defaults: merge(stored.task_defaults, patch.task_defaults), quality: merge(stored.quality, patch.quality) };
}

export function settingsStore(db: Db) {
  return {
    /** A customer's settings as stored (the gateway's settingsView renders them). @throws StoreError customerNotFound */
    async get(customerId: string): Promise<StoredSettings> {
      const customer = await db.prisma.customer.findUnique({ where: { id: customerId }, select: { settings: true } });
      if (!customer) throw new StoreError("customerNotFound");
      return storedSettingsOf(customer.settings);
    },

    /**
     * Merges `patch` into a customer's settings under the customer's row lock, and re-evaluates the
     * exclusion of every labeler of its label spaces when a quality field changed.
     * @throws StoreError customerNotFound | invalid (the merged task defaults are not a consistent policy,
     *   e.g. `max_labels` below `consensus_threshold`)
     */
    async patch(customerId: string, patch: SettingsPatch): Promise<StoredSettings> {
      return withTransaction(db.pool, async (run) => {
        const [rows] = await run<[{ settings: unknown }]>([Prisma.sql`SELECT settings FROM customers WHERE id = ${customerId} FOR UPDATE`]);
        const row = rows[0];
        if (!row) throw new StoreError("customerNotFound");
        const merged = mergeSettings(storedSettingsOf(row.settings), patch);
        const resolved = resolvePolicy([merged.task_defaults], "task_defaults.");
        if ("issues" in resolved) throw new StoreError("invalid", resolved.issues);
        const statements = [Prisma.sql`UPDATE customers SET settings = ${JSON.stringify(merged)}::jsonb WHERE id = ${customerId}`];
        if (patch.quality !== undefined) {
          const [models] = await run<
            [{ label_space_id: string; labeler_id: string; gold_answers: number; gold_correct: number; excluded: boolean }]
          >([
            Prisma.sql`
              SELECT m.label_space_id, m.labeler_id, m.gold_answers, m.gold_correct, m.excluded_at IS NOT NULL AS excluded
              FROM labeler_models m JOIN label_spaces s ON s.id = m.label_space_id
              WHERE s.customer_id = ${customerId} AND m.gold_answers > 0 AND m.excluded_reason IS DISTINCT FROM 'failed_qualification'
              ORDER BY m.label_space_id, m.labeler_id
              FOR UPDATE OF m`,
          ]);
          const settings = exclusionSettingsOf(merged.quality);
          const changed = models.flatMap((m) => {
            const excluded = isExcluded({ goldAnswers: m.gold_answers, goldCorrect: m.gold_correct }, settings);
            return excluded === m.excluded ? [] : [{ label_space_id: m.label_space_id, labeler_id: m.labeler_id, excluded }];
          });
          if (changed.length > 0) {
            statements.push(Prisma.sql`
              UPDATE labeler_models m SET excluded_at = CASE WHEN c.excluded THEN now() ELSE NULL END
              FROM jsonb_to_recordset(${JSON.stringify(changed)}::jsonb) AS c(label_space_id text, labeler_id text, excluded boolean)
              WHERE m.label_space_id = c.label_space_id AND m.labeler_id = c.labeler_id`);
          }
        }
        await run(statements, { commit: true });
        return merged;
      });
    },
  };
}

export type SettingsStore = ReturnType<typeof settingsStore>;
