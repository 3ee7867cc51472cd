/**
 * What the store and the consensus worker need of a task's type (DESIGN §12), one entry per type, so that neither
 * branches on the type: `taskKindOf(type)`. Single choice (every `type` but the reserved ones) wraps the rule of
 * rule.ts and the refit of refit-space.ts; each reserved type wraps its registry entry (task-types.ts).
 *
 * Storage (the same rows for every type):
 * - a label's `value` column: the option (single choice), or the canonical JSON of the canonical answer;
 * - a gold task's `gold_label`: its option, or the canonical JSON of its canonical gold answer;
 * - a label space's `model` column and its labelers' `params` rows: single choice as before (SpaceParams,
 *   LabelerParams); a reserved type's model split the same way (`StoredTypedSpace`, `StoredTypedLabeler`): the
 *   parameters of its sub-spaces (an option, a size class of boxes, an entity type) in the space row and each
 *   labeler's parameters of every sub-space in that labeler's row, so a label reads only its task's labelers.
 */
import {
  type AnswerBody,
  type AnswerIssue,
  type AnyLabelSpec,
  answerIssues,
  type BoundingBoxSpec,
  choicesOf,
  type ItemContext,
  isReservedTaskType,
  type MultiLabelSpec,
  type ReservedTaskType,
  type TextSpanSpec,
} from "@labelgate/api";
import { canonicalJson } from "@labelgate/canonical-json";
import { type BoxModel, iou, type LocalizationParams, MATCH_IOU } from "./boxes";
import type { Resolution } from "./decision";
import type { LabelerParams, QualityModel, SpaceParams } from "./model";
import type { MultiLabelModel } from "./multilabel";
import { decideParts, type PartsPolicy } from "./parts";
import {
  type CalibrationBin,
  calibrationBinOf,
  emptyBins,
  type FitInput,
  type FitOutput,
  type ReplayPolicy,
  refitSpace,
} from "./refit-space";
import { decide, GOLD_CLAIM_CAP, initialClaimCap, type ScoringModel, scoringModelOf, type TaskDecision } from "./rule";
import type { SpanModel } from "./spans";
import { type LabeledAnswer, TASK_TYPES, type TaskTypeDefinition, type TypedConsensus, type TypedTask } from "./task-types";

/** The policy of one task as the rule applies it (`gold`: a control task, never decided). */
export interface KindPolicy {
  consensusThreshold: number;
  maxLabels: number;
  confidenceTarget: number | null;
  minLabels: number | null;
  gold: boolean;
}

/** A recorded label: its labeler and its stored `value`. */
export interface StoredVote {
  labelerId: string;
  value: string;
}

/** A labeler's row of a space: its stored parameters (null before a fit saw it). */
export interface StoredLabelerRow {
  labeler_id: string;
  params: unknown;
}

/** The decision of a task after its labels: rule.ts's, plus the typed consensus of a reserved type. */
export type KindDecision = TaskDecision & { consensus?: unknown };

/** The refit of a space of a reserved type: every task of the space with its answers, gold and text. */
export interface TypedFitInput {
  id: string;
  type: ReservedTaskType;
  spec: AnyLabelSpec;
  version: number;
  policy: ReplayPolicy;
  /** the stored model's space row (null before the first fit) and its labelers' rows */
  space: unknown;
  labelers: StoredLabelerRow[];
  /** every task of the space with a label or a gold answer, answers in recording order */
  tasks: { id: string; answers: StoredVote[]; gold: string | null; text: string | null }[];
  /** labels read, and the created_at of the newest (ISO) */
  labels: number;
  through: string | null;
}

/** What a refit of a reserved type writes: the space row, the labelers' rows, the gold calibration. */
export interface TypedFitOutput {
  space: unknown;
  labelers: { labelerId: string; params: unknown }[];
  calibrationBins: CalibrationBin[];
  fitMs: number;
  outcome: "cold" | "warm" | "refused";
  failing: string[];
}

