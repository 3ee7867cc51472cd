/**
 * Fitting the label-quality model of one label space: Dawid-Skene EM with hierarchical Dirichlet priors.
 *
 * - Dawid & Skene 1979 ("Maximum likelihood estimation of observer error-rates using the EM algorithm"): E-step
 *   = posterior of each task's true option given its labels; M-step = confusion rows and class prior from the
 *   expected counts. Initialization (cold) from vote proportions (majority vote), as in the paper.
 * - MAP / posterior-mean M-step with Dirichlet priors on each confusion row and on the class prior (Raykar et al.
 *   2010, "Learning from crowds", JMLR 11, §2.6): theta_i[k][l] = (n_i[k][l] + alpha_k[l]) / (N_i[k] + alpha0_k),
 *   classPrior_k = (c_k + 1) / (C + K) (Dirichlet(1..1), i.e. Laplace smoothing).
 * - Hierarchical: alpha_k (the population of the space's labelers for true option k) is estimated from the
 *   space's labels by maximizing the Dirichlet-multinomial (Polya) likelihood of the labelers' expected counts,
 *   with Minka's fixed-point iteration (Minka 2000, "Estimating a Dirichlet distribution", §3 eq. (55)):
 *     alpha_l <- alpha_l * sum_i [psi(n_il + alpha_l) - psi(alpha_l)] / sum_i [psi(N_i + alpha0) - psi(alpha0)].
 *   Both the population mean (what a new labeler is assumed to be) and its precision alpha0 (how many labels of
 *   its own a labeler needs before they outweigh the population) come from the data: heterogeneous crowds get
 *   little shrinkage, homogeneous crowds a lot. The hyperprior row (`defaultPopulation`) enters as one pseudo-
 *   labeler, which only matters while a space has few labelers. The precision is shared by the rows (see
 *   `updatePopulation`) and kept in [MIN_PRECISION, MAX_PRECISION].
 * - Gold tasks enter as known truths: their posterior is fixed to the gold option in every E-step.
 * - Warm start (`previous`): the E-step starts from the previous model's parameters, so a refit after a few new
 *   labels takes a few iterations; at convergence it reaches the cold fit's fixed point (tested).
 * - After EM, the calibration temperature is fitted (calibration.ts).
 *
 * Deterministic: every loop runs in the table's index order, no randomness.
 */
import digamma from "@stdlib/math-base-special-digamma";
import { CalibrationSamples, calibrationWithReviews, fitPrequential, PRIOR_HARD_SHARE } from "./calibration";
import {
  type Calibration,
  defaultPopulation,
  emptySpace,
  HYPERPRIOR_OFF_DIAGONAL,
  identityCalibration,
  type LabelerParams,
  type QualityModel,
  type SpaceParams,
} from "./model";
import type { LabelTable } from "./table";

/** Smallest population precision alpha0 (a single label never outweighs the population entirely). */
export const MIN_PRECISION = 1;
/** Largest population precision alpha0 (numerical bound; 10,000 labels before a labeler's own data weigh half). */
export const MAX_PRECISION = 10_000;
/** Gold tasks (with labels) needed before the calibration is fitted on gold (the posterior over maps stays wide with few). */
export const MIN_GOLD_TASKS = 5;
/** Tasks with at least two labels needed before the temperature is fitted prequentially. */
export const MIN_PREQUENTIAL_TASKS = 30;
/** At most this many tasks enter the prequential calibration (an even stride through the tasks). */
export const MAX_CALIBRATION_TASKS = 5000;
/**
 * At most this many gold tasks enter the gold calibration (an even stride): the posterior over the calibration
 * grid has concentrated long before, and the grid's cost is linear in the samples.
 */
export const MAX_GOLD_CALIBRATION_TASKS = 1000;

/** Options of `fit`. */
export interface FitOptions {
  /** model to warm-start from (same K); its labelers are matched by id */
  previous?: QualityModel;
  /** EM iteration limit (default 500) */
  maxIterations?: number;
  /** convergence: largest change of any task's posterior between iterations (default 1e-4; the argmax of dog, rte and web is the same from 1e-3 to 1e-6) */
  tolerance?: number;
  /** fit the calibration temperature (default true); false keeps the previous temperature (or 1) */
  calibrate?: boolean;
}

/** Result of `fit`. */
export interface FitResult {
  model: QualityModel;
  /** EM posterior (uncalibrated) of each task, T x K, row t = the table's task index t */
  taskPosteriors: Float64Array;
  /** whether the fit is identified (see `Identification`) */
  identification: Identification;
}

