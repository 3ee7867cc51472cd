/**
 * The instructions a submission gives (docs/contract.md, Instructions): a task's, batch's or manifest job's
 * label spec may carry `instructions` and `examples`, which are the label space's, not the task's. After the
 * tasks are accepted, each space's guide is recorded as its new current version (store.instructions.record:
 * the same guide again makes no new version, so a retried submission changes nothing).
 */
import { type GuidedLabelSpec, splitGuide } from "@labelgate/api";
import { type GuideEntry, type Store, spaceIdOf } from "@labelgate/store";

/** A task body's type and label spec as given (with its guide fields, if any). */
interface Given {
  type: string;
  label_spec: GuidedLabelSpec;
}

/** The guide entries of the given specs (those without a guide give none), in order. */
export function guideEntries(customerId: string, given: readonly Given[]): GuideEntry[] {
  return given.flatMap((g) => {
    const { spec, guide } = splitGuide(g.label_spec);
    return guide ? [{ spaceId: spaceIdOf(customerId, g.type, spec), customerId, type: g.type, spec, guide }] : [];
  });
}

/** Records the guides of `given` (the last given per label space counts). */
export async function recordGuides(store: Store, customerId: string, given: readonly Given[]): Promise<void> {
  const entries = guideEntries(customerId, given);
  if (entries.length > 0) await store.instructions.record(entries);
}
