/**
 * The names a task's label_spec offers, by its `type` (contract §task-types): options (single choice,
 * multi_label_classification), classes (bounding_box), entity types (text_span), a, b[, tie] (pairwise), none
 * (free text). The type is given, never guessed from the spec's fields.
 */
import { choicesFieldOf } from "@labelgate/sdk/browser";

/** The names a task of `type` offers in its label_spec, in the spec's order (the contract's `choicesOf(type, spec)`). */
export { choicesOf as specChoices } from "@labelgate/sdk/browser";

/** What the names of a task type's label_spec are called: "Classes", "Entity types" or "Options". */
export function specChoicesName(type: string): string {
  const field = choicesFieldOf(type);
  if (field === "classes") return "Classes";
  if (field === "entity_types") return "Entity types";
  return "Options";
}
