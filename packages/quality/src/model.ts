import type { CalibrationComponent } from "./calibration";

/**
 * The stored form of a fitted label-quality model, and scoring of one task from its votes.
 *
 * Model (Dawid & Skene 1979, "Maximum likelihood estimation of observer error-rates using the EM algorithm",
 * J. R. Stat. Soc. C 28(1)): a task's true option z has prior `classPrior`; labeler i answers option l with
 * probability theta_i[z][l] (a row of its confusion matrix), independently of the other labelers given z.
 * Each confusion row has a Dirichlet-tree prior around the label space's population (the hierarchical prior of
 * Raykar et al. 2010, "Learning from crowds", JMLR 11, and Liu, Peng & Ihler 2012, "Variational inference for
 * crowdsourcing", NIPS; the tree split of Minka 1999, "The Dirichlet-tree distribution"): the labeler's accuracy
 * on true option k, theta_i[k][k] ~ Beta(population[k][k], alpha0_k - population[k][k]), and, given an error,
 * the distribution of its wrong answers ~ Dirichlet(errorPrecision * population[k][l] / (alpha0_k -
 * population[k][k])), alpha0_k = sum_l population[k][l]. A labeler's row is stored as soft counts n_i[k][l] (the
 * expected number of its labels l on tasks whose true option is k); the row used for scoring is the posterior
 * mean
 *   theta_i[k][k] = (n_i[k][k] + population[k][k]) / (N_i[k] + alpha0_k),
 *   theta_i[k][l] = (1 - theta_i[k][k]) * (n_i[k][l] + errorPrecision * mErr_kl) / (N_i[k] - n_i[k][k] + errorPrecision),
 * mErr_kl = population[k][l] / (alpha0_k - population[k][k]), which is also the Bayesian predictive probability
 * of the labeler's next label given true option k (it integrates over the uncertainty of the row). With K = 2 it
 * is the plain Dirichlet (Beta) row. A labeler absent from the model has n = 0, so it gets the population mean:
 * never more trust than its data show. Why the split: a labeler's accuracy is learnt from every label, but its
 * particular confusions (which wrong option) need many more labels when K is large; one precision for both made
 * a single wrong label of a K = 20 labeler a strong "confusion" (section 1 of docs/notes/quality.md).
 *
 * The calibrated posterior is a weighted mixture of calibration maps (`calibrationMap`)
 *   sum_j weight_j * [(1 - hardShare_j) * q_j + hardShare_j * classPrior],
 *   q_j(k) proportional to (1 - u_j) exp(logit_k / temperature_j) + u_j classPrior_k exp(logHard / temperature_j),
 * with logit_k = log classPrior_k + sum_votes log theta_i[k][l] and logHard = sum_votes log m_i(l), m_i(l) =
 * sum_k classPrior_k theta_i[k][l] (`taskLogHard`). Three departures from Dawid-Skene's independence:
 * temperature scaling (Guo et al. 2017, "On calibration of modern neural networks", ICML) for errors that are
 * correlated within a task; a share u_j (`uninformativeShare`) of tasks whose votes are drawn from each labeler's
 * marginal label distribution, independently of the truth (two-class item difficulty, Whitehill et al. 2009,
 * NIPS), which agreeing votes rule out and split votes do not; and a share hardShare_j of tasks on which the
 * crowd errs together (the labels follow an option the crowd perceives, not the truth), which caps the
 * confidence any number of votes can reach. See calibration.ts for how the maps and weights are fitted.
 */

/** Per label-space parameters: one row of the store. */
export interface SpaceParams {
  /** number of options K (2..50) */
  k: number;
  /** incremented by every fit (previous version + 1; 1 for a cold fit) */
  version: number;
  /** P(true option = k), length K, sums to 1 */
  classPrior: number[];
  /** Dirichlet parameters of a labeler's confusion rows, K x K (row = true option), all > 0 */
  population: number[][];
  /** precision of the distribution of a labeler's wrong answers (Dirichlet-tree split; see the module doc) */
  errorPrecision: number;
  /** the calibration of the posterior */
  calibration: Calibration;
  /** sizes of the data the model was fitted on */
  counts: SpaceCounts;
  /** EM iterations of the fit that produced this model */
  iterations: number;
  /** whether EM met its tolerance before its iteration limit */
  converged: boolean;
  /** log marginal likelihood of the labels under the fitted parameters (gold tasks at their true option) */
  logLikelihood: number;
}

