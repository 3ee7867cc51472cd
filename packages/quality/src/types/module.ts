/**
 * The meaning half of a task type (contract §task-types) as one module: what every type's folder under
 * packages/quality/src/types/<type>/ exports (`QualityTaskType`), and the pieces the reserved types share.
 * The wire half (label_spec, answer schema and checks, canonical form) is the type's module in
 * @labelgate/api (task-types/<type>); registry.ts collects the modules by `TaskTypeName`, so the store and
 * the workers reach a type only through `taskKindOf(type)` and never branch on its name
 * (docs/architecture.md "Adding a task type").
 *
 * A reserved type usually writes a `TypedTaskModule` (its consensus definition, how its model becomes rows,
 * the names an answer gives, its gold match, a reviewed answer's result, its export fields) and turns it into
 * its `QualityTaskType` with `typedTaskType`, which adds what every reserved type does alike: the stored value
 * is the canonical JSON of the canonical answer, the stopping rule over parts (parts.ts `decideParts`), the
 * claim cap, the refit with its gold calibration.
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
  choicesOf,
  type ItemContext,
  type ReservedTaskType,
  type TaskTypeName,
} from "@labelgate/api";
import { canonicalJson } from "@labelgate/canonical-json";
import type { z } from "zod";
import type { LocalizationParams } from "../boxes";
import type { Resolution } from "../decision";
import type { LabelerParams, QualityModel, SpaceParams } from "../model";
import { decideParts, type Part } from "../parts";
import { labelsToDecide, type Policy } from "../policy";
import { type CalibrationBin, calibrationBinOf, emptyBins } from "../refit-space";
import { GOLD_CLAIM_CAP, type TaskDecision } from "../rule";

// --- what the aggregators take and give ---------------------------------------------------------------------

/** A labeler's answer as the aggregators take it. */
export interface LabeledAnswer<A> {
  labelerId: string;
  answer: A;
}

/** The consensus of a task of a reserved type. */
export interface TypedConsensus<C> {
  /** the consensus answer, each part with its `confidence` */
  consensus: C;
  /** canonical JSON of `consensus` without the confidences (contract §task-types `consensus_label`) */
  consensusLabel: string;
  /** P(the whole consensus is right) under the type's model */
  confidence: number;
  /** parts of the stopping rule (parts.ts `decideParts`) */
  parts: Part[];
  /** multi-label: calibrated P(option applies) per option */
  posterior?: Record<string, number>;
}

/** One task for a type's fit: its answers, its gold answer if it is a gold task, its item. */
export interface TypedTask<A> {
  id: string;
  answers: readonly LabeledAnswer<A>[];
  gold?: A;
  item?: ItemContext;
}

/** The consensus definition of a reserved type: its schemas, its model (empty, fit) and its aggregator. */
export interface TaskTypeDefinition<Spec, A, Model, C> {
  type: ReservedTaskType;
  labelSpec: z.ZodType<Spec>;
  answerSchema(spec: Spec, item?: ItemContext): z.ZodType<A>;
  /** the answer with its parts in canonical order (what a gold answer is compared and hashed as) */
  canonicalAnswer(spec: Spec, answer: A): A;
  emptyModel(spec: Spec): Model;
  /** refit of the space's model on every task (gold tasks clamped), warm-started from `previous` */
  fit(spec: Spec, tasks: readonly TypedTask<A>[], previous?: Model): Model;
  /** consensus of one task; answers must be valid (answerSchema) */
  aggregate(spec: Spec, model: Model, answers: readonly LabeledAnswer<A>[], item?: ItemContext): TypedConsensus<C>;
  /**
   * Optional: the parts of `aggregate` that have counts (the only ones the threshold policy reads), when the type
   * can give them without its consensus (free_text: its consensus aligns every answer). The decision then aggregates
   * under that policy only once they settle the task. They must equal the counted parts of `aggregate`'s `parts`.
   */
  countedParts?(spec: Spec, answers: readonly LabeledAnswer<A>[]): Part[];
}

/** Any reserved type's consensus definition (for walking the registry). */
// biome-ignore lint/suspicious/noExplicitAny: the registry holds definitions of different shapes
export type AnyTaskTypeDefinition = TaskTypeDefinition<any, any, any, any>;

