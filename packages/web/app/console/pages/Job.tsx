/** A manifest job: status, progress (live while open), error, and the streamed export download. */
import { type Job, taskTypeNameOf } from "@labelgate/sdk/browser";
import { Alert, Button, Card, Group, Stack, Table, Text } from "@mantine/core";
import { useState } from "react";
import { Link } from "react-router";
import { errorMessage } from "../../shared/client";
import { formatCount, formatShare, formatTime } from "../../shared/format";
import { specChoices } from "../../shared/label-spec";
import { CONSENSUS_VIEWS } from "../../types/registry";
import { useSession } from "../auth";
import { LabeledProgress } from "../components/common";
import { ItemPage, StatusCard, useItem } from "../components/ItemPage";
import { canSaveToFile, downloadExport, type ExportProgress } from "../export";

const OPEN = new Set(["queued", "ingesting", "labeling"]);

export function JobPage() {
  const { id, item } = useItem("job", (client, jobId) => client.jobs.get(jobId), { everyMs: 2000, until: (j) => !OPEN.has(j.status) });
  return (
    <ItemPage id={id} kind="Manifest job" item={item}>
      {(j) => (
        <Stack>
          <StatusCard status={j.status} createdAt={j.created_at} gap="xs">
            <Text fw={600}>
              {formatCount(j.tasks_settled)} of {formatCount(j.task_count)} tasks settled ({formatShare(j.progress, 0)})
            </Text>
            <LabeledProgress
              value={j.progress * 100}
              size="lg"
              mt={4}
              label={`Job ${j.job_id} progress`}
              color={j.status === "failed" ? "red" : "green"}
            />
            {j.error && (
              <Alert color="red" title="The job failed" mt="sm" role="alert">
                {j.error}
              </Alert>
            )}
          </StatusCard>
          <JobDetails job={j} />
          {CONSENSUS_VIEWS[taskTypeNameOf(j.type)]?.ranking && (
            <Button component={Link} to={`/ranking/${j.job_id}`} variant="light" w="fit-content" data-testid="ranking-link">
              Ranking of the compared items
            </Button>
          )}
          <ExportCard job={j} />
        </Stack>
      )}
    </ItemPage>
  );
}

function JobDetails({ job }: { job: Job }) {
  const rows: [string, string][] = [
    ["Manifest", job.manifest_url],
    ["Question", job.label_spec.question],
    ["Options", specChoices(job.type, job.label_spec).join(", ")],
    ["Type", job.type],
    ["Consensus threshold", String(job.consensus_threshold)],
    ["Lines ingested", formatCount(job.lines_ingested)],
    ["Started", formatTime(job.started_at)],
    ["Ingested", formatTime(job.ingested_at)],
    ["Completed", formatTime(job.completed_at)],
    ["Export written to", job.output_url ? `${job.output_url} (${formatTime(job.export_written_at)})` : "—"],
  ];
  return (
    <Card withBorder>
      <Table>
        <Table.Tbody>
          {rows.map(([k, v]) => (
            <Table.Tr key={k}>
              <Table.Th scope="row">{k}</Table.Th>
              <Table.Td className="break-all">{v}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Card>
  );
}

function ExportCard({ job }: { job: Job }) {
  const { client } = useSession();
  const [progress, setProgress] = useState<ExportProgress | null>(null);
  const [state, setState] = useState<"idle" | "running" | "done" | "failed">("idle");
  const [error, setError] = useState<string | null>(null);
  const run = async (mode: "file" | "blob") => {
    setState("running");
    setError(null);
    setProgress({ bytes: 0, lines: 0 });
    try {
      const total = await downloadExport(client, job.job_id, mode, setProgress);
      setProgress(total);
      setState("done");
    } catch (err) {
      if (err instanceof DOMException && err.name === "AbortError") {
        setState("idle");
        return;
      }
      setError(errorMessage(err));
      setState("failed");
    }
  };
  const ready = job.status === "completed";
  return (
    <Card withBorder>
      <Text fw={600} mb={4}>
        Export (JSONL, one line per manifest line)
      </Text>
      {!ready && <Text size="sm">The export is available once the job is completed.</Text>}
      <Group mt="xs">
        <Button onClick={() => run("blob")} disabled={!ready || state === "running"} loading={state === "running"}>
          Download export
        </Button>
        {canSaveToFile() && (
          <Button variant="light" onClick={() => run("file")} disabled={!ready || state === "running"}>
            Save export to a file…
          </Button>
        )}
      </Group>
      <div aria-live="polite" data-testid="export-progress">
        {progress && state !== "idle" && (
          <Text size="sm" mt="xs">
            {state === "done" ? "Saved" : "Downloading"}: {formatCount(progress.lines)} lines,{" "}
            {formatCount(Math.round(progress.bytes / 1024))} KiB
          </Text>
        )}
      </div>
      {error && (
        <Alert color="red" title="The export did not complete" mt="sm" role="alert">
          {error}
        </Alert>
      )}
    </Card>
  );
}
