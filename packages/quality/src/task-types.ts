/**
 * The reserved task types of contract §task-types as the quality package offers them: each type's consensus
 * definition (`TaskTypeDefinition`: label_spec schema, answer schema with the answer's meaning, canonical
 * answer, model, fit, aggregator) lives in its module, types/<type>/index.ts; this file gathers them from the
 * registry (`TASK_TYPES`, types/registry.ts) and re-exports the first types' shapes. Every other `type` value is single choice (model.ts / decision.ts).
 *
 * The consensus of a task (`TypedConsensus`): `consensus` (the answer shape, each part with its confidence),
 * `consensusLabel` (the canonical JSON of `consensus` without the confidences: keys sorted, no spaces; contract
 * §task-types `consensus_label`), `confidence` (P(the whole consensus is right): see each aggregator's module
 * for its definition), `parts` (for `decideParts`) and, for multi-label, the posterior per option.
 */
import {
  type BoundingBoxSpec,
  boundingBoxSpec,
  type ItemContext,
  isReservedTaskType,
  MAX_ANSWER_BYTES,
  MAX_CHOICES,
  MAX_PARTS,
  MAX_TEXT_CODE_POINTS,
  type MultiLabelSpec,
  multiLabelSpec,
  RESERVED_TASK_TYPES,
  type ReservedTaskType,
  type TextSpanSpec,
  textSpanSpec,
} from "@labelgate/api";
import { canonicalJson } from "@labelgate/canonical-json";
import type { AnyTaskTypeDefinition } from "./types/module";
import { QUALITY_TASK_TYPES } from "./types/registry";

export { type BoxAnswerBody, type BoxConsensusBody, boundingBoxType, boxAnswer } from "./types/bounding_box";
export type { LabeledAnswer, TaskTypeDefinition, TypedConsensus, TypedTask } from "./types/module";
export {
  type MultiLabelAnswerBody,
  type MultiLabelConsensusBody,
  multiLabelAnswer,
  multiLabelType,
} from "./types/multi_label_classification";
export { type SpanAnswerBody, type SpanConsensusBody, spanAnswer, textSpanType } from "./types/text_span";
export type { BoundingBoxSpec, ItemContext, MultiLabelSpec, TextSpanSpec };
export { boundingBoxSpec, canonicalJson, MAX_ANSWER_BYTES, MAX_CHOICES, MAX_PARTS, MAX_TEXT_CODE_POINTS, multiLabelSpec, textSpanSpec };

/** The reserved `type` values (contract §task-types). */
export const RESERVED_TYPES = RESERVED_TASK_TYPES;
export type ReservedType = ReservedTaskType;

/** Whether a task `type` is one of the reserved types (every other value is single choice). */
export function isReservedType(type: string): type is ReservedType {
  return isReservedTaskType(type);
}

/** The consensus definitions of the reserved types, in registry order (each quality module's `definition`). */
export const TASK_TYPES = Object.fromEntries(
  RESERVED_TASK_TYPES.map((name) => {
    const definition = QUALITY_TASK_TYPES[name].definition;
    if (definition === undefined) throw new Error(`reserved type ${name} has no consensus definition`);
    return [name, definition];
  }),
) as Record<ReservedTaskType, AnyTaskTypeDefinition>;
