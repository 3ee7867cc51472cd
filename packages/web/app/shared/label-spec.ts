/** The names a task's label_spec offers, whatever its type (task-types.ts in @labelgate/api). */
import type { AnyLabelSpec } from "@labelgate/sdk/browser";

/** Its options (single choice, multi-label), classes (bounding_box) or entity types (text_span). */
export function choicesOfSpec(spec: AnyLabelSpec): string[] {
  if ("classes" in spec) return spec.classes;
  if ("entity_types" in spec) return spec.entity_types;
  return spec.options;
}
