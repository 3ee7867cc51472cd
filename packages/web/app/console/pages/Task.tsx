/**
 * A task: its question and options, its effective policy (threshold or confidence), progress, the gold
 * fields of a gold task, and once settled the consensus with the label counts, the posterior and
 * confidence, the resolution and the settlement proof (ledger record; Merkle proof and anchor transaction on
 * an EVM ledger) with a "verify" button that checks the proof against the chain from the browser.
 */
import { ConflictError, type SettledResult, type Task } from "@labelgate/sdk/browser";
import { Button, Card, Code, Group, Stack, Table, Text, Title } from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { useParams } from "react-router";
import { errorMessage } from "../../shared/client";
import { formatShare, formatTime, safeHttpUrl } from "../../shared/format";
import { useSession } from "../auth";
import { Mono, PageHeader, QueryView, StatusBadge } from "../components/common";
import { VerifySettlement } from "../components/VerifySettlement";
import { evmProofOf, type ResultView } from "../settlement";

const IMAGE = /\.(avif|bmp|gif|jpe?g|png|svg|webp)$/i;

export function TaskPage() {
  const { id: taskId = "" } = useParams();
  const { client } = useSession();
  const task = useQuery({
    queryKey: ["task", taskId],
    queryFn: () => client.tasks.get(taskId),
    refetchInterval: (q) => (q.state.data && ["settled", "canceled"].includes(q.state.data.status) ? false : 2000),
  });
  const settled = task.data?.status === "settled";
  const result = useQuery({ queryKey: ["result", taskId], queryFn: () => client.tasks.result(taskId), enabled: settled });
  return (
    <>
      <PageHeader title={<Mono>{taskId}</Mono>}>Task</PageHeader>
      <QueryView query={task}>
        {(t) => (
          <Stack>
            <TaskSummary task={t} />
            {settled && (
              <QueryView query={result}>
                {(r) => (r.status === "settled" ? <Consensus result={r as ResultView} task={t} /> : null)}
              </QueryView>
            )}
          </Stack>
        )}
      </QueryView>
    </>
  );
}

function TaskSummary({ task }: { task: Task }) {
  const link = safeHttpUrl(task.data_url);
  return (
    <Card withBorder>
      <Group justify="space-between" align="flex-start">
        <Stack gap={4}>
          <Group gap="xs">
            <StatusBadge status={task.status} />
            <Text size="sm" c="dimmed">
              {task.task_type} · created {formatTime(task.created_at)}
              {task.batch_id ? ` · batch ${task.batch_id}` : ""}
            </Text>
          </Group>
          <Title order={2} size="h3">
            {task.label_spec.question}
          </Title>
          <Text size="sm">
            Options:{" "}
            {task.label_spec.options.map((o) => (
              <Code key={o} mr={4}>
                {o}
              </Code>
            ))}
          </Text>
          <Text size="sm" data-testid="task-policy">
            Labels {task.labels_collected} ·{" "}
            {task.confidence_target !== null
              ? `confidence policy: settles at ${formatShare(task.confidence_target)} after at least ${task.min_labels ?? 1} labels`
              : `consensus at ${task.consensus_threshold} agreeing`}{" "}
            · at most {task.max_labels}
          </Text>
          {task.gold && (
            <Text size="sm" data-testid="gold">
              Gold task: gold label <Code>{task.gold_label}</Code> · {task.gold_answers ?? 0} answers · agreement{" "}
              {formatShare(task.gold_agreement)} (never settled, delivered or exported)
            </Text>
          )}
          <Text size="sm" className="break-all">
            Item:{" "}
            {link ? (
              <a href={link} target="_blank" rel="noopener noreferrer">
                {task.data_url}
              </a>
            ) : (
              <Mono>{task.data_url}</Mono>
            )}
          </Text>
          {task.webhook_status && <Text size="sm">Webhook: {task.webhook_status}</Text>}
          {task.metadata && (
            <Text size="sm" component="div">
              Metadata: <Code block>{JSON.stringify(task.metadata, null, 2)}</Code>
            </Text>
          )}
        </Stack>
        {link && IMAGE.test(new URL(link).pathname) && <img src={link} alt={`Item of task ${task.task_id}`} className="task-preview" />}
      </Group>
      <CancelTask task={task} />
    </Card>
  );
}

