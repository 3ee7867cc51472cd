/**
 * Synthetic crowds for the quality simulator: documented mixtures of labeler types, class imbalance, item
 * difficulty and workloads, each seeded (xoroshiro128+ from pure-rand) so every run is reproducible.
 *
 * Labeler types (each labeler draws one):
 * - good: accuracy a ~ U(lo, hi); a wrong answer is uniform over the other options;
 * - confuser: like good, but its errors go to the "neighbour" option (k + 1) mod K (systematic confusion);
 * - spammer: answers uniformly at random;
 * - hammer: always answers one fixed option (drawn per labeler);
 * - adversary: answers (k + 1) mod K with probability 0.8, else uniformly.
 * Item difficulty: a share `hardShare` of the items is hard; on a hard item a good labeler's or confuser's edge
 * over chance is multiplied by `hardFactor` (errors correlated within the item, as in real crowds).
 * Workloads: each item gets between minLabels and maxLabels labelers, drawn without replacement with
 * probability proportional to a Zipf-like activity weight 1 / rank^activitySkew (a few labelers do most work);
 * the order of an item's answers is the order of the draw.
 */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";
import { draw } from "../test/helpers";
import { buildDataset, type Dataset } from "./dataset";

export interface Scenario {
  name: string;
  /** one line on what it models */
  description: string;
  seed: number;
  k: number;
  items: number;
  labelers: number;
  /** class prior (length k), or undefined for uniform */
  classPrior?: number[];
  /** labeler type shares: good, confuser, spammer, hammer, adversary (sum 1) */
  mix: { good: number; confuser: number; spammer: number; hammer: number; adversary: number };
  /** accuracy range of good labelers and confusers */
  accuracy: [number, number];
  hardShare: number;
  hardFactor: number;
  minLabels: number;
  maxLabels: number;
  /** 0: every labeler equally active; 1: Zipf */
  activitySkew: number;
}

/** The scenarios reported in docs/notes/quality.md. */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: "syn-mixed",
    description:
      "K=4, 2,000 items x 5 labels, 300 labelers (60% good 0.65-0.95, 10% confusers, 20% spammers, 5% hammers, 5% adversaries), 20% hard items",
    seed: 11,
    k: 4,
    items: 2000,
    labelers: 300,
    mix: { good: 0.6, confuser: 0.1, spammer: 0.2, hammer: 0.05, adversary: 0.05 },
    accuracy: [0.65, 0.95],
    hardShare: 0.2,
    hardFactor: 0.3,
    minLabels: 5,
    maxLabels: 5,
    activitySkew: 1,
  },
  {
    name: "syn-spam-heavy",
    description: "K=2, 1,500 items x 7 labels, 200 labelers of which 45% spammers, 10% hammers, 5% adversaries",
    seed: 12,
    k: 2,
    items: 1500,
    labelers: 200,
    mix: { good: 0.4, confuser: 0, spammer: 0.45, hammer: 0.1, adversary: 0.05 },
    accuracy: [0.7, 0.95],
    hardShare: 0.15,
    hardFactor: 0.3,
    minLabels: 7,
    maxLabels: 7,
    activitySkew: 1,
  },
  {
    name: "syn-few-per-labeler",
    description: "K=3, 1,500 items x 5 labels, 2,500 labelers (about 3 labels each), 25% spammers",
    seed: 13,
    k: 3,
    items: 1500,
    labelers: 2500,
    mix: { good: 0.65, confuser: 0.05, spammer: 0.25, hammer: 0, adversary: 0.05 },
    accuracy: [0.6, 0.95],
    hardShare: 0.2,
    hardFactor: 0.3,
    minLabels: 5,
    maxLabels: 5,
    activitySkew: 0,
  },
  {
    name: "syn-many-classes",
    description: "K=20, 1,000 items x 5 labels, 150 labelers (70% good 0.5-0.9, 10% confusers, 20% spammers)",
    seed: 14,
    k: 20,
    items: 1000,
    labelers: 150,
    mix: { good: 0.7, confuser: 0.1, spammer: 0.2, hammer: 0, adversary: 0 },
    accuracy: [0.5, 0.9],
    hardShare: 0.2,
    hardFactor: 0.3,
    minLabels: 5,
    maxLabels: 5,
    activitySkew: 1,
  },
  {
    name: "syn-unbalanced",
    description: "K=3 with class prior 0.85/0.10/0.05, 2,000 items x 5 labels, 200 labelers, 20% spammers, 10% hammers",
    seed: 15,
    k: 3,
    items: 2000,
    labelers: 200,
    classPrior: [0.85, 0.1, 0.05],
    mix: { good: 0.65, confuser: 0.05, spammer: 0.2, hammer: 0.1, adversary: 0 },
    accuracy: [0.65, 0.95],
    hardShare: 0.2,
    hardFactor: 0.3,
    minLabels: 5,
    maxLabels: 5,
    activitySkew: 1,
  },
  {
    name: "syn-short-items",
    description: "K=2, 3,000 items with 1-3 labels each, 300 labelers, 20% spammers",
    seed: 16,
    k: 2,
    items: 3000,
    labelers: 300,
    mix: { good: 0.75, confuser: 0, spammer: 0.2, hammer: 0, adversary: 0.05 },
    accuracy: [0.65, 0.95],
    hardShare: 0.15,
    hardFactor: 0.3,
    minLabels: 1,
    maxLabels: 3,
    activitySkew: 1,
  },
  {
    name: "syn-everyone",
    description:
      "K=2, 108 items x 39 labelers who label everything (like 'bird'): 45% good 0.55-0.95, 35% spammers, 10% hammers, 10% adversaries",
    seed: 17,
    k: 2,
    items: 108,
    labelers: 39,
    mix: { good: 0.45, confuser: 0, spammer: 0.35, hammer: 0.1, adversary: 0.1 },
    accuracy: [0.55, 0.95],
    hardShare: 0.2,
    hardFactor: 0.3,
    minLabels: 39,
    maxLabels: 39,
    activitySkew: 0,
  },
];

