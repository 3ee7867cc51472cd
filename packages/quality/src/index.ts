/**
 * @labelgate/quality: the label-quality engine (DESIGN §10). Pure TypeScript, no I/O.
 * - `LabelTable` + `fit`: Dawid-Skene EM with hierarchical Dirichlet priors and gold clamping, warm start.
 * - `scoreTask`: calibrated posterior of one task from the space row and its labelers' rows.
 * - `decideThreshold` / `decideConfidence` / claim caps: the decision rules of the two consensus policies.
 * - `isExcluded`: gold-accuracy exclusion; `estimatedAccuracy`: dashboard figure.
 * - DESIGN §12 types: `fitMultiLabel` / `aggregateMultiLabel` (multilabel.ts), `fitBoxes` / `aggregateBoxes`
 *   (boxes.ts), `fitSpans` / `aggregateSpans` (spans.ts), `decideParts` (parts.ts), `minCostAssignment`
 *   (hungarian.ts).
 */

export { byLabeler } from "./answers";
export {
  aggregateBoxes,
  type Box,
  type BoxAnswer,
  type BoxConsensus,
  type BoxFitOptions,
  type BoxModel,
  type BoxTask,
  type Candidate,
  type ConsensusBox,
  candidates,
  canonicalAnswers,
  DEFAULT_LOCALIZATION_VARIANCE,
  DEFAULT_OBJECTS_PER_ITEM,
  emptyBoxModel,
  fitBoxes,
  fuseBoxes,
  iou,
  LOCALIZATION_PRIOR_BOXES,
  type LocalizationParams,
  labelerRecall,
  localizationWeight,
  MATCH_IOU,
  matchBoxes,
  relativeEdgeError,
  weightedMedian,
} from "./boxes";
export {
  type CalibrationComponent,
  CalibrationSamples,
  calibrationPosterior,
  fitPrequential,
  fitTemperature,
  HARD_SHARE_GRID,
  MAX_COMPONENTS,
  MAX_TEMPERATURE,
  MIN_COMPONENT_WEIGHT,
  MIN_TEMPERATURE,
  TEMPERATURE_GRID,
  UNINFORMATIVE_SHARE_GRID,
} from "./calibration";
export {
  type ConfidencePolicy,
  confidenceClaimCap,
  type Decision,
  decideConfidence,
  decideThreshold,
  leadingOption,
  type OpenDecision,
  optionCounts,
  POSTERIOR_TIE,
  type Resolution,
  type SettledDecision,
  type ThresholdPolicy,
  thresholdClaimCap,
} from "./decision";
export {
  DEFAULT_MIN_GOLD_ANSWERS,
  EXCLUSION_PROBABILITY,
  type ExclusionSettings,
  type GoldRecord,
  goldAccuracy,
  isExcluded,
  probabilityAccuracyBelow,
} from "./exclusion";
export {
  type FitOptions,
  type FitResult,
  fit,
  MAX_GOLD_CALIBRATION_TASKS,
  MAX_PRECISION,
  MIN_GOLD_TASKS,
  MIN_PRECISION,
  MIN_PREQUENTIAL_TASKS,
} from "./fit";
export { minCostAssignment } from "./hungarian";
export {
  type Calibration,
  calibratedPosterior,
  calibrationMap,
  calibrationSummary,
  confusionMatrix,
  defaultPopulation,
  emptySpace,
  estimatedAccuracy,
  identityCalibration,
  type LabelerParams,
  type QualityModel,
  rowCell,
  type SpaceCounts,
  type SpaceParams,
  scoreTask,
  softmax,
  type TaskScore,
  taskLogHard,
  taskLogits,
  type Vote,
} from "./model";
export {
  aggregateMultiLabel,
  emptyMultiLabelModel,
  fitMultiLabel,
  type MultiLabelAnswer,
  type MultiLabelConsensus,
  type MultiLabelFitOptions,
  type MultiLabelModel,
  type MultiLabelTask,
} from "./multilabel";
export { decideParts, type Part, type PartsDecision, type PartsPolicy, partConfidence, wholeConfidence } from "./parts";
export {
  aggregateSpans,
  bioTags,
  type ConsensusSpan,
  codePointLength,
  emptySpanModel,
  fitSpans,
  INSIDE,
  OUTSIDE,
  type SpanAnswer,
  type SpanConsensus,
  type SpanFitOptions,
  type SpanModel,
  type SpanTask,
  spanTokens,
  TAG_B,
  TAG_I,
  TAG_O,
  type Token,
  type TypedSpan,
  tagsToRanges,
  tokenize,
} from "./spans";
export { LabelTable } from "./table";
