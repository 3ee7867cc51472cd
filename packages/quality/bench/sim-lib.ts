/**
 * In-process model of the `pnpm replay` protocol (packages/quality/bench/simulate.ts prints its runs).
 *
 * Protocol (docs/notes/quality.md §Simulator):
 * - one label space for the dataset, options = its distinct labels;
 * - a seeded share S of the items with gold become gold tasks (the replay's rule: SHA-256 of "N:item"), fed
 *   first: each gold task receives all of its recorded answers;
 * - every other item is a task with the policy; its recorded answers are fed in recorded order, items 32 at a
 *   time in dataset order (a pool: when an item finishes the next one starts; the pool is served round-robin,
 *   one answer per item per round), until the task is decided;
 * - each label is decided with the CURRENT model; the model is refitted (warm start) after every R accepted
 *   labels (gold answers included), or (R = 0, "system") at the service's cadence: a sweep each second of labels
 *   (`labelsPerSecond`), refitting when the new labels reach 5% of the last fit's;
 * - accuracy on the non-gold items with gold; label_share = accepted labels / rows of answers.csv.
 */

import { expectedCalibrationError, pickGoldItems } from "@labelgate/replay";
import {
  calibrationSummary,
  confidenceClaimCap,
  type Decision,
  decideConfidence,
  decideThreshold,
  emptySpace,
  expectedGainOfOneLabel,
  fit,
  LabelTable,
  leadingOption,
  type QualityModel,
  refit,
  scoreTask,
  type Vote,
} from "../src/index";
import type { Dataset, DatasetItem } from "./dataset";

/** REFIT_NEW_LABEL_SHARE of packages/store/src/spaces.ts (the store package is not a dependency of the engine). */
export const SYSTEM_REFIT_SHARE = 0.05;

export type SimPolicy = "confidence" | "threshold" | "onecoin";

export interface SimConfig {
  /** confidence: the DS engine with the confidence policy; threshold: DS engine, threshold policy, no gold; onecoin: today's worker */
  policy: SimPolicy;
  /** T of the confidence policy */
  confidenceTarget: number;
  /** share S of the items with gold that become gold tasks (confidence policy only) */
  goldShare: number;
  /** seed N of the gold selection */
  seed: number;
  /**
   * refit after every R accepted labels; 0 = the service's cadence (packages/store/src/spaces.ts `due`): a refit
   * sweep every REFIT_INTERVAL_MS (1 s, i.e. every `labelsPerSecond` accepted labels), which refits when the new
   * labels reach REFIT_NEW_LABEL_SHARE (5%) of the labels of the last fit (at least 1)
   */
  refitEvery: number;
  /** labels per second of the replay (the sweep spacing of `refitEvery` = 0) */
  labelsPerSecond: number;
  /** items labeled at a time (32) */
  concurrency: number;
  /** consensus threshold of the threshold policies (3) */
  threshold: number;
  /** min_labels of the confidence policy (1) */
  minLabels: number;
  /** "refit" (the service's `refit`) or "unguarded" (a warm fit from the previous model, never checked: the engine before issue 27) */
  refitMode?: "refit" | "unguarded";
  /**
   * An extra stopping rule of the confidence policy, tried and not in the service (docs/notes/quality.md section 0):
   * an open task settles with its leader (as at max_labels) when one more label of a typical labeler would gain
   * less than `epsilon` in the probability of a right consensus (`expectedGainOfOneLabel`, "optimistic" = the
   * best outcome, "expected" = the mean), or ("futile") when no run of agreeing typical labels reaches T within
   * max_labels. Absent: the service's rule.
   */
  stopRule?: { kind: "optimistic" | "expected"; epsilon: number } | { kind: "futile" };
}

export const DEFAULT_SIM: SimConfig = {
  policy: "confidence",
  confidenceTarget: 0.95,
  goldShare: 0.05,
  seed: 1,
  refitEvery: 200,
  labelsPerSecond: 180,
  concurrency: 32,
  threshold: 3,
  minLabels: 1,
};

