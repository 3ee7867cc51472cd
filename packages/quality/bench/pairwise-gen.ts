/**
 * A seeded generator of `pairwise_comparison` crowds with known item scores (decision 0286; there is no crowd set of
 * pairwise labels with independent gold within reach). Deterministic for its parameters (pure-rand xoroshiro128+).
 *
 * - Items: `items` items "i<n>", true scores s ~ Normal(0, `scoreSd`), centered to mean 0 exactly.
 * - Tasks: `tasks` tasks "t<n>", each a pair of two distinct items drawn uniformly, in random order (a / b).
 * - Labelers: `labelers` labelers "w<n>": `spammers` x labelers spammers (rounded), `adversaries` x labelers
 *   adversaries (rounded), the others honest. Each task gets `labelsPerTask` labels from distinct labelers drawn
 *   uniformly.
 * - Honest labeler: sharpness beta ~ Uniform(`betaRange`) and lapse rate e ~ Uniform(0, `maxLapse`): with
 *   probability e it answers uniformly at random, else by the Bradley-Terry-Davidson model at its sharpness:
 *   P(a) = exp(beta s_a) / D, P(tie) = nu exp(beta (s_a + s_b) / 2) / D (nu = `tieParameter` with ties, else 0).
 * - Spammer: uniformly random over the options (a, b, and tie when ties are allowed).
 * - Adversary: an honest labeler of sharpness 1 and no lapse whose a and b are swapped.
 * - Truth of a task (per-task accuracy): the item with the higher true score.
 */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";
import type { PairwiseTask, Winner } from "../src/types/pairwise_comparison";

/** Parameters of a generated crowd. */
export interface PairwiseCrowdParams {
  seed: number;
  items: number;
  tasks: number;
  labelsPerTask: number;
  labelers: number;
  /** share of spammers among the labelers */
  spammers: number;
  /** share of adversaries among the labelers */
  adversaries: number;
  /** standard deviation of the true scores */
  scoreSd: number;
  /** range of an honest labeler's sharpness */
  betaRange: readonly [number, number];
  /** largest lapse rate of an honest labeler */
  maxLapse: number;
  /** whether "tie" is an answer */
  allowTie: boolean;
  /** Davidson's nu of honest labelers when ties are allowed */
  tieParameter: number;
}

/** The parameters of the benchmark's mixed crowd: 200 items, 3,000 tasks x 5 labels, 60 labelers, 20% spammers, 5% adversaries. */
export const MIXED_CROWD: Omit<PairwiseCrowdParams, "seed"> = {
  items: 200,
  tasks: 3000,
  labelsPerTask: 5,
  labelers: 60,
  spammers: 0.2,
  adversaries: 0.05,
  scoreSd: 1,
  betaRange: [0.5, 2],
  maxLapse: 0.15,
  allowTie: false,
  tieParameter: 0.5,
};

/** The benchmark's clean crowd: the mixed crowd without spammers and adversaries. */
export const CLEAN_CROWD: Omit<PairwiseCrowdParams, "seed"> = { ...MIXED_CROWD, spammers: 0, adversaries: 0 };

export type LabelerKind = "honest" | "spammer" | "adversary";

/** A generated crowd. */
export interface PairwiseCrowd {
  tasks: PairwiseTask[];
  /** true score of each item, by item id */
  scores: Map<string, number>;
  /** the item with the higher true score of each task: "a" or "b" */
  truth: Map<string, Winner>;
  kinds: Map<string, LabelerKind>;
}

/** A standard normal draw (Box-Muller). */
export function normal(rng: RandomGenerator): number {
  const u = 1 - uniformFloat64(rng);
  const v = uniformFloat64(rng);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

function pick(rng: RandomGenerator, n: number): number {
  return Math.min(n - 1, Math.floor(uniformFloat64(rng) * n));
}

/** Generates a crowd (module doc). @throws RangeError on parameters that cannot be met */
export function generatePairwiseCrowd(p: PairwiseCrowdParams): PairwiseCrowd {
  if (p.items < 2) throw new RangeError("at least 2 items");
  if (p.labelsPerTask > p.labelers) throw new RangeError("labelsPerTask exceeds labelers");
  const rng = xoroshiro128plus(p.seed);
  const raw = Array.from({ length: p.items }, () => normal(rng) * p.scoreSd);
  const mean = raw.reduce((a, b) => a + b, 0) / p.items;
  const scores = new Map(raw.map((s, i) => [`i${i}`, s - mean]));
  const spammers = Math.round(p.spammers * p.labelers);
  const adversaries = Math.round(p.adversaries * p.labelers);
  const kinds = new Map<string, LabelerKind>();
  const labelers = Array.from({ length: p.labelers }, (_, i) => {
    const kind: LabelerKind = i < spammers ? "spammer" : i < spammers + adversaries ? "adversary" : "honest";
    kinds.set(`w${i}`, kind);
    const beta = kind === "honest" ? p.betaRange[0] + uniformFloat64(rng) * (p.betaRange[1] - p.betaRange[0]) : 1;
    const lapse = kind === "honest" ? uniformFloat64(rng) * p.maxLapse : 0;
    return { id: `w${i}`, kind, beta, lapse };
  });
  const options: Winner[] = p.allowTie ? ["a", "b", "tie"] : ["a", "b"];
  const nu = p.allowTie ? p.tieParameter : 0;
  const tasks: PairwiseTask[] = [];
  const truth = new Map<string, Winner>();
  for (let t = 0; t < p.tasks; t++) {
    const x = pick(rng, p.items);
    let y = pick(rng, p.items - 1);
    if (y >= x) y++;
    const itemA = `i${x}`;
    const itemB = `i${y}`;
    const sa = scores.get(itemA) as number;
    const sb = scores.get(itemB) as number;
    truth.set(`t${t}`, sa >= sb ? "a" : "b");
    const chosen = new Set<number>();
    while (chosen.size < p.labelsPerTask) chosen.add(pick(rng, p.labelers));
    const answers = [...chosen].map((w) => {
      const labeler = labelers[w] as (typeof labelers)[number];
      let winner: Winner;
      if (labeler.kind === "spammer" || uniformFloat64(rng) < labeler.lapse) winner = options[pick(rng, options.length)] as Winner;
      else {
        const ea = Math.exp(labeler.beta * sa);
        const eb = Math.exp(labeler.beta * sb);
        const et = nu * Math.exp((labeler.beta * (sa + sb)) / 2);
        const u = uniformFloat64(rng) * (ea + eb + et);
        winner = u < ea ? "a" : u < ea + eb ? "b" : "tie";
        if (labeler.kind === "adversary" && winner !== "tie") winner = winner === "a" ? "b" : "a";
      }
      return { labelerId: labeler.id, winner };
    });
    tasks.push({ id: `t${t}`, itemA, itemB, answers });
  }
  return { tasks, scores, truth, kinds };
}
