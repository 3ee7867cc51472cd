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
 * The scenarios themselves are data: scenarios.json (fields as in `Scenario`).
 */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";
import { draw } from "../test/helpers";
import { buildDataset, type Dataset } from "./dataset";
import scenarioRows from "./scenarios.json";

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

/** The scenarios reported in docs/notes/quality.md: the rows of scenarios.json. */
export const SCENARIOS: readonly Scenario[] = scenarioRows.map(scenarioOf);

/** A row of scenarios.json as a Scenario (the JSON's `accuracy` is a list: checked to be a [lo, hi] pair). */
function scenarioOf(row: (typeof scenarioRows)[number]): Scenario {
  const [lo, hi, ...rest] = row.accuracy;
  if (lo === undefined || hi === undefined || rest.length > 0) throw new Error(`scenario ${row.name}: accuracy must be [lo, hi]`);
  return { ...row, accuracy: [lo, hi] };
}

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
