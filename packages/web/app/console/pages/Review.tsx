/**
 * The review page (contract §review): `/review` works through the audit queue (`GET /v1/audits`, open audits,
 * oldest first); `/review/:id` reviews one task (linked from the task's page). It shows the item with its
 * type's view (the task page's consensus views, task-types/views.tsx), the consensus with its confidence, and
 * three verdicts by mouse or by key:
 *
 * - accept (`a`): `{verdict: "accept"}`;
 * - reject (`r`, single choice only): `{verdict: "reject"}`, the task reopens for more labels;
 * - correct (`c`): the labeler app's widget of the task's type (label/widgets) takes the right answer, sent as
 *   `{verdict: "reject", answer}`; Escape leaves it;
 *
 * and in the queue `n` passes to the next audit without reviewing. The next audit's task is fetched and its
 * image loaded while the current one is reviewed, so the next one shows at once.
 */
import type { AnswerBody, Audit, Claim, ReviewOutcome, ReviewRequest, Task } from "@labelgate/sdk/browser";
import { Alert, Button, Card, Code, Group, Kbd, Stack, Text, Title } from "@mantine/core";
import { type QueryClient, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { Link, useParams } from "react-router";
import { DEFAULT_HOTKEYS, isTextEntry } from "../../label/hotkeys";
import { type ItemView, itemViewOf } from "../../label/queue";
import { Media } from "../../label/widgets/Media";
import { widgetOf } from "../../label/widgets/registry";
import type { KeyHandler } from "../../label/widgets/types";
import { formatShare, formatTime } from "../../shared/format";
import "../../label/label.css";
import type { LabelgateClient } from "@labelgate/sdk/browser";
import { useSession } from "../auth";
import { ErrorAlert, Fact, Mono, PageHeader, QueryView } from "../components/common";
import { consensusViewOf } from "../task-types/views";

/** The review keys. */
export const REVIEW_KEYS = { accept: "a", reject: "r", correct: "c", next: "n" } as const;

/** Open audits read at once (the page's queue); the page reads them again after each review. */
const QUEUE_SIZE = 100;

export function ReviewPage() {
  const { id } = useParams();
  return id ? <OneTask key={id} taskId={id} /> : <AuditQueue />;
}

/** The query of task `taskId` (`GET /v1/tasks/{id}`), cached as the task page caches it. */
function taskQuery(client: LabelgateClient, taskId: string) {
  return { queryKey: ["task", taskId] as const, queryFn: () => client.tasks.get(taskId) };
}

/** A claim-shaped view of a task or an audit, as the labeler app's widgets take it (no claim is made). */
function claimOf(t: Pick<Task, "task_id" | "task_type" | "data_url" | "label_spec" | "data_text">): Claim {
  return {
    claim_id: "clm_review",
    task_id: t.task_id,
    task_type: t.task_type,
    data_url: t.data_url,
    label_spec: t.label_spec,
    ...(t.data_text !== undefined ? { data_text: t.data_text } : {}),
    expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    label_space: "",
    instructions_version: null,
  };
}

/** Starts loading audit `audit`'s task and item, so that it shows at once when its turn comes. */
function preload(queryClient: QueryClient, client: LabelgateClient, audit: Audit): void {
  void queryClient.prefetchQuery(taskQuery(client, audit.task_id));
  itemViewOf(claimOf(audit), () => {});
}

/** One sentence on what a review did, from its outcome. */
function outcomeText(o: ReviewOutcome): string {
  const r = o.review;
  if (r.verdict === "accept") return `Accepted: the result stays revision ${r.revision}.`;
  if (r.answer === null) return `Rejected: the task reopened for more labels; revision ${r.revision + 1} follows when it settles again.`;
  if (!r.revised) return "Your answer equals the consensus: the result stays as it is.";
  return `Corrected: revision ${r.revision + 1} records your answer.`;
}

function AuditQueue() {
  const { client } = useSession();
  const queryClient = useQueryClient();
  // audits passed with `n` or reviewed here: not shown again until the queue starts over
  const [passed, setPassed] = useState<ReadonlySet<string>>(() => new Set());
  const [last, setLast] = useState<{ taskId: string; outcome: ReviewOutcome } | null>(null);
  const audits = useQuery({
    queryKey: ["audits", "open"],
    queryFn: () => client.audits.list({ status: "open", per_page: QUEUE_SIZE }),
  });
  const queue = (audits.data?.items ?? []).filter((a) => !passed.has(a.task_id));
  const current = queue[0];
  const next = queue[1];
  const pass = useCallback((taskId: string) => setPassed((p) => new Set(p).add(taskId)), []);

  useEffect(() => {
    if (next) preload(queryClient, client, next);
  }, [next, queryClient, client]);

  const total = audits.data?.total;
  return (
    <>
      <PageHeader title="Review">
        {total === undefined ? "The audit queue" : `${total} open ${total === 1 ? "audit" : "audits"}`} · keys {REVIEW_KEYS.accept} accept,{" "}
        {REVIEW_KEYS.reject} reject, {REVIEW_KEYS.correct} correct, {REVIEW_KEYS.next} next
      </PageHeader>
      {last && (
        <Alert color="green" mb="sm" data-testid="review-outcome" role="status">
          Task <Link to={`/tasks/${last.taskId}`}>{last.taskId}</Link>: {outcomeText(last.outcome)}
        </Alert>
      )}
      <QueryView query={audits}>
        {() =>
          current ? (
            <Reviewer
              key={current.task_id}
              taskId={current.task_id}
              onReviewed={(outcome) => {
                setLast({ taskId: current.task_id, outcome });
                pass(current.task_id);
                void queryClient.invalidateQueries({ queryKey: ["audits"] });
              }}
              onNext={() => pass(current.task_id)}
            />
          ) : (
            <Card withBorder data-testid="no-audit">
              <Text>
                {passed.size > 0 && queue.length === 0 && (audits.data?.items.length ?? 0) > 0
                  ? "You passed every open audit."
                  : "No open audit. Set quality.audit_rate in your settings to draw settled tasks for review."}
              </Text>
              {passed.size > 0 && (
                <Group mt="sm">
                  <Button
                    variant="light"
                    onClick={() => {
                      setPassed(new Set());
                      void audits.refetch();
                    }}
                  >
                    Start over
                  </Button>
                </Group>
              )}
            </Card>
          )
        }
      </QueryView>
    </>
  );
}

function OneTask({ taskId }: { taskId: string }) {
  const [last, setLast] = useState<ReviewOutcome | null>(null);
  return (
    <>
      <PageHeader title="Review">
        Task <Mono>{taskId}</Mono> · keys {REVIEW_KEYS.accept} accept, {REVIEW_KEYS.reject} reject, {REVIEW_KEYS.correct} correct ·{" "}
        <Link to="/review">the audit queue</Link>
      </PageHeader>
      {last && (
        <Alert color="green" mb="sm" data-testid="review-outcome" role="status">
          {outcomeText(last)} <Link to={`/tasks/${taskId}`}>Open the task</Link>
        </Alert>
      )}
      <Reviewer taskId={taskId} onReviewed={setLast} />
    </>
  );
}

/** The image (or link) of a task's item, prepared when the task is first shown. */
function useItemView(claim: Claim | null): ItemView | null {
  const [view, setView] = useState<ItemView | null>(null);
  const taskId = claim?.task_id;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the item is prepared once per task, not per render's claim object
  useEffect(() => {
    if (!claim) return;
    let live = true;
    setView(itemViewOf(claim, (v) => live && setView(v)));
    return () => {
      live = false;
    };
  }, [taskId]);
  return view;
}

/**
 * One task under review: its item and consensus, then the verdicts. `onReviewed` gets each recorded review;
 * `onNext`, when given (the queue), passes to the next audit.
 */
function Reviewer({ taskId, onReviewed, onNext }: { taskId: string; onReviewed: (o: ReviewOutcome) => void; onNext?: () => void }) {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const task = useQuery(taskQuery(client, taskId));
  const [correcting, setCorrecting] = useState(false);
  const widgetKeys = useRef<KeyHandler | null>(null);
  const t = task.data;
  const claim = t ? claimOf(t) : null;
  const view = useItemView(claim);
  const review = useMutation({
    mutationFn: (body: ReviewRequest) => client.tasks.review(taskId, body),
    onSuccess: (outcome) => {
      setCorrecting(false);
      void queryClient.invalidateQueries({ queryKey: ["task", taskId] });
      void queryClient.invalidateQueries({ queryKey: ["result", taskId] });
      onReviewed(outcome);
    },
  });
  const settled = t?.status === "settled";
  const rejectable = t !== undefined && consensusViewOf(t.task_type) === undefined;
  const busy = review.isPending;
  const send = useCallback((body: ReviewRequest) => review.mutate(body), [review]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.altKey || e.ctrlKey || e.metaKey || isTextEntry(e.target) || busy || !settled) return;
      if (correcting) {
        if (e.key === "Escape") {
          e.preventDefault();
          setCorrecting(false);
        } else widgetKeys.current?.(e);
        return;
      }
      if (e.repeat) return;
      const key = e.key.toLowerCase();
      if (key === REVIEW_KEYS.accept) send({ verdict: "accept" });
      else if (key === REVIEW_KEYS.reject && rejectable) send({ verdict: "reject" });
      else if (key === REVIEW_KEYS.correct) setCorrecting(true);
      else if (key === REVIEW_KEYS.next && onNext) onNext();
      else return;
      e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [busy, settled, correcting, rejectable, send, onNext]);

  return (
    <QueryView query={task}>
      {(task) => (
        <Stack data-testid="review-item" data-task-id={task.task_id} data-task-type={task.task_type}>
          {/* the item's one image element moves into the widget while correcting */}
          <ConsensusCard task={task} view={correcting ? null : view} />
          <PastReviews task={task} />
          {!settled ? (
            <Alert color="yellow" data-testid="not-settled">
              This task is {task.status}: only a settled result can be reviewed.
            </Alert>
          ) : correcting && claim && view ? (
            <Correct
              claim={claim}
              view={view}
              keys={widgetKeys}
              onAnswer={(answer) => send({ verdict: "reject", answer })}
              onCancel={() => setCorrecting(false)}
            />
          ) : (
            <Group>
              <Button onClick={() => send({ verdict: "accept" })} loading={busy} rightSection={<Kbd>{REVIEW_KEYS.accept}</Kbd>}>
                Accept
              </Button>
              {rejectable && (
                <Button
                  color="red"
                  variant="light"
                  onClick={() => send({ verdict: "reject" })}
                  disabled={busy}
                  rightSection={<Kbd>{REVIEW_KEYS.reject}</Kbd>}
                >
                  Reject
                </Button>
              )}
              <Button variant="light" onClick={() => setCorrecting(true)} disabled={busy} rightSection={<Kbd>{REVIEW_KEYS.correct}</Kbd>}>
                Correct
              </Button>
              {onNext && (
                <Button variant="subtle" onClick={onNext} disabled={busy} rightSection={<Kbd>{REVIEW_KEYS.next}</Kbd>}>
                  Next
                </Button>
              )}
            </Group>
          )}
          <ErrorAlert error={review.error} title="The review was not recorded" />
        </Stack>
      )}
    </QueryView>
  );
}

