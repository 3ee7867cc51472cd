/** @labelgate/consensus-worker: consensus, settlement, ledger and reconciliation handlers. */
import type { HandlersFor } from "@labelgate/queue";
import { reconcile } from "./reconcile";
import { type ConsensusDeps, evaluateTask } from "./settle";

export * from "./consensus";
export * from "./ledger";
export * from "./reconcile";
export * from "./settle";

/** The handlers of every queue this service consumes (the type fails to compile if one is missing). */
export function consensusHandlers(
  deps: ConsensusDeps & { reconcileGraceMs: number; webhookRetryMax?: number },
): HandlersFor<"consensus-worker"> {
  return {
    consensus: async ({ taskId }) => void (await evaluateTask(deps, taskId)),
    reconcile: async () => void (await reconcile({ ...deps, graceMs: deps.reconcileGraceMs, webhookRetryMax: deps.webhookRetryMax ?? 3 })),
  };
}
