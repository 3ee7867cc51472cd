/**
 * `pairwise_comparison` as a task type module (contract §task-types; decisions 0285, 0287): the consensus
 * definition over the core of consensus.ts (single choice over a / b[ / tie], one Dawid-Skene model per label
 * space, calibrated posterior, the stopping rule with the task as one part), its rows (the space's model as one
 * sub-space), and the ranking of a batch or job from stored labels (`rankStoredPairwise`).
 */
import { createHash } from "node:crypto";
import {
  type AnyLabelSpec,
  type PairwiseAnswerBody,
  type PairwiseSpec,
  pairwiseAnswer as pairwiseAnswerShape,
  pairwiseSpec,
} from "@labelgate/api";
import { canonicalJson } from "@labelgate/canonical-json";
import type { QualityModel } from "../../model";
import { parsed, partsRows, refinedAnswer, type StoredLabelerRow, type TaskTypeDefinition, typedTaskType } from "../module";
import { aggregatePairwise, emptyPairwiseModel, fitPairwise, pairwiseOptions, type Winner } from "./consensus";
import { type Comparison, fitRanking, type Ranking } from "./ranking";
import { labelWeight } from "./weights";

/** The typed consensus of a pairwise task: the winner and its calibrated posterior. */
export interface PairwiseConsensusBody {
  winner: Winner;
  confidence: number;
}

export const pairwiseType: TaskTypeDefinition<PairwiseSpec, PairwiseAnswerBody, QualityModel, PairwiseConsensusBody> = {
  type: "pairwise_comparison",
  labelSpec: pairwiseSpec,
  answerSchema: (spec) => refinedAnswer("pairwise_comparison", pairwiseAnswerShape, spec, {}),
  canonicalAnswer: (_spec, answer) => ({ winner: answer.winner }),
  emptyModel: (spec) => emptyPairwiseModel(spec.allow_tie),
  fit: (spec, tasks, previous) =>
    fitPairwise(
      tasks.map((t) => ({
        id: t.id,
        itemA: "a",
        itemB: "b",
        answers: t.answers.map((a) => ({ labelerId: a.labelerId, winner: a.answer.winner })),
        gold: t.gold?.winner,
      })),
      { allowTie: spec.allow_tie, previous },
    ),
  aggregate: (spec, model, answers) => {
    const r = aggregatePairwise(
      model,
      answers.map((a) => ({ labelerId: a.labelerId, winner: a.answer.winner })),
    );
    const options = pairwiseOptions(spec.allow_tie);
    return {
      consensus: { winner: r.winner, confidence: r.confidence },
      consensusLabel: canonicalJson({ winner: r.winner }),
      confidence: r.confidence,
      parts: [{ posterior: options.map((o) => r.posterior[o]), counts: options.map((o) => r.counts[o]) }],
      posterior: { ...r.posterior },
    };
  },
};

export const pairwiseQuality = typedTaskType({
  definition: pairwiseType,
  rows: partsRows<QualityModel>(
    (m) => [m],
    (spec, parts) => parts[0] ?? emptyPairwiseModel((spec as PairwiseSpec).allow_tie),
  ),
  needsText: false,
  namesOf: (answer) => [answer.winner],
  reviewed: (spec, answer) => ({
    posterior: Object.fromEntries(pairwiseOptions(spec.allow_tie).map((o) => [o, o === answer.winner ? 1 : 0])),
    consensus: { winner: answer.winner, confidence: 1 },
  }),
});

/**
 * The id of a compared item in the ranking (docs/decisions/0287): `text:` + 16 hex digits of the SHA-256 of its
 * text (UTF-8) when the item is a text, else its URL ("" when it has neither).
 */
export function pairwiseItemId(url: string | null | undefined, text: string | null | undefined): string {
  if (text !== null && text !== undefined) return `text:${createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16)}`;
  return url ?? "";
}

/** At most this many distinct items in one ranking: the intervals cost O(N^3) (ranking.ts; about 1 s at 1,000). */
export const MAX_RANKED_ITEMS = 2_000;

/** The task type whose labels a ranking reads (`GET /v1/batches/{id}/ranking`, `GET /v1/jobs/{id}/ranking`). */
export const RANKED_TASK_TYPE = "pairwise_comparison" as const;

/** A label space of pairwise tasks as stored: its label_spec, its model's space row and its labelers' rows. */
export interface StoredPairwiseSpace {
  spec: AnyLabelSpec;
  space: unknown;
  labelers: readonly StoredLabelerRow[];
}

/** One stored pairwise label for the ranking: its task's items (ids), its space, its labeler and stored value. */
export interface StoredPairwiseLabel {
  itemA: string;
  itemB: string;
  spaceId: string;
  labelerId: string;
  /** the label's stored value: the canonical JSON of `{winner}` */
  value: string;
}

/**
 * The ranking of every item compared by `labels` (contract §task-types): ranking.ts `fitRanking` on every label,
 * each weighted by its space's labeler model (weights.ts `labelWeight`: a spammer's label weighs about 0, an
 * adversary's counts for the side it reveals), scores on the natural-log scale with 95% intervals.
 * @throws RangeError when the labels compare more than MAX_RANKED_ITEMS items, name a space not in `spaces`,
 *   or as `fitRanking`
 */
export function rankStoredPairwise(spaces: ReadonlyMap<string, StoredPairwiseSpace>, labels: readonly StoredPairwiseLabel[]): Ranking {
  const items = new Set<string>();
  for (const l of labels) {
    items.add(l.itemA);
    items.add(l.itemB);
  }
  if (items.size > MAX_RANKED_ITEMS) throw new RangeError(`${items.size} items compared: a ranking takes at most ${MAX_RANKED_ITEMS}`);
  const models = new Map<string, QualityModel>();
  const modelOf = (id: string): QualityModel => {
    let model = models.get(id);
    if (model === undefined) {
      const space = spaces.get(id);
      if (space === undefined) throw new RangeError(`label space ${id} is not given`);
      model = pairwiseQuality.scoringModel(space.spec, space.space, space.labelers) as QualityModel;
      models.set(id, model);
    }
    return model;
  };
  const comparisons: Comparison[] = labels.map((l) => {
    const { outcome, weight } = labelWeight(modelOf(l.spaceId), l.labelerId, parsed<PairwiseAnswerBody>(l.value).winner);
    return { a: l.itemA, b: l.itemB, outcome, weight };
  });
  return fitRanking(comparisons);
}