/** The consensus under review: its figures, then the item drawn with it (the type's view, or the item itself). */
function ConsensusCard({ task, view }: { task: Task; view: ItemView | null }) {
  const typed = consensusViewOf(task.task_type);
  // a view that draws the item (boxes over the image, spans over the text) shows it; else it is shown as the labeler saw it
  const drawsItem = (typed?.drawsItem ?? null) !== null;
  return (
    <Card withBorder>
      <Title order={2} size="h3" mb="xs">
        {task.label_spec.question}
      </Title>
      <Group gap="xl" mb="sm">
        <Fact label="Consensus" definition="the answer the labels settled on" testId="review-consensus">
          {typed ? <Code>{task.consensus_label ?? "—"}</Code> : (task.consensus_label ?? "—")}
        </Fact>
        <Fact
          label="Confidence"
          definition="probability that this answer is right (for a typed task: the whole answer, every part at once)"
          testId="review-confidence"
        >
          {formatShare(task.confidence)}
        </Fact>
        <Fact label="Resolution" definition="how the task was decided (consensus, confidence, max_labels, review, …)">
          {task.resolution ?? "—"}
        </Fact>
        <Fact label="Revision" definition="1 for the first settlement; each review that changed the result made the next">
          {task.revision}
        </Fact>
        <Fact label="Labels" definition="answers labelers sent to this task">
          {task.labels_collected}
        </Fact>
      </Group>
      <Text size="sm" c="dimmed" mb="sm">
        {task.task_type} · settled {formatTime(task.settled_at)} · <Link to={`/tasks/${task.task_id}`}>{task.task_id}</Link>
      </Text>
      {!drawsItem && view && (
        <div className="label-media">
          <Media view={view} />
        </div>
      )}
      {typed && task.consensus && (
        <div data-testid="typed-consensus">
          {typed.render({ task, value: task.consensus, posterior: task.posterior ?? null, source: "consensus" })}
        </div>
      )}
    </Card>
  );
}

