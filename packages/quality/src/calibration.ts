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
 * Each task weighs 1 in total (its prefixes share the weight), so long tasks do not dominate.
 *
 * Both scoring rules are applied to a mixture with an uninformative task class (`uninformativeShare` u): a share
 * u of tasks has votes drawn from each labeler's marginal label distribution m_i(l) = sum_k pi_k theta_i[k][l],
 * independently of the truth (item difficulty reduced to two classes: Whitehill et al. 2009, "Whose vote should
 * count more: optimal integration of labels from labelers of unknown expertise", NIPS; a task-level analogue of
 * the spammer score of Raykar & Yu 2012, JMLR 13). Then
 *   P(true = k | votes) proportional to (1 - u) exp(logit_k / tau) + u pi_k exp(logHard / tau),
 *   logHard = sum_votes log m_i(l_i),
 * so agreeing votes make the uninformative class unlikely and the confidence free to rise, while split votes keep
 * it honest. The votes alone identify u (it is the excess of disagreement after disagreement), so the
 * prequential fit estimates (tau >= 1, u) jointly (`fitPrequential`): the threshold policy's confidence without
 * gold. The constant hard share h (the crowd errs together, each labeler conditionally independent given the
 * option the crowd perceives) changes no vote's probability and is fitted on gold only.
 *
 * With gold, the calibration is a posterior average over a grid of maps (tau x h x u): see `calibrationPosterior`.
 * Gold answers are few (5% of tasks is 40 tasks on an 800-task space) and decide how far the model errs with
 * the crowd. Tried and dropped (2026-11-24): pinning (tau, u) by the prequential likelihood of the votes and
 * letting gold choose only h. The votes of rte and dog asked for tau ~ 1 and u ~ 0, so gold explained the
 * remaining errors with h ~ 0.1 to 0.14. That capped every confidence near 0.9 and raised the label share
 * (rte 0.69 -> 0.83, dog 0.89 -> 0.95). How often labelers err together is not something the next vote shows.
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
  private hardLogs: Float64Array;
  private hardTargets: Float64Array;
  private size = 0;
  /** distinct tasks that contributed */
  tasks = 0;

  constructor(k: number, capacity = 256) {
    this.k = k;
    this.logits = new Float64Array(Math.max(1, capacity) * k);
    this.targets = new Float64Array(Math.max(1, capacity) * k);
    this.weights = new Float64Array(Math.max(1, capacity));
    this.hardLogs = new Float64Array(Math.max(1, capacity));
    this.hardTargets = new Float64Array(Math.max(1, capacity));
  }

  get length(): number {
    return this.size;
  }

  /** Sum of the sample weights (the number of tasks when each task's samples weigh 1 in total). */
  get totalWeight(): number {
    let w = 0;
    for (let s = 0; s < this.size; s++) w += this.weights[s] as number;
    return w;
  }

  /**
   * Adds a sample: `logits` (length >= K, the first K read) and `target` (length K: one-hot for gold, the
   * likelihood column of the next label for prequential samples). `logHard` is the log probability of the
   * sample's votes under the uninformative component (model.ts `taskLogHard`; default 0), `hardTarget` the
   * target under that component: for prequential samples the next labeler's marginal probability of its label,
   * m(l); NaN (the default) means sum_k classPrior_k target_k (a gold task's truth drawn from the prior).
   */
  push(logits: ArrayLike<number>, target: ArrayLike<number>, weight: number, logHard = 0, hardTarget = Number.NaN): void {
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
      const nh = new Float64Array(cap);
      nh.set(this.hardLogs);
      this.hardLogs = nh;
      const nht = new Float64Array(cap);
      nht.set(this.hardTargets);
      this.hardTargets = nht;
    }
    const base = this.size * k;
    for (let j = 0; j < k; j++) {
      this.logits[base + j] = logits[j] as number;
      this.targets[base + j] = target[j] as number;
    }
    this.weights[this.size] = weight;
    this.hardLogs[this.size] = logHard;
    this.hardTargets[this.size] = hardTarget;
    this.size++;
  }

  /**
   * Weighted mean log loss of the calibration map (model.ts `calibrationMap`) with beta = 1 / temperature,
   * `hardShare` h and `uninformativeShare` u: with a_k = (1 - u) exp(beta logit_k) and
   * b = u exp(beta logHard), the loss of a sample is
   *   -log[(1 - h) (sum_k a_k target_k + b hardTarget) / (sum_k a_k + b) + h sum_k prior_k target_k].
   * For one-hot targets that is the usual negative log likelihood of the truth.
   */
  loss(beta: number, hardShare = 0, prior?: ArrayLike<number>, uninformativeShare = 0): number {
    return this.lossGrid(beta, [hardShare], [uninformativeShare], prior ?? new Float64Array(this.k))[0] as number;
  }

  /**
   * `loss` of every (hardShare, uninformativeShare) pair at one beta, in one pass over the samples (the
   * exponentials depend on beta only): out[u * hardShares.length + h] = loss(beta, hardShares[h], prior,
   * uninformativeShares[u]).
   */
  lossGrid(beta: number, hardShares: readonly number[], uninformativeShares: readonly number[], prior: ArrayLike<number>): Float64Array {
    const k = this.k;
    const nh = hardShares.length;
    const nu = uninformativeShares.length;
    const out = new Float64Array(nh * nu);
    const anyUninformative = uninformativeShares.some((u) => u > 0);
    let weight = 0;
    for (let s = 0; s < this.size; s++) {
      const base = s * k;
      let max = Number.NEGATIVE_INFINITY;
      for (let j = 0; j < k; j++) {
        const v = beta * (this.logits[base + j] as number);
        if (v > max) max = v;
      }
      // the uninformative class enters the scale only when some share uses it (u = 0 leaves it out entirely)
      const hardLog = anyUninformative ? beta * (this.hardLogs[s] as number) : Number.NEGATIVE_INFINITY;
      if (hardLog > max) max = hardLog;
      let z = 0;
      let hit = 0;
      let priorHit = 0;
      for (let j = 0; j < k; j++) {
        const e = Math.exp(beta * (this.logits[base + j] as number) - max);
        z += e;
        hit += e * (this.targets[base + j] as number);
        priorHit += (prior[j] as number) * (this.targets[base + j] as number);
      }
      const hardMass = Math.exp(hardLog - max);
      const ht = this.hardTargets[s] as number;
      const hardHit = hardMass * (Number.isNaN(ht) ? priorHit : ht);
      const w = this.weights[s] as number;
      weight += w;
      for (let u = 0; u < nu; u++) {
        const share = uninformativeShares[u] as number;
        const q = share > 0 ? ((1 - share) * hit + share * hardHit) / ((1 - share) * z + share * hardMass) : hit / z;
        for (let h = 0; h < nh; h++) {
          const hs = hardShares[h] as number;
          const p = (1 - hs) * q + hs * priorHit;
          out[u * nh + h] = (out[u * nh + h] as number) - w * Math.log(Math.max(p, 1e-300));
        }
      }
    }
    if (weight > 0) for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) / weight;
    return out;
  }
}