/** Everything the store and the worker need of one task type. */
export interface TaskKind {
  /** "single_choice" or the reserved type */
  name: "single_choice" | ReservedTaskType;
  /**
   * Whether a task of this type is labeled on its text (`data_text`): a task created without one waits, not
   * claimable (`item_pending`), until the body of its `data_url` is fetched and stored.
   */
  needsText: boolean;
  /** The stored `value` of an answer to a task of `spec`, or what is wrong with it (paths inside the answer body). */
  readAnswer(spec: AnyLabelSpec, body: AnswerBody, item: ItemContext): { value: string; answer?: AnswerBody } | { issues: AnswerIssue[] };
  /** The model the rule scores a task with, from the space row and the rows of the task's labelers. */
  scoringModel(spec: AnyLabelSpec, space: unknown, labelers: readonly StoredLabelerRow[]): unknown;
  /** The rule of a task over its labels in recording order. @throws Error on a vote that is not a valid stored answer */
  decide(spec: AnyLabelSpec, policy: KindPolicy, votes: readonly StoredVote[], model: unknown, item: ItemContext): KindDecision;
  /** Whether a stored answer equals a gold task's (for a box task: the same boxes of the same classes, each at IoU >= 0.5). */
  goldCorrect(spec: AnyLabelSpec, gold: string, value: string): boolean;
  /** How many labelers may claim a new task at once. */
  initialClaimCap(spec: AnyLabelSpec, policy: KindPolicy): number;
  /** Labels per option, class or entity type (an answer counts once for each it names). */
  labelCounts(spec: AnyLabelSpec, votes: readonly StoredVote[]): Record<string, number>;
  /** A labeler's labels in a space and its estimated accuracy (null when the type has no single figure). */
  labelerSummary(space: unknown, params: unknown): { labels: number; estimatedAccuracy: number | null };
}

// --- single choice ----------------------------------------------------------------------------------------

const singleChoice: TaskKind = {
  name: "single_choice",
  needsText: false,
  readAnswer(spec, body) {
    const issues = answerIssues("single_choice", spec, body);
    if (issues.length > 0 || !("label" in body)) return { issues };
    return { value: body.label };
  },
  scoringModel(spec, space, labelers) {
    return scoringModelOf(
      choicesOf(spec).length,
      space as SpaceParams | null,
      labelers as { labeler_id: string; params: LabelerParams | null }[],
    );
  },
  decide(spec, policy, votes, model) {
    return decide({ options: choicesOf(spec), ...policy }, votes, model as ScoringModel);
  },
  goldCorrect: (_spec, gold, value) => gold === value,
  initialClaimCap: (spec, policy) => initialClaimCap({ options: choicesOf(spec), ...policy }),
  labelCounts(spec, votes) {
    const counts = Object.fromEntries(choicesOf(spec).map((o) => [o, 0]));
    for (const v of votes) counts[v.value] = (counts[v.value] ?? 0) + 1;
    return counts;
  },
  labelerSummary: (_space, params) => ({ labels: (params as LabelerParams | null)?.labels ?? 0, estimatedAccuracy: null }),
};

// --- reserved types: the model split into rows ---------------------------------------------------------------

/** A reserved type's space row: its sub-spaces' parameters and the type's own scalars. */
export interface StoredTypedSpace {
  parts: SpaceParams[];
  /** boxes: the class space (null with one class) and the localization scalars */
  class?: SpaceParams | null;
  localizationVariance?: number;
  objectsPerItem?: number;
  sizeShare?: number[];
}

/** A labeler's row of a reserved type's space: its parameters of each sub-space (null where it has none). */
export interface StoredTypedLabeler {
  labelerId: string;
  /** the most labels of any sub-space: its answers in the space */
  labels: number;
  parts: (LabelerParams | null)[];
  class?: LabelerParams | null;
  localization?: LocalizationParams | null;
}

function splitModels(models: readonly QualityModel[]): { spaces: SpaceParams[]; ids: Set<string> } {
  const ids = new Set<string>();
  for (const m of models) for (const id of m.labelers.keys()) ids.add(id);
  return { spaces: models.map((m) => m.space), ids };
}

