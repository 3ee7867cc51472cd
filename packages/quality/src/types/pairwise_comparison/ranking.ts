/**
 * The ranking of the items compared by `pairwise_comparison` tasks (contract §task-types; decision 0285):
 * Bradley-Terry scores fitted on every label, each label weighted by what the labeler model knows of its labeler,
 * with 95% intervals.
 *
 * Model. Item i has a strength pi_i = exp(s_i) (natural-log scale: without ties,
 * P(i beats j) = 1 / (1 + exp(s_j - s_i)); Bradley and Terry 1952, Biometrika 39). `score` is s_i centered on
 * the ranked items (s_i - mean_k s_k: 0 = the average item, the usual sum-to-zero identification). Ties follow Davidson 1970
 * ("On extending the Bradley-Terry model to accommodate ties in paired comparison experiments", JASA 65):
 *   P(i beats j) = pi_i / D,  P(tie) = nu sqrt(pi_i pi_j) / D,  D = pi_i + pi_j + nu sqrt(pi_i pi_j),
 * with one tie parameter nu >= 0 fitted from the data (nu = 0 when no label is a tie: plain Bradley-Terry).
 * Davidson rather than Rao-Kupper because its tie probability is largest for equal items and its MM update
 * stays in closed form (below); Rao-Kupper's threshold theta also needs a one-dimensional search per iteration.
 *
 * Weighted likelihood: each label enters the log-likelihood with a weight w in [0, 1] and an outcome (the
 * caller's; `labelWeights` derives both from the labeler model: see there). Maximized by the MM algorithm of
 * Hunter 2004 ("MM algorithms for generalized Bradley-Terry models", Ann. Statist. 32(1), eq. (3)): -log D is
 * minorized by its tangent, and the tie term sqrt(pi_i pi_j) of D majorized by the AM-GM bound
 * (pi_i sqrt(pi_j'/pi_i') + pi_j sqrt(pi_i'/pi_j')) / 2 at the current pi'; the surrogate separates by item and
 * its maximizer is
 *   pi_i <- W_i / sum_j n_ij (1 + (nu/2) sqrt(pi_j / pi_i)) / D_ij,   W_i = wins_i + ties_i / 2,
 * (Davidson's own iteration), and nu <- T / sum_ij n_ij sqrt(pi_i pi_j) / D_ij (T = the weighted ties), each step
 * raising the penalized likelihood. nu has an Exponential(1) prior (`TIE_PRIOR_RATE`; its MM step adds the rate
 * to the denominator), so that labels that are all ties give a finite nu. Items are updated in turn (cyclic MM), in a fixed order: deterministic.
 *
 * Prior (items with no comparisons, items that never lose, disconnected comparison graphs): every item plays
 * `priorGames` virtual wins and as many virtual losses (plain Bradley-Terry) against a virtual item of fixed
 * score 0, the "virtual games" prior of Coulom 2008 ("Whole-history rating", Computers and Games, LNCS 5131, §3)
 * and, as a log-concave prior on each s_i, the MAP of a Bayesian Bradley-Terry model (Caron and Doucet 2012,
 * "Efficient Bayesian inference for generalized Bradley-Terry models", JCGS 21(1)). It makes the comparison graph
 * strongly connected (Hunter's Assumption 1 then holds and the maximizer is unique and finite), gives an
 * item without comparisons the virtual item's strength with a wide interval, and places disconnected
 * components on one scale by the prior alone (their relative order is not identified by the data, which the
 * width of their intervals shows). A weak prior: at 30 comparisons an item's own games outweigh it 15 to 1.
 *
 * Intervals: Wald intervals s_i +- 1.96 se_i from the observed Fisher information of the penalized log-likelihood
 * at its maximum, H (in s; for this model the observed and expected information coincide given nu, as the data
 * enter the log-likelihood linearly), in the sandwich form of a weighted likelihood, Cov = H^-1 J H^-1
 * (Godambe 1960; White 1982, Econometrica 50), where J is H with each label's weight squared (the prior's games
 * count once in both), projected on the centered scores (Var(s_i - mean s)). With every weight 1 it is H^-1's;
 * scaling every label's weight leaves it unchanged but for the prior's share. Chosen over a
 * bootstrap because it is deterministic and takes one factorization instead of hundreds of refits; its
 * coverage is measured in the tests and the benchmark. nu is held at its estimate (its uncertainty is ignored).
 * Cost: O(iterations x comparisons) for the fit, O(N^3) for the intervals (a dense Cholesky factorization, see
 * `scoreVariances`).
 */
