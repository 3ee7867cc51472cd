// Type-level test, checked by `pnpm typecheck`: a service's handler map must name every queue it consumes,
// and the gateway's every operation of the route catalog.

import type { Handlers } from "@labelgate/gateway/operations";
import type { HandlersFor } from "@labelgate/queue";

// @ts-expect-error the consensus worker also consumes `reconcile`: a missing handler does not compile
export const missingHandler: HandlersFor<"consensus-worker"> = { consensus: async () => undefined };

export const complete: HandlersFor<"consensus-worker"> = {
  consensus: async ({ taskId, labelId }) => void `${taskId}${labelId}`,
  reconcile: async () => undefined,
  refitSweep: async () => undefined,
  modelRefit: async ({ labelSpaceId, version }) => void `${labelSpaceId}${version}`,
};

// The gateway's handler record must name every operation of the route catalog.

// @ts-expect-error every other operation of the route catalog is missing: a missing handler does not compile
export const missingOperation: Handlers = { getHealth: async () => undefined };