export interface SimResult {
  dataset: string;
  policy: SimPolicy;
  target: number | null;
  gold_share: number;
  seed: number;
  refit_every: number;
  tasks: number;
  gold_tasks: number;
  accuracy: number;
  label_share: number;
  labels_per_task: number;
  ece: number;
  mean_confidence: number;
  resolutions: Record<string, number>;
  /** per resolution: tasks with gold, accuracy and mean confidence */
  by_resolution: Record<string, { n: number; accuracy: number; confidence: number; labels: number }>;
  /** accuracy and mean confidence of the first, second and last third of the settled tasks (settlement order) */
  by_third: { n: number; accuracy: number; confidence: number; labels: number }[];
  refits: number;
  /** refits whose fit from majority vote was not identified and the warm fit from the previous model was kept */
  warm_refits: number;
  /** refits refused because no fit was identified (the previous model kept) */
  refused: number;
  final_temperature: number;
  final_hard_share: number;
  final_uninformative_share: number;
  final_calibration: string;
  fit_ms_mean: number;
  fit_ms_max: number;
}

/**
 * The gold tasks of a run: round(S * items with gold) items, the first in the order of SHA-256(`${seed}:${item}`)
 * (hex, ascending): the rule of `pnpm replay` (@labelgate/replay `pickGoldItems`), so a seed picks the same
 * gold items in the simulator and in a real replay. (Until 2026-11-24 the simulator shuffled with xoroshiro128+:
 * seed 1 shared 2 of its 40 dog gold items with the replay's seed 1.)
 */
export function pickGold(ds: Dataset, share: number, seed: number): Set<string> {
  // the replay's own rule (@labelgate/replay), so both pick the same gold items for a seed
  const gold = new Map(ds.items.filter((it) => it.gold !== undefined && it.gold >= 0).map((it) => [it.id, String(it.gold)]));
  return pickGoldItems(
    ds.items.map((it) => it.id),
    gold,
    share,
    seed,
  );
}

// --- today's one-coin worker (services/consensus-worker/src/consensus.ts, reproduced for the baseline) ---

interface OneCoinRecord {
  settled: number;
  agreed: number;
}

function oneCoinPosterior(
  k: number,
  votes: readonly { worker: string; option: number }[],
  records: ReadonlyMap<string, OneCoinRecord>,
): number[] {
  const logScore = new Array<number>(k).fill(0);
  for (const v of votes) {
    const r = records.get(v.worker) ?? { settled: 0, agreed: 0 };
    const q = Math.min(0.999, Math.max(0.001, (4 + r.agreed) / (5 + r.settled)));
    for (let c = 0; c < k; c++) logScore[c] = (logScore[c] as number) + Math.log(v.option === c ? q : (1 - q) / (k - 1));
  }
  const max = Math.max(...logScore);
  const w = logScore.map((s) => Math.exp(s - max));
  const total = w.reduce((a, b) => a + b, 0);
  return w.map((x) => x / total);
}

// --- the run ---

interface ItemState {
  item: DatasetItem;
  pos: number;
  maxLabels: number;
  threshold: number;
  votes: { worker: string; option: number }[];
  counts: number[];
}

interface Outcome {
  item: DatasetItem;
  option: number;
  confidence: number;
  resolution: string;
  labels: number;
}

/** Observers of a run (diagnostics). */
export interface SimHooks {
  /** called after every refit with the label table and the new model */
  onRefit?: (table: LabelTable, model: QualityModel) => void;
}

