/**
 * What the store and the consensus worker need of a task's type (contract §task-types), one module per type
 * (types/<type>/index.ts, collected in types/registry.ts), so that neither branches on the type:
 * `taskKindOf(type)`. Single choice (every `type` but the reserved ones) wraps the rule of rule.ts and the refit
 * of refit-space.ts; each reserved type its consensus definition (types/module.ts `typedTaskType`). Storage
 * of answers and models: types/module.ts.
 */
import { taskTypeNameOf } from "@labelgate/api";
import { type FitInput, type FitOutput, refitSpace } from "./refit-space";
import type { TaskKind, TypedFitInput, TypedFitOutput } from "./types/module";
import { QUALITY_TASK_TYPES } from "./types/registry";

export type {
  KindDecision,
  KindTask,
  QualityTaskType,
  StoredLabelerRow,
  StoredTypedLabeler,
  StoredTypedSpace,
  StoredVote,
  TaskKind,
  TypedFitInput,
  TypedFitOutput,
} from "./types/module";
export { QUALITY_TASK_TYPES };

/** The kind of a task `type`: its reserved type's module, or single choice's for every other value. */
export function taskKindOf(type: string): TaskKind {
  return QUALITY_TASK_TYPES[taskTypeNameOf(type)];
}

/**
 * Refits a space of a reserved type: its module's `refit` (types/module.ts `typedTaskType`: the type's fit over
 * every task, gold tasks with their gold answer, warm-started from the stored model; then the calibration on
 * its gold tasks in CALIBRATION_BINS bins).
 * @throws Error on a stored answer that is not valid JSON of the type (a broken invariant), or a type without a refit
 */
export function refitTyped(input: TypedFitInput, now: () => number = () => performance.now()): TypedFitOutput {
  const refit = QUALITY_TASK_TYPES[input.type].refit;
  if (refit === undefined) throw new Error(`task type ${input.type} has no typed refit`);
  return refit(input, now);
}

/** A refit's input of any type: single choice (refit-space.ts) or a reserved type. */
export type AnyFitInput = ({ kind: "single_choice" } & FitInput) | ({ kind: "typed" } & TypedFitInput);
/** A refit's output of any type. */
export type AnyFitOutput = ({ kind: "single_choice" } & FitOutput) | ({ kind: "typed" } & TypedFitOutput);

/** Runs the refit of either kind (the consensus worker's fit thread). */
export function refitAny(input: AnyFitInput): AnyFitOutput {
  if (input.kind === "typed") return { kind: "typed", ...refitTyped(input) };
  return { kind: "single_choice", ...refitSpace(input) };
}

export type { BoundingBoxSpec, MultiLabelSpec, TextSpanSpec } from "@labelgate/api";