/**
 * Whether a fit is on the side of Dawid-Skene's label-switching symmetry that its anchors choose (issue 27).
 * The likelihood is unchanged when the options of every confusion matrix and of the class prior are permuted
 * together, and EM can settle on a fixed point whose option k stands for something else: the inverted solution,
 * wrong on almost every task while confident, or a degenerate one where an option collects tasks the crowd calls
 * by another name. The anchor is the assumption of Dawid and Skene's majority-vote start: labelers are better
 * than chance on average, on every option. With soft counts over the fit's task posteriors,
 *   lift_k = P(label k | option k) / P(label k | another option)
 * must exceed 1 for every option k that holds at least one task's worth of posterior mass. Gold anchors an
 * option instead where there is gold: an option whose gold tasks (at least MIN_GOLD_PER_OPTION of them) show
 * the labelers at or below chance on it (an honest, systematic confusion) passes with any lift.
 */
export interface Identification {
  ok: boolean;
  /** lift_k of each option (NaN for an option without posterior mass) */
  lift: number[];
  /** options whose lift is <= 1 and that gold does not anchor */
  failing: number[];
  /** labeled gold tasks of the fit */
  goldTasks: number;
}

/** Gold tasks of an option needed before gold, not the labelers' lift, decides that option's identification. */
export const MIN_GOLD_PER_OPTION = 3;

const INNER_POPULATION_STEPS = 1;

/**
 * Fits the model of a label space to every label of `table`.
 * @throws RangeError when `previous` has another number of options than the table
 */
export function fit(table: LabelTable, options: FitOptions = {}): FitResult {
  const K = table.k;
  const KK = K * K;
  const T = table.taskCount;
  const L = table.labelerCount;
  const N = table.length;
  const maxIterations = options.maxIterations ?? 500;
  const tolerance = options.tolerance ?? 1e-4;
  const previous = options.previous;
  if (previous && previous.space.k !== K) throw new RangeError(`previous model has ${previous.space.k} options, the table ${K}`);
  const cols = table.columns();

  // Labels grouped by task (CSR), each task's labels in the order they were added.
  const start = new Int32Array(T + 1);
  for (let n = 0; n < N; n++) {
    const t = (cols.task[n] as number) + 1;
    start[t] = (start[t] as number) + 1;
  }
  for (let t = 0; t < T; t++) start[t + 1] = (start[t + 1] as number) + (start[t] as number);
  const fill = start.slice(0, T);
  const labs = new Int32Array(N);
  const opts = new Int32Array(N);
  for (let n = 0; n < N; n++) {
    const t = cols.task[n] as number;
    const p = fill[t] as number;
    fill[t] = p + 1;
    labs[p] = cols.labeler[n] as number;
    opts[p] = cols.option[n] as number;
  }
  const gold = cols.gold;
  const reviewed = cols.reviewed;
  let activeTasks = 0;
  let goldTasks = 0;
  let goldAnswers = 0;
  for (let t = 0; t < T; t++) {
    const n = (start[t + 1] as number) - (start[t] as number);
    if (n > 0 || (gold[t] as number) >= 0) activeTasks++;
    if ((gold[t] as number) >= 0) {
      goldTasks++;
      goldAnswers += n;
    }
  }

  const q = new Float64Array(T * K);
  // counts and logTheta are option-major per labeler: [i][l][k], so a label's K values are contiguous
  const counts = new Float64Array(L * KK);
  const rowTotal = new Float64Array(L * K);
  const logTheta = new Float64Array(L * KK);
  const alpha = new Float64Array(KK);
  const hyper = new Float64Array(KK);
  const logPi = new Float64Array(K);
  const classCount = new Float64Array(K);
  const hyperRows = defaultPopulation(K);
  for (let k = 0; k < K; k++) for (let l = 0; l < K; l++) hyper[k * K + l] = (hyperRows[k] as number[])[l] as number;

  const state: EmState = {
    K,
    T,
    L,
    start,
    labs,
    opts,
    gold,
    reviewed,
    q,
    counts,
    rowTotal,
    logTheta,
    alpha,
    logPi,
    classCount,
    activeTasks,
    errorPrecision: previous?.space.errorPrecision ?? HYPERPRIOR_OFF_DIAGONAL,
  };

  let iterations = 0;
  let converged = false;
  let logLikelihood = 0;
  if (previous) {
    loadPrevious(state, previous, table.labelerIds);
    const e = eStep(state);
    logLikelihood = e.logLikelihood;
  } else {
    initFromVotes(state);
    alpha.set(hyper);
  }
  while (iterations < maxIterations) {
    mStep(state, hyper);
    const e = eStep(state);
    iterations++;
    logLikelihood = e.logLikelihood;
    if (e.maxDelta < tolerance) {
      converged = true;
      break;
    }
  }
  // Final M-step so that the stored parameters match the final posteriors.
  mStep(state, hyper);
  const identification = identify(state);

  const population: number[][] = [];
  for (let k = 0; k < K; k++) population.push(Array.from(alpha.subarray(k * K, k * K + K)));
  const classPrior = Array.from(logPi, (v) => Math.exp(v));

  const labelers = new Map<string, LabelerParams>();
  const labelCount = new Int32Array(L);
  const goldAnswerCount = new Int32Array(L);
  const goldCorrectCount = new Int32Array(L);
  for (let t = 0; t < T; t++) {
    const g = gold[t] as number;
    for (let p = start[t] as number; p < (start[t + 1] as number); p++) {
      const i = labs[p] as number;
      labelCount[i] = (labelCount[i] as number) + 1;
      if (g >= 0) {
        goldAnswerCount[i] = (goldAnswerCount[i] as number) + 1;
        if (opts[p] === g) goldCorrectCount[i] = (goldCorrectCount[i] as number) + 1;
      }
    }
  }
  for (let i = 0; i < L; i++) {
    const rows: number[][] = [];
    for (let k = 0; k < K; k++) rows.push(Array.from({ length: K }, (_, l) => counts[i * KK + l * K + k] as number));
    const id = table.labelerIds[i] as string;
    labelers.set(id, {
      labelerId: id,
      counts: rows,
      labels: labelCount[i] as number,
      goldAnswers: goldAnswerCount[i] as number,
      goldCorrect: goldCorrectCount[i] as number,
    });
  }

  const space: SpaceParams = {
    k: K,
    version: (previous?.space.version ?? 0) + 1,
    classPrior,
    population,
    errorPrecision: state.errorPrecision,
    calibration: previous?.space.calibration ?? identityCalibration(),
    counts: { labels: N, tasks: activeTasks, labelers: L, goldTasks, goldAnswers },
    iterations,
    converged,
    logLikelihood,
  };
  if (options.calibrate ?? true) space.calibration = calibrate(state);
  return { model: { space, labelers }, taskPosteriors: q, identification };
}

