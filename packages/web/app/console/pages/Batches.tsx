/**
 * Batches: a form that submits a batch (question, options, one item URL per line), opening a batch by id,
 * and the list of batches with live progress where the gateway has `GET /v1/batches`.
 */
import type { Batch } from "@labelgate/sdk/browser";
import { Alert, Button, Card, Group, NumberInput, Stack, Text, Textarea, TextInput, Title } from "@mantine/core";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import { type FormEvent, useState } from "react";
import { Link, useNavigate } from "react-router";
import { ROUTE, useCapabilities } from "../../shared/capabilities";
import { errorMessage } from "../../shared/client";
import { formatTime } from "../../shared/format";
import { useSession } from "../auth";
import { PageHeader, Pager, QueryView, StatusBadge, StatusProgress } from "../components/common";
import { type CoreFeatures, DataTable } from "../components/DataTable";

const helper = createColumnHelper<CoreFeatures, Batch>();
const columns = helper.columns([
  helper.accessor("batch_id", {
    header: "Batch",
    cell: (info) => (
      <Link to={`/batches/${encodeURIComponent(info.getValue())}`} className="mono">
        {info.getValue()}
      </Link>
    ),
  }),
  helper.accessor("status", { header: "Status", cell: (info) => <StatusBadge status={info.getValue()} /> }),
  helper.accessor("task_count", { header: "Tasks" }),
  helper.display({
    id: "progress",
    header: "Progress",
    cell: (info) => (
      <StatusProgress
        counts={info.row.original.counts}
        total={info.row.original.task_count}
        label={`Batch ${info.row.original.batch_id}`}
      />
    ),
  }),
  helper.accessor("created_at", { header: "Created", cell: (info) => formatTime(info.getValue()) }),
]);

export function BatchesPage() {
  const caps = useCapabilities();
  return (
    <>
      <PageHeader title="Batches">Submit tasks in a batch and watch them settle.</PageHeader>
      <Stack>
        <NewBatch />
        <OpenBatch />
        {caps.has(ROUTE.listBatches) ? (
          <BatchList />
        ) : (
          caps.loaded && (
            <Text size="sm" c="dimmed">
              This gateway has no batch list route yet (GET /v1/batches): open a batch by its id, or from a task's page.
            </Text>
          )
        )}
      </Stack>
    </>
  );
}

function BatchList() {
  const { client } = useSession();
  const [page, setPage] = useState(1);
  const query = useQuery({
    queryKey: ["batches", page],
    queryFn: () => client.batches.list({ page, per_page: 20 }),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.items.some((b) => b.status !== "completed") ? 2000 : 15_000),
  });
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        Your batches
      </Title>
      <QueryView query={query}>
        {(data) => (
          <>
            <DataTable columns={columns} data={data.items} caption="Batches" rowKey={(b) => b.batch_id} empty="No batch yet." />
            <Pager page={page} total={data.total} perPage={data.per_page} onChange={setPage} />
          </>
        )}
      </QueryView>
    </Card>
  );
}

function OpenBatch() {
  const navigate = useNavigate();
  const [id, setId] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (id.trim()) navigate(`/batches/${encodeURIComponent(id.trim())}`);
  };
  return (
    <Card withBorder>
      <form onSubmit={submit}>
        <Group align="flex-end">
          <TextInput label="Open a batch by id" placeholder="bat_…" value={id} onChange={(e) => setId(e.currentTarget.value)} w={320} />
          <Button type="submit" variant="light">
            Open
          </Button>
        </Group>
      </form>
    </Card>
  );
}

/** Splits the options field: one per line, or comma-separated on one line; blanks dropped. */
function parseOptions(text: string): string[] {
  const parts = text.includes("\n") ? text.split("\n") : text.split(",");
  return parts.map((s) => s.trim()).filter((s) => s.length > 0);
}

function NewBatch() {
  const { client } = useSession();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [question, setQuestion] = useState("");
  const [options, setOptions] = useState("");
  const [urls, setUrls] = useState("");
  const [threshold, setThreshold] = useState<number>(3);
  const submit = useMutation({
    mutationFn: () => {
      const opts = parseOptions(options);
      const items = urls
        .split("\n")
        .map((u) => u.trim())
        .filter((u) => u.length > 0);
      return client.tasks.createBatch({
        tasks: items.map((data_url) => ({
          type: "image_classification",
          data_url,
          label_spec: { question: question.trim(), options: opts },
          consensus_threshold: threshold,
        })),
      });
    },
    onSuccess: (b) => {
      void queryClient.invalidateQueries({ queryKey: ["batches"] });
      navigate(`/batches/${encodeURIComponent(b.batch_id)}`);
    },
  });
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    submit.mutate();
  };
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        New batch
      </Title>
      <form onSubmit={onSubmit}>
        <Stack gap="sm">
          <TextInput
            label="Question"
            required
            value={question}
            onChange={(e) => setQuestion(e.currentTarget.value)}
            placeholder="What animal is this?"
          />
          <Textarea
            label="Options"
            description="One per line, or comma-separated"
            required
            autosize
            minRows={2}
            value={options}
            onChange={(e) => setOptions(e.currentTarget.value)}
          />
          <Textarea
            label="Item URLs"
            description="One task per line: http(s), s3:// or gs:// URLs"
            required
            autosize
            minRows={3}
            maxRows={12}
            value={urls}
            onChange={(e) => setUrls(e.currentTarget.value)}
          />
          <NumberInput
            label="Consensus threshold"
            description="Agreeing labels that settle a task"
            min={1}
            max={25}
            value={threshold}
            onChange={(v) => setThreshold(typeof v === "number" ? v : Number(v) || 3)}
            w={220}
          />
          {submit.error && (
            <Alert color="red" title="The batch was not accepted" role="alert">
              {errorMessage(submit.error)}
            </Alert>
          )}
          <Group>
            <Button type="submit" loading={submit.isPending}>
              Submit batch
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
