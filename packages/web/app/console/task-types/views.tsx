/**
 * The console's consensus views of the task types (contract §task-types): each reserved type's view lives in its
 * folder (app/types/<type>/View.tsx) and app/types/registry.ts collects them by `TaskTypeName`; what a view is:
 * view-kit.ts.
 */
import { taskTypeNameOf } from "@labelgate/sdk/browser";
import { CONSENSUS_VIEWS } from "../../types/registry";
import type { ConsensusView } from "./view-kit";

export type { ConsensusValue, ConsensusView, ConsensusViewProps } from "./view-kit";
export { CONSENSUS_VIEWS };

/** The consensus view of `taskType`, or undefined for a single-choice type. */
export function consensusViewOf(taskType: string): ConsensusView | undefined {
  return CONSENSUS_VIEWS[taskTypeNameOf(taskType)] ?? undefined;
}