/** The wire shape (@labelgate/api) refined with the meaning of an answer for one task (`answerIssues`). */
export function refinedAnswer<A extends object>(type: ReservedTaskType, shape: z.ZodType<A>, spec: AnyLabelSpec, item: ItemContext) {
  return shape.superRefine((answer, ctx) => {
    for (const issue of answerIssues(type, spec, answer as never, item))
      ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  });
}

/** A lookup of names (options, classes, entity types) to their index. @throws RangeError on an unknown name */
export function indexer(names: readonly string[], what: string): (name: string) => number {
  const index = new Map(names.map((n, i) => [n, i]));
  return (name) => {
    const i = index.get(name);
    if (i === undefined) throw new RangeError(`unknown ${what} "${name}"`);
    return i;
  };
}

// --- what the store and the worker take and give --------------------------------------------------------------

/** What the rule needs of a task besides its answers: its policy and whether it is a gold (control) task, never decided. */
export interface KindTask {
  policy: Policy;
  gold: boolean;
  /** options rejected by reviews (single choice: rule.ts `excludedOptions`); the reserved types take none */
  excludedOptions?: readonly string[];
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
  /** the policy the calibration replays (the space's newest task's) */
  policy: Policy;
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
  /** the type's registry name: "single_choice" or the reserved type */
  name: TaskTypeName;
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
  decide(spec: AnyLabelSpec, task: KindTask, votes: readonly StoredVote[], model: unknown, item: ItemContext): KindDecision;
  /** Whether a stored answer equals a gold task's (for a box task: the same boxes of the same classes, each at IoU >= 0.5). */
  goldCorrect(spec: AnyLabelSpec, gold: string, value: string): boolean;
  /** How many labelers may claim a new task at once. */
  initialClaimCap(spec: AnyLabelSpec, task: KindTask): number;
  /**
   * The result of an answer a customer's review gave (docs/decisions/0260), from its stored `value`
   * (`readAnswer`): a known truth, so every part at confidence 1; single choice: the posterior with the
   * answer at 1, no typed consensus; reserved types: an empty posterior (as box and span results have) and the
   * typed consensus (a box with `support` 0: no labeler drew it); multi-label also P(option applies) at 0 or 1.
   */
  reviewed(spec: AnyLabelSpec, value: string): { posterior: Record<string, number>; consensus?: unknown };
  /** Labels per option, class or entity type (an answer counts once for each it names). */
  labelCounts(spec: AnyLabelSpec, votes: readonly StoredVote[]): Record<string, number>;
  /** A labeler's labels in a space and its estimated accuracy (null when the type has no single figure). */
  labelerSummary(space: unknown, params: unknown): { labels: number; estimatedAccuracy: number | null };
  /** The refit of a space of this type (reserved types; single choice refits with refit-space.ts). */
  refit?(input: TypedFitInput, now: () => number): TypedFitOutput;
  /** A reserved type's consensus definition (its module's `definition`); single choice has none. */
  definition?: AnyTaskTypeDefinition;
}

/** A type's quality module: what the registry holds per `TaskTypeName`. */
export type QualityTaskType = TaskKind;

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
  /** its answers in the space (one per task it answered), as of the last fit */
  labels: number;
  parts: (LabelerParams | null)[];
  class?: LabelerParams | null;
  localization?: LocalizationParams | null;
}

/** The labeler ids of sub-space models and their space parameters. */
export function splitModels(models: readonly QualityModel[]): { spaces: SpaceParams[]; ids: Set<string> } {
  const ids = new Set<string>();
  for (const m of models) for (const id of m.labelers.keys()) ids.add(id);
  return { spaces: models.map((m) => m.space), ids };
}

