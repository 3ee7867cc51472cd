/** The consensus worker's queue handlers. */
import type { HandlersFor } from "@labelgate/queue";
import { type ReconcileDeps, reconcile } from "./reconcile";
import { type RefitDeps, refitLabelSpace, refitSweep } from "./refit";
import { type SettlementDeps, settleTask } from "./settle";

/** The handlers of every queue this service consumes (the type fails to compile if one is missing). */
export function consensusHandlers(deps: SettlementDeps & Omit<ReconcileDeps, "limit"> & RefitDeps): HandlersFor<"consensus-worker"> {
  return {
    consensus: async ({ taskId }) => void (await settleTask(deps, taskId)),
    reconcile: async () => void (await reconcile(deps)),
    refitSweep: async () => void (await refitSweep(deps)),
    modelRefit: async ({ labelSpaceId }) => void (await refitLabelSpace(deps, labelSpaceId)),
  };
}