import type { Winner } from "./consensus";

/** One comparison: item a against item b, the outcome, and its weight in the likelihood (default 1). */
export interface Comparison {
  a: string;
  b: string;
  outcome: Winner;
  weight?: number;
}

/** Options of `fitRanking`. */
export interface RankingOptions {
  /** items to rank besides those compared (an item without comparisons gets score 0 and the prior's interval) */
  items?: readonly string[];
  /** virtual wins and losses of each item against the virtual item of score 0 (default 1; > 0) */
  priorGames?: number;
  /** MM iteration limit (default 10,000) */
  maxIterations?: number;
  /** convergence: largest change of any score and of nu in an iteration (default 1e-9) */
  tolerance?: number;
}

/** One ranked item. */
export interface RankedItem {
  item: string;
  /** s_i - mean_k s_k: natural-log strength relative to the average ranked item */
  score: number;
  /** 1 + the number of items with a higher score (equal scores share a rank) */
  rank: number;
  /** 95% interval of the score */
  ciLow: number;
  ciHigh: number;
  /** labels that compared this item (whatever their weight) */
  comparisons: number;
}

/** A fitted ranking. */
export interface Ranking {
  /** by score, highest first (equal scores: item id in code-unit order) */
  items: RankedItem[];
  /** Davidson's tie parameter nu (0 without ties) */
  tieParameter: number;
  iterations: number;
  converged: boolean;
}

/**
 * Rate of the Exponential prior on Davidson's nu (mean 1): the MM step becomes nu <- T / (sum ... + rate). Without
 * it nu has no finite maximizer when every label is a tie.
 */
export const TIE_PRIOR_RATE = 1;

/** The normal quantile of a two-sided 95% interval. */
export const Z95 = 1.959963984540054;

interface Pair {
  i: number;
  j: number;
  /** weighted wins of i, of j, weighted ties */
  winsI: number;
  winsJ: number;
  ties: number;
  /** sum of the squared weights of the pair's labels (for J) */
  squared: number;
}

/**
 * Fits the weighted Bradley-Terry-Davidson model (module doc) to `comparisons` and ranks every item.
 * Deterministic: items are indexed in order of `options.items`, then of first appearance in `comparisons`.
 * @throws RangeError for an item compared with itself, a weight that is negative or not finite, an unknown
 *   outcome, or options outside their bounds
 */