function CancelTask({ task }: { task: Task }) {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const cancel = useMutation({
    mutationFn: () => client.tasks.cancel(task.task_id),
    onSuccess: (t) => queryClient.setQueryData(["task", task.task_id], t),
  });
  if (task.status !== "pending" && task.status !== "labeling") return null;
  return (
    <Group mt="sm">
      <Button variant="light" color="red" size="xs" onClick={() => cancel.mutate()} loading={cancel.isPending}>
        Cancel task
      </Button>
      {cancel.error && (
        <Text c="red" size="sm" role="alert">
          {cancel.error instanceof ConflictError ? "The task can no longer be canceled." : errorMessage(cancel.error)}
        </Text>
      )}
    </Group>
  );
}

function Consensus({ result, task }: { result: ResultView; task: Task }) {
  const options = task.label_spec.options;
  const posterior = result.posterior;
  return (
    <>
      <Card withBorder>
        <Title order={2} size="h4" mb="xs">
          Consensus
        </Title>
        <Group gap="xl" mb="sm">
          <div>
            <Text size="xs" c="dimmed">
              Label
            </Text>
            <Text fw={700} size="lg" data-testid="consensus-label">
              {result.consensus_label}
            </Text>
          </div>
          <div>
            <Text size="xs" c="dimmed">
              Confidence
            </Text>
            <Text fw={700} size="lg">
              {formatShare(result.confidence)}
            </Text>
          </div>
          <div>
            <Text size="xs" c="dimmed">
              Resolution
            </Text>
            <Text fw={700} size="lg">
              {result.resolution}
            </Text>
          </div>
          <div>
            <Text size="xs" c="dimmed">
              Settled
            </Text>
            <Text fw={700} size="lg">
              {formatTime(result.settled_at)}
            </Text>
          </div>
        </Group>
        <Table captionSide="top">
          <caption>Labels by option</caption>
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Option</Table.Th>
              <Table.Th scope="col">Labels</Table.Th>
              <Table.Th scope="col">Share of labels</Table.Th>
              {posterior && <Table.Th scope="col">Posterior</Table.Th>}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {options.map((o) => {
              const n = result.label_counts[o] ?? 0;
              return (
                <Table.Tr key={o}>
                  <Table.Td>{o}</Table.Td>
                  <Table.Td>{n}</Table.Td>
                  <Table.Td>{formatShare(result.labels_collected > 0 ? n / result.labels_collected : null)}</Table.Td>
                  {posterior && <Table.Td>{formatShare(posterior[o] ?? 0)}</Table.Td>}
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </Card>
      <SettlementProof result={result} />
    </>
  );
}

function ProofRow({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th scope="row">{label}</Table.Th>
      <Table.Td>{children}</Table.Td>
    </Table.Tr>
  );
}

function SettlementProof({ result }: { result: SettledResult }) {
  const s = result.settlement;
  const evm = evmProofOf(result);
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        Settlement proof
      </Title>
      <Table>
        <Table.Tbody>
          <ProofRow label="Ledger">{s.ledger}</ProofRow>
          <ProofRow label="Transaction">
            <Mono>{s.ledger_txid}</Mono>
          </ProofRow>
          <ProofRow label="Sequence">{s.sequence}</ProofRow>
          <ProofRow label="Previous record hash">
            <Mono>{s.prev_hash}</Mono>
          </ProofRow>
          {"recorded_at" in s && <ProofRow label="Recorded">{formatTime(s.recorded_at)}</ProofRow>}
          {evm && (
            <>
              <ProofRow label="Chain id">{evm.chain_id}</ProofRow>
              <ProofRow label="Block">{evm.block_number}</ProofRow>
              <ProofRow label="Anchor contract">
                <Mono>{evm.contract}</Mono>
              </ProofRow>
              <ProofRow label="Merkle root">
                <Mono>{evm.merkle_root}</Mono>
              </ProofRow>
              <ProofRow label="Leaf">
                <Mono>{evm.leaf}</Mono>
              </ProofRow>
              <ProofRow label="Leaf index">
                {evm.leaf_index} of {evm.tree_size}
              </ProofRow>
              <ProofRow label="Proof">
                {evm.proof.map((p) => (
                  <div key={p}>
                    <Mono>{p}</Mono>
                  </div>
                ))}
              </ProofRow>
            </>
          )}
        </Table.Tbody>
      </Table>
      <VerifySettlement result={result} evm={evm !== null} />
    </Card>
  );
}
