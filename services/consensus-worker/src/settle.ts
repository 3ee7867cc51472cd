/**
 * The settlement handler: settles a task its deciding label made `settling` (the store's settlement keeps
 * what the decision rule decided, packages/store/src/settlement.ts), then enqueues its `task.settled`
 * event and, for a manifest job's last task, the job's export. Safe to run any number of times,
 * concurrently: a settled task is left alone. When the queue is down after the commit, the reconciliation
 * enqueues what this could not.
 */
import type { Logger } from "@labelgate/core";
import type { Metrics } from "@labelgate/metrics";
import type { FollowUpNudge } from "@labelgate/queue";
import type { LedgerMode, Settlement, Store } from "@labelgate/store";

export interface SettlementDeps {
  store: Store;
  /** the process's follow-up relay, nudged after a commit that wrote follow-up rows (docs/decisions/0300) */
  relay?: FollowUpNudge;
  logger: Logger;
  /** tasks settled and consensus lag (deciding label recorded → settled); optional in tests */
  metrics?: Pick<Metrics, "tasksSettled" | "consensusLag">;
  /**
   * LEDGER (default `local`): `evm` appends the ledger record only; the task stays `settling` and the
   * anchorer (anchorer.ts) settles it and enqueues its event once its anchor is confirmed
   */
  ledger?: LedgerMode;
}

/** Settles a decided task and enqueues what follows. @returns the settlement's outcome. */
export async function settleTask(deps: SettlementDeps, taskId: string): Promise<Settlement["outcome"]> {
  if (deps.ledger === "evm") {
    const recorded = await deps.store.settlement.record(taskId);
    if (recorded.outcome === "recorded") {
      deps.logger.debug({ task_id: taskId }, "ledger record appended; settled when its anchor is confirmed");
      if (recorded.lagSeconds !== undefined) deps.metrics?.consensusLag.observe(recorded.lagSeconds);
    }
    return recorded.outcome;
  }
  const result = await deps.store.settlement.settle(taskId);
  if (result.outcome === "settled" && result.eventId) {
    deps.logger.info({ task_id: taskId, event_id: result.eventId }, "task settled");
    deps.metrics?.tasksSettled.inc();
    if (result.lagSeconds !== undefined) deps.metrics?.consensusLag.observe(result.lagSeconds);
  }
  // its event and, for a manifest job's last task, the job's export: follow_up rows of the settlement's transaction
  if (result.outcome === "settled") deps.relay?.nudge();
  return result.outcome;
}