/** Golden-section search of the minimum of a unimodal f on [lo, hi], to `tol`. Deterministic. */
function goldenMin(f: (x: number) => number, lo: number, hi: number, tol: number): number {
  const phi = (Math.sqrt(5) - 1) / 2;
  let a = lo;
  let b = hi;
  let x1 = b - phi * (b - a);
  let x2 = a + phi * (b - a);
  let f1 = f(x1);
  let f2 = f(x2);
  while (b - a > tol) {
    if (f1 <= f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - phi * (b - a);
      f1 = f(x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + phi * (b - a);
      f2 = f(x2);
    }
  }
  return (a + b) / 2;
}

/**
 * The temperature minimizing `samples.loss` over [MIN_TEMPERATURE, MAX_TEMPERATURE] (golden-section search on
 * log(temperature), to 1e-4), with a fixed hard share (default 0).
 */
export function fitTemperature(
  samples: CalibrationSamples,
  hardShare = 0,
  prior?: ArrayLike<number>,
  uninformativeShare = 0,
  minTemperature = MIN_TEMPERATURE,
): number {
  const logTau = goldenMin(
    (x) => samples.loss(Math.exp(-x), hardShare, prior, uninformativeShare),
    Math.log(minTemperature),
    Math.log(MAX_TEMPERATURE),
    1e-4,
  );
  return Math.exp(logTau);
}

/**
 * Uninformative shares tried by the prequential fit (`fitPrequential`) and the gold grid. The uninformative
 * component is a latent class of tasks whose votes are drawn from each labeler's marginal label distribution,
 * independently of the truth: the "hard items" class of a two-class item mixture (a special case of item
 * difficulty as in Whitehill, Ruvolo, Wu, Bergsma & Movellan 2009, "Whose vote should count more", NIPS, with the
 * item's discriminability at 0 or 1; and of the spammer/hammer analysis of Raykar & Yu 2012, "Eliminating
 * spammers and ranking annotators for crowdsourced labeling tasks", JMLR 13, applied to items instead of
 * labelers). Unlike the constant hard share it is seen by the votes: agreeing votes are unlikely under it, split
 * votes likely, so it lowers the confidence of split tasks and leaves unanimous ones free to become confident.
 */
export const UNINFORMATIVE_SHARE_GRID: readonly number[] = [0, 0.05, 0.1, 0.2, 0.3, 0.5];

/**
 * The prequential calibration (no gold): the (temperature >= 1, uninformative share) minimizing the prequential
 * log loss of the next label (Dawid 1984; samples with `hardTarget` = the next labeler's marginal of its label):
 * the best point of TEMPERATURE_GRID x UNINFORMATIVE_SHARE_GRID, its temperature then refined by golden-section
 * search between the neighbouring grid temperatures. The uninformative
 * share is identified from votes alone: it is the excess of disagreement after disagreement that a single
 * confusion-matrix model cannot produce. The constant hard share is not (it changes no vote's probability).
 */
export function fitPrequential(samples: CalibrationSamples): { temperature: number; uninformativeShare: number; loss: number } {
  // the grid first (one pass over the samples per temperature), then a golden-section search of the temperature
  // around the best grid point at its share
  const noPrior = new Array<number>(samples.k).fill(0);
  let start = { index: 0, uninformativeShare: 0, loss: Number.POSITIVE_INFINITY };
  TEMPERATURE_GRID.forEach((temperature, index) => {
    const losses = samples.lossGrid(1 / temperature, [0], UNINFORMATIVE_SHARE_GRID, noPrior);
    UNINFORMATIVE_SHARE_GRID.forEach((uninformativeShare, u) => {
      const loss = losses[u] as number;
      if (loss < start.loss - 1e-12) start = { index, uninformativeShare, loss };
    });
  });
  const lo = Math.log(TEMPERATURE_GRID[Math.max(0, start.index - 1)] as number);
  const hi = Math.log(TEMPERATURE_GRID[Math.min(TEMPERATURE_GRID.length - 1, start.index + 1)] as number);
  const u = start.uninformativeShare;
  const temperature = Math.exp(goldenMin((x) => samples.loss(Math.exp(-x), 0, undefined, u), lo, hi, 1e-4));
  const loss = samples.loss(1 / temperature, 0, undefined, u);
  return loss <= start.loss
    ? { temperature, uninformativeShare: u, loss }
    : { temperature: TEMPERATURE_GRID[start.index] as number, uninformativeShare: u, loss: start.loss };
}

/**
 * One calibration map of the mixture (model.ts `calibrationMap`): (1 - hardShare) q + hardShare classPrior, q the
 * posterior of the true option under a mixture of the tempered Dawid-Skene model (weight 1 - uninformativeShare)
 * and the uninformative component (votes independent of the truth, weight uninformativeShare).
 */
export interface CalibrationComponent {
  temperature: number;
  hardShare: number;
  /** share of tasks whose votes carry no information (absent in models stored before it existed: 0) */
  uninformativeShare?: number;
  /** posterior weight of this map (the weights of a calibration sum to 1) */
  weight: number;
}

/**
 * Temperatures of the gold calibration grid: 1 to 20 in steps of 0.1 in log(temperature) (31 values). Never
 * below 1: the calibration never sharpens the model. A model fitted by EM on the labels it is judged by is
 * overconfident in-sample if anything, and on a small space (108 tasks, 5 gold: the `duck` crowd) the few gold
 * tasks favoured 0.64 and the run locked into a wrong solution on one gold draw of three.
 */
export const TEMPERATURE_GRID: readonly number[] = Array.from({ length: 31 }, (_, i) => Math.exp(i * 0.1));
/** Hard shares of the gold calibration grid. */
export const HARD_SHARE_GRID: readonly number[] = [0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3];
/**
 * Hard share used without gold (prequential calibration): the mean of HARD_SHARE_GRID under the gold
 * calibration's uniform prior (0.68 / 7, about 0.097). Votes alone cannot show the tasks on which the crowd errs
 * together (unanimous wrong answers look like unanimous right ones), so the share is not identified without gold,
 * and the Bayes answer under squared loss is the prior mean, the same prior the gold posterior starts from.
 * Measured (issue 27, threshold policy without gold, 8 crowd sets replayed): mean ECE 0.091, against 0.24
 * before the leader rule and about 0.12 with a share of 0.
 */
export const PRIOR_HARD_SHARE: number = HARD_SHARE_GRID.reduce((a, b) => a + b, 0) / HARD_SHARE_GRID.length;
/** Components whose posterior weight is below this share of the heaviest one's are dropped (the rest renormalized). */
export const MIN_COMPONENT_WEIGHT = 1e-3;
/** At most this many components are kept (the heaviest): one per (temperature, uninformative share) pair at most. */
export const MAX_COMPONENTS = 64;

/**
 * Bayesian averaging over the calibration maps of the grid (TEMPERATURE_GRID x HARD_SHARE_GRID x
 * UNINFORMATIVE_SHARE_GRID, uniform prior)
 * given gold samples: weight_j proportional to exp(-sum_s w_s loss_s(map_j)), the composite likelihood of the
 * gold tasks (each task's prefixes weigh 1 in total, so a task counts as one observation: Lindsay 1988,
 * "Composite likelihood methods", Contemporary Mathematics 80). The calibrated posterior is then the posterior
 * predictive sum_j weight_j * map_j(logit) (Hoeting, Madigan, Raftery & Volinsky 1999, "Bayesian model averaging:
 * a tutorial", Statistical Science 14(4)). With few gold tasks the weights spread over every map the gold
 * answers allow, instead of betting on the point estimate that a handful of tasks happen to favour.
 */
export function calibrationPosterior(samples: CalibrationSamples, prior: ArrayLike<number>): CalibrationComponent[] {
  return componentsOf(gridLogLikelihood(samples, prior));
}

/** The maps of the grid in the order of `gridLogLikelihood`: temperature, then uninformative share, then hard share. */
interface GridCell {
  temperature: number;
  uninformativeShare: number;
}

/** The (temperature, uninformative share) cells of the grid, in `gridLogLikelihood`'s order. */
const GRID_CELLS: readonly GridCell[] = TEMPERATURE_GRID.flatMap((temperature) =>
  UNINFORMATIVE_SHARE_GRID.map((uninformativeShare) => ({ temperature, uninformativeShare })),
);

/**
 * The log composite likelihood of `samples` under every map of the grid, -sum_s w_s loss_s(map): index
 * (cell * HARD_SHARE_GRID.length + h), cells in GRID_CELLS order. All zeros for no samples.
 */
function gridLogLikelihood(samples: CalibrationSamples, prior: ArrayLike<number>): Float64Array {
  const nh = HARD_SHARE_GRID.length;
  const nu = UNINFORMATIVE_SHARE_GRID.length;
  const out = new Float64Array(GRID_CELLS.length * nh);
  if (samples.length === 0) return out;
  const total = samples.totalWeight;
  TEMPERATURE_GRID.forEach((temperature, ti) => {
    const losses = samples.lossGrid(1 / temperature, HARD_SHARE_GRID, UNINFORMATIVE_SHARE_GRID, prior);
    for (let u = 0; u < nu; u++)
      for (let h = 0; h < nh; h++) out[((ti * nu + u) * nh + h) as number] = -(losses[u * nh + h] as number) * total;
  });
  return out;
}

/** log sum_i exp(v_i). */
function logSumExp(values: ArrayLike<number>): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i++) if ((values[i] as number) > max) max = values[i] as number;
  if (max === Number.NEGATIVE_INFINITY) return max;
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += Math.exp((values[i] as number) - max);
  return max + Math.log(sum);
}

