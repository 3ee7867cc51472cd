/**
 * The pairwise part of `pnpm bench:types` (bench/types.ts; decision 0285): the `pairwise_comparison` quality core on
 * generated crowds with known item scores (pairwise-gen.ts, parameters there and in decision 0286).
 *
 * For each scenario and seed:
 * - ranking: Spearman's rho (simple-statistics `sampleRankCorrelation`) of the Bradley-Terry scores against the
 *   true scores, labeler-weighted (weights.ts, the Dawid-Skene model fitted on every label) and unweighted (every
 *   label weight 1, as given), the same prior and intervals; and the share of items whose true score lies in the
 *   95% interval (only meaningful where labelers follow Bradley-Terry at sharpness 1, the "exact" scenario;
 *   elsewhere the fitted scale is not the true one);
 * - per task, against the item with the higher true score: accuracy of the consensus with every label (the
 *   calibrated posterior's leader) beside majority vote (a split vote counts half), and the ECE (10 bins) of
 *   the confidence;
 * - stopping: each task's labels replayed in order under the threshold policy (3 equal answers, at most 5) and
 *   the confidence policy (target 0.9, at least 1 label, at most 5), with the model fitted on every label:
 *   accuracy and the share of the labels spent.
 */
import { sampleRankCorrelation } from "simple-statistics";
import type { RulePolicy } from "../src/policy";
import {
  aggregatePairwise,
  decidePairwise,
  fitPairwise,
  type PairwiseTask,
  type Ranking,
  rankPairwise,
  type Winner,
} from "../src/types/pairwise_comparison";
import { CLEAN_CROWD, generatePairwiseCrowd, MIXED_CROWD, type PairwiseCrowdParams } from "./pairwise-gen";
import { ece } from "./types-quality";

/** A named crowd of the benchmark. */
export interface PairwiseScenario {
  name: string;
  params: Omit<PairwiseCrowdParams, "seed">;
}

/** The benchmark's scenarios. */
export const PAIRWISE_SCENARIOS: readonly PairwiseScenario[] = [
  { name: "mixed: 20% spammers, 5% adversaries", params: MIXED_CROWD },
  { name: "mixed, ties allowed", params: { ...MIXED_CROWD, allowTie: true } },
  { name: "clean crowd", params: CLEAN_CROWD },
  { name: "exact: clean, sharpness 1, no lapses", params: { ...CLEAN_CROWD, betaRange: [1, 1], maxLapse: 0 } },
];

/** The figures of one scenario and seed. */
export interface PairwiseRun {
  seed: number;
  rhoWeighted: number;
  rhoUnweighted: number;
  coverageWeighted: number;
  coverageUnweighted: number;
  accuracy: number;
  majority: number;
  ece: number;
  threshold: { accuracy: number; labelShare: number };
  confidence: { accuracy: number; labelShare: number };
  /** MM iterations of the weighted fit, and whether both fits converged */
  iterations: number;
  converged: boolean;
  seconds: number;
}

export interface PairwiseScenarioResult {
  name: string;
  runs: PairwiseRun[];
}

const THRESHOLD: RulePolicy = { kind: "threshold", consensusThreshold: 3, maxLabels: 5 };
const CONFIDENCE: RulePolicy = { kind: "confidence", confidenceTarget: 0.9, minLabels: 1, maxLabels: 5 };

function rho(ranking: Ranking, scores: Map<string, number>): { rho: number; coverage: number; iterations: number; converged: boolean } {
  const fitted: number[] = [];
  const truth: number[] = [];
  let covered = 0;
  for (const item of ranking.items) {
    const s = scores.get(item.item) as number;
    fitted.push(item.score);
    truth.push(s);
    if (s >= item.ciLow && s <= item.ciHigh) covered++;
  }
  return {
    rho: sampleRankCorrelation(fitted, truth),
    coverage: covered / ranking.items.length,
    iterations: ranking.iterations,
    converged: ranking.converged,
  };
}

