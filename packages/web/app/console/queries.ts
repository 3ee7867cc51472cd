/**
 * Query definitions shared by a page and the start-up prefetch (main.tsx): the first page of the task list
 * is requested while the page's code is still loading, so a deep link to /console/tasks does not wait for
 * the whole app to boot before asking the gateway.
 */
import type { LabelgateClient, TaskSort, TaskStatus } from "@labelgate/sdk/browser";

export const TASK_STATUSES: TaskStatus[] = ["pending", "labeling", "settling", "settled", "canceled"];
export const TASK_SORTS: { value: TaskSort; label: string }[] = [
  { value: "created_at_desc", label: "Newest first" },
  { value: "created_at_asc", label: "Oldest first" },
  { value: "settled_at_desc", label: "Recently settled" },
];

export interface TaskListParams {
  page: number;
  perPage: number;
  status: TaskStatus | "";
  sort: TaskSort;
}

function positive(value: string | null, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/** The task list's parameters from its URL query (`?page=&per_page=&status=&sort=`), defaults filled in. */
export function taskListParams(search: URLSearchParams): TaskListParams {
  const status = TASK_STATUSES.find((s) => s === search.get("status")) ?? "";
  const sort = TASK_SORTS.find((s) => s.value === search.get("sort"))?.value ?? "created_at_desc";
  return { page: positive(search.get("page"), 1), perPage: positive(search.get("per_page"), 20), status, sort };
}

/** The query of one page of GET /v1/dashboard/tasks. */
export function taskListQuery(client: LabelgateClient, p: TaskListParams) {
  return {
    queryKey: ["tasks", p] as const,
    queryFn: () => client.dashboard.tasks({ page: p.page, per_page: p.perPage, status: p.status, sort: p.sort }),
  };
}
