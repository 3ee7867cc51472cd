/**
 * The quality core of the `pairwise_comparison` task type (contract §task-types; decision 0285): the
 * per-task consensus over a / b (/ tie) with its calibrated confidence and stopping (consensus.ts), the weight
 * of each label by the labeler model (weights.ts) and the Bradley-Terry ranking with 95% intervals (ranking.ts).
 * Pure functions, no I/O; module.ts is the type's module of the registry and the ranking of stored labels.
 */
export {
  aggregatePairwise,
  decidePairwise,
  emptyPairwiseModel,
  fitPairwise,
  type PairwiseAnswer,
  type PairwiseConsensus,
  type PairwiseDecision,
  type PairwiseFitOptions,
  type PairwiseTask,
  pairwiseOptions,
  type Winner,
  winnerIndex,
} from "./consensus";
export {
  MAX_RANKED_ITEMS,
  type PairwiseConsensusBody,
  pairwiseItemId,
  pairwiseQuality,
  pairwiseType,
  RANKED_TASK_TYPE,
  rankStoredPairwise,
  type StoredPairwiseLabel,
  type StoredPairwiseSpace,
} from "./module";
export { type Comparison, fitRanking, type RankedItem, type Ranking, type RankingOptions, Z95 } from "./ranking";
export { type LabelWeight, labelWeight, pairwiseComparisons, rankPairwise } from "./weights";
