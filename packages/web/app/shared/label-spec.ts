/**
 * A task's label_spec of any type (DESIGN §12): `{question, options}` (single choice,
 * multi_label_classification), `{question, classes}` (bounding_box), `{question, entity_types}` (text_span).
 */
import type { AnyLabelSpec } from "@labelgate/sdk/browser";

/** The names a label_spec offers: its options, classes or entity types, in the spec's order. */
export function specChoices(spec: AnyLabelSpec): string[] {
  if ("classes" in spec) return spec.classes;
  if ("entity_types" in spec) return spec.entity_types;
  return spec.options;
}

/** What the names of a label_spec are called: "Options", "Classes" or "Entity types". */
export function specChoicesName(spec: AnyLabelSpec): string {
  if ("classes" in spec) return "Classes";
  if ("entity_types" in spec) return "Entity types";
  return "Options";
}
