/**
 * Reading Postgres plans in tests: `EXPLAIN (FORMAT JSON)` gives one tree of nodes; the plan tests
 * (services/gateway/test/dashboard.test.ts, packages/store/test/claim-plan.test.ts) check every node of it.
 */

/** One node of an `EXPLAIN (FORMAT JSON)` plan: the fields the plan tests read. */
export interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

/** The node and all nodes under it, depth first. */
export function planNodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(planNodes)];
}
