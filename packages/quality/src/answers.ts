/** Helpers shared by the aggregators of the contract §task-types types. */

/**
 * The answers of one task in canonical order: sorted by labeler id (code-unit order), so that an aggregator's
 * result does not depend on the order the answers arrived in (sums of floating-point terms included).
 * @throws RangeError when two answers have the same labeler id (a task takes one answer per labeler)
 */
export function byLabeler<A extends { labelerId: string }>(answers: readonly A[]): A[] {
  const sorted = [...answers].sort((a, b) => (a.labelerId < b.labelerId ? -1 : a.labelerId > b.labelerId ? 1 : 0));
  for (let i = 1; i < sorted.length; i++) {
    if ((sorted[i] as A).labelerId === (sorted[i - 1] as A).labelerId) {
      throw new RangeError(`two answers of labeler ${(sorted[i] as A).labelerId} in one task`);
    }
  }
  return sorted;
}