/** Result of `refit`. */
export interface RefitResult {
  /** the model to store: version = previous version + 1 */
  model: QualityModel;
  /**
   * "cold": the fit from majority vote, identified (the usual); "warm": the cold fit was not identified and the
   * fit from the previous model was; "refused": neither was, so the previous model is kept (the prior
   * `emptySpace` when there was none)
   */
  outcome: "cold" | "warm" | "refused";
  /** the identification of each fit tried */
  cold: Identification;
  warm?: Identification;
  /** EM posteriors of the kept fit (undefined when refused) */
  taskPosteriors?: Float64Array;
}

/**
 * Refits a label space (issue 27). The fit starts from majority vote every time (Dawid and Skene's start, whose
 * basin is the labelers' side), so the model depends on the labels only, never on the order and timing of the
 * refits that came before: a warm start from the previous model carried a wrong reading forward (an inverted
 * or degenerate fixed point that the new labels alone would not reach). A fit that is not identified
 * (`Identification`) is not stored: the fit from the previous model is tried instead, and when that is not
 * identified either the refit is refused and `previous` kept. The caller logs the outcome.
 * Cost: a cold fit of 100,000 labels takes about 1 s on the development machine (docs/benchmarks.md).
 * @throws RangeError when `previous` has another number of options than the table
 */
export function refit(table: LabelTable, previous: QualityModel | undefined, options: Omit<FitOptions, "previous"> = {}): RefitResult {
  const version = (previous?.space.version ?? 0) + 1;
  const cold = fit(table, options);
  cold.model.space.version = version;
  if (cold.identification.ok) return { model: cold.model, outcome: "cold", cold: cold.identification, taskPosteriors: cold.taskPosteriors };
  let warm: Identification | undefined;
  if (previous) {
    const result = fit(table, { ...options, previous });
    if (result.identification.ok) {
      return {
        model: result.model,
        outcome: "warm",
        cold: cold.identification,
        warm: result.identification,
        taskPosteriors: result.taskPosteriors,
      };
    }
    warm = result.identification;
  }
  const kept = previous ?? { space: emptySpace(table.k), labelers: new Map<string, LabelerParams>() };
  return { model: { space: { ...kept.space, version }, labelers: kept.labelers }, outcome: "refused", cold: cold.identification, warm };
}

