/**
 * A task's label_spec of any type (DESIGN §12): `{question, options}` (single choice,
 * multi_label_classification), `{question, classes}` (bounding_box), `{question, entity_types}` (text_span).
 */
import type { AnyLabelSpec } from "@labelgate/sdk/browser";

/** The names a label_spec offers: its options, classes or entity types, in the spec's order (the contract's `choicesOf`). */
export { choicesOf as specChoices } from "@labelgate/sdk/browser";

/** What the names of a label_spec are called: "Options", "Classes" or "Entity types". */
export function specChoicesName(spec: AnyLabelSpec): string {
  if ("classes" in spec) return "Classes";
  if ("entity_types" in spec) return "Entity types";
  return "Options";
}
