/**
 * Calibration of the model posterior by temperature scaling (Guo, Pleiss, Sun & Weinberger 2017, "On calibration
 * of modern neural networks", ICML): the calibrated posterior is softmax(logit / tau), one tau per label space.
 *
 * Dawid-Skene assumes labelers err independently given the true option. Real crowds violate it (hard items make
 * many labelers err together), so the raw posterior adds up more evidence than there is and is overconfident.
 * Tempering the likelihood by 1/tau (a "generalized" or "safe" Bayesian posterior, Grünwald 2012, "The safe
 * Bayesian: learning the learning rate via the mixability gap", ALT; Grünwald & van Ommen 2017, "Inconsistency of
 * Bayesian inference for misspecified linear models, and a proposal for repairing it", Bayesian Analysis 12(4))
 * counts the votes as 1/tau as many independent ones. tau is chosen by one of two proper scoring rules:
 *
 * - gold: the log loss of the tempered posterior of each gold task's true option after each prefix of its votes
 *   (1, 2, ..., n votes, in arrival order: the states in which decisions are taken). The gold task's own labels
 *   are removed from its labelers' rows first (leave-one-task-out), since the fit clamped them to the truth;
 *   scoring them in-sample would reward overconfidence.
 * - prequential (no gold needed): the log loss of predicting each task's next label from its earlier labels,
 *   P(l_{m+1} | l_1..l_m) = sum_k posterior_tau(k | l_1..l_m) theta_{m+1}[k][l_{m+1}] (Dawid 1984, "Present position
 *   and potential developments: the prequential approach", J. R. Stat. Soc. A 147(2); the learning rate chosen by
 *   prequential loss as in Grünwald 2012). Again each task's own soft counts are removed from its labelers' rows.
 *   Under a correct model tau = 1 minimizes it in expectation; correlated errors (more disagreement after
 *   agreeing labels than independence predicts) raise it.
 *
 * Each task weighs 1 in total (its prefixes share the weight), so long tasks do not dominate. tau is searched
 * on a log scale in [MIN_TEMPERATURE, MAX_TEMPERATURE] by golden-section search (both losses are unimodal in
 * 1/tau in practice; the gold one is convex in 1/tau).
 */

/** Smallest temperature considered (sharpening by at most 2x in log-odds). */
export const MIN_TEMPERATURE = 0.5;
/** Largest temperature considered. */
export const MAX_TEMPERATURE = 20;

/**
 * A set of calibration samples, each a logit vector (K numbers) with a weight and either a true option (gold) or
 * a predictive column (the next label's likelihood under each true option, prequential).
 */
export class CalibrationSamples {
  readonly k: number;
  private logits: Float64Array;
  private targets: Float64Array;
  private weights: Float64Array;
  private size = 0;
  /** distinct tasks that contributed */
  tasks = 0;

  constructor(k: number, capacity = 256) {
    this.k = k;
    this.logits = new Float64Array(Math.max(1, capacity) * k);
    this.targets = new Float64Array(Math.max(1, capacity) * k);
    this.weights = new Float64Array(Math.max(1, capacity));
  }

  get length(): number {
    return this.size;
  }

  /**
   * Adds a sample: `logits` (length >= K, the first K read) and `target` (length K: one-hot for gold, the
   * likelihood column of the next label for prequential samples).
   */
  push(logits: ArrayLike<number>, target: ArrayLike<number>, weight: number): void {
    const k = this.k;
    if (this.size === this.weights.length) {
      const cap = this.size * 2;
      const nl = new Float64Array(cap * k);
      nl.set(this.logits);
      this.logits = nl;
      const nt = new Float64Array(cap * k);
      nt.set(this.targets);
      this.targets = nt;
      const nw = new Float64Array(cap);
      nw.set(this.weights);
      this.weights = nw;
    }
    const base = this.size * k;
    for (let j = 0; j < k; j++) {
      this.logits[base + j] = logits[j] as number;
      this.targets[base + j] = target[j] as number;
    }
    this.weights[this.size] = weight;
    this.size++;
  }

  /**
   * Weighted mean log loss of the tempered posterior softmax(beta * logit) (beta = 1 / temperature):
   * -log sum_k softmax_k * target_k. For one-hot targets that is the usual negative log likelihood.
   */
  loss(beta: number): number {
    const k = this.k;
    let total = 0;
    let weight = 0;
    for (let s = 0; s < this.size; s++) {
      const base = s * k;
      let max = Number.NEGATIVE_INFINITY;
      for (let j = 0; j < k; j++) {
        const v = beta * (this.logits[base + j] as number);
        if (v > max) max = v;
      }
      let z = 0;
      let hit = 0;
      for (let j = 0; j < k; j++) {
        const e = Math.exp(beta * (this.logits[base + j] as number) - max);
        z += e;
        hit += e * (this.targets[base + j] as number);
      }
      const w = this.weights[s] as number;
      total -= w * Math.log(Math.max(hit / z, 1e-300));
      weight += w;
    }
    return weight === 0 ? 0 : total / weight;
  }
}

/**
 * The temperature minimizing `samples.loss` over [MIN_TEMPERATURE, MAX_TEMPERATURE], by golden-section search
 * on log(temperature) (to 1e-4 relative). Deterministic.
 */
export function fitTemperature(samples: CalibrationSamples): number {
  let lo = Math.log(MIN_TEMPERATURE);
  let hi = Math.log(MAX_TEMPERATURE);
  const phi = (Math.sqrt(5) - 1) / 2;
  const f = (logTau: number) => samples.loss(Math.exp(-logTau));
  let x1 = hi - phi * (hi - lo);
  let x2 = lo + phi * (hi - lo);
  let f1 = f(x1);
  let f2 = f(x2);
  while (hi - lo > 1e-4) {
    if (f1 <= f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - phi * (hi - lo);
      f1 = f(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + phi * (hi - lo);
      f2 = f(x2);
    }
  }
  return Math.exp((lo + hi) / 2);
}
