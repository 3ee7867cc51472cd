/**
 * Minimum-cost assignment (the Hungarian method: Kuhn 1955, "The Hungarian method for the assignment problem",
 * Naval Research Logistics Quarterly 2; Munkres 1957, "Algorithms for the assignment and transportation problems",
 * J. SIAM 5(1)), in the O(n^2 m) shortest-augmenting-path form with row and column potentials (Jonker & Volgenant
 * 1987, "A shortest augmenting path algorithm for dense and sparse linear assignment problems", Computing 38).
 *
 * Written here rather than taken from npm: the packages found (munkres-js 1.2.2, hungarian-on3 0.3.1) have had no
 * release for years, and the method is 40 lines. Deterministic: ties go to the lowest column index.
 */

/**
 * The assignment of rows to columns that minimizes the total cost, for an n x m matrix (rectangular allowed):
 * min(n, m) pairs, every row and every column used at most once. Returns, per row, its column or -1 (a row left
 * over when n > m).
 * @throws RangeError when the rows have different lengths or a cost is not finite
 */
export function minCostAssignment(cost: readonly (readonly number[])[]): number[] {
  const n = cost.length;
  if (n === 0) return [];
  const m = (cost[0] as readonly number[]).length;
  for (const row of cost) {
    if (row.length !== m) throw new RangeError("every row of the cost matrix must have the same length");
    for (const c of row) if (!Number.isFinite(c)) throw new RangeError(`costs must be finite numbers, got ${c}`);
  }
  if (m === 0) return new Array<number>(n).fill(-1);
  if (n <= m) return assignRows(n, m, (i, j) => (cost[i] as readonly number[])[j] as number);
  // more rows than columns: solve the transpose, then invert it
  const colToRow = assignRows(m, n, (i, j) => (cost[j] as readonly number[])[i] as number);
  const rowToCol = new Array<number>(n).fill(-1);
  colToRow.forEach((row, col) => {
    if (row >= 0) rowToCol[row] = col;
  });
  return rowToCol;
}

/** n <= m: every row gets a column. a(i, j) is the cost of row i in column j (0-based). */
function assignRows(n: number, m: number, a: (i: number, j: number) => number): number[] {
  // 1-based potentials u (rows) and v (columns); p[j] = row assigned to column j (0 = none); way = the path
  const u = new Float64Array(n + 1);
  const v = new Float64Array(m + 1);
  const p = new Int32Array(m + 1);
  const way = new Int32Array(m + 1);
  const minv = new Float64Array(m + 1);
  const used = new Uint8Array(m + 1);
  for (let i = 1; i <= n; i++) {
    p[0] = i;
    let j0 = 0;
    minv.fill(Number.POSITIVE_INFINITY);
    used.fill(0);
    do {
      used[j0] = 1;
      const i0 = p[j0] as number;
      let delta = Number.POSITIVE_INFINITY;
      let j1 = 0;
      for (let j = 1; j <= m; j++) {
        if (used[j]) continue;
        const cur = a(i0 - 1, j - 1) - (u[i0] as number) - (v[j] as number);
        if (cur < (minv[j] as number)) {
          minv[j] = cur;
          way[j] = j0;
        }
        if ((minv[j] as number) < delta) {
          delta = minv[j] as number;
          j1 = j;
        }
      }
      for (let j = 0; j <= m; j++) {
        if (used[j]) {
          const row = p[j] as number;
          u[row] = (u[row] as number) + delta;
          v[j] = (v[j] as number) - delta;
        } else {
          minv[j] = (minv[j] as number) - delta;
        }
      }
      j0 = j1;
    } while (p[j0] !== 0);
    do {
      const j1 = way[j0] as number;
      p[j0] = p[j1] as number;
      j0 = j1;
    } while (j0 !== 0);
  }
  const rowToCol = new Array<number>(n).fill(-1);
  for (let j = 1; j <= m; j++) {
    const row = p[j] as number;
    if (row > 0) rowToCol[row - 1] = j - 1;
  }
  return rowToCol;
}
