/**
 * The widget of a claim's task type: its entry of app/types/registry.ts (one per `TaskTypeName`); every type that
 * is not reserved is single choice.
 */
import { taskTypeNameOf } from "@labelgate/sdk/browser";
import { WIDGETS } from "../../types/registry";
import type { Widget } from "./types";

export { WIDGETS };

/** The widget of a claim's `task_type`: its reserved type's, else single choice's. */
export function widgetOf(taskType: string): Widget {
  return WIDGETS[taskTypeNameOf(taskType)];
}
