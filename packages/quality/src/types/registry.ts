/**
 * The registry of task types' quality modules (contract §task-types), one per `TaskTypeName` of the wire
 * registry (@labelgate/api task-types/registry.ts): typed `Record<TaskTypeName, ...>`, so a type without its
 * module does not compile. A new type adds its folder and one line here (docs/architecture.md
 * "Adding a task type").
 */
import type { TaskTypeName } from "@labelgate/api";
import { boundingBoxQuality } from "./bounding_box";
import { freeTextQuality } from "./free_text";
import type { QualityTaskType } from "./module";
import { multiLabelQuality } from "./multi_label_classification";
import { pairwiseQuality } from "./pairwise_comparison";
import { singleChoiceQuality } from "./single_choice";
import { textSpanQuality } from "./text_span";

/** Every task type's quality module, by name. */
export const QUALITY_TASK_TYPES: Record<TaskTypeName, QualityTaskType> = {
  single_choice: singleChoiceQuality,
  multi_label_classification: multiLabelQuality,
  bounding_box: boundingBoxQuality,
  text_span: textSpanQuality,
  free_text: freeTextQuality,
  pairwise_comparison: pairwiseQuality,
};