interface EmState {
  K: number;
  T: number;
  L: number;
  start: Int32Array;
  labs: Int32Array;
  opts: Int32Array;
  gold: Int32Array;
  /** 1 = the task's truth is a review's (its gold entry is the reviewed answer) */
  reviewed: Uint8Array;
  q: Float64Array;
  counts: Float64Array;
  rowTotal: Float64Array;
  logTheta: Float64Array;
  alpha: Float64Array;
  logPi: Float64Array;
  classCount: Float64Array;
  activeTasks: number;
  /** precision of the wrong-answer distribution (Dirichlet-tree split, model.ts) */
  errorPrecision: number;
}

/** Cold start: each task's posterior = its vote proportions (gold tasks: their truth). */
function initFromVotes(s: EmState): void {
  const { K, T, start, opts, gold, q } = s;
  for (let t = 0; t < T; t++) {
    const base = t * K;
    const g = gold[t] as number;
    const a = start[t] as number;
    const b = start[t + 1] as number;
    if (g >= 0) {
      q[base + g] = 1;
      continue;
    }
    if (b === a) {
      for (let k = 0; k < K; k++) q[base + k] = 1 / K;
      continue;
    }
    for (let p = a; p < b; p++) q[base + (opts[p] as number)] = (q[base + (opts[p] as number)] as number) + 1 / (b - a);
  }
}

/** Warm start: parameters of the previous model (labelers unknown to it get the population mean). */
function loadPrevious(s: EmState, previous: QualityModel, labelerIds: readonly string[]): void {
  const { K, L, counts, rowTotal, alpha, logPi } = s;
  const KK = K * K;
  for (let k = 0; k < K; k++) {
    for (let l = 0; l < K; l++) alpha[k * K + l] = (previous.space.population[k] as number[])[l] as number;
    logPi[k] = Math.log(previous.space.classPrior[k] as number);
  }
  for (let i = 0; i < L; i++) {
    const prev = previous.labelers.get(labelerIds[i] as string);
    for (let k = 0; k < K; k++) {
      let total = 0;
      for (let l = 0; l < K; l++) {
        const v = prev ? ((prev.counts[k] as number[])[l] as number) : 0;
        counts[i * KK + l * K + k] = v;
        total += v;
      }
      rowTotal[i * K + k] = total;
    }
  }
  updateLogTheta(s);
}

/** The row sums of a K x K matrix stored row-major (alpha0_k = sum_l alpha_k[l] for the prior `alpha`). */
function rowSums(m: Float64Array, K: number): Float64Array {
  const sums = new Float64Array(K);
  for (let k = 0; k < K; k++) {
    let a = 0;
    for (let l = 0; l < K; l++) a += m[k * K + l] as number;
    sums[k] = a;
  }
  return sums;
}

function updateLogTheta(s: EmState): void {
  const { K, L, counts, rowTotal, logTheta, alpha, errorPrecision } = s;
  const KK = K * K;
  const alpha0 = rowSums(alpha, K);
  for (let i = 0; i < L; i++) {
    for (let k = 0; k < K; k++) {
      const total = rowTotal[i * K + k] as number;
      const nkk = counts[i * KK + k * K + k] as number;
      const akk = alpha[k * K + k] as number;
      const accuracy = (nkk + akk) / (total + (alpha0[k] as number));
      const logAccuracy = Math.log(accuracy);
      const logMiss = Math.log(1 - accuracy);
      const logErrDen = Math.log(Math.max(total - nkk, 0) + errorPrecision);
      const errScale = errorPrecision / ((alpha0[k] as number) - akk);
      for (let l = 0; l < K; l++) {
        const cell = i * KK + l * K + k;
        logTheta[cell] =
          l === k ? logAccuracy : logMiss + Math.log((counts[cell] as number) + errScale * (alpha[k * K + l] as number)) - logErrDen;
      }
    }
  }
}

function mStep(s: EmState, hyper: Float64Array): void {
  const { K, T, L, start, labs, opts, gold, q, counts, rowTotal, classCount, logPi } = s;
  const KK = K * K;
  counts.fill(0);
  classCount.fill(0);
  for (let t = 0; t < T; t++) {
    const a = start[t] as number;
    const b = start[t + 1] as number;
    if (a === b && (gold[t] as number) < 0) continue;
    const base = t * K;
    for (let k = 0; k < K; k++) classCount[k] = (classCount[k] as number) + (q[base + k] as number);
    for (let p = a; p < b; p++) {
      const cell = (labs[p] as number) * KK + (opts[p] as number) * K;
      for (let k = 0; k < K; k++) counts[cell + k] = (counts[cell + k] as number) + (q[base + k] as number);
    }
  }
  for (let i = 0; i < L; i++) {
    for (let k = 0; k < K; k++) {
      let total = 0;
      for (let l = 0; l < K; l++) total += counts[i * KK + l * K + k] as number;
      rowTotal[i * K + k] = total;
    }
  }
  updatePopulation(s, hyper);
  const denom = s.activeTasks + K;
  for (let k = 0; k < K; k++) logPi[k] = Math.log(((classCount[k] as number) + 1) / denom);
  updateLogTheta(s);
}