/** The calibration of a space (see calibration.ts). */
export interface Calibration {
  /**
   * "gold": posterior over maps given gold tasks (and reviewed results, when there are); "reviews": given reviewed
   * results alone; "prequential": one temperature from next-label prediction; "default": identity
   */
  source: "gold" | "reviews" | "prequential" | "default";
  /** the maps and their weights (sum 1); the identity map {temperature 1, hardShare 0, weight 1} by default */
  components: CalibrationComponent[];
  /** temperature of the prequential fit (null with too few tasks of >= 2 labels) */
  prequentialTemperature: number | null;
  /** gold tasks with labels that entered the fit */
  goldTasks: number;
  /** tasks with at least two labels that entered the prequential fit */
  prequentialTasks: number;
  /** reviewed results that entered the fit (absent in models stored before reviews counted apart: 0) */
  reviewTasks?: number;
  /** power of the gold likelihood chosen beside the reviews (calibration.ts `calibrationWithReviews`); null or absent: not both */
  goldPower?: number | null;
}

/** Sizes of the data of a fit. */
export interface SpaceCounts {
  labels: number;
  tasks: number;
  labelers: number;
  goldTasks: number;
  goldAnswers: number;
}

/** Per labeler parameters within one label space: one row of the store. */
export interface LabelerParams {
  labelerId: string;
  /** soft counts n[k][l], K x K: expected labels l on tasks of true option k (gold tasks count at their truth) */
  counts: number[][];
  /** labels of this labeler in the label space */
  labels: number;
  /** labels of this labeler on gold tasks */
  goldAnswers: number;
  /** of those, labels equal to the gold answer */
  goldCorrect: number;
}

/** A fitted model: the space row and the rows of every labeler of the space. */
export interface QualityModel {
  space: SpaceParams;
  labelers: Map<string, LabelerParams>;
}

/** One vote of a task: the labeler's parameters (undefined for a labeler the model does not know) and the option index. */
export interface Vote {
  labeler: LabelerParams | undefined;
  option: number;
}

/** The prior a space starts from before any label: see `defaultPopulation`. */
export function emptySpace(k: number): SpaceParams {
  checkK(k);
  return {
    k,
    version: 0,
    classPrior: new Array<number>(k).fill(1 / k),
    population: defaultPopulation(k),
    errorPrecision: HYPERPRIOR_OFF_DIAGONAL,
    calibration: identityCalibration(),
    counts: { labels: 0, tasks: 0, labelers: 0, goldTasks: 0, goldAnswers: 0 },
    iterations: 0,
    converged: true,
    logLikelihood: 0,
  };
}

/** The identity calibration (raw model posterior). */
export function identityCalibration(): Calibration {
  return {
    source: "default",
    components: [{ temperature: 1, hardShare: 0, weight: 1 }],
    prequentialTemperature: null,
    goldTasks: 0,
    prequentialTasks: 0,
  };
}

/** Weighted means of the calibration's temperature (geometric), hard share and uninformative share (for reports). */
export function calibrationSummary(calibration: Calibration): { temperature: number; hardShare: number; uninformativeShare: number } {
  let logTau = 0;
  let h = 0;
  let u = 0;
  for (const c of calibration.components) {
    logTau += c.weight * Math.log(c.temperature);
    h += c.weight * c.hardShare;
    u += c.weight * (c.uninformativeShare ?? 0);
  }
  return { temperature: Math.exp(logTau), hardShare: h, uninformativeShare: u };
}

/** Pseudo-counts of the hyperprior on a confusion row: 2 on the diagonal, 1 spread over the K-1 other options. */
export const HYPERPRIOR_DIAGONAL = 2;
/** Total pseudo-count off the diagonal of the hyperprior row. */
export const HYPERPRIOR_OFF_DIAGONAL = 1;