/** Sub-space models from their space parameters and the labelers' rows (`pick`: a row's parameters of sub-space j). */
export function joinModels(
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
export function labelsOf(params: readonly (LabelerParams | null | undefined)[]): number {
  return params.reduce((n, p) => Math.max(n, p?.labels ?? 0), 0);
}

/** How a reserved type's model becomes rows and back. */
export interface ModelRows<M> {
  split(model: M): { space: StoredTypedSpace; labelers: StoredTypedLabeler[] };
  join(spec: AnyLabelSpec, space: StoredTypedSpace, rows: readonly StoredTypedLabeler[]): M;
}

/** The rows of a model made of one part per name (multi-label options, span entity types). */
export function partsRows<M>(partsOf: (model: M) => QualityModel[], make: (spec: AnyLabelSpec, parts: QualityModel[]) => M): ModelRows<M> {
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

// --- reserved types: the module and the kind ----------------------------------------------------------------------

/** What a reserved type's folder defines; `typedTaskType` makes its `QualityTaskType`. */
export interface TypedTaskModule<Spec, A, Model, C> {
  /** the consensus definition (schemas, model, aggregator) */
  definition: TaskTypeDefinition<Spec, A, Model, C>;
  /** how its model is stored as a space row and labeler rows */
  rows: ModelRows<Model>;
  /** whether its tasks are labeled on their text (TaskKind `needsText`; such a task without its text is not fitted) */
  needsText: boolean;
  /** the names (options, classes, entity types) an answer gives, each once */
  namesOf(answer: A): Iterable<string>;
  /** whether an answer matches a gold answer (both canonical) under the task's spec; absent: equal canonical JSON */
  goldMatch?(gold: A, answer: A, spec: Spec): boolean;
  /** the result of a reviewed answer (TaskKind `reviewed`) */
  reviewed(spec: Spec, answer: A): { posterior: Record<string, number>; consensus: C };
}

/** The answer of a stored value of a reserved type. */
export function parsed<A = AnswerBody>(value: string): A {
  return JSON.parse(value) as A;
}

/** The fewest further labels that could decide a task of a reserved type after `n` labels (at least 1). */
function typedClaimCap(task: KindTask, n: number): number {
  if (task.gold) return GOLD_CLAIM_CAP;
  return Math.max(1, Math.min(task.policy.maxLabels - n, labelsToDecide(task.policy) - n));
}

/** The `QualityTaskType` of a reserved type from its module (everything reserved types do alike). */
export function typedTaskType<Spec, A, Model, C>(module: TypedTaskModule<Spec, A, Model, C>): QualityTaskType {
  const def = module.definition;
  const type = def.type;
  const specOf = (spec: AnyLabelSpec) => spec as unknown as Spec;

  /** Answers per option, class or entity type: each answer counts once for each name it gives. */
  const countNames = (spec: AnyLabelSpec, answers: readonly LabeledAnswer<A>[]): Record<string, number> => {
    const counts: Record<string, number> = Object.fromEntries(choicesOf(type, spec).map((o) => [o, 0]));
    for (const a of answers) for (const name of new Set(module.namesOf(a.answer))) counts[name] = (counts[name] ?? 0) + 1;
    return counts;
  };
  const goldCorrect = (spec: AnyLabelSpec, gold: string, value: string) =>
    module.goldMatch ? module.goldMatch(parsed<A>(gold), parsed<A>(value), specOf(spec)) : gold === value;
  const scoringModel = (spec: AnyLabelSpec, space: unknown, labelers: readonly StoredLabelerRow[]): Model => {
    if (space === null || space === undefined) return def.emptyModel(specOf(spec));
    return module.rows.join(
      spec,
      space as StoredTypedSpace,
      labelers.flatMap((l) => (l.params ? [l.params as StoredTypedLabeler] : [])),
    );
  };

  return {
    name: type,
    definition: def,
    needsText: module.needsText,
    readAnswer(spec, body, item) {
      const issues = answerIssues(type, spec, body, item);
      if (issues.length > 0) return { issues };
      const answer = def.canonicalAnswer(specOf(spec), body as A) as AnswerBody;
      return { value: canonicalJson(answer), answer };
    },
    scoringModel,
    decide(spec, task, votes, model, item) {
      // each stored answer parsed once, for the counts and the aggregator
      const answers: LabeledAnswer<A>[] = votes.map((v) => ({ labelerId: v.labelerId, answer: parsed<A>(v.value) }));
      const counts = countNames(spec, answers);
      const n = votes.length;
      const { policy } = task;
      if (task.gold) return { done: false, counts, labelsNeeded: 1, claimCap: GOLD_CLAIM_CAP };
      if (n > policy.maxLabels) throw new Error(`${n} votes exceed max_labels ${policy.maxLabels}`);
      if (n === 0) return { done: false, counts, labelsNeeded: policy.maxLabels, claimCap: typedClaimCap(task, 0) };
      const pending = (d: { labelsNeeded: number }) => ({
        done: false as const,
        counts,
        labelsNeeded: Math.max(1, d.labelsNeeded),
        claimCap: typedClaimCap(task, n),
      });
      // undecidable yet without the consensus: the same decision decideParts gives on the full parts
      if (policy.kind === "confidence" && n < policy.minLabels && n < policy.maxLabels)
        return pending({ labelsNeeded: policy.maxLabels - n });
      if (policy.kind === "threshold" && def.countedParts) {
        const early = decideParts(policy, n, def.countedParts(specOf(spec), answers));
        if (!early.settled) return pending(early);
      }
      const r = def.aggregate(specOf(spec), model as Model, answers, item);
      const d = decideParts(policy, n, r.parts);
      if (!d.settled) return pending(d);
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
    goldCorrect: (spec, gold, value) => goldCorrect(spec, gold, value),
    initialClaimCap: (_spec, task) => typedClaimCap(task, 0),
    reviewed: (spec, value) => module.reviewed(specOf(spec), parsed<A>(value)),
    labelCounts: (spec, votes) =>
      countNames(
        spec,
        votes.map((v) => ({ labelerId: v.labelerId, answer: parsed<A>(v.value) })),
      ),
    labelerSummary: (_space, params) => ({ labels: (params as StoredTypedLabeler | null)?.labels ?? 0, estimatedAccuracy: null }),
    /**
     * The refit of a space: `definition.fit` over every task (gold tasks with their gold answer; a task of a type
     * labeled on its text only with its text), warm-started from the stored model; then the calibration on its
     * gold tasks (each gold task's answers, at most `max_labels`, aggregated with the new model: its task
     * confidence against "the consensus matches the gold answer", `goldMatch`), in CALIBRATION_BINS bins.
     */
    refit(input, now) {
      const started = now();
      const spec = specOf(input.spec);
      const previous =
        input.space === null || input.space === undefined ? undefined : scoringModel(input.spec, input.space, input.labelers);
      const tasks: TypedTask<A>[] = input.tasks.map((t) => ({
        id: t.id,
        answers: t.answers.map((a) => ({ labelerId: a.labelerId, answer: parsed<A>(a.value) })),
        gold: t.gold === null ? undefined : parsed<A>(t.gold),
        item: t.text === null ? undefined : { text: t.text },
      }));
      const model = def.fit(
        spec,
        tasks.filter((t) => !module.needsText || t.item !== undefined),
        previous,
      );
      const { space, labelers } = module.rows.split(model);
      const bins = emptyBins();
      for (const t of input.tasks) {
        if (t.gold === null || t.answers.length === 0 || (module.needsText && t.text === null)) continue;
        const votes = t.answers.slice(0, input.policy.maxLabels);
        const r = def.aggregate(
          spec,
          model,
          votes.map((a) => ({ labelerId: a.labelerId, answer: parsed<A>(a.value) })),
          t.text === null ? undefined : { text: t.text },
        );
        const bin = bins[calibrationBinOf(r.confidence)] as CalibrationBin;
        bin.tasks += 1;
        bin.sumConfidence += r.confidence;
        if (goldCorrect(input.spec, t.gold, r.consensusLabel)) bin.correct += 1;
      }
      // a labeler's `labels` is its answers in the space: one per task it answered (a sub-space counts finer
      // units, e.g. a span answer is a label of every token of its text)
      const answers = new Map<string, number>();
      for (const t of input.tasks) for (const a of t.answers) answers.set(a.labelerId, (answers.get(a.labelerId) ?? 0) + 1);
      return {
        space,
        labelers: labelers.map((l) => ({ labelerId: l.labelerId, params: { ...l, labels: answers.get(l.labelerId) ?? 0 } })),
        calibrationBins: bins,
        fitMs: now() - started,
        outcome: "cold",
        failing: [],
      };
    },
  };
}
