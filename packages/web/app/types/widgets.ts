/**
 * The labeler app's widget of each task type (contract §task-types), typed `Record<TaskTypeName, ...>` so a type
 * without its widget does not compile. A new type adds its folder (app/types/<type>/Widget.tsx) and one line
 * here (docs/architecture.md "Adding a task type"). What a widget gets: label/widgets/types.ts.
 */
import type { TaskTypeName } from "@labelgate/sdk/browser";
import type { Widget } from "../label/widgets/types";
import { BoundingBox } from "./bounding_box/Widget";
import { FreeText } from "./free_text/Widget";
import { MultiLabel } from "./multi_label_classification/Widget";
import { Pairwise } from "./pairwise_comparison/Widget";
import { SingleChoice } from "./single_choice/Widget";
import { TextSpan } from "./text_span/Widget";

/** The widgets, by task type name. */
export const WIDGETS: Readonly<Record<TaskTypeName, Widget>> = {
  single_choice: SingleChoice,
  multi_label_classification: MultiLabel,
  bounding_box: BoundingBox,
  text_span: TextSpan,
  free_text: FreeText,
  pairwise_comparison: Pairwise,
};
