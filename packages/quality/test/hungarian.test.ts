/** Hungarian assignment (`minCostAssignment`): against brute force on small matrices, rectangular shapes, errors. */
import fc from "fast-check";
import { minCostAssignment } from "../src/hungarian";

/** Every injective assignment of the smaller side, by enumeration: the least total cost. */
function bruteForce(cost: number[][]): number {
  const n = cost.length;
  const m = cost[0]?.length ?? 0;
  const k = Math.min(n, m);
  let best = Number.POSITIVE_INFINITY;
  const usedCols = new Set<number>();
  const walk = (row: number, assigned: number, total: number) => {
    if (assigned === k) {
      best = Math.min(best, total);
      return;
    }
    if (row === n || n - row < k - assigned) return;
    // rows may be skipped only when n > m
    if (n > m) walk(row + 1, assigned, total);
    for (let j = 0; j < m; j++) {
      if (usedCols.has(j)) continue;
      usedCols.add(j);
      walk(row + 1, assigned + 1, total + ((cost[row] as number[])[j] as number));
      usedCols.delete(j);
    }
  };
  walk(0, 0, 0);
  return best;
}

function total(cost: number[][], rowToCol: number[]): number {
  return rowToCol.reduce((s, j, i) => (j >= 0 ? s + ((cost[i] as number[])[j] as number) : s), 0);
}

describe("minCostAssignment", () => {
  it("solves the textbook example", () => {
    const cost = [
      [400, 150, 400],
      [400, 450, 600],
      [300, 225, 300],
    ];
    expect(minCostAssignment(cost)).toEqual([1, 0, 2]);
  });

  it("matches brute force on random matrices, square and rectangular", () => {
    const matrix = fc
      .tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 5 }))
      .chain(([n, m]) =>
        fc.array(fc.array(fc.integer({ min: -20, max: 50 }), { minLength: m, maxLength: m }), { minLength: n, maxLength: n }),
      );
    fc.assert(
      fc.property(matrix, (cost) => {
        const rowToCol = minCostAssignment(cost);
        const n = cost.length;
        const m = cost[0]?.length ?? 0;
        const cols = rowToCol.filter((j) => j >= 0);
        expect(cols.length).toBe(Math.min(n, m));
        expect(new Set(cols).size).toBe(cols.length);
        expect(total(cost, rowToCol)).toBe(bruteForce(cost));
      }),
      { numRuns: 300, seed: 30 },
    );
  });

  it("leaves extra rows unassigned when there are more rows than columns", () => {
    const rowToCol = minCostAssignment([[5], [1], [3]]);
    expect(rowToCol).toEqual([-1, 0, -1]);
  });

  it("handles empty matrices", () => {
    expect(minCostAssignment([])).toEqual([]);
    expect(minCostAssignment([[], []])).toEqual([-1, -1]);
  });

  it("refuses ragged rows and non-finite costs", () => {
    expect(() => minCostAssignment([[1, 2], [3]])).toThrow(RangeError);
    expect(() => minCostAssignment([[1, Number.NaN]])).toThrow(/finite/);
    expect(() => minCostAssignment([[Number.POSITIVE_INFINITY]])).toThrow(/finite/);
  });
});