/**
 * The calibration's components from the log posterior weight of every map of the grid (uniform prior): the
 * hard share averaged exactly per (temperature, uninformative share) pair, components below MIN_COMPONENT_WEIGHT
 * of the heaviest dropped, at most MAX_COMPONENTS kept, weights renormalized.
 */
function componentsOf(logWeights: Float64Array): CalibrationComponent[] {
  const nh = HARD_SHARE_GRID.length;
  let max = Number.NEGATIVE_INFINITY;
  for (const w of logWeights) if (w > max) max = w;
  // The hard share enters a map linearly, (1 - h) q + h prior, so the average over h of the maps of one
  // (temperature, uninformative share) is that map at the posterior mean of h: one component per pair, exactly.
  // Keeping only the heaviest maps instead turned a wide posterior (few gold tasks) into its mode.
  const grid = GRID_CELLS.map((cell, c) => {
    let weight = 0;
    let hardShare = 0;
    for (let h = 0; h < nh; h++) {
      const w = Math.exp((logWeights[c * nh + h] as number) - max);
      weight += w;
      hardShare += w * (HARD_SHARE_GRID[h] as number);
    }
    return {
      temperature: cell.temperature,
      uninformativeShare: cell.uninformativeShare,
      hardShare: weight > 0 ? hardShare / weight : 0,
      weight,
    };
  });
  const heaviest = Math.max(...grid.map((c) => c.weight));
  const kept = grid
    .filter((c) => c.weight >= MIN_COMPONENT_WEIGHT * heaviest)
    .sort((a, b) => b.weight - a.weight || a.temperature - b.temperature || a.uninformativeShare - b.uninformativeShare)
    .slice(0, MAX_COMPONENTS);
  const sum = kept.reduce((a, c) => a + c.weight, 0);
  return kept.map((c) => ({ ...c, weight: c.weight / sum }));
}

