/**
 * The task types of contract §task-types as the SDK offers them: a request type per type, the consensus of a reserved type
 * (the answer's shape, each part with its `confidence`; a box also with its `support`) and guards that tell the
 * consensus shapes apart. All types derive from @labelgate/api, so they follow the gateway's schemas.
 *
 * | `type`                        | `label_spec`               | answer (`labeling.label`)               | `consensus`                        |
 * |-------------------------------|----------------------------|-----------------------------------------|------------------------------------|
 * | any other (single choice)     | `{question, options}`      | a string, or `{label}`                  | absent (`consensus_label` is the option) |
 * | `multi_label_classification`  | `{question, options}`      | `{labels: [option, ...]}`               | {@link MultiLabelConsensus}        |
 * | `bounding_box`                | `{question, classes}`      | `{boxes: [{label, x, y, w, h}]}` (pixels) | {@link BoxConsensus}             |
 * | `text_span`                   | `{question, entity_types}` | `{spans: [{start, end, label}]}` (code points, end exclusive) | {@link SpanConsensus} |
 * | `free_text`                   | `{question, max_length?, normalize?}` | `{text}`                     | {@link FreeTextConsensus}          |
 * | `pairwise_comparison`         | `{question, allow_tie?}` (items a and b: `data_url`/`data_url_b`, or `data_text`/`data_text_b`) | `{winner: "a" \| "b" \| "tie"}` | {@link PairwiseConsensus} (the ranking: `batches.ranking`, `jobs.ranking`) |
 */
import type { ReservedTaskType, Task, TaskRequest } from "@labelgate/api/types";

export {
  ANSWER_SHAPES,
  answerShapeOf,
  choicesFieldOf,
  choicesOf,
  codePointLength,
  isReservedTaskType,
  itemFieldsOf,
  MAX_ANSWER_BYTES,
  MAX_CHOICES,
  MAX_PARTS,
  MAX_TEXT_CODE_POINTS,
  RESERVED_TASK_TYPES,
  TASK_TYPE_NAMES,
  taskTypeNameOf,
} from "@labelgate/api";

/** `POST /v1/tasks` body of a `multi_label_classification` task (`gold_answer`: `{labels}`). */
export type MultiLabelTaskRequest = Extract<TaskRequest, { type: "multi_label_classification" }>;
/** `POST /v1/tasks` body of a `bounding_box` task (`gold_answer`: `{boxes}`). */
export type BoundingBoxTaskRequest = Extract<TaskRequest, { type: "bounding_box" }>;
/** `POST /v1/tasks` body of a `text_span` task (optional `data_text`; `gold_answer`: `{spans}`). */
export type TextSpanTaskRequest = Extract<TaskRequest, { type: "text_span" }>;
/** `POST /v1/tasks` body of a `free_text` task (`gold_answer`: `{text}`). */
export type FreeTextTaskRequest = Extract<TaskRequest, { type: "free_text" }>;
/**
 * `POST /v1/tasks` body of a `pairwise_comparison` task: item a `data_url` (or `data_text`), item b `data_url_b` (or
 * `data_text_b`); `gold_answer`: `{winner}`.
 */
export type PairwiseTaskRequest = Extract<TaskRequest, { type: "pairwise_comparison" }>;
/** `POST /v1/tasks` body of a single-choice task (any other `type`; `gold_label`: one option). */
export type SingleChoiceTaskRequest = Exclude<TaskRequest, { type: ReservedTaskType }>;

/**
 * The consensus of a task of a reserved type, as tasks, results, export lines and `task.settled` events carry it
 * (`consensus`; absent for single choice). `consensus_label` is its canonical JSON without the confidences.
 */
export type Consensus = NonNullable<Task["consensus"]>;
/** `multi_label_classification`: the options that apply; `confidence`: per option of the spec, P(its decided side). */
export type MultiLabelConsensus = Extract<Consensus, { labels: string[] }>;
/** `bounding_box`: the fused boxes (pixels), each with `confidence` and `support` (labelers whose box is in its cluster). */
export type BoxConsensus = Extract<Consensus, { boxes: unknown }>;
/** One box of a {@link BoxConsensus}: `{label, x, y, w, h, confidence, support}`. */
export type ConsensusBox = BoxConsensus["boxes"][number];
/** `text_span`: the spans (code points of the text, `end` exclusive), each with `confidence`. */
export type SpanConsensus = Extract<Consensus, { spans: unknown }>;
/** One span of a {@link SpanConsensus}: `{start, end, label, confidence}`. */
export type ConsensusSpan = SpanConsensus["spans"][number];

/** `free_text`: the consensus text, its words each with `confidence`, and the answers aligned word by word (`slots`). */
export type FreeTextConsensus = Extract<Consensus, { text: string }>;
/** `pairwise_comparison`: the winner (`a`, `b` or `tie`) and its calibrated `confidence`. */
export type PairwiseConsensus = Extract<Consensus, { winner: unknown }>;

/** Whether `consensus` is a `multi_label_classification` consensus (`{labels, confidence}`). */
export function isMultiLabelConsensus(consensus: Consensus | null | undefined): consensus is MultiLabelConsensus {
  return consensus != null && "labels" in consensus;
}

/** Whether `consensus` is a `bounding_box` consensus (`{boxes}`). */
export function isBoxConsensus(consensus: Consensus | null | undefined): consensus is BoxConsensus {
  return consensus != null && "boxes" in consensus;
}

/** Whether `consensus` is a `text_span` consensus (`{spans}`). */
export function isSpanConsensus(consensus: Consensus | null | undefined): consensus is SpanConsensus {
  return consensus != null && "spans" in consensus;
}

/** Whether `consensus` is a `free_text` consensus (`{text, words, slots}`). */
export function isFreeTextConsensus(consensus: Consensus | null | undefined): consensus is FreeTextConsensus {
  return consensus != null && "text" in consensus && "slots" in consensus;
}

/** Whether `consensus` is a `pairwise_comparison` consensus (`{winner, confidence}`). */
export function isPairwiseConsensus(consensus: Consensus | null | undefined): consensus is PairwiseConsensus {
  return consensus != null && "winner" in consensus;
}