export function fitRanking(comparisons: readonly Comparison[], options: RankingOptions = {}): Ranking {
  const lambda = options.priorGames ?? 1;
  const maxIterations = options.maxIterations ?? 10_000;
  const tolerance = options.tolerance ?? 1e-9;
  if (!(lambda > 0) || !Number.isFinite(lambda)) throw new RangeError(`priorGames must be a positive number, got ${lambda}`);
  if (!Number.isInteger(maxIterations) || maxIterations < 1)
    throw new RangeError(`maxIterations must be a positive integer, got ${maxIterations}`);
  if (!(tolerance > 0)) throw new RangeError(`tolerance must be positive, got ${tolerance}`);

  const index = new Map<string, number>();
  const names: string[] = [];
  const intern = (item: string): number => {
    let i = index.get(item);
    if (i === undefined) {
      i = names.length;
      names.push(item);
      index.set(item, i);
    }
    return i;
  };
  for (const item of options.items ?? []) intern(item);
  const pairIndex = new Map<string, number>();
  const pairs: Pair[] = [];
  const counts: number[] = [];
  for (const c of comparisons) {
    if (c.a === c.b) throw new RangeError(`item ${c.a} is compared with itself`);
    const w = c.weight ?? 1;
    if (!(w >= 0) || !Number.isFinite(w)) throw new RangeError(`a comparison's weight must be a finite number >= 0, got ${w}`);
    if (c.outcome !== "a" && c.outcome !== "b" && c.outcome !== "tie")
      throw new RangeError(`outcome must be a, b or tie, got "${c.outcome}"`);
    const ia = intern(c.a);
    const ib = intern(c.b);
    counts[ia] = (counts[ia] ?? 0) + 1;
    counts[ib] = (counts[ib] ?? 0) + 1;
    const [i, j] = ia < ib ? [ia, ib] : [ib, ia];
    const key = `${i},${j}`;
    let p = pairIndex.get(key);
    if (p === undefined) {
      p = pairs.length;
      pairs.push({ i, j, winsI: 0, winsJ: 0, ties: 0, squared: 0 });
      pairIndex.set(key, p);
    }
    const pair = pairs[p] as Pair;
    pair.squared += w * w;
    if (c.outcome === "tie") pair.ties += w;
    else if ((c.outcome === "a") === (ia === i)) pair.winsI += w;
    else pair.winsJ += w;
  }
  const n = names.length;
  const adjacent: number[][] = Array.from({ length: n }, () => []);
  pairs.forEach((p, k) => {
    (adjacent[p.i] as number[]).push(k);
    (adjacent[p.j] as number[]).push(k);
  });
  const won = new Float64Array(n).fill(lambda);
  let totalTies = 0;
  for (const p of pairs) {
    won[p.i] = (won[p.i] as number) + p.winsI + p.ties / 2;
    won[p.j] = (won[p.j] as number) + p.winsJ + p.ties / 2;
    totalTies += p.ties;
  }

  const pi = new Float64Array(n).fill(1);
  let nu = totalTies > 0 ? 1 : 0;
  let iterations = 0;
  let converged = false;
  while (iterations < maxIterations && !converged) {
    iterations++;
    let change = 0;
    for (let i = 0; i < n; i++) {
      const own = pi[i] as number;
      let denominator = (2 * lambda) / (own + 1);
      for (const k of adjacent[i] as number[]) {
        const p = pairs[k] as Pair;
        const other = pi[p.i === i ? p.j : p.i] as number;
        const total = p.winsI + p.winsJ + p.ties;
        if (total === 0) continue;
        const root = Math.sqrt(own * other);
        denominator += (total * (1 + (nu / 2) * Math.sqrt(other / own))) / (own + other + nu * root);
      }
      const next = (won[i] as number) / denominator;
      change = Math.max(change, Math.abs(Math.log(next / own)));
      pi[i] = next;
    }
    if (totalTies > 0) {
      let denominator = 0;
      for (const p of pairs) {
        const total = p.winsI + p.winsJ + p.ties;
        if (total === 0) continue;
        const root = Math.sqrt((pi[p.i] as number) * (pi[p.j] as number));
        denominator += (total * root) / ((pi[p.i] as number) + (pi[p.j] as number) + nu * root);
      }
      const next = totalTies / (denominator + TIE_PRIOR_RATE);
      change = Math.max(change, Math.abs(next - nu));
      nu = next;
    }
    converged = change < tolerance;
  }

  const raw = Array.from(pi, (p) => Math.log(p));
  const center = n > 0 ? raw.reduce((x, y) => x + y, 0) / n : 0;
  const scores = raw.map((s) => s - center);
  const variance = scoreVariances(pairs, pi, nu, lambda);
  const order = names
    .map((_, i) => i)
    .sort((x, y) => (scores[y] as number) - (scores[x] as number) || ((names[x] as string) < (names[y] as string) ? -1 : 1));
  const items: RankedItem[] = [];
  let rank = 1;
  order.forEach((i, position) => {
    if (position > 0 && (scores[i] as number) < (scores[order[position - 1] as number] as number)) rank = position + 1;
    const se = Math.sqrt(variance[i] as number);
    const s = scores[i] as number;
    items.push({ item: names[i] as string, score: s, rank, ciLow: s - Z95 * se, ciHigh: s + Z95 * se, comparisons: counts[i] ?? 0 });
  });
  return { items, tieParameter: nu, iterations, converged };
}

/**
 * Variances of the centered scores (module doc): Cov = H^-1 J H^-1, H = the observed information of the
 * penalized weighted log-likelihood in s, J = the same with squared weights (the prior's games count once in
 * both), projected on sum-zero scores: Var(c_i) = x_i' J x_i with x_i = H^-1 (e_i - 1/n). H is factored once
 * (Cholesky, dense, row-major Float64Array) and solved per item; J is applied pair by pair, never formed.
 * Written here rather than with ml-matrix: its generic solve and products took 170 s at 1,000 items on the
 * development machine, this takes O(n^3 / 6 + n^3 / 2) flops in typed arrays and O(n x pairs) for J.
 * @throws RangeError if H is not positive definite (it is whenever priorGames > 0)
 */
