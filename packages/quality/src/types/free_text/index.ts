/**
 * The `free_text` task type's quality core (contract §task-types): normalization, word alignment, the weighted
 * word vote with calibrated confidences, the fit of the labeler model, and stopping. Pure functions, no I/O.
 */
export * from "./align";
export * from "./consensus";
export * from "./decide";
export {
  type CalibrationSample,
  fitAccuracies,
  fitLogistic,
  fitPlatt,
  fitTextModel,
  type LogisticSample,
  PRIOR_WORDS,
  slotCorrectness,
  type TextFitOptions,
  type TextTask,
} from "./fit";
export * from "./metric";
export * from "./module";
export * from "./normalize";