function joinModels(
  spaces: readonly SpaceParams[],
  rows: readonly StoredTypedLabeler[],
  pick: (row: StoredTypedLabeler, j: number) => LabelerParams | null | undefined,
): QualityModel[] {
  return spaces.map((space, j) => ({
    space,
    labelers: new Map(
      rows.flatMap((r): [string, LabelerParams][] => {
        const p = pick(r, j);
        return p ? [[r.labelerId, p]] : [];
      }),
    ),
  }));
}

/** Labels of a labeler across sub-spaces: the most of any (each answer is a label of every sub-space). */
function labelsOf(params: readonly (LabelerParams | null | undefined)[]): number {
  return params.reduce((n, p) => Math.max(n, p?.labels ?? 0), 0);
}

/** How a reserved type's model becomes rows and back. */
interface ModelRows<M> {
  split(model: M): { space: StoredTypedSpace; labelers: StoredTypedLabeler[] };
  join(spec: AnyLabelSpec, space: StoredTypedSpace, rows: readonly StoredTypedLabeler[]): M;
}

/** The rows of a model made of one part per name (multi-label options, span entity types). */
function partsRows<M>(partsOf: (model: M) => QualityModel[], make: (spec: AnyLabelSpec, parts: QualityModel[]) => M): ModelRows<M> {
  return {
    split(model) {
      const parts = partsOf(model);
      const { spaces, ids } = splitModels(parts);
      const labelers = [...ids].map((id) => {
        const own = parts.map((m) => m.labelers.get(id) ?? null);
        return { labelerId: id, labels: labelsOf(own), parts: own };
      });
      return { space: { parts: spaces }, labelers };
    },
    join: (spec, space, rows) =>
      make(
        spec,
        joinModels(space.parts, rows, (r, j) => r.parts[j]),
      ),
  };
}

const multiLabelRows = partsRows<MultiLabelModel>(
  (m) => m.options,
  (spec, options) => ({ k: choicesOf(spec).length, options }),
);
const spanRows = partsRows<SpanModel>(
  (m) => m.perType,
  (spec, perType) => ({ types: choicesOf(spec).length, perType }),
);

const boxRows: ModelRows<BoxModel> = {
  split(model) {
    const all = model.class ? [...model.objects, model.class] : model.objects;
    const { ids } = splitModels(all);
    for (const id of model.localization.keys()) ids.add(id);
    const labelers = [...ids].map((id): StoredTypedLabeler => {
      const parts = model.objects.map((m) => m.labelers.get(id) ?? null);
      const cls = model.class?.labelers.get(id) ?? null;
      return { labelerId: id, labels: labelsOf([...parts, cls]), parts, class: cls, localization: model.localization.get(id) ?? null };
    });
    return {
      space: {
        parts: model.objects.map((m) => m.space),
        class: model.class?.space ?? null,
        localizationVariance: model.localizationVariance,
        objectsPerItem: model.objectsPerItem,
        sizeShare: model.sizeShare,
      },
      labelers,
    };
  },
  join(spec, space, rows) {
    const objects = joinModels(space.parts, rows, (r, j) => r.parts[j]);
    const cls = space.class ? (joinModels([space.class], rows, (r) => r.class)[0] as QualityModel) : null;
    return {
      classes: choicesOf(spec).length,
      objects,
      class: cls,
      localization: new Map(rows.flatMap((r): [string, LocalizationParams][] => (r.localization ? [[r.labelerId, r.localization]] : []))),
      localizationVariance: space.localizationVariance as number,
      objectsPerItem: space.objectsPerItem as number,
      sizeShare: space.sizeShare as number[],
    };
  },
};

// --- reserved types: the kind ---------------------------------------------------------------------------------

type AnyDefinition = TaskTypeDefinition<AnyLabelSpec, AnswerBody, unknown, unknown>;

function rowsOf(type: ReservedTaskType): ModelRows<unknown> {
  if (type === "bounding_box") return boxRows as ModelRows<unknown>;
  return (type === "multi_label_classification" ? multiLabelRows : spanRows) as ModelRows<unknown>;
}

/** The answer of a stored value of a reserved type. */
function parsed(value: string): AnswerBody {
  return JSON.parse(value) as AnswerBody;
}