function scoreVariances(pairs: readonly Pair[], pi: Float64Array, nu: number, lambda: number): number[] {
  const n = pi.length;
  if (n === 0) return [];
  const h = new Float64Array(n * n);
  const prior = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const p = (pi[i] as number) / ((pi[i] as number) + 1);
    prior[i] = 2 * lambda * p * (1 - p);
    h[i * n + i] = prior[i] as number;
  }
  // per pair, the 2 x 2 block of one comparison's information: (ii, jj, ij)
  const blocks = new Float64Array(pairs.length * 3);
  pairs.forEach((pair, k) => {
    const total = pair.winsI + pair.winsJ + pair.ties;
    const a = pi[pair.i] as number;
    const b = pi[pair.j] as number;
    const root = nu * Math.sqrt(a * b);
    const d = a + b + root;
    const pa = a / d;
    const pb = b / d;
    const pt = root / d;
    const da = pa + pt / 2;
    const db = pb + pt / 2;
    const hii = pa + pt / 4 - da * da;
    const hjj = pb + pt / 4 - db * db;
    const hij = pt / 4 - da * db;
    blocks[3 * k] = hii;
    blocks[3 * k + 1] = hjj;
    blocks[3 * k + 2] = hij;
    h[pair.i * n + pair.i] = (h[pair.i * n + pair.i] as number) + total * hii;
    h[pair.j * n + pair.j] = (h[pair.j * n + pair.j] as number) + total * hjj;
    h[pair.i * n + pair.j] = (h[pair.i * n + pair.j] as number) + total * hij;
    h[pair.j * n + pair.i] = (h[pair.j * n + pair.i] as number) + total * hij;
  });
  choleskyInPlace(h, n);
  const ones = new Float64Array(n).fill(1 / n);
  const u = solveFactored(h, n, ones);
  const out: number[] = [];
  const e = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    e.fill(0);
    e[i] = 1;
    const x = solveFactored(h, n, e);
    for (let k = 0; k < n; k++) x[k] = (x[k] as number) - (u[k] as number);
    let v = 0;
    for (let k = 0; k < n; k++) v += (prior[k] as number) * (x[k] as number) * (x[k] as number);
    pairs.forEach((pair, k) => {
      const xi = x[pair.i] as number;
      const xj = x[pair.j] as number;
      v +=
        pair.squared *
        ((blocks[3 * k] as number) * xi * xi + (blocks[3 * k + 1] as number) * xj * xj + 2 * (blocks[3 * k + 2] as number) * xi * xj);
    });
    out.push(Math.max(v, 0));
  }
  return out;
}

/** Cholesky factorization A = L L' in place (lower triangle of the row-major n x n `a` becomes L). */
function choleskyInPlace(a: Float64Array, n: number): void {
  for (let j = 0; j < n; j++) {
    const rj = j * n;
    let d = a[rj + j] as number;
    for (let k = 0; k < j; k++) d -= (a[rj + k] as number) * (a[rj + k] as number);
    if (!(d > 0)) throw new RangeError("the information matrix is not positive definite");
    const l = Math.sqrt(d);
    a[rj + j] = l;
    for (let i = j + 1; i < n; i++) {
      const ri = i * n;
      let s = a[ri + j] as number;
      for (let k = 0; k < j; k++) s -= (a[ri + k] as number) * (a[rj + k] as number);
      a[ri + j] = s / l;
    }
  }
}

/** Solves L L' x = b with the factor of `choleskyInPlace` (b is not changed). */
function solveFactored(l: Float64Array, n: number, b: Float64Array): Float64Array {
  const z = Float64Array.from(b);
  let first = 0;
  while (first < n && z[first] === 0) first++;
  for (let k = first; k < n; k++) {
    const rk = k * n;
    let s = z[k] as number;
    for (let m = first; m < k; m++) s -= (l[rk + m] as number) * (z[m] as number);
    z[k] = s / (l[rk + k] as number);
  }
  for (let k = n - 1; k >= 0; k--) {
    const rk = k * n;
    const y = (z[k] as number) / (l[rk + k] as number);
    z[k] = y;
    for (let m = 0; m < k; m++) z[m] = (z[m] as number) - (l[rk + m] as number) * y;
  }
  return z;
}
