/**
 * @labelgate/consensus-worker: settles decided tasks (ledger record, `settled`, the task.settled outbox row)
 * and reconciles lost queue work. `consensusRole` is its module for the runtime (@labelgate/runtime).
 */
export { Anchorer } from "./anchorer";
export * from "./handlers";
export * from "./reconcile";
export { consensusRole } from "./role";
export * from "./settle";
