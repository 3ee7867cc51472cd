/**
 * A task: its question and options, a link to review its settled result (pages/Review.tsx), its effective policy (threshold or confidence), progress, the gold
 * fields of a gold task, and once settled the consensus with the label counts, the posterior and
 * confidence, the resolution and the settlement proof (ledger record; Merkle proof and anchor transaction on
 * an EVM ledger) with a "verify" button that checks the proof against the chain from the browser.
 *
 * A task of a reserved type (contract §task-types) shows its consensus, and a gold one its `gold_answer`, drawn by the
 * type's entry of CONSENSUS_VIEWS (task-types/views.tsx) instead of the table of labels by option.
 */
import { ConflictError, type SettledResult, type Task } from "@labelgate/sdk/browser";
import { Button, Card, Code, Group, Stack, Table, Text, Title } from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { Link } from "react-router";
import { errorMessage } from "../../shared/client";
import { formatShare, formatTime, safeHttpUrl } from "../../shared/format";
import { specChoices, specChoicesName } from "../../shared/label-spec";
import { useSession } from "../auth";
import { ColumnHeads, Fact, Hex, Mono, QueryView, SectionCard, StatusLine } from "../components/common";
import { ItemPage, useItem } from "../components/ItemPage";
import { VerifySettlement } from "../components/VerifySettlement";
import { evmProofOf, type ResultView } from "../settlement";
import { partConfidences } from "../task-types/summary";
import { type ConsensusView, consensusViewOf } from "../task-types/views";

const IMAGE = /\.(avif|bmp|gif|jpe?g|png|svg|webp)$/i;

export function TaskPage() {
  const { id: taskId, item: task } = useItem("task", (client, id) => client.tasks.get(id), {
    everyMs: 2000,
    until: (t) => ["settled", "canceled"].includes(t.status),
  });
  const { client } = useSession();
  const settled = task.data?.status === "settled";
  const result = useQuery({ queryKey: ["result", taskId], queryFn: () => client.tasks.result(taskId), enabled: settled });
  return (
    <ItemPage id={taskId} kind="Task" item={task}>
      {(t) => (
        <Stack>
          <TaskSummary task={t} />
          {settled && (
            <Group>
              <Button component={Link} to={`/review/${t.task_id}`} variant="light" data-testid="review-link">
                Review this result
              </Button>
              {(t.reviews?.length ?? 0) > 0 && (
                <Text size="sm" c="dimmed">
                  Reviewed {t.reviews?.length === 1 ? "once" : `${t.reviews?.length} times`} (latest: {t.reviews?.at(-1)?.verdict}) ·
                  revision {t.revision}
                </Text>
              )}
            </Group>
          )}
          <GoldAnswer task={t} />
          {settled && (
            <QueryView query={result}>{(r) => (r.status === "settled" ? <Consensus result={r as ResultView} task={t} /> : null)}</QueryView>
          )}
        </Stack>
      )}
    </ItemPage>
  );
}