/**
 * Minka's fixed points for the Polya (Dirichlet-multinomial) likelihood of the labelers' rows (Minka 2000, §3):
 * per true option k a step of the full alpha_k update gives the row's mean m_k; then the precision s, shared by
 * every row (how much labelers differ is a property of the crowd, and the rows of rare options alone are too
 * thin to estimate it: a per-row precision ran away to 10^3-10^4 on the rarest option of `web`). s is the
 * Beta-binomial precision of the labelers' accuracy, each row (i, k) read as x = n_ikk right of N_ik:
 *   s <- s * sum_{i,k} [m (psi(x + s m) - psi(s m)) + (1 - m)(psi(N - x + s(1 - m)) - psi(s(1 - m)))]
 *          / sum_{i,k} [psi(N + s) - psi(s)],   m = m_kk;
 * with K = 20 options the full K-cell Polya precision saw no overdispersion in rows of ~2 labels and ran to
 * complete pooling (every labeler alike: worse than majority vote); the right/wrong split is as informative at
 * any K. alpha_k = s * m_k. The hyperprior row enters every sum as one pseudo-labeler.
 */
function updatePopulation(s: EmState, hyper: Float64Array): void {
  const { K, L, counts, rowTotal, alpha } = s;
  const KK = K * K;
  const num = new Float64Array(K);
  const psiAlpha = new Float64Array(KK);
  const mean = new Float64Array(KK);
  let hyperTotal = 0;
  for (let l = 0; l < K; l++) hyperTotal += hyper[l] as number;
  let precision = 0;
  for (let l = 0; l < K; l++) precision += alpha[l] as number;
  for (let step = 0; step < INNER_POPULATION_STEPS; step++) {
    // 1. the mean of each row: one step of the full fixed point at the current alpha, normalized
    const psiA0 = digamma(precision);
    for (let k = 0; k < K; k++) {
      const row = k * K;
      for (let l = 0; l < K; l++) psiAlpha[row + l] = digamma(alpha[row + l] as number);
      let den = digamma(hyperTotal + precision) - psiA0;
      for (let l = 0; l < K; l++) num[l] = digamma((hyper[row + l] as number) + (alpha[row + l] as number)) - (psiAlpha[row + l] as number);
      for (let i = 0; i < L; i++) {
        const total = rowTotal[i * K + k] as number;
        if (total < 1e-9) continue;
        den += digamma(total + precision) - psiA0;
        for (let l = 0; l < K; l++) {
          const n = counts[i * KK + l * K + k] as number;
          if (n > 1e-12) num[l] = (num[l] as number) + digamma(n + (alpha[row + l] as number)) - (psiAlpha[row + l] as number);
        }
      }
      let sum = 0;
      for (let l = 0; l < K; l++) {
        const v = Math.max(1e-9, ((alpha[row + l] as number) * (num[l] as number)) / den);
        mean[row + l] = v;
        sum += v;
      }
      for (let l = 0; l < K; l++) mean[row + l] = (mean[row + l] as number) / sum;
    }
    // 2. the shared precision at those means, from each row's correct/incorrect split (Beta-binomial)
    let top = 0;
    let bottom = 0;
    const psiS = digamma(precision);
    for (let k = 0; k < K; k++) {
      const row = k * K;
      const m = mean[row + k] as number;
      const psiA = digamma(precision * m);
      const psiB = digamma(precision * (1 - m));
      const split = (x: number, total: number) => {
        bottom += digamma(total + precision) - psiS;
        top += m * (digamma(x + precision * m) - psiA) + (1 - m) * (digamma(total - x + precision * (1 - m)) - psiB);
      };
      split(hyper[row + k] as number, hyperTotal);
      for (let i = 0; i < L; i++) {
        const total = rowTotal[i * K + k] as number;
        if (total < 1e-9) continue;
        split(Math.min(total, counts[i * KK + row + k] as number), total);
      }
    }
    precision = Math.min(MAX_PRECISION, Math.max(MIN_PRECISION, (precision * top) / bottom));
    for (let j = 0; j < KK; j++) alpha[j] = precision * (mean[j] as number);
    if (K > 2) updateErrorPrecision(s, hyper, mean);
  }
}

