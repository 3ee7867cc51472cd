/**
 * The task state machine (contract §lifecycle), defined once. Pure: no SQL, no I/O. The statements of
 * the store derive their status conditions from these lists (`statusList`), and the store checks every
 * transition it makes against `TASK_TRANSITIONS`.
 *
 *   pending ──label──▶ labeling ──deciding label──▶ settling ──ledger (and anchor)──▶ settled
 *      │  └───────────deciding first label──────────────▲
 *      └──────────────┴──cancel──▶ canceled       ▲          │
 *                        ▲                         └─review─┤ (a new revision: docs/decisions/0260)
 *                        └───────review: reopen─────────────┘
 *
 * - pending: accepted, no label yet (a manifest job's task is pending but not claimable while its job ingests).
 * - labeling: at least one label, not decided.
 * - settling: decided when a label was recorded (label, confidence, posterior are fixed); the settlement
 *   (ledger record, then on a chain its anchor) is in flight. No claim, label or cancel is accepted.
 * - settled: the result of a revision is final; `task.settled` goes out (`task.revised` for a later revision).
 *   A customer's review that changes it makes the next revision: with the reviewer's answer it goes back to
 *   `settling` (its ledger record, then `settled`), with a rejection alone to `labeling` (more labels, the
 *   rejected option excluded). The revision before stays as it was settled (task_revisions).
 * - canceled: by the customer, from pending or labeling; unused reserved quota is returned.
 */
import { OPEN_TASK_STATUSES, TASK_STATUSES, type TaskStatus } from "@labelgate/api";

export { OPEN_TASK_STATUSES, TASK_STATUSES, type TaskStatus };

/** Every allowed transition: from → the statuses it may move to. */
export const TASK_TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  pending: ["labeling", "settling", "canceled"],
  labeling: ["settling", "canceled"],
  settling: ["settled"],
  settled: ["settling", "labeling"],
  canceled: [],
};

/** Statuses from which a task may be canceled. */
export const CANCELABLE_STATUSES = OPEN_TASK_STATUSES;

/** Statuses in which a task still counts as work in progress (a batch or manifest job is not done). */
export const UNFINISHED_STATUSES = ["pending", "labeling", "settling"] as const satisfies readonly TaskStatus[];

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TASK_TRANSITIONS[from].includes(to);
}

/** A task that still takes claims and labels. */
export function isOpen(status: TaskStatus): boolean {
  return (OPEN_TASK_STATUSES as readonly TaskStatus[]).includes(status);
}

/** Thrown when code asks for a transition the state machine does not allow (a bug, never a client error). */
export class IllegalTransitionError extends Error {
  override name = "IllegalTransitionError";
  constructor(
    readonly from: TaskStatus,
    readonly to: TaskStatus,
  ) {
    super(`task status ${from} cannot move to ${to}`);
  }
}

/** @throws IllegalTransitionError unless `from` → `to` is allowed. */
export function assertTransition(from: TaskStatus, to: TaskStatus): void {
  if (!canTransition(from, to)) throw new IllegalTransitionError(from, to);
}

/** Statuses that may move to `to`, for the `WHERE status IN (...)` of the statement making that move. */
export function statusesBefore(to: TaskStatus): TaskStatus[] {
  return TASK_STATUSES.filter((from) => canTransition(from, to));
}
