/**
 * What the console's consensus view of a task type is (contract §task-types): each reserved type's folder,
 * app/types/<type>/View.tsx, exports one (`ConsensusView`); app/types/registry.ts collects them by `TaskTypeName`.
 * A view draws a consensus (its parts with their confidences) or a gold task's `gold_answer` (the same shape
 * without confidences) over the task's item. Shared helpers of the views are here.
 *
 * Colors are classes of console.css (`tt-color-<n>`, by the name's place in the label_spec): the CSP allows no
 * inline style.
 */
import type { Ranking, Task } from "@labelgate/sdk/browser";
import type { ReactNode } from "react";
import { formatShare } from "../../shared/format";

/** A consensus of a reserved type, or a gold task's answer of one. */
export type ConsensusValue = NonNullable<Task["consensus"]> | NonNullable<Task["gold_answer"]>;

/** What a view draws: `value` of `task`; `posterior` (option → P) when known; `source` says which it is. */
export interface ConsensusViewProps {
  task: Task;
  value: ConsensusValue;
  posterior: Record<string, number> | null;
  source: "consensus" | "gold";
}

/** The consensus view of one reserved task type. */
export interface ConsensusView {
  /** what the type's answer is made of, for a heading ("Options", "Boxes", "Spans") */
  parts: string;
  /**
   * the item the view draws with the parts (boxes over the image, spans over the text), which a page then does not
   * show again; null when the view draws the parts alone (the page shows the item as the labeler saw it)
   */
  drawsItem: "image" | "text" | null;
  /** the drawing of `props.value`, or null when the value is not of this type's shape */
  render: (props: ConsensusViewProps) => ReactNode;
  /**
   * the ranking of the items a batch's or a job's tasks of this type compared (`GET /v1/batches/{id}/ranking`,
   * `GET /v1/jobs/{id}/ranking`), for a type whose tasks are ranked (pairwise_comparison); a job of such a type
   * links to its `/ranking/:id` page
   */
  ranking?: (props: { items: Ranking["items"] }) => ReactNode;
}

/** Number of colors of console.css's `tt-color-<n>`. */
const COLORS = 8;

/** The color class of `name`: by its place among the spec's names (names outside the spec share the last). */
export function colorClass(names: readonly string[], name: string): string {
  const i = names.indexOf(name);
  return `tt-color-${(i < 0 ? names.length : i) % COLORS}`;
}

/** A confidence as a percentage, `—` when there is none (a gold answer). */
export function percent(p: number | undefined): string {
  return formatShare(p ?? null);
}

/** A coordinate in pixels, at most one decimal. */
export function px(n: number): string {
  return String(Math.round(n * 10) / 10);
}
