/**
 * The computation of a label space's refit (../shared/DESIGN.md §10), pure (no SQL, no I/O), so it can run in
 * a worker thread (services/consensus-worker/src/fit-thread.ts) while the store reads and writes around it
 * (spaces.ts `fitInput`, `writeFit`):
 * 1. every label of the space in recording order enters a `LabelTable`, gold tasks at their true option;
 * 2. `refit` (Dawid-Skene EM with hierarchical Dirichlet priors, @labelgate/quality) from majority vote, kept
 *    when it is identified (labelers better than chance on every option, or gold says otherwise); else the fit
 *    warm-started from the stored model when that one is; else the stored model is kept (refused);
 * 3. the dashboard's calibration on gold tasks: each gold task's labels in recording order are fed to the
 *    decision rule (decision.ts `decide`, with the space's newest policy and the new model) until it decides,
 *    and its confidence and correctness go into 10 equal-width bins (the reliability diagram of DeGroot and
 *    Fienberg 1983, ECE as in Guo et al. 2017).
 */
import { type LabelerParams, LabelTable, type QualityModel, refit } from "@labelgate/quality";
import { decide, type ScoringModel } from "./decision";
import type { CalibrationBin, FitInput, FitOutput } from "./spaces";

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
  const policy = {
    options: input.options,
    consensusThreshold: input.policy.consensusThreshold,
    maxLabels: input.policy.maxLabels,
    confidenceTarget: input.policy.confidenceTarget,
    minLabels: input.policy.minLabels,
  };
  for (const [task, votes] of votesOf) {
    for (let n = 1; n <= Math.min(votes.length, policy.maxLabels); n++) {
      const decision = decide(policy, votes.slice(0, n), scoring);
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