/**
 * Powers of the gold likelihood tried when reviews are present (`calibrationWithReviews`): gold counted fully
 * (1) down to not at all (0).
 */
export const GOLD_POWER_GRID: readonly number[] = [0, 0.125, 0.25, 0.5, 1];

/**
 * The log Bayes factor the reviews must show for a gold power below 1 over full power: 3, "strong" evidence on
 * the scale of Kass & Raftery 1995 ("Bayes factors", JASA 90(430), section 3.2: 2 log B above 6).
 */
export const STRONG_EVIDENCE = 3;

/**
 * The calibration posterior given gold tasks and reviewed results (contract §review, decision 0266). Reviewed
 * results are a uniform sample of what settled, scored in the state they settled in (one sample per task, the
 * confidence the customer was given); gold tasks take every label and are scored after each prefix of their
 * votes, states the service seldom decides in. Both are evidence about the same map, but gold is evidence at
 * one remove, so it enters as a power prior (Ibrahim & Chen 2000, "Power prior distributions for regression
 * models", Statistical Science 15(1)): log weight_j = a * loglik_gold(map_j) + loglik_reviews(map_j). The power
 * a is chosen from GOLD_POWER_GRID by empirical Bayes, maximizing the marginal likelihood of the reviews under
 * the gold power prior, m(a) = sum_j prior_a(map_j) exp(loglik_reviews(map_j)) (Gravestock & Held 2017, "Adaptive
 * power priors with empirical Bayes for clinical trials", Pharmaceutical Statistics 16(5)), and a power below 1
 * only when its marginal likelihood beats full power's by a log Bayes factor of STRONG_EVIDENCE (the marginal
 * likelihood of a few samples is noisy: without the margin, 3 reviews drawn from the gold's own map discounted
 * gold to 0 on one draw of four). So a few reviews leave gold in charge (each weighs as one gold task), and as
 * reviews accrue they both outweigh the fixed gold and, when the maps the gold favours explain what actually
 * settled badly, discount it.
 * Without reviews it is `calibrationPosterior(gold)`; without gold, the posterior given the reviews alone.
 * @returns the components and the power chosen (null without both gold and reviews)
 */
