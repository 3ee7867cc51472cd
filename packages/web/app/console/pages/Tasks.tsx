/**
 * Tasks: the server-side paginated list of GET /v1/dashboard/tasks (filter by status, sort, page size).
 * The page, filter and sort are in the page's URL (`?page=2&status=settled`), never anything secret.
 */
import type { Task } from "@labelgate/sdk/browser";
import { Group, Pagination, Select, Text } from "@mantine/core";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import { useSearchParams } from "react-router";
import { formatCount, formatShare, formatTime } from "../../shared/format";
import { useSession } from "../auth";
import { IdLink, PageHeader, QueryView, StatusBadge } from "../components/common";
import { type CoreFeatures, DataTable } from "../components/DataTable";
import { TASK_SORTS, TASK_STATUSES, taskListParams, taskListQuery } from "../queries";
import { consensusSummary } from "../task-types/summary";

const STATUSES = TASK_STATUSES;
const SORTS = TASK_SORTS;
const PAGE_SIZES = ["20", "50", "100"];

const helper = createColumnHelper<CoreFeatures, Task>();
const columns = helper.columns([
  helper.accessor("task_id", { header: "Task", cell: (info) => <IdLink section="tasks" id={info.getValue()} /> }),
  helper.accessor("status", { header: "Status", cell: (info) => <StatusBadge status={info.getValue()} /> }),
  helper.accessor((t) => t.label_spec.question, {
    id: "question",
    header: "Question",
    cell: (info) => (
      <Text size="sm" lineClamp={2}>
        {info.getValue()}
      </Text>
    ),
  }),
  helper.accessor("labels_collected", {
    header: "Labels",
    cell: (info) => `${info.getValue()} / ${info.row.original.consensus_threshold}`,
  }),
  // a reserved type's consensus as a summary of its parts, the canonical JSON in its title
  helper.accessor((t) => consensusSummary(t), {
    id: "consensus",
    header: "Consensus",
    cell: (info) => {
      const summary = info.getValue();
      if (summary === null) return "—";
      const label = info.row.original.consensus_label;
      return (
        <Text size="sm" lineClamp={2} title={label !== summary ? (label ?? undefined) : undefined} data-testid="consensus-summary">
          {summary}
        </Text>
      );
    },
  }),
  helper.accessor("confidence", { header: "Confidence", cell: (info) => formatShare(info.getValue()) }),
  helper.accessor("created_at", { header: "Created", cell: (info) => formatTime(info.getValue()) }),
  helper.accessor("settled_at", { header: "Settled", cell: (info) => formatTime(info.getValue()) }),
]);

export function TasksPage() {
  const { client } = useSession();
  const [params, setParams] = useSearchParams();
  const listParams = taskListParams(params);
  const { page, perPage, status, sort } = listParams;
  const query = useQuery({ ...taskListQuery(client, listParams), placeholderData: keepPreviousData, refetchInterval: 5000 });
  const update = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v === null || v === "") next.delete(k);
      else next.set(k, v);
    }
    setParams(next);
  };
  const total = query.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / perPage));
  return (
    <>
      <PageHeader title="Tasks">{query.data ? `${formatCount(total)} tasks${status ? ` ${status}` : ""}` : "Loading…"}</PageHeader>
      <Group mb="sm" align="flex-end">
        <Select
          label="Status"
          data={[{ value: "", label: "All statuses" }, ...STATUSES.map((s) => ({ value: s, label: s }))]}
          value={status}
          onChange={(v) => update({ status: v, page: null })}
          allowDeselect={false}
          w={170}
        />
        <Select
          label="Sort"
          data={SORTS}
          value={sort}
          onChange={(v) => update({ sort: v === "created_at_desc" ? null : v, page: null })}
          allowDeselect={false}
          w={190}
        />
        <Select
          label="Per page"
          data={PAGE_SIZES}
          value={String(perPage)}
          onChange={(v) => update({ per_page: v === "20" ? null : v, page: null })}
          allowDeselect={false}
          w={110}
        />
      </Group>
      <QueryView query={query}>
        {(data) => <DataTable columns={columns} data={data.items} caption="Tasks" rowKey={(t) => t.task_id} empty="No task matches." />}
      </QueryView>
      <Group justify="space-between" mt="md">
        <Text size="sm" c="dimmed">
          Page {page} of {formatCount(pages)}
        </Text>
        <Pagination
          total={pages}
          value={Math.min(page, pages)}
          onChange={(p) => update({ page: p === 1 ? null : String(p) })}
          getControlProps={(control) => ({ "aria-label": `${control} page` })}
          getItemProps={(p) => ({ "aria-label": `Page ${p}` })}
        />
      </Group>
    </>
  );
}