/**
 * Minka's precision fixed point for the Dirichlet of a labeler's wrong answers (the Dirichlet-tree split of
 * model.ts), shared by the rows: mean mErr_kl = m_kl / (1 - m_kk) over l != k, data = each row's error counts
 * (n_ikl, l != k; total E_ik = N_ik - n_ikk); the hyperprior row is one pseudo-labeler.
 */
function updateErrorPrecision(s: EmState, hyper: Float64Array, mean: Float64Array): void {
  const { K, L, counts, rowTotal } = s;
  const KK = K * K;
  const se = s.errorPrecision;
  const psiSe = digamma(se);
  const mErr = new Float64Array(K);
  const psiM = new Float64Array(K);
  let top = 0;
  let bottom = 0;
  for (let k = 0; k < K; k++) {
    const row = k * K;
    const miss = 1 - (mean[row + k] as number);
    let hyperErrors = 0;
    for (let l = 0; l < K; l++) {
      if (l === k) continue;
      mErr[l] = (mean[row + l] as number) / miss;
      psiM[l] = digamma(se * (mErr[l] as number));
      hyperErrors += hyper[row + l] as number;
    }
    bottom += digamma(hyperErrors + se) - psiSe;
    for (let l = 0; l < K; l++) {
      if (l !== k) top += (mErr[l] as number) * (digamma((hyper[row + l] as number) + se * (mErr[l] as number)) - (psiM[l] as number));
    }
    for (let i = 0; i < L; i++) {
      const errors = (rowTotal[i * K + k] as number) - (counts[i * KK + k * K + k] as number);
      if (errors < 1e-9) continue;
      bottom += digamma(errors + se) - psiSe;
      for (let l = 0; l < K; l++) {
        if (l === k) continue;
        const n = counts[i * KK + l * K + k] as number;
        if (n > 1e-12) top += (mErr[l] as number) * (digamma(n + se * (mErr[l] as number)) - (psiM[l] as number));
      }
    }
  }
  s.errorPrecision = Math.min(MAX_PRECISION, Math.max(MIN_PRECISION, (se * top) / bottom));
}

function eStep(s: EmState): { maxDelta: number; logLikelihood: number } {
  const { K, T, start, labs, opts, gold, q, logTheta, logPi } = s;
  const KK = K * K;
  const score = new Float64Array(K);
  let maxDelta = 0;
  let ll = 0;
  for (let t = 0; t < T; t++) {
    const a = start[t] as number;
    const b = start[t + 1] as number;
    const g = gold[t] as number;
    if (a === b && g < 0) continue;
    for (let k = 0; k < K; k++) score[k] = logPi[k] as number;
    for (let p = a; p < b; p++) {
      const cell = (labs[p] as number) * KK + (opts[p] as number) * K;
      for (let k = 0; k < K; k++) score[k] = (score[k] as number) + (logTheta[cell + k] as number);
    }
    const base = t * K;
    if (g >= 0) {
      ll += score[g] as number;
      for (let k = 0; k < K; k++) q[base + k] = k === g ? 1 : 0;
      continue;
    }
    let max = Number.NEGATIVE_INFINITY;
    for (let k = 0; k < K; k++) if ((score[k] as number) > max) max = score[k] as number;
    let z = 0;
    for (let k = 0; k < K; k++) {
      const e = Math.exp((score[k] as number) - max);
      score[k] = e;
      z += e;
    }
    ll += max + Math.log(z);
    for (let k = 0; k < K; k++) {
      const v = (score[k] as number) / z;
      const d = Math.abs(v - (q[base + k] as number));
      if (d > maxDelta) maxDelta = d;
      q[base + k] = v;
    }
  }
  return { maxDelta, logLikelihood: ll };
}