/** Majority vote of a task's answers: credit for the truth (1, a share of a split, or 0). */
function majorityCredit(task: PairwiseTask, truth: Winner): number {
  const counts = new Map<Winner, number>();
  for (const a of task.answers) counts.set(a.winner, (counts.get(a.winner) ?? 0) + 1);
  const top = Math.max(...counts.values());
  const leaders = [...counts].filter(([, c]) => c === top).map(([w]) => w);
  return leaders.includes(truth) ? 1 / leaders.length : 0;
}

function replay(policy: RulePolicy, model: ReturnType<typeof fitPairwise>, crowd: { tasks: PairwiseTask[]; truth: Map<string, Winner> }) {
  let right = 0;
  let spent = 0;
  let total = 0;
  for (const task of crowd.tasks) {
    total += task.answers.length;
    for (let n = 1; n <= task.answers.length; n++) {
      const decision = decidePairwise(policy, model, task.answers.slice(0, n));
      if (decision.settled || n === task.answers.length) {
        spent += n;
        const winner = decision.settled ? decision.winner : aggregatePairwise(model, task.answers.slice(0, n)).winner;
        if (winner === crowd.truth.get(task.id)) right++;
        break;
      }
    }
  }
  return { accuracy: right / crowd.tasks.length, labelShare: spent / total };
}

/** Runs one scenario for one seed. */
export function runPairwiseOnce(params: Omit<PairwiseCrowdParams, "seed">, seed: number): PairwiseRun {
  const started = performance.now();
  const crowd = generatePairwiseCrowd({ ...params, seed });
  const model = fitPairwise(crowd.tasks, { allowTie: params.allowTie });
  const items = [...crowd.scores.keys()];
  const weighted = rho(rankPairwise(crowd.tasks, model, { items }), crowd.scores);
  const unweighted = rho(rankPairwise(crowd.tasks, undefined, { items }), crowd.scores);
  let right = 0;
  let majority = 0;
  const pairs: { confidence: number; right: boolean }[] = [];
  for (const task of crowd.tasks) {
    const truth = crowd.truth.get(task.id) as Winner;
    const consensus = aggregatePairwise(model, task.answers);
    if (consensus.winner === truth) right++;
    pairs.push({ confidence: consensus.confidence, right: consensus.winner === truth });
    majority += majorityCredit(task, truth);
  }
  return {
    seed,
    rhoWeighted: weighted.rho,
    rhoUnweighted: unweighted.rho,
    coverageWeighted: weighted.coverage,
    coverageUnweighted: unweighted.coverage,
    accuracy: right / crowd.tasks.length,
    majority: majority / crowd.tasks.length,
    ece: ece(pairs),
    threshold: replay(THRESHOLD, model, crowd),
    confidence: replay(CONFIDENCE, model, crowd),
    iterations: weighted.iterations,
    converged: weighted.converged && unweighted.converged,
    seconds: (performance.now() - started) / 1000,
  };
}