/** Runs the replay protocol in-process and returns its figures. */
export function simulate(ds: Dataset, config: SimConfig, hooks: SimHooks = {}): SimResult {
  const k = ds.options.length;
  const goldIds = config.policy === "confidence" ? pickGold(ds, config.goldShare, config.seed) : new Set<string>();
  const table = new LabelTable(k);
  let model: QualityModel = { space: emptySpace(k), labelers: new Map() };
  let accepted = 0;
  let sinceRefit = 0;
  let refits = 0;
  const refitOutcomes = { warm: 0, refused: 0 };
  const fitTimes: number[] = [];
  const useEngine = config.policy !== "onecoin";
  const oneCoin = new Map<string, OneCoinRecord>();

  const accept = (taskId: string, worker: string, option: number) => {
    table.add(taskId, worker, option);
    accepted++;
    sinceRefit++;
  };
  let fittedLabels = 0;
  const maybeRefit = () => {
    if (!useEngine) return;
    if (config.refitEvery > 0 && sinceRefit < config.refitEvery) return;
    if (config.refitEvery <= 0) {
      // a sweep every second of labels; due when the new labels reach 5% of the last fit's (at least 1)
      if (sinceRefit === 0 || accepted % Math.max(1, Math.round(config.labelsPerSecond)) !== 0) return;
      if (sinceRefit < Math.max(1, Math.ceil(fittedLabels * SYSTEM_REFIT_SHARE))) return;
    }
    fittedLabels = accepted;
    const t0 = performance.now();
    const previous = model.space.version > 0 ? model : undefined;
    const result =
      config.refitMode === "unguarded"
        ? { outcome: "cold" as const, model: fit(table, previous ? { previous } : {}).model }
        : refit(table, previous);
    model = result.model;
    if (result.outcome !== "cold") refitOutcomes[result.outcome]++;
    hooks.onRefit?.(table, model);
    fitTimes.push(performance.now() - t0);
    refits++;
    sinceRefit = 0;
  };

  // Gold tasks first: all of their answers.
  for (const item of ds.items) {
    if (!goldIds.has(item.id)) continue;
    table.setGold(item.id, item.gold as number);
    for (const a of item.answers.slice(0, 50)) {
      accept(item.id, a.worker, a.option);
      maybeRefit();
    }
  }

  const outcomes: Outcome[] = [];
  const decide = (st: ItemState): Decision => {
    if (config.policy === "onecoin") {
      const post = oneCoinPosterior(k, st.votes, oneCoin);
      return decideThreshold({ consensusThreshold: st.threshold, maxLabels: st.maxLabels }, st.counts, post);
    }
    const votes: Vote[] = st.votes.map((v) => ({ labeler: model.labelers.get(v.worker), option: v.option }));
    const { posterior } = scoreTask(model.space, votes);
    if (config.policy === "threshold") {
      return decideThreshold({ consensusThreshold: st.threshold, maxLabels: st.maxLabels }, st.counts, posterior);
    }
    const policy = { confidenceTarget: config.confidenceTarget, minLabels: config.minLabels, maxLabels: st.maxLabels };
    const d = decideConfidence(policy, st.counts, posterior);
    const rule = config.stopRule;
    if (!d.settled && rule) {
      const stop =
        rule.kind === "futile"
          ? confidenceClaimCap(model.space, votes, { ...policy, maxLabels: st.maxLabels + 1 }) > st.maxLabels - votes.length
          : expectedGainOfOneLabel(model.space, votes)[rule.kind] < rule.epsilon;
      if (stop) {
        const option = leadingOption(posterior, st.counts);
        return { settled: true, option, confidence: posterior[option] as number, resolution: "max_labels" };
      }
    }
    return d;
  };
  const startItem = (item: DatasetItem): ItemState => {
    const n = Math.min(50, item.answers.length);
    const full = 2 * config.threshold + 1;
    const maxLabels = config.policy === "confidence" ? n : Math.min(full, n);
    return { item, pos: 0, maxLabels, threshold: Math.min(config.threshold, maxLabels), votes: [], counts: new Array<number>(k).fill(0) };
  };
  const step = (st: ItemState): boolean => {
    const a = st.item.answers[st.pos++];
    if (!a) throw new Error(`item ${st.item.id} ran out of answers undecided`);
    accept(st.item.id, a.worker, a.option);
    st.votes.push(a);
    st.counts[a.option] = (st.counts[a.option] as number) + 1;
    const d = decide(st);
    maybeRefit();
    if (!d.settled) return false;
    outcomes.push({ item: st.item, option: d.option, confidence: d.confidence, resolution: d.resolution, labels: st.votes.length });
    if (config.policy === "onecoin") {
      for (const v of st.votes) {
        const r = oneCoin.get(v.worker) ?? { settled: 0, agreed: 0 };
        r.settled++;
        if (v.option === d.option) r.agreed++;
        oneCoin.set(v.worker, r);
      }
    }
    return true;
  };

  const queue = ds.items.filter((it) => !goldIds.has(it.id));
  let next = 0;
  const slots: (ItemState | undefined)[] = [];
  while (slots.length < config.concurrency && next < queue.length) slots.push(startItem(queue[next++] as DatasetItem));
  let active = slots.length;
  while (active > 0) {
    for (let s = 0; s < slots.length; s++) {
      const st = slots[s];
      if (!st) continue;
      if (step(st)) {
        if (next < queue.length) slots[s] = startItem(queue[next++] as DatasetItem);
        else {
          slots[s] = undefined;
          active--;
        }
      }
    }
  }

  const scored = outcomes.filter((o) => o.item.gold !== undefined);
  const correct = scored.map((o) => o.option === o.item.gold);
  const resolutions: Record<string, number> = {};
  for (const o of outcomes) resolutions[o.resolution] = (resolutions[o.resolution] ?? 0) + 1;
  const r4 = (v: number) => Math.round(v * 1e4) / 1e4;
  return {
    dataset: ds.name,
    policy: config.policy,
    target: config.policy === "confidence" ? config.confidenceTarget : null,
    gold_share: config.policy === "confidence" ? config.goldShare : 0,
    seed: config.seed,
    refit_every: config.refitEvery,
    tasks: outcomes.length,
    gold_tasks: goldIds.size,
    accuracy: r4(correct.filter(Boolean).length / Math.max(1, correct.length)),
    label_share: r4(accepted / ds.answerRows),
    labels_per_task: r4(outcomes.reduce((s, o) => s + o.labels, 0) / Math.max(1, outcomes.length)),
    ece: r4(expectedCalibrationError(scored.map((o, i) => ({ confidence: o.confidence, correct: correct[i] === true }))).ece ?? 0),
    mean_confidence: r4(scored.reduce((s, o) => s + o.confidence, 0) / Math.max(1, scored.length)),
    resolutions,
    by_resolution: Object.fromEntries(Object.keys(resolutions).map((res) => [res, summarize(scored.filter((o) => o.resolution === res))])),
    by_third: [0, 1, 2].map((i) => summarize(scored.slice(Math.floor((i * scored.length) / 3), Math.floor(((i + 1) * scored.length) / 3)))),
    refits,
    warm_refits: refitOutcomes.warm,
    refused: refitOutcomes.refused,
    final_temperature: r4(calibrationSummary(model.space.calibration).temperature),
    final_hard_share: r4(calibrationSummary(model.space.calibration).hardShare),
    final_uninformative_share: r4(calibrationSummary(model.space.calibration).uninformativeShare),
    final_calibration: model.space.calibration.source,
    fit_ms_mean: Math.round(fitTimes.reduce((a, b) => a + b, 0) / Math.max(1, fitTimes.length)),
    fit_ms_max: Math.round(Math.max(0, ...fitTimes)),
  };
}