/**
 * The hyperprior Dirichlet of a confusion row before any label: mean accuracy 2/3, errors spread evenly,
 * total weight 3 labels. It only says "a labeler is better than chance" (the usual identifiability assumption
 * of Dawid-Skene, which EM's majority-vote initialization also makes); it is overridden by the space's labels.
 */
export function defaultPopulation(k: number): number[][] {
  checkK(k);
  const off = HYPERPRIOR_OFF_DIAGONAL / (k - 1);
  return Array.from({ length: k }, (_, row) => Array.from({ length: k }, (_, col) => (row === col ? HYPERPRIOR_DIAGONAL : off)));
}

/**
 * The confusion matrix used to score a labeler's votes (K x K, rows sum to 1): the Dirichlet posterior mean of
 * each row, or the population mean when `labeler` is undefined.
 */
export function confusionMatrix(space: SpaceParams, labeler: LabelerParams | undefined): number[][] {
  return space.population.map((alpha, k) => {
    const row = labeler?.counts[k];
    const n = (l: number) => (row ? (row[l] as number) : 0);
    let total = 0;
    for (let l = 0; l < space.k; l++) total += n(l);
    return alpha.map((_, l) => rowCell(alpha, space.errorPrecision, k, l, n(k), total, n(l)));
  });
}

/**
 * One cell theta[k][l] of a confusion row (see the module doc): `alpha` = population row k, `nkk` = the row's
 * count on the diagonal, `total` = the row's total, `nkl` = its count in column l. Counts may be fractional.
 */
export function rowCell(
  alpha: ArrayLike<number>,
  errorPrecision: number,
  k: number,
  l: number,
  nkk: number,
  total: number,
  nkl: number,
): number {
  let alpha0 = 0;
  for (let j = 0; j < alpha.length; j++) alpha0 += alpha[j] as number;
  const akk = alpha[k] as number;
  const accuracy = (Math.max(nkk, 0) + akk) / (Math.max(total, 0) + alpha0);
  if (l === k) return accuracy;
  const errors = Math.max(total - nkk, 0);
  const mean = (alpha[l] as number) / (alpha0 - akk);
  return ((1 - accuracy) * (Math.max(nkl, 0) + errorPrecision * mean)) / (errors + errorPrecision);
}

/**
 * A labeler's estimated accuracy for the dashboard: sum_k classPrior_k * confusion[k][k] (the probability that
 * its label on a random task of the space is right).
 */
export function estimatedAccuracy(space: SpaceParams, labeler: LabelerParams | undefined): number {
  const confusion = confusionMatrix(space, labeler);
  let acc = 0;
  for (let k = 0; k < space.k; k++) acc += (space.classPrior[k] as number) * ((confusion[k] as number[])[k] as number);
  return acc;
}

/**
 * Unnormalized log posterior of each option given the votes (length K): log classPrior_k + sum log theta_i[k][l].
 * @throws RangeError when a vote's option is out of range
 */
export function taskLogits(space: SpaceParams, votes: readonly Vote[]): number[] {
  const k = space.k;
  const logits = space.classPrior.map((p) => Math.log(p));
  for (const vote of votes) {
    if (!Number.isInteger(vote.option) || vote.option < 0 || vote.option >= k) {
      throw new RangeError(`option index must be an integer in 0..${k - 1}, got ${vote.option}`);
    }
    for (let z = 0; z < k; z++) {
      const row = vote.labeler?.counts[z];
      let total = 0;
      if (row) for (let l = 0; l < k; l++) total += row[l] as number;
      const n = (l: number) => (row ? (row[l] as number) : 0);
      const cell = rowCell(space.population[z] as number[], space.errorPrecision, z, vote.option, n(z), total, n(vote.option));
      logits[z] = (logits[z] as number) + Math.log(cell);
    }
  }
  return logits;
}

/** softmax(logits / temperature), numerically stable; sums to 1. */
export function softmax(logits: readonly number[], temperature = 1): number[] {
  let max = Number.NEGATIVE_INFINITY;
  for (const v of logits) if (v > max) max = v;
  const weights = logits.map((v) => Math.exp((v - max) / temperature));
  const total = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / total);
}