type LabelerType = "good" | "confuser" | "spammer" | "hammer" | "adversary";

interface Labeler {
  type: LabelerType;
  accuracy: number;
  fixed: number;
}

function answer(rng: RandomGenerator, labeler: Labeler, truth: number, k: number, hard: boolean, hardFactor: number): number {
  const uniform = () => Math.floor(uniformFloat64(rng) * k);
  switch (labeler.type) {
    case "spammer":
      return uniform();
    case "hammer":
      return labeler.fixed;
    case "adversary":
      return uniformFloat64(rng) < 0.8 ? (truth + 1) % k : uniform();
    default: {
      const chance = 1 / k;
      const acc = hard ? chance + (labeler.accuracy - chance) * hardFactor : labeler.accuracy;
      if (uniformFloat64(rng) < acc) return truth;
      if (labeler.type === "confuser") return (truth + 1) % k;
      const wrong = Math.floor(uniformFloat64(rng) * (k - 1));
      return wrong >= truth ? wrong + 1 : wrong;
    }
  }
}

/** Generates a scenario's dataset (every item has gold = its true option). Deterministic for the scenario. */
export function syntheticDataset(s: Scenario): Dataset {
  const rng = xoroshiro128plus(s.seed);
  const types: LabelerType[] = ["good", "confuser", "spammer", "hammer", "adversary"];
  const mixWeights = types.map((t) => s.mix[t]);
  const labelers: Labeler[] = Array.from({ length: s.labelers }, () => ({
    type: types[draw(rng, mixWeights)] as LabelerType,
    accuracy: s.accuracy[0] + uniformFloat64(rng) * (s.accuracy[1] - s.accuracy[0]),
    fixed: Math.floor(uniformFloat64(rng) * s.k),
  }));
  const activity = labelers.map((_, i) => 1 / (i + 1) ** s.activitySkew);
  const prior = s.classPrior ?? new Array<number>(s.k).fill(1 / s.k);
  const rows: { item: string; worker: string; label: string }[] = [];
  const gold = new Map<string, string>();
  for (let item = 0; item < s.items; item++) {
    const truth = draw(rng, prior);
    const hard = uniformFloat64(rng) < s.hardShare;
    const n = s.minLabels + Math.floor(uniformFloat64(rng) * (s.maxLabels - s.minLabels + 1));
    const weights = activity.slice();
    const id = `i${item}`;
    gold.set(id, String(truth));
    for (let j = 0; j < Math.min(n, s.labelers); j++) {
      const w = draw(rng, weights);
      weights[w] = 0;
      rows.push({ item: id, worker: `w${w}`, label: String(answer(rng, labelers[w] as Labeler, truth, s.k, hard, s.hardFactor)) });
    }
  }
  // Every option appears among the answers in these scenarios' sizes; options are the distinct labels, as in the replay.
  return buildDataset(s.name, rows, gold);
}