/** The task's earlier reviews (the latest counts), when it has any. */
function PastReviews({ task }: { task: Task }) {
  const reviews = task.reviews ?? [];
  if (reviews.length === 0) return null;
  return (
    <Text size="sm" data-testid="past-reviews">
      Reviewed {reviews.length === 1 ? "once" : `${reviews.length} times`}; latest:{" "}
      {reviews.map((r) => `${r.verdict}${r.answer ? ` ${JSON.stringify(r.answer)}` : ""} (${formatTime(r.created_at)})`).at(-1)}
    </Text>
  );
}

/** The labeler app's widget of the task's type, taking the right answer; Escape or Cancel leaves it. */
function Correct({
  claim,
  view,
  keys,
  onAnswer,
  onCancel,
}: {
  claim: Claim;
  view: ItemView;
  keys: { current: KeyHandler | null };
  onAnswer: (answer: AnswerBody) => void;
  onCancel: () => void;
}) {
  const Widget = widgetOf(claim.task_type);
  const footer = (hint: string) => (
    <Group justify="space-between">
      <Text size="sm" c="dimmed">
        {hint}, Escape cancels.
      </Text>
      <Button variant="subtle" size="xs" onClick={onCancel}>
        Cancel
      </Button>
    </Group>
  );
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        The right answer
      </Title>
      <section className="label-item" aria-label="The right answer" data-testid="correct-widget">
        <Widget claim={claim} view={view} hotkeys={DEFAULT_HOTKEYS} onAnswer={onAnswer} keys={keys} footer={footer} />
      </section>
    </Card>
  );
}