function summarize(list: readonly Outcome[]): { n: number; accuracy: number; confidence: number; labels: number } {
  const n = list.length;
  const r4 = (v: number) => Math.round(v * 1e4) / 1e4;
  return {
    n,
    accuracy: r4(list.filter((o) => o.option === o.item.gold).length / Math.max(1, n)),
    confidence: r4(list.reduce((s, o) => s + o.confidence, 0) / Math.max(1, n)),
    labels: r4(list.reduce((s, o) => s + o.labels, 0) / Math.max(1, n)),
  };
}

/** Offline references on all labels: majority vote (ties earn 1/k) and Dawid-Skene (our EM, no gold). */
export function references(ds: Dataset): { majority_vote: number; dawid_skene: number } {
  const k = ds.options.length;
  const table = new LabelTable(k);
  for (const it of ds.items) for (const a of it.answers) table.add(it.id, a.worker, a.option);
  const { taskPosteriors } = fit(table, { calibrate: false });
  let mv = 0;
  let dsCorrect = 0;
  let n = 0;
  for (const it of ds.items) {
    if (it.gold === undefined) continue;
    n++;
    const counts = new Array<number>(k).fill(0);
    for (const a of it.answers) counts[a.option] = (counts[a.option] as number) + 1;
    const top = Math.max(...counts);
    const tied = counts.flatMap((c, i) => (c === top ? [i] : []));
    if (tied.includes(it.gold)) mv += 1 / tied.length;
    const t = table.taskIndexOf(it.id) as number;
    let best = 0;
    for (let c = 1; c < k; c++) if ((taskPosteriors[t * k + c] as number) > (taskPosteriors[t * k + best] as number)) best = c;
    if (best === it.gold) dsCorrect++;
  }
  return { majority_vote: Math.round((mv / n) * 1e4) / 1e4, dawid_skene: Math.round((dsCorrect / n) * 1e4) / 1e4 };
}