/** The identification check of a converged fit (see `Identification`). */
function identify(s: EmState): Identification {
  const { K, T, start, opts, gold, q } = s;
  // hit[k] = soft labels k on tasks of option k; mass[k] = soft labels on tasks of option k; labelsOf[l] = labels l
  const hit = new Float64Array(K);
  const mass = new Float64Array(K);
  const taskMass = new Float64Array(K);
  const labelsOf = new Float64Array(K);
  const goldHit = new Float64Array(K);
  const goldMass = new Float64Array(K);
  const goldLabelsOf = new Float64Array(K);
  const goldTasksOf = new Int32Array(K);
  let total = 0;
  let goldTotal = 0;
  let goldTasks = 0;
  for (let t = 0; t < T; t++) {
    const a = start[t] as number;
    const b = start[t + 1] as number;
    if (a === b) continue;
    const n = b - a;
    for (let k = 0; k < K; k++) {
      mass[k] = (mass[k] as number) + n * (q[t * K + k] as number);
      taskMass[k] = (taskMass[k] as number) + (q[t * K + k] as number);
    }
    for (let p = a; p < b; p++) {
      const l = opts[p] as number;
      labelsOf[l] = (labelsOf[l] as number) + 1;
      hit[l] = (hit[l] as number) + (q[t * K + l] as number);
    }
    total += n;
    const g = gold[t] as number;
    if (g < 0) continue;
    goldTasks++;
    goldTasksOf[g] = (goldTasksOf[g] as number) + 1;
    goldMass[g] = (goldMass[g] as number) + n;
    goldTotal += n;
    for (let p = a; p < b; p++) {
      const l = opts[p] as number;
      goldLabelsOf[l] = (goldLabelsOf[l] as number) + 1;
      if (l === g) goldHit[g] = (goldHit[g] as number) + 1;
    }
  }
  // lift of k: (hit_k / mass_k) / ((labelsOf_k - hit_k) / (total - mass_k))
  const liftOf = (h: number, m: number, labels: number, all: number) =>
    m > 0 && all - m > 0 ? h / m / (Math.max(labels - h, 0) / (all - m)) : Number.NaN;
  const lift = Array.from({ length: K }, (_, k) =>
    (taskMass[k] as number) >= 1 ? liftOf(hit[k] as number, mass[k] as number, labelsOf[k] as number, total) : Number.NaN,
  );
  const failing: number[] = [];
  lift.forEach((value, k) => {
    if (!(value <= 1)) return; // above chance, or no mass (NaN)
    if ((goldTasksOf[k] as number) >= MIN_GOLD_PER_OPTION) {
      const goldLift = liftOf(goldHit[k] as number, goldMass[k] as number, goldLabelsOf[k] as number, goldTotal);
      if (!(goldLift > 1)) return; // gold shows the crowd at or below chance on k: gold anchors it
    }
    failing.push(k);
  });
  return { ok: failing.length === 0, lift, failing, goldTasks };
}

/**
 * Leave-one-task-out scoring of a converged fit: `begin(t, z)` sets z to task t's class log-prior without its
 * own posterior mass, then `logTheta(p, k)` is log theta[k][l] of the label at position p of that task with the
 * task's own soft counts removed from its labeler's row (model.ts rowCell).
 */
function looScorer(s: EmState): { begin: (t: number, z: Float64Array) => void; logTheta: (p: number, k: number) => number } {
  const { K, labs, opts, q, counts, rowTotal, alpha, classCount } = s;
  const KK = K * K;
  const alpha0 = rowSums(alpha, K);
  const own = new Float64Array(K);
  const classDen = s.activeTasks - 1 + K;
  const se = s.errorPrecision;
  return {
    begin(t, z) {
      for (let k = 0; k < K; k++) {
        own[k] = q[t * K + k] as number;
        z[k] = Math.log(Math.max((classCount[k] as number) - (own[k] as number), 0) + 1) - Math.log(classDen);
      }
    },
    logTheta(p, k) {
      const i = labs[p] as number;
      const l = opts[p] as number;
      const o = own[k] as number;
      const total = Math.max((rowTotal[i * K + k] as number) - o, 0);
      const nkk = Math.max((counts[i * KK + k * K + k] as number) - (l === k ? o : 0), 0);
      const akk = alpha[k * K + k] as number;
      const accuracy = (nkk + akk) / (total + (alpha0[k] as number));
      if (l === k) return Math.log(accuracy);
      const nkl = Math.max((counts[i * KK + l * K + k] as number) - o, 0);
      const errScale = se / ((alpha0[k] as number) - akk);
      return Math.log(1 - accuracy) + Math.log(nkl + errScale * (alpha[k * K + l] as number)) - Math.log(Math.max(total - nkk, 0) + se);
    },
  };
}

/**
 * Builds the gold, review and prequential calibration samples from the converged fit (each task scored with its
 * own contributions removed from its labelers' rows and from the class counts) and fits the calibration: a gold
 * task gives a sample after each prefix of its votes (weighing 1 in total), a reviewed result one sample, the
 * state it holds (the state it settled in, weight 1: calibration.ts `calibrationWithReviews`).
 */
