/**
 * Batches: a form that submits a batch (question, options, one item URL per line), opening a batch by id,
 * and the list of batches with live progress where the gateway has `GET /v1/batches`.
 */
import type { Batch } from "@labelgate/sdk/browser";
import { Button, Card, Group, NumberInput, Stack, Text, Textarea, TextInput } from "@mantine/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import { type FormEvent, useState } from "react";
import { useNavigate } from "react-router";
import { ROUTE, useCapabilities } from "../../shared/capabilities";
import { formatTime } from "../../shared/format";
import { useSession } from "../auth";
import { FormCard, IdLink, PageHeader, SectionCard, StatusBadge, StatusProgress } from "../components/common";
import { type CoreFeatures, PagedTable } from "../components/DataTable";

const helper = createColumnHelper<CoreFeatures, Batch>();
const columns = helper.columns([
  helper.accessor("batch_id", { header: "Batch", cell: (info) => <IdLink section="batches" id={info.getValue()} /> }),
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
  return (
    <SectionCard title="Your batches">
      <PagedTable
        queryKey="batches"
        list={(query) => client.batches.list(query)}
        live={(b) => b.status !== "completed"}
        columns={columns}
        caption="Batches"
        rowKey={(b) => b.batch_id}
        empty="No batch yet."
      />
    </SectionCard>
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
  return (
    <FormCard title="New batch" submission={submit} failure="The batch was not accepted" submit="Submit batch">
      <TextInput
        label="Question"
        required
        value={question}
        onChange={(e) => setQuestion(e.currentTarget.value)}
        placeholder="What animal is this?"
      />
      <LinesInput label="Options" description="One per line, or comma-separated" minRows={2} value={options} onChange={setOptions} />
      <LinesInput
        label="Item URLs"
        description="One task per line: http(s), s3:// or gs:// URLs"
        minRows={3}
        maxRows={12}
        value={urls}
        onChange={setUrls}
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
    </FormCard>
  );
}

/** A required text area of several lines that grows with its text. */
function LinesInput({
  onChange,
  ...props
}: {
  label: string;
  description: string;
  minRows: number;
  maxRows?: number;
  value: string;
  onChange: (value: string) => void;
}) {
  return <Textarea required autosize {...props} onChange={(e) => onChange(e.currentTarget.value)} />;
}
