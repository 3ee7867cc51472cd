/**
 * The computation of a label space's refit (contract §quality), pure (no SQL, no I/O), so it can run in a worker
 * thread (services/consensus-worker/src/fit-thread.ts) while the store reads and writes around it
 * (packages/store/src/spaces.ts `fitInput`, `writeFit`):
 * 1. every label of the space in recording order enters a `LabelTable`, gold tasks at their true option, reviewed
 *    results at the answer their latest review names (a known truth; the calibration scores them apart);
 * 2. `refit` (Dawid-Skene EM with hierarchical Dirichlet priors, fit.ts) from majority vote, kept
 *    when it is identified (labelers better than chance on every option, or gold says otherwise); else the fit
 *    warm-started from the stored model when that one is; else the stored model is kept (refused);
 * 3. the dashboard's calibration on gold tasks: each gold task's labels in recording order are fed to the
 *    decision rule (rule.ts `decide`, with the space's newest policy and the new model) until it decides,
 *    and its confidence and correctness go into 10 equal-width bins (the reliability diagram of DeGroot and
 *    Fienberg 1983, ECE as in Guo et al. 2017).
 */
import { refit } from "./fit";
import type { LabelerParams, QualityModel, SpaceParams } from "./model";
import type { Policy } from "./policy";
import { decide, type ScoringModel } from "./rule";
import { LabelTable } from "./table";

/** Everything a refit needs of a space. */
export interface FitInput {
  id: string;
  options: string[];
  version: number;
  /** the policy the dashboard's calibration replays on gold tasks: the space's newest task's (policy.ts `DEFAULT_POLICY` without one) */
  policy: Policy;
  /** the stored model to warm-start from (null before the first fit) */
  model: SpaceParams | null;
  labelers: LabelerParams[];
  /** every label of the space in a stable order (created_at, id): task, labeler, option index */
  labels: { task: string; labeler: string; option: number }[];
  /** gold tasks of the space with their true option index */
  gold: { task: string; option: number }[];
  /** reviewed results of the space (other than gold tasks) with the true option their latest review names */
  reviewed?: { task: string; option: number }[];
  /** created_at of the newest label read (ISO) */
  through: string | null;
}

/** One of 10 equal-width confidence bins ([i/10, (i+1)/10), the last closed): sums, so bins of spaces add up. */
export interface CalibrationBin {
  tasks: number;
  sumConfidence: number;
  /** decisions equal to the gold label */
  correct: number;
}

/** What a refit writes. */
export interface FitOutput {
  space: SpaceParams;
  labelers: LabelerParams[];
  /** reliability of the confidence on the space's gold tasks (dashboard), 10 bins */
  calibrationBins: CalibrationBin[];
  /** wall time of the fit (EM and calibration), ms */
  fitMs: number;
  /**
   * how the refit ended (@labelgate/quality `refit`): "cold" (the fit from majority vote: the usual), "warm" (that
   * fit was not identified; the fit from the stored model was), "refused" (neither: the stored model kept)
   */
  outcome: "cold" | "warm" | "refused";
  /** the options on which the labelers were not better than chance in the fit from majority vote (usually none) */
  failing: string[];
  /** lift of each option in the kept fit (NaN without posterior mass); empty when refused */
  lift: number[];
}

/** Number of confidence bins of the calibration. */
export const CALIBRATION_BINS = 10;

/** The bin of a confidence in [0, 1]: floor(10 c), 1.0 in the last. */
export function calibrationBinOf(confidence: number): number {
  return Math.min(CALIBRATION_BINS - 1, Math.max(0, Math.floor(confidence * CALIBRATION_BINS)));
}

/** Empty calibration bins. */
export function emptyBins(): CalibrationBin[] {
  return Array.from({ length: CALIBRATION_BINS }, () => ({ tasks: 0, sumConfidence: 0, correct: 0 }));
}

/**
 * Refits a space: the new model and the calibration on its gold tasks.
 * @throws RangeError when the input has a label or gold option outside the space's options
 */
export function refitSpace(input: FitInput, now: () => number = () => performance.now()): FitOutput {
  const started = now();
  const k = input.options.length;
  const table = new LabelTable(k);
  for (const g of input.gold) table.setGold(g.task, g.option);
  for (const r of input.reviewed ?? []) table.setReviewed(r.task, r.option);
  for (const l of input.labels) table.add(l.task, l.labeler, l.option);
  const previous: QualityModel | undefined =
    input.model && input.model.k === k
      ? { space: input.model, labelers: new Map(input.labelers.map((l): [string, LabelerParams] => [l.labelerId, l])) }
      : undefined;
  const result = refit(table, previous);
  const { model } = result;
  const fitMs = now() - started;

  const scoring: ScoringModel = { space: model.space, labelers: model.labelers };
  const bins = emptyBins();
  const gold = new Map(input.gold.map((g) => [g.task, g.option]));
  const votesOf = new Map<string, { labelerId: string; value: string }[]>();
  for (const l of input.labels) {
    if (!gold.has(l.task)) continue;
    const votes = votesOf.get(l.task) ?? [];
    votes.push({ labelerId: l.labeler, value: input.options[l.option] as string });
    votesOf.set(l.task, votes);
  }
  const rule = { options: input.options, policy: input.policy };
  for (const [task, votes] of votesOf) {
    for (let n = 1; n <= Math.min(votes.length, input.policy.maxLabels); n++) {
      const decision = decide(rule, votes.slice(0, n), scoring);
      if (!decision.done) continue;
      const bin = bins[calibrationBinOf(decision.confidence)] as CalibrationBin;
      bin.tasks += 1;
      bin.sumConfidence += decision.confidence;
      if (decision.label === input.options[gold.get(task) as number]) bin.correct += 1;
      break;
    }
  }
  const identification = result.outcome === "warm" ? result.warm : result.cold;
  // the options that failed in the fit from majority vote (empty when it was kept)
  return {
    space: model.space,
    labelers: [...model.labelers.values()],
    calibrationBins: bins,
    fitMs,
    outcome: result.outcome,
    failing: result.cold.failing.map((o) => input.options[o] as string),
    lift: identification?.lift ?? [],
  };
}
