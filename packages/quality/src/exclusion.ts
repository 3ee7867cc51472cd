/**
 * Labeler exclusion by gold accuracy (contract §quality "Gold tasks"): a labeler's gold accuracy has a Beta(1, 1) prior,
 * so after c correct of a answers its posterior is Beta(1 + c, 1 + a - c) (conjugate Beta-binomial). The labeler
 * is excluded from the label space once it has at least `minGoldAnswers` gold answers and
 * P(accuracy < minLabelerAccuracy) >= 0.95 under that posterior. The Beta CDF (regularized incomplete beta
 * function) comes from @stdlib/stats-base-dists-beta-cdf.
 */
import betaCdf from "@stdlib/stats-base-dists-beta-cdf";

/** Posterior probability required to exclude. */
export const EXCLUSION_PROBABILITY = 0.95;
/** Default `min_gold_answers` (contract §quality). */
export const DEFAULT_MIN_GOLD_ANSWERS = 10;

/** A labeler's gold record in one label space. */
export interface GoldRecord {
  goldAnswers: number;
  goldCorrect: number;
}

/** The customer's exclusion settings. */
export interface ExclusionSettings {
  /** accuracy floor in (0, 1); no exclusion when null or undefined */
  minLabelerAccuracy: number | null | undefined;
  /** gold answers needed before exclusion (default 10) */
  minGoldAnswers?: number | null;
}

function checkRecord(record: GoldRecord): void {
  const { goldAnswers, goldCorrect } = record;
  if (!Number.isInteger(goldAnswers) || !Number.isInteger(goldCorrect) || goldCorrect < 0 || goldAnswers < goldCorrect) {
    throw new RangeError(`gold record needs integers 0 <= goldCorrect <= goldAnswers, got ${goldCorrect}/${goldAnswers}`);
  }
}

/**
 * P(accuracy < threshold) under the Beta(1 + correct, 1 + wrong) posterior.
 * @throws RangeError on a bad record or a threshold outside [0, 1]
 */
export function probabilityAccuracyBelow(record: GoldRecord, threshold: number): number {
  checkRecord(record);
  if (!(threshold >= 0 && threshold <= 1)) throw new RangeError(`accuracy threshold must be in [0, 1], got ${threshold}`);
  return betaCdf(threshold, 1 + record.goldCorrect, 1 + record.goldAnswers - record.goldCorrect);
}

/** Gold accuracy for the dashboard: correct / answers, or null without gold answers. */
export function goldAccuracy(record: GoldRecord): number | null {
  checkRecord(record);
  return record.goldAnswers === 0 ? null : record.goldCorrect / record.goldAnswers;
}

/**
 * Whether the labeler is excluded from the label space: at least minGoldAnswers gold answers and
 * P(accuracy < minLabelerAccuracy) >= 0.95. Never excluded when minLabelerAccuracy is unset.
 * @throws RangeError on a bad record or settings
 */
export function isExcluded(record: GoldRecord, settings: ExclusionSettings): boolean {
  checkRecord(record);
  const floor = settings.minLabelerAccuracy;
  if (floor === null || floor === undefined) return false;
  const minAnswers = settings.minGoldAnswers ?? DEFAULT_MIN_GOLD_ANSWERS;
  if (!Number.isInteger(minAnswers) || minAnswers < 0) throw new RangeError(`minGoldAnswers must be a non-negative integer`);
  if (record.goldAnswers < minAnswers) return false;
  return probabilityAccuracyBelow(record, floor) >= EXCLUSION_PROBABILITY;
}