/** Runs every scenario for every seed. */
export function runPairwise(seeds: readonly number[], log: (line: string) => void = () => {}): PairwiseScenarioResult[] {
  return PAIRWISE_SCENARIOS.map((scenario) => {
    const runs = seeds.map((seed) => {
      const run = runPairwiseOnce(scenario.params, seed);
      log(
        `pairwise ${scenario.name} seed ${seed}: rho ${run.rhoWeighted.toFixed(4)} vs ${run.rhoUnweighted.toFixed(4)}, accuracy ${run.accuracy.toFixed(4)} vs ${run.majority.toFixed(4)} (${run.seconds.toFixed(1)} s)`,
      );
      return run;
    });
    return { name: scenario.name, runs };
  });
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f3 = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(3)}`;

/** The markdown lines of the results (a table per figure group, means over seeds, min over seeds for the gains). */
export function renderPairwise(results: readonly PairwiseScenarioResult[], seeds: readonly number[]): string[] {
  const m = MIXED_CROWD;
  const lines = [
    `Generated crowds (packages/quality/bench/pairwise-gen.ts, decision 0286): ${m.items} items with scores ~ Normal(0, ${m.scoreSd}), ${m.tasks} tasks ` +
      `(uniform random pairs) x ${m.labelsPerTask} labels from ${m.labelers} labelers; honest labelers answer by Bradley-Terry at a sharpness ~ ` +
      `U(${m.betaRange[0]}, ${m.betaRange[1]}) with a lapse rate ~ U(0, ${m.maxLapse}); spammers uniformly at random; adversaries reversed. ` +
      `"Ties allowed": honest labelers by Davidson's model with nu = ${m.tieParameter}, spammers over a / b / tie. Seeds ${seeds.join(", ")}; means over the seeds, ` +
      "min = the smallest per-seed value of the paired difference. Spearman's rho: simple-statistics `sampleRankCorrelation`.",
    "",
    "| crowd | rho weighted | rho unweighted | gain (min) | interval coverage weighted / unweighted | accuracy | majority vote | gain (min) | ECE |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of results) {
    const gainRho = r.runs.map((x) => x.rhoWeighted - x.rhoUnweighted);
    const gainAcc = r.runs.map((x) => x.accuracy - x.majority);
    lines.push(
      `| ${r.name} | ${f3(mean(r.runs.map((x) => x.rhoWeighted)))} | ${f3(mean(r.runs.map((x) => x.rhoUnweighted)))} | ${signed(mean(gainRho))} (${signed(Math.min(...gainRho))}) | ` +
        `${f3(mean(r.runs.map((x) => x.coverageWeighted)))} / ${f3(mean(r.runs.map((x) => x.coverageUnweighted)))} | ` +
        `${f3(mean(r.runs.map((x) => x.accuracy)))} | ${f3(mean(r.runs.map((x) => x.majority)))} | ${signed(mean(gainAcc))} (${signed(Math.min(...gainAcc))}) | ${f3(mean(r.runs.map((x) => x.ece)))} |`,
    );
  }
  const mixed = results[0];
  const clean = results.find((r) => r.name === "clean crowd");
  if (mixed && clean) {
    const gain = mixed.runs.map((x) => x.rhoWeighted - x.rhoUnweighted);
    const acc = mean(mixed.runs.map((x) => x.accuracy));
    const mv = mean(mixed.runs.map((x) => x.majority));
    const cleanRho = mean(clean.runs.map((x) => x.rhoWeighted));
    const verdict = (ok: boolean) => (ok ? "met" : "missed");
    lines.push(
      "",
      `Targets (issue 37), on "${mixed.name}": rho weighted >= unweighted + 0.01 (${signed(mean(gain))}, every seed >= ${signed(Math.min(...gain))}): ` +
        `${verdict(mean(gain) >= 0.01)}; per-task accuracy >= majority vote (${f3(acc)} vs ${f3(mv)}): ${verdict(acc >= mv)}; ` +
        `clean crowd rho >= 0.9 (${f3(cleanRho)}): ${verdict(cleanRho >= 0.9)}. Every fit converged: ${results.every((r) => r.runs.every((x) => x.converged)) ? "yes" : "no"}. ` +
        "Per-task accuracy and ECE: the consensus of every label against the item with the higher true score (pairs of close items stay " +
        "uncertain whoever labels them, hence accuracies near 0.8). Interval coverage: the share of items whose true score lies in " +
        "the 95% interval; without weights, spammers shrink the fitted scale and the intervals miss.",
    );
  }
  lines.push(
    "",
    "Stopping, each task's labels replayed in order with the model fitted on every label (in-sample): accuracy and share of the labels spent.",
    "",
    "| crowd | threshold 3 of at most 5 | confidence 0.9, at most 5 | every label |",
    "|---|---|---|---|",
  );
  for (const r of results) {
    lines.push(
      `| ${r.name} | ${f3(mean(r.runs.map((x) => x.threshold.accuracy)))} at ${f3(mean(r.runs.map((x) => x.threshold.labelShare)))} | ` +
        `${f3(mean(r.runs.map((x) => x.confidence.accuracy)))} at ${f3(mean(r.runs.map((x) => x.confidence.labelShare)))} | ${f3(mean(r.runs.map((x) => x.accuracy)))} at 1.000 |`,
    );
  }
  return lines;
}
