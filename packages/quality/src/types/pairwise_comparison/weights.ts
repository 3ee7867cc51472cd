/**
 * What a pairwise label says about its task, by the labeler model (decision 0285): the weight and outcome with
 * which it enters the Bradley-Terry fit (ranking.ts).
 *
 * For a label l of labeler i, the model's confusion matrix theta_i (model.ts `confusionMatrix`: its posterior
 * mean, the population's for a labeler the model does not know) gives the probability of each true answer z
 * given this one label, under a uniform prior over the K options (the class prior is left out: it measures
 * which side of the screen wins, not the items):
 *   p(z) = theta_i[z][l] / sum_z' theta_i[z'][l].
 * The label enters the fit as the outcome argmax_z p(z) (so an adversary's reversed answers count for the side
 * they reveal) with weight w = (max_z p(z) - 1/K) / (1 - 1/K): 0 for a labeler whose label says nothing (a
 * spammer: uniform rows), 1 for a labeler whose label is certain. With K = 2, w = |2 p(a) - 1|, the labeler's
 * accuracy above chance 2 eta - 1, which is the optimal weight of an estimating equation whose label has mean
 * (1 - eta) + (2 eta - 1) P(a beats b) and about constant variance (Godambe 1960: weight = derivative of the mean
 * / variance); it is also the weight the crowd model of Chen et al. 2013 ("Pairwise ranking aggregation in a
 * crowdsourced setting", WSDM, Crowd-BT) implies near equal items.
 */
import { confusionMatrix, type QualityModel } from "../../model";
import { type PairwiseTask, pairwiseOptions, type Winner, winnerIndex } from "./consensus";
import { type Comparison, fitRanking, type Ranking, type RankingOptions } from "./ranking";

/** The outcome and weight of one label in the ranking fit (module doc). */
export interface LabelWeight {
  outcome: Winner;
  weight: number;
}

/**
 * The outcome and weight of a label `winner` of `labelerId` under `model` (module doc). Exact ties of p keep
 * the label's own answer.
 * @throws RangeError for a winner outside the model's options
 */
export function labelWeight(model: QualityModel, labelerId: string, winner: Winner): LabelWeight {
  const k = model.space.k;
  const options = pairwiseOptions(k === 3);
  const l = winnerIndex(winner, k === 3);
  const theta = confusionMatrix(model.space, model.labelers.get(labelerId));
  const column = theta.map((row) => row[l] as number);
  const total = column.reduce((x, y) => x + y, 0);
  let best = l;
  for (let z = 0; z < k; z++) if ((column[z] as number) > (column[best] as number)) best = z;
  const top = (column[best] as number) / total;
  return { outcome: options[best] as Winner, weight: Math.max(0, (top - 1 / k) / (1 - 1 / k)) };
}

/**
 * The comparisons of `tasks` (one per label), each weighted by the labeler model (`labelWeight`), or with weight
 * 1 and the label as given when `model` is undefined (unweighted Bradley-Terry).
 * @throws RangeError for a winner outside the model's options
 */
export function pairwiseComparisons(tasks: readonly PairwiseTask[], model?: QualityModel): Comparison[] {
  const out: Comparison[] = [];
  for (const task of tasks) {
    for (const answer of task.answers) {
      if (!model) {
        out.push({ a: task.itemA, b: task.itemB, outcome: answer.winner, weight: 1 });
        continue;
      }
      const { outcome, weight } = labelWeight(model, answer.labelerId, answer.winner);
      out.push({ a: task.itemA, b: task.itemB, outcome, weight });
    }
  }
  return out;
}

/**
 * The ranking of every item compared by `tasks` (and of `options.items`): ranking.ts `fitRanking` on every label,
 * weighted by `model` (the space's fitted model, see fitPairwise), or unweighted without one.
 * @throws RangeError as `pairwiseComparisons` and `fitRanking`
 */
export function rankPairwise(tasks: readonly PairwiseTask[], model: QualityModel | undefined, options: RankingOptions = {}): Ranking {
  return fitRanking(pairwiseComparisons(tasks, model), options);
}
