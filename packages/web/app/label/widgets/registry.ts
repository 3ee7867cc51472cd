/**
 * The widget of each task type: one entry per reserved type (task-types.ts in @labelgate/api); every other
 * type is single choice. Adding a type is one entry here and its widget.
 */
import { BoundingBox } from "./BoundingBox";
import { MultiLabel } from "./MultiLabel";
import { SingleChoice } from "./SingleChoice";
import { TextSpan } from "./TextSpan";
import type { Widget } from "./types";

export const WIDGETS: Readonly<Record<string, Widget>> = {
  multi_label_classification: MultiLabel,
  bounding_box: BoundingBox,
  text_span: TextSpan,
};

/** The widget of a claim's `task_type`: its entry, else single choice. */
export function widgetOf(taskType: string): Widget {
  return Object.hasOwn(WIDGETS, taskType) ? (WIDGETS[taskType] as Widget) : SingleChoice;
}