export function calibrationWithReviews(
  gold: CalibrationSamples,
  reviews: CalibrationSamples,
  prior: ArrayLike<number>,
): { components: CalibrationComponent[]; goldPower: number | null } {
  const goldLl = gridLogLikelihood(gold, prior);
  if (reviews.length === 0) return { components: componentsOf(goldLl), goldPower: null };
  const reviewLl = gridLogLikelihood(reviews, prior);
  if (gold.length === 0) return { components: componentsOf(reviewLl), goldPower: null };
  const n = goldLl.length;
  const scaled = new Float64Array(n);
  const joint = new Float64Array(n);
  const evidenceAt = (power: number): number => {
    for (let i = 0; i < n; i++) {
      scaled[i] = power * (goldLl[i] as number);
      joint[i] = (scaled[i] as number) + (reviewLl[i] as number);
    }
    return logSumExp(joint) - logSumExp(scaled);
  };
  // gold at full weight unless the reviews show strong evidence against it: a log Bayes factor above
  // STRONG_EVIDENCE over full power (the marginal likelihood of a few samples is noisy, and would otherwise
  // discount gold on chance alone)
  const pooled = evidenceAt(1);
  let best = { power: 1, evidence: pooled + STRONG_EVIDENCE };
  for (const power of GOLD_POWER_GRID) {
    if (power === 1) continue;
    const evidence = evidenceAt(power);
    if (evidence > best.evidence) best = { power, evidence };
  }
  const logWeights = new Float64Array(n);
  for (let i = 0; i < n; i++) logWeights[i] = best.power * (goldLl[i] as number) + (reviewLl[i] as number);
  return { components: componentsOf(logWeights), goldPower: best.power };
}
