/**
 * The console view of each task type (contract §task-types), typed `Record<TaskTypeName, ...>` so a type without
 * its view does not compile; single choice has none (null: the console shows its labels by option). A new type
 * adds its folder (app/types/<type>/View.tsx) and one line here (docs/architecture.md "Adding a task type").
 */
import type { TaskTypeName } from "@labelgate/sdk/browser";
import type { ConsensusView } from "../console/task-types/view-kit";
import { boundingBoxView } from "./bounding_box/View";
import { freeTextView } from "./free_text/View";
import { multiLabelView } from "./multi_label_classification/View";
import { pairwiseView } from "./pairwise_comparison/View";
import { textSpanView } from "./text_span/View";

/** The consensus views, by task type name. */
export const CONSENSUS_VIEWS: Readonly<Record<TaskTypeName, ConsensusView | null>> = {
  single_choice: null,
  multi_label_classification: multiLabelView,
  bounding_box: boundingBoxView,
  text_span: textSpanView,
  free_text: freeTextView,
  pairwise_comparison: pairwiseView,
};
