/**
 * @labelgate/quality: the label-quality engine (DESIGN §10). Pure TypeScript, no I/O.
 * - `LabelTable` + `fit`: Dawid-Skene EM with hierarchical Dirichlet priors and gold clamping, warm start.
 * - `scoreTask`: calibrated posterior of one task from the space row and its labelers' rows.
 * - `decideThreshold` / `decideConfidence` / claim caps: the decision rules of the two consensus policies.
 * - `isExcluded`: gold-accuracy exclusion; `estimatedAccuracy`: dashboard figure.
 */
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
export { LabelTable } from "./table";
