// Type-level test, checked by `pnpm typecheck`: a service's handler map must name every queue it consumes.
import type { HandlersFor } from "@labelgate/queue";

// @ts-expect-error the consensus worker also consumes `reconcile`: a missing handler does not compile
export const missingHandler: HandlersFor<"consensus-worker"> = { consensus: async () => undefined };

export const complete: HandlersFor<"consensus-worker"> = {
  consensus: async ({ taskId, labelId }) => void `${taskId}${labelId}`,
  reconcile: async () => undefined,
  refitSweep: async () => undefined,
  modelRefit: async ({ labelSpaceId, version }) => void `${labelSpaceId}${version}`,
};
