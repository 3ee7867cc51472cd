/**
 * What every export format reads (contract §exports): one row per task of a job or batch other than gold tasks,
 * in export order, as the store reads it page by page (task-types/export-rows.ts), and the task type names the
 * type modules' `exportRows` are found by.
 */
import type { AnyLabelSpec } from "../task-types";
import type { ExportRow as ExportRowOf } from "../task-types/export-rows";

export { type ExportScope, itemSizeOf } from "../task-types/export-rows";
/** One task of an export, as the store reads it (docs/decisions/0255), its label_spec any type's. */
export type ExportRow = ExportRowOf<AnyLabelSpec>;
export { type TaskTypeName, taskTypeNameOf } from "../task-types/registry";
