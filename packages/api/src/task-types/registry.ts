/**
 * The registry of task types' wire modules (contract §task-types): one entry per type, keyed by its name.
 * `single_choice` is the default: every `type` value that is not another key. The order of the keys is the
 * order of the request and response unions (and of the OpenAPI `oneOf`). A new type adds its folder and its
 * lines here: its import, its `export *` and its module in the list (docs/architecture.md "Adding a task type").
 */
import { boundingBoxWire } from "./bounding_box";
import { freeTextWire } from "./free_text";
import { multiLabelWire } from "./multi_label_classification";
import { pairwiseWire } from "./pairwise_comparison";
import { singleChoiceWire } from "./single_choice";
import { textSpanWire } from "./text_span";

// each module's schemas and helpers are public names of @labelgate/api (the quality modules import them)
export * from "./bounding_box";
export * from "./free_text";
export * from "./multi_label_classification";
export * from "./pairwise_comparison";
export * from "./single_choice";
export * from "./text_span";

/** Every task type's wire module, in registry order; `single_choice` first (the default). One line per type. */
export const WIRE_TASK_TYPE_LIST = [singleChoiceWire, multiLabelWire, boundingBoxWire, textSpanWire, freeTextWire, pairwiseWire] as const;

type WireList = typeof WIRE_TASK_TYPE_LIST;
/** The name of a task type: `single_choice` or a reserved `type` value. */
export type TaskTypeName = WireList[number]["name"];
/** The reserved `type` values: every registry name but `single_choice`. */
export type ReservedTaskType = Exclude<TaskTypeName, "single_choice">;
/** The reserved types' modules, as a tuple type in registry order. */
export type ReservedWireList = WireList extends readonly [unknown, ...infer Rest] ? Rest : never;
/** A reserved type's module. */
export type ReservedWireTaskType = ReservedWireList[number];

/** Every task type's wire module, by name. */
export const WIRE_TASK_TYPES = Object.fromEntries(WIRE_TASK_TYPE_LIST.map((m) => [m.name, m])) as {
  [M in WireList[number] as M["name"]]: M;
};

/** The task type names, in registry order. */
export const TASK_TYPE_NAMES = Object.keys(WIRE_TASK_TYPES) as TaskTypeName[];
/** The reserved `type` values, in registry order; every other value is single choice. */
export const RESERVED_TASK_TYPES: readonly ReservedTaskType[] = TASK_TYPE_NAMES.filter((n): n is ReservedTaskType => n !== "single_choice");

/** Whether `type` is a reserved type (every other value is single choice). */
export function isReservedTaskType(type: string): type is ReservedTaskType {
  return type !== "single_choice" && Object.hasOwn(WIRE_TASK_TYPES, type);
}

/** The registry name of a task `type`: itself when reserved, else `single_choice`. */
export function taskTypeNameOf(type: string): TaskTypeName {
  return isReservedTaskType(type) ? type : "single_choice";
}

/** The wire module of a task `type` (single choice for every value that is not reserved). */
export function wireTaskTypeOf(type: string): (typeof WIRE_TASK_TYPES)[TaskTypeName] {
  return WIRE_TASK_TYPES[taskTypeNameOf(type)];
}

/** The reserved types' modules in registry order (each has its `task` and `consensus`). */
export const RESERVED_WIRE_TASK_TYPES = WIRE_TASK_TYPE_LIST.slice(1) as unknown as ReservedWireList;
