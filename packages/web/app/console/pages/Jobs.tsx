/** Manifest jobs: every job with its live progress (settled share of its tasks). */
import type { Job } from "@labelgate/sdk/browser";
import { Text } from "@mantine/core";
import { createColumnHelper } from "@tanstack/react-table";
import { formatCount, formatShare, formatTime } from "../../shared/format";
import { useSession } from "../auth";
import { IdLink, LabeledProgress, PageHeader, StatusBadge } from "../components/common";
import { type CoreFeatures, PagedTable } from "../components/DataTable";

const OPEN = new Set(["queued", "ingesting", "labeling"]);

const helper = createColumnHelper<CoreFeatures, Job>();
const columns = helper.columns([
  helper.accessor("job_id", { header: "Job", cell: (info) => <IdLink section="jobs" id={info.getValue()} /> }),
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
  return (
    <>
      <PageHeader title="Jobs">Manifest jobs (POST /v1/jobs) and their exports.</PageHeader>
      <PagedTable
        queryKey="jobs"
        list={(query) => client.jobs.list(query)}
        live={(j) => OPEN.has(j.status)}
        columns={columns}
        caption="Manifest jobs"
        rowKey={(j) => j.job_id}
        empty="No manifest job yet."
      />
    </>
  );
}