/** The parts policy of a task (parts.ts). */
function partsPolicy(policy: KindPolicy): PartsPolicy {
  return policy.confidenceTarget === null
    ? { kind: "threshold", consensusThreshold: policy.consensusThreshold, maxLabels: policy.maxLabels }
    : { kind: "confidence", confidenceTarget: policy.confidenceTarget, minLabels: policy.minLabels ?? 1, maxLabels: policy.maxLabels };
}

/** The fewest further labels that could decide a task of a reserved type after `n` labels (at least 1). */
function typedClaimCap(policy: KindPolicy, n: number): number {
  if (policy.gold) return GOLD_CLAIM_CAP;
  const floor = policy.confidenceTarget === null ? policy.consensusThreshold : (policy.minLabels ?? 1);
  return Math.max(1, Math.min(policy.maxLabels - n, floor - n));
}

/** The names an answer of a reserved type gives (each once). */
function namesOf(answer: AnswerBody): Set<string> {
  if ("labels" in answer) return new Set(answer.labels);
  if ("boxes" in answer) return new Set(answer.boxes.map((b) => b.label));
  if ("spans" in answer) return new Set(answer.spans.map((s) => s.label));
  return new Set([answer.label]);
}

/** Answers per option, class or entity type: each answer counts once for each name it gives. */
function countNames(spec: AnyLabelSpec, answers: readonly LabeledAnswer<AnswerBody>[]): Record<string, number> {
  const counts = Object.fromEntries(choicesOf(spec).map((o) => [o, 0]));
  for (const a of answers) for (const name of namesOf(a.answer)) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}

/** A box answer matches the gold boxes: as many boxes, each gold box met by one of its class at IoU >= MATCH_IOU. */
function boxesMatch(gold: AnswerBody, answer: AnswerBody): boolean {
  if (!("boxes" in gold) || !("boxes" in answer) || gold.boxes.length !== answer.boxes.length) return false;
  const used = new Set<number>();
  return gold.boxes.every((g) => {
    let best = -1;
    let bestIou = MATCH_IOU;
    answer.boxes.forEach((b, i) => {
      if (used.has(i) || b.label !== g.label) return;
      const overlap = iou(b, g);
      if (overlap >= bestIou) {
        best = i;
        bestIou = overlap;
      }
    });
    if (best < 0) return false;
    used.add(best);
    return true;
  });
}

function reservedKind(type: ReservedTaskType): TaskKind {
  const def = TASK_TYPES[type] as unknown as AnyDefinition;
  const rows = rowsOf(type);
  return {
    name: type,
    needsText: type === "text_span",
    readAnswer(spec, body, item) {
      const issues = answerIssues(type, spec, body, item);
      if (issues.length > 0) return { issues };
      const answer = def.canonicalAnswer(spec, body);
      return { value: canonicalJson(answer), answer };
    },
    scoringModel(spec, space, labelers) {
      if (space === null || space === undefined) return def.emptyModel(spec);
      return rows.join(
        spec,
        space as StoredTypedSpace,
        labelers.flatMap((l) => (l.params ? [l.params as StoredTypedLabeler] : [])),
      );
    },
    decide(spec, policy, votes, model, item) {
      // each stored answer parsed once, for the counts and the aggregator
      const answers: LabeledAnswer<AnswerBody>[] = votes.map((v) => ({ labelerId: v.labelerId, answer: parsed(v.value) }));
      const counts = countNames(spec, answers);
      const n = votes.length;
      if (policy.gold) return { done: false, counts, labelsNeeded: 1, claimCap: GOLD_CLAIM_CAP };
      if (n > policy.maxLabels) throw new Error(`${n} votes exceed max_labels ${policy.maxLabels}`);
      if (n === 0) return { done: false, counts, labelsNeeded: policy.maxLabels, claimCap: typedClaimCap(policy, 0) };
      const r = def.aggregate(spec, model, answers, item) as TypedConsensus<unknown>;
      const d = decideParts(partsPolicy(policy), n, r.parts);
      if (!d.settled) return { done: false, counts, labelsNeeded: Math.max(1, d.labelsNeeded), claimCap: typedClaimCap(policy, n) };
      return {
        done: true,
        counts,
        label: r.consensusLabel,
        confidence: r.confidence,
        posterior: r.posterior ?? {},
        resolution: d.resolution as Resolution,
        labelsNeeded: 0,
        claimCap: 0,
        consensus: r.consensus,
      };
    },
    goldCorrect(_spec, gold, value) {
      if (type === "bounding_box") return boxesMatch(parsed(gold), parsed(value));
      return gold === value;
    },
    initialClaimCap: (_spec, policy) => typedClaimCap(policy, 0),
    labelCounts: (spec, votes) =>
      countNames(
        spec,
        votes.map((v) => ({ labelerId: v.labelerId, answer: parsed(v.value) })),
      ),
    labelerSummary: (_space, params) => ({ labels: (params as StoredTypedLabeler | null)?.labels ?? 0, estimatedAccuracy: null }),
  };
}

