/**
 * The web parts of each task type (contract §task-types): the labeler app's widget and the console's consensus
 * view, typed `Record<TaskTypeName, ...>` so a type without either does not compile. A new type adds its folder
 * (app/types/<type>/Widget.tsx and View.tsx) and one entry here (docs/architecture.md "Adding a task type").
 * What a widget gets: label/widgets/types.ts; what a view is: console/task-types/view-kit.ts.
 */
import type { TaskTypeName } from "@labelgate/sdk/browser";
import type { ConsensusView } from "../console/task-types/view-kit";
import type { Widget } from "../label/widgets/types";
import { boundingBoxView } from "./bounding_box/View";
import { BoundingBox } from "./bounding_box/Widget";
import { freeTextView } from "./free_text/View";
import { FreeText } from "./free_text/Widget";
import { multiLabelView } from "./multi_label_classification/View";
import { MultiLabel } from "./multi_label_classification/Widget";
import { pairwiseView } from "./pairwise_comparison/View";
import { Pairwise } from "./pairwise_comparison/Widget";
import { SingleChoice } from "./single_choice/Widget";
import { textSpanView } from "./text_span/View";
import { TextSpan } from "./text_span/Widget";

/** A task type's web parts: its widget, and its consensus view (null: the console shows its labels by option). */
export interface WebTaskType {
  widget: Widget;
  view: ConsensusView | null;
}

/** The web parts, by task type name. */
export const WEB_TASK_TYPES: Readonly<Record<TaskTypeName, WebTaskType>> = {
  single_choice: { widget: SingleChoice, view: null },
  multi_label_classification: { widget: MultiLabel, view: multiLabelView },
  bounding_box: { widget: BoundingBox, view: boundingBoxView },
  text_span: { widget: TextSpan, view: textSpanView },
  free_text: { widget: FreeText, view: freeTextView },
  pairwise_comparison: { widget: Pairwise, view: pairwiseView },
};

/** Each type's part `key`, by task type name. */
function partOf<K extends keyof WebTaskType>(key: K): Readonly<Record<TaskTypeName, WebTaskType[K]>> {
  return Object.fromEntries(Object.entries(WEB_TASK_TYPES).map(([name, parts]) => [name, parts[key]])) as Record<
    TaskTypeName,
    WebTaskType[K]
  >;
}

/** The widgets, by task type name. */
export const WIDGETS = partOf("widget");

/** The consensus views, by task type name. */
export const CONSENSUS_VIEWS = partOf("view");