function TaskSummary({ task }: { task: Task }) {
  const link = safeHttpUrl(task.data_url);
  return (
    <Card withBorder>
      <Group justify="space-between" align="flex-start">
        <Stack gap={4}>
          <StatusLine status={task.status} gap="xs">
            {task.task_type} · created {formatTime(task.created_at)}
            {task.batch_id ? ` · batch ${task.batch_id}` : ""}
          </StatusLine>
          <Title order={2} size="h3">
            {task.label_spec.question}
          </Title>
          {specChoices(task.task_type, task.label_spec).length > 0 && (
            <Text size="sm">
              {specChoicesName(task.task_type)}:{" "}
              {specChoices(task.task_type, task.label_spec).map((o) => (
                <Code key={o} mr={4}>
                  {o}
                </Code>
              ))}
            </Text>
          )}
          <Text size="sm" data-testid="task-policy">
            Labels {task.labels_collected} ·{" "}
            {task.confidence_target !== null
              ? `confidence policy: settles at ${formatShare(task.confidence_target)} after at least ${task.min_labels ?? 1} labels`
              : `consensus at ${task.consensus_threshold} agreeing`}{" "}
            · at most {task.max_labels}
          </Text>
          {task.gold && (
            <Text size="sm" data-testid="gold">
              Gold task:{" "}
              {consensusViewOf(task.task_type) ? (
                "gold answer below"
              ) : (
                <>
                  gold label <Code>{task.gold_label}</Code>
                </>
              )}{" "}
              · {task.gold_answers ?? 0} answers · agreement {formatShare(task.gold_agreement)} (never settled, delivered or exported)
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
          {task.item_error && (
            <Text size="sm" className="break-all" data-testid="item-error">
              <strong>Canceled:</strong> {task.item_error}
            </Text>
          )}
          {task.webhook_status && <Text size="sm">Webhook: {task.webhook_status}</Text>}
          {task.metadata && (
            <Text size="sm" component="div">
              Metadata: <Code block>{JSON.stringify(task.metadata, null, 2)}</Code>
            </Text>
          )}
        </Stack>
        {link && IMAGE.test(new URL(link).pathname) && !drawsItem(task) && (
          <img src={link} alt={`Item of task ${task.task_id}`} className="task-preview" />
        )}
      </Group>
      <CancelTask task={task} />
    </Card>
  );
}

/**
 * Whether the page draws `task`'s image below with its answer (a task whose type's view draws the image, e.g.
 * bounding boxes, settled, or a gold one with its gold_answer): then the summary shows no preview of the image,
 * so it is shown once.
 */
function drawsItem(task: Task): boolean {
  if (consensusViewOf(task.task_type)?.drawsItem !== "image") return false;
  return task.status === "settled" || (task.gold && task.gold_answer !== undefined);
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

/** A gold task of a reserved type: its `gold_answer`, drawn as its type draws a consensus. */
function GoldAnswer({ task }: { task: Task }) {
  const view = consensusViewOf(task.task_type);
  if (!task.gold || !view || !task.gold_answer) return null;
  return (
    <SectionCard title="Gold answer">
      <div data-testid="gold-answer">{view.render({ task, value: task.gold_answer, posterior: null, source: "gold" })}</div>
    </SectionCard>
  );
}

function Consensus({ result, task }: { result: ResultView; task: Task }) {
  const view = consensusViewOf(task.task_type);
  if (view) return <TypedConsensus result={result} task={task} view={view} />;
  const options = specChoices(task.task_type, task.label_spec);
  const posterior = result.posterior;
  return (
    <>
      <SectionCard title="Consensus">
        <Group gap="xl" mb="sm">
          <Fact label="Label" testId="consensus-label" definition="the option the labels settled on">
            {result.consensus_label}
          </Fact>
          <Fact label="Confidence" definition="probability that this label is right, from the labels and what is known of their labelers">
            {formatShare(result.confidence)}
          </Fact>
          <Fact label="Resolution" definition={RESOLUTION_DEFINITION}>
            {result.resolution}
          </Fact>
          <Fact label="Settled" definition="when the consensus was recorded">
            {formatTime(result.settled_at)}
          </Fact>
        </Group>
        <Table captionSide="top">
          <caption>Labels by option</caption>
          <ColumnHeads names={["Option", "Labels", "Share of labels", ...(posterior ? ["Posterior"] : [])]} />
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
      </SectionCard>
      <SettlementProof result={result} />
    </>
  );
}

/**
 * The consensus of a task of a reserved type: its figures, its parts drawn by the type's view (with their
 * confidences), the canonical `consensus_label` (folded) and the settlement proof.
 */
function TypedConsensus({ result, task, view }: { result: ResultView; task: Task; view: ConsensusView }) {
  const value = result.consensus ?? task.consensus ?? null;
  const posterior = Object.keys(result.posterior).length > 0 ? result.posterior : (task.posterior ?? null);
  const parts = partConfidences(value);
  return (
    <>
      <SectionCard title="Consensus">
        <Group gap="xl" mb="sm">
          <Fact
            label="Whole answer right"
            testId="whole-confidence"
            definition="the task's confidence: probability that the whole answer is right, every part of it at once (so it is often far lower than any one part's confidence)"
          >
            {formatShare(result.confidence)}
          </Fact>
          <Fact
            label="Parts' confidence"
            testId="parts-confidence"
            definition="probability that each part (box, span or option) is right on its own: the lowest and the mean over the parts"
          >
            {parts ? `lowest ${formatShare(parts.lowest)} · mean ${formatShare(parts.mean)}` : "—"}
          </Fact>
          <Fact label="Resolution" definition={RESOLUTION_DEFINITION}>
            {result.resolution}
          </Fact>
          <Fact label="Labels" definition="answers labelers sent to this task, one per labeler">
            {result.labels_collected}
          </Fact>
          <Fact label="Settled" definition="when the consensus was recorded">
            {formatTime(result.settled_at)}
          </Fact>
        </Group>
        <div data-testid="typed-consensus" data-task-type={task.task_type}>
          {value ? (
            view.render({ task, value, posterior, source: "consensus" })
          ) : (
            <Text size="sm" c="dimmed">
              The gateway sent no consensus {view.parts.toLowerCase()} for this task.
            </Text>
          )}
        </div>
        <details className="consensus-details">
          <summary>Consensus label (canonical JSON, without confidences)</summary>
          <Code block className="consensus-json" data-testid="consensus-label">
            {result.consensus_label}
          </Code>
        </details>
      </SectionCard>
      <SettlementProof result={result} />
    </>
  );
}

/** What each `resolution` means. */
const RESOLUTION_DEFINITION =
  "how the task was decided: consensus (enough labels agreed), confidence (its confidence reached the target) or max_labels (it reached max_labels undecided and settled on its leading answer)";

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
    <SectionCard title="Settlement proof">
      <Table className="proof-table">
        <Table.Tbody>
          <ProofRow label="Ledger">{s.ledger}</ProofRow>
          <ProofRow label="Transaction">
            <Hex value={s.ledger_txid} name="transaction" />
          </ProofRow>
          <ProofRow label="Sequence">{s.sequence}</ProofRow>
          <ProofRow label="Previous record hash">
            <Hex value={s.prev_hash} name="previous record hash" />
          </ProofRow>
          {"recorded_at" in s && <ProofRow label="Recorded">{formatTime(s.recorded_at)}</ProofRow>}
          {evm && (
            <>
              <ProofRow label="Chain id">{evm.chain_id}</ProofRow>
              <ProofRow label="Block">{evm.block_number}</ProofRow>
              <ProofRow label="Anchor contract">
                <Hex value={evm.contract} name="anchor contract" />
              </ProofRow>
              <ProofRow label="Merkle root">
                <Hex value={evm.merkle_root} name="Merkle root" />
              </ProofRow>
              <ProofRow label="Leaf">
                <Hex value={evm.leaf} name="leaf" />
              </ProofRow>
              <ProofRow label="Leaf index">
                {evm.leaf_index} of {evm.tree_size}
              </ProofRow>
              <ProofRow label="Proof">
                {evm.proof.map((p, i) => (
                  <div key={p}>
                    <Hex value={p} name={`proof hash ${i + 1}`} />
                  </div>
                ))}
              </ProofRow>
            </>
          )}
        </Table.Tbody>
      </Table>
      <VerifySettlement result={result} evm={evm !== null} />
    </SectionCard>
  );
}