const KINDS: Record<"single_choice" | ReservedTaskType, TaskKind> = {
  single_choice: singleChoice,
  multi_label_classification: reservedKind("multi_label_classification"),
  bounding_box: reservedKind("bounding_box"),
  text_span: reservedKind("text_span"),
};

/** The kind of a task `type`: its reserved entry, or single choice for every other value. */
export function taskKindOf(type: string): TaskKind {
  return isReservedTaskType(type) ? KINDS[type] : KINDS.single_choice;
}

// --- refit of a reserved type --------------------------------------------------------------------------------

/**
 * Refits a space of a reserved type: `TASK_TYPES[type].fit` over every task (gold tasks with their gold answer),
 * warm-started from the stored model; then the calibration on its gold tasks (each gold task's answers, at most
 * `max_labels`, aggregated with the new model: its task confidence against "the consensus equals the gold
 * answer", box tasks by `goldCorrect`), in CALIBRATION_BINS bins.
 * @throws Error on a stored answer that is not valid JSON of the type (a broken invariant)
 */
export function refitTyped(input: TypedFitInput, now: () => number = () => performance.now()): TypedFitOutput {
  const started = now();
  const def = TASK_TYPES[input.type] as unknown as AnyDefinition;
  const kind = KINDS[input.type];
  const rows = rowsOf(input.type);
  const previous =
    input.space === null || input.space === undefined ? undefined : kind.scoringModel(input.spec, input.space, input.labelers);
  const tasks: TypedTask<AnswerBody>[] = input.tasks.map((t) => ({
    id: t.id,
    answers: t.answers.map((a) => ({ labelerId: a.labelerId, answer: parsed(a.value) })),
    gold: t.gold === null ? undefined : parsed(t.gold),
    item: t.text === null ? undefined : { text: t.text },
  }));
  const model = def.fit(
    input.spec,
    tasks.filter((t) => input.type !== "text_span" || t.item !== undefined),
    previous,
  );
  const { space, labelers } = rows.split(model);
  const bins = emptyBins();
  for (const t of input.tasks) {
    if (t.gold === null || t.answers.length === 0 || (input.type === "text_span" && t.text === null)) continue;
    const votes = t.answers.slice(0, input.policy.maxLabels);
    const r = def.aggregate(
      input.spec,
      model,
      votes.map((a) => ({ labelerId: a.labelerId, answer: parsed(a.value) })),
      t.text === null ? undefined : { text: t.text },
    ) as TypedConsensus<unknown>;
    const bin = bins[calibrationBinOf(r.confidence)] as CalibrationBin;
    bin.tasks += 1;
    bin.sumConfidence += r.confidence;
    if (kind.goldCorrect(input.spec, t.gold, r.consensusLabel)) bin.correct += 1;
  }
  return {
    space,
    labelers: labelers.map((l) => ({ labelerId: l.labelerId, params: l })),
    calibrationBins: bins,
    fitMs: now() - started,
    outcome: "cold",
    failing: [],
  };
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

export type { BoundingBoxSpec, MultiLabelSpec, TextSpanSpec };
