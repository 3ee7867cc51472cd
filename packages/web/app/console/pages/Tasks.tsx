/**
 * Tasks: the server-side paginated list of GET /v1/dashboard/tasks (filter by status, sort, page size).
 * The page, filter and sort are in the page's URL (`?page=2&status=settled`), never anything secret.
 */
import { OPERATIONS, type Task } from "@labelgate/sdk/browser";
import { Card, Code, Group, Pagination, Select, Text } from "@mantine/core";
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

/**
 * The list of a customer with no task yet: a sample item the gateway serves (data/samples) and the request
 * that makes a task of it, to try in a terminal.
 */
function FirstTask() {
  const origin = window.location.origin;
  const body = JSON.stringify({
    type: "image_classification",
    data_url: `${origin}/samples/cat.svg`,
    label_spec: { question: "What animal is this?", options: ["cat", "dog"] },
  });
  return (
    <Card withBorder data-testid="first-task">
      <Text fw={600} mb="xs">
        No task yet. Here is one to try
      </Text>
      <Group align="flex-start" wrap="wrap">
        <img src="/samples/cat.svg" alt="A sample item: a drawn cat" className="sample-image" width={160} height={120} />
        <Text size="sm" className="first-task-text">
          A sample picture this gateway serves. Submit it as a task with your API key, then label it in the labeler app (
          <code>/label/</code>):
        </Text>
      </Group>
      <Code block mt="sm" className="consensus-json">
        {`curl ${origin}${OPERATIONS.createTask.path} -H "authorization: Bearer $KEY" -H 'content-type: application/json' -d '${body}'`}
      </Code>
    </Card>
  );
}

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
        {(data) =>
          data.total === 0 && !status ? (
            <FirstTask />
          ) : (
            <DataTable columns={columns} data={data.items} caption="Tasks" rowKey={(t) => t.task_id} empty="No task matches." />
          )
        }
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