/** A scored task: the calibrated posterior (what `confidence` and the confidence policy use) and the raw model posterior. */
export interface TaskScore {
  /** calibrated posterior over options, length K, sums to 1 */
  posterior: number[];
  /** the model's posterior before calibration (temperature 1) */
  rawPosterior: number[];
}

/**
 * Log of the probability of a task's votes under the uninformative ("hard") component of the calibration
 * (length-free scalar): sum over votes of log m_i(l), m_i(l) = sum_k classPrior_k theta_i[k][l], the labeler's
 * marginal label distribution, i.e. its votes drawn independently of the truth. 0 for no votes.
 * @throws RangeError when a vote's option is out of range
 */
export function taskLogHard(space: SpaceParams, votes: readonly Vote[]): number {
  const k = space.k;
  let total = 0;
  for (const vote of votes) {
    if (!Number.isInteger(vote.option) || vote.option < 0 || vote.option >= k) {
      throw new RangeError(`option index must be an integer in 0..${k - 1}, got ${vote.option}`);
    }
    let m = 0;
    for (let z = 0; z < k; z++) {
      const row = vote.labeler?.counts[z];
      let rowTotal = 0;
      if (row) for (let l = 0; l < k; l++) rowTotal += row[l] as number;
      const n = (l: number) => (row ? (row[l] as number) : 0);
      m +=
        (space.classPrior[z] as number) *
        rowCell(space.population[z] as number[], space.errorPrecision, z, vote.option, n(z), rowTotal, n(vote.option));
    }
    total += Math.log(m);
  }
  return total;
}

/**
 * One calibration map applied to a logit vector (see the module doc and calibration.ts):
 *   (1 - hardShare) q + hardShare classPrior,
 *   q_k proportional to (1 - u) exp(logit_k / tau) + u classPrior_k exp(logHard / tau),  u = uninformativeShare.
 * `logHard` = `taskLogHard` of the same votes (ignored when u = 0).
 */
export function calibrationMap(
  classPrior: readonly number[],
  logits: readonly number[],
  component: { temperature: number; hardShare: number; uninformativeShare?: number },
  logHard = 0,
): number[] {
  const k = logits.length;
  const tau = component.temperature;
  const u = component.uninformativeShare ?? 0;
  const h = component.hardShare;
  let max = Number.NEGATIVE_INFINITY;
  for (const v of logits) if (v / tau > max) max = v / tau;
  const hardLog = u > 0 ? logHard / tau : Number.NEGATIVE_INFINITY;
  if (hardLog > max) max = hardLog;
  const hardMass = u > 0 ? u * Math.exp(hardLog - max) : 0;
  const q = logits.map((v, j) => (1 - u) * Math.exp(v / tau - max) + hardMass * (classPrior[j] as number));
  const z = q.reduce((a, b) => a + b, 0);
  const out = new Array<number>(k);
  for (let j = 0; j < k; j++) out[j] = (1 - h) * ((q[j] as number) / z) + h * (classPrior[j] as number);
  return out;
}

/**
 * The calibrated posterior of a logit vector: sum_j weight_j * calibrationMap(component_j). `logHard` is the
 * `taskLogHard` of the task's votes; it matters only for components with an uninformative share (a caller that
 * omits it scores those components as if the votes were as likely under the uninformative component as the
 * population's marginal, i.e. logHard = 0, which is only right for no votes).
 */
export function calibratedPosterior(space: SpaceParams, logits: readonly number[], logHard = 0): number[] {
  const out = new Array<number>(space.k).fill(0);
  for (const c of space.calibration.components) {
    const p = calibrationMap(space.classPrior, logits, c, logHard);
    for (let k = 0; k < space.k; k++) out[k] = (out[k] as number) + c.weight * (p[k] as number);
  }
  return out;
}

/**
 * Scores one task: the calibrated posterior over its options given its votes. Needs only the space row and
 * the rows of the task's labelers (undefined for labelers new since the last fit).
 */
export function scoreTask(space: SpaceParams, votes: readonly Vote[]): TaskScore {
  const logits = taskLogits(space, votes);
  return { posterior: calibratedPosterior(space, logits, taskLogHard(space, votes)), rawPosterior: softmax(logits, 1) };
}

function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 2 || k > 50) throw new RangeError(`a label space has 2..50 options, got ${k}`);
}