function calibrate(s: EmState): Calibration {
  const { K, T, start, gold, reviewed } = s;
  const goldSamples = new CalibrationSamples(K);
  const reviewSamples = new CalibrationSamples(K);
  const preqSamples = new CalibrationSamples(K);
  const z = new Float64Array(K);
  const z0 = new Float64Array(K);
  const column = new Float64Array(K);
  const loo = looScorer(s);
  const looLogTheta = loo.logTheta;

  let multiLabelTasks = 0;
  for (let t = 0; t < T; t++) {
    const n = (start[t + 1] as number) - (start[t] as number);
    if ((gold[t] as number) < 0 && n >= 2) multiLabelTasks++;
  }
  const stride = Math.max(1, Math.ceil(multiLabelTasks / MAX_CALIBRATION_TASKS));
  let seenMulti = 0;
  let labeledGold = 0;
  for (let t = 0; t < T; t++)
    if ((gold[t] as number) >= 0 && reviewed[t] !== 1 && (start[t + 1] as number) > (start[t] as number)) labeledGold++;
  const goldStride = Math.max(1, Math.ceil(labeledGold / MAX_GOLD_CALIBRATION_TASKS));
  let seenGold = 0;

  for (let t = 0; t < T; t++) {
    const a = start[t] as number;
    const b = start[t + 1] as number;
    const n = b - a;
    const g = gold[t] as number;
    if (g < 0 && n < 2) continue;
    if (g >= 0 && n < 1) continue;
    if (g < 0) {
      const pick = seenMulti % stride === 0;
      seenMulti++;
      if (!pick) continue;
    } else if (reviewed[t] !== 1) {
      const pick = seenGold % goldStride === 0;
      seenGold++;
      if (!pick) continue;
    }
    loo.begin(t, z);
    z0.set(z);
    // log of the label's probability under the uninformative component: log m_i(l) = log sum_k pi_k theta_i[k][l]
    const logMarginal = (p: number): number => {
      let m = 0;
      for (let k = 0; k < K; k++) m += Math.exp((z0[k] as number) + looLogTheta(p, k));
      return Math.log(m);
    };
    let logHard = 0;
    if (g >= 0 && reviewed[t] === 1) {
      const target = new Float64Array(K);
      target[g] = 1;
      for (let p = a; p < b; p++) {
        for (let k = 0; k < K; k++) z[k] = (z[k] as number) + looLogTheta(p, k);
        logHard += logMarginal(p);
      }
      reviewSamples.push(z, target, 1, logHard, Math.exp(z0[g] as number));
      reviewSamples.tasks++;
    } else if (g >= 0) {
      const target = new Float64Array(K);
      target[g] = 1;
      for (let p = a; p < b; p++) {
        for (let k = 0; k < K; k++) z[k] = (z[k] as number) + looLogTheta(p, k);
        logHard += logMarginal(p);
        goldSamples.push(z, target, 1 / n, logHard, Math.exp(z0[g] as number));
      }
      goldSamples.tasks++;
    } else {
      for (let p = a; p < b - 1; p++) {
        for (let k = 0; k < K; k++) z[k] = (z[k] as number) + looLogTheta(p, k);
        logHard += logMarginal(p);
        for (let k = 0; k < K; k++) column[k] = Math.exp(looLogTheta(p + 1, k));
        preqSamples.push(z, column, 1 / (n - 1), logHard, Math.exp(logMarginal(p + 1)));
      }
      preqSamples.tasks++;
    }
  }
  const prior = Array.from(s.logPi, (v) => Math.exp(v));
  const prequential = preqSamples.tasks >= MIN_PREQUENTIAL_TASKS ? fitPrequential(preqSamples) : null;
  const prequentialTemperature = prequential ? prequential.temperature : null;
  const base = {
    prequentialTemperature,
    goldTasks: goldSamples.tasks,
    prequentialTasks: preqSamples.tasks,
    reviewTasks: reviewSamples.tasks,
  };
  if (goldSamples.tasks + reviewSamples.tasks >= MIN_GOLD_TASKS) {
    const { components, goldPower } = calibrationWithReviews(goldSamples, reviewSamples, prior);
    return { source: goldSamples.tasks > 0 ? "gold" : "reviews", components, ...base, goldPower };
  }
  if (prequential) {
    const component = {
      temperature: prequential.temperature,
      hardShare: PRIOR_HARD_SHARE,
      uninformativeShare: prequential.uninformativeShare,
      weight: 1,
    };
    return { source: "prequential", components: [component], ...base };
  }
  return { ...identityCalibration(), ...base };
}
