/** Manifest jobs: every job with its live progress (settled share of its tasks). */
import type { Job } from "@labelgate/sdk/browser";
import { Text } from "@mantine/core";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";
import { Link } from "react-router";
import { formatCount, formatShare, formatTime } from "../../shared/format";
import { useSession } from "../auth";
import { LabeledProgress, PageHeader, Pager, QueryView, StatusBadge } from "../components/common";
import { type CoreFeatures, DataTable } from "../components/DataTable";

const OPEN = new Set(["queued", "ingesting", "labeling"]);

const helper = createColumnHelper<CoreFeatures, Job>();
const columns = helper.columns([
  helper.accessor("job_id", {
    header: "Job",
    cell: (info) => (
      <Link to={`/jobs/${encodeURIComponent(info.getValue())}`} className="mono">
        {info.getValue()}
      </Link>
    ),
  }),
  helper.accessor("status", { header: "Status", cell: (info) => <StatusBadge status={info.getValue()} /> }),
  helper.accessor("manifest_url", {
    header: "Manifest",
    cell: (info) => (
      <Text size="sm" className="break-all">
        {info.getValue()}
      </Text>
    ),
  }),
  helper.accessor("progress", {
    header: "Progress",
    cell: (info) => {
      const j = info.row.original;
      return (
        <div>
          <LabeledProgress value={j.progress * 100} label={`Job ${j.job_id} progress`} color={j.status === "failed" ? "red" : "green"} />
          <Text size="xs" c="dimmed">
            {formatCount(j.tasks_settled)} / {formatCount(j.task_count)} settled ({formatShare(j.progress, 0)})
          </Text>
        </div>
      );
    },
  }),
  helper.accessor("created_at", { header: "Created", cell: (info) => formatTime(info.getValue()) }),
]);

export function JobsPage() {
  const { client } = useSession();
  const [page, setPage] = useState(1);
  const query = useQuery({
    queryKey: ["jobs", page],
    queryFn: () => client.jobs.list({ page, per_page: 20 }),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.items.some((j) => OPEN.has(j.status)) ? 2000 : 15_000),
  });
  return (
    <>
      <PageHeader title="Jobs">Manifest jobs (POST /v1/jobs) and their exports.</PageHeader>
      <QueryView query={query}>
        {(data) => (
          <>
            <DataTable columns={columns} data={data.items} caption="Manifest jobs" rowKey={(j) => j.job_id} empty="No manifest job yet." />
            <Pager page={page} total={data.total} perPage={data.per_page} onChange={setPage} />
          </>
        )}
      </QueryView>
    </>
  );
}