/**
 * Whether a data set's recorded order looks like a sort rather than an arrival order: of the items with two or
 * more answers, how many have them in ascending worker-id order (numeric ids compared as numbers). Random
 * arrival orders put about 1 / answers! of the items there; a file sorted by worker within each item puts all of
 * them (web: 2,665 of 2,665). Then "the first k answers" of the replay and of the uniform overlap mean "the k
 * lowest worker ids" (docs/notes/quality.md section 0; `shuffle-answers.ts` writes a copy in a random order).
 */
export function workerSortedItems(ds: Dataset): { sorted: number; items: number } {
  const compare = (a: string, b: string) => {
    const x = Number(a);
    const y = Number(b);
    return Number.isFinite(x) && Number.isFinite(y) ? x - y : a < b ? -1 : a > b ? 1 : 0;
  };
  let sorted = 0;
  let items = 0;
  for (const it of ds.items) {
    if (it.answers.length < 2) continue;
    items++;
    if (it.answers.every((a, i) => i === 0 || compare((it.answers[i - 1] as { worker: string }).worker, a.worker) <= 0)) sorted++;
  }
  return { sorted, items };
}

/** One point of the uniform-overlap curve: every item's first k answers, aggregated offline. */
export interface OverlapPoint {
  k: number;
  /** labels used (sum over items of min(k, answers)) / rows of answers.csv */
  share: number;
  /** majority vote on the first k answers (ties earn 1/ties) */
  majorityVote: number;
  /** Dawid-Skene (our EM, no gold, not calibrated) on the first k answers */
  dawidSkene: number;
  /** max(majorityVote, dawidSkene): the best fixed-overlap aggregator at this k */
  best: number;
}

/**
 * The uniform-overlap baseline (issue 27): for k = 1 .. the most answers of an item, majority vote and
 * Dawid-Skene fitted offline on the first k answers of every item, scored on the items with gold that are not in
 * `exclude` (the run's gold tasks). What a customer gets for the same labels with a fixed overlap.
 */
export function uniformOverlap(ds: Dataset, exclude: ReadonlySet<string> = new Set()): OverlapPoint[] {
  const k = ds.options.length;
  const maxK = Math.min(50, Math.max(...ds.items.map((it) => it.answers.length)));
  const out: OverlapPoint[] = [];
  for (let depth = 1; depth <= maxK; depth++) {
    const table = new LabelTable(k);
    let used = 0;
    for (const it of ds.items) {
      for (const a of it.answers.slice(0, depth)) table.add(it.id, a.worker, a.option);
      used += Math.min(depth, it.answers.length);
    }
    const { taskPosteriors } = fit(table, { calibrate: false });
    let mv = 0;
    let dsCorrect = 0;
    let n = 0;
    for (const it of ds.items) {
      if (it.gold === undefined || exclude.has(it.id)) continue;
      n++;
      const counts = new Array<number>(k).fill(0);
      for (const a of it.answers.slice(0, depth)) counts[a.option] = (counts[a.option] as number) + 1;
      const top = Math.max(...counts);
      const tied = counts.flatMap((c, i) => (c === top ? [i] : []));
      if (tied.includes(it.gold)) mv += 1 / tied.length;
      const t = table.taskIndexOf(it.id);
      if (t === undefined) continue;
      let best = 0;
      for (let c = 1; c < k; c++) if ((taskPosteriors[t * k + c] as number) > (taskPosteriors[t * k + best] as number)) best = c;
      if (best === it.gold) dsCorrect++;
    }
    const majorityVote = mv / Math.max(1, n);
    const dawidSkene = dsCorrect / Math.max(1, n);
    out.push({ k: depth, share: used / ds.answerRows, majorityVote, dawidSkene, best: Math.max(majorityVote, dawidSkene) });
    if (used >= ds.answerRows) break;
  }
  return out;
}

/** The uniform-overlap baseline's accuracy at a label share, linearly interpolated between neighbouring k (0 labels: 1/K). */
export function overlapAccuracyAt(curve: readonly OverlapPoint[], share: number, k: number): number {
  let prev = { share: 0, best: 1 / k };
  for (const p of curve) {
    if (p.share >= share) {
      const span = p.share - prev.share;
      return span <= 0 ? p.best : prev.best + ((share - prev.share) / span) * (p.best - prev.best);
    }
    prev = p;
  }
  return prev.best;
}
