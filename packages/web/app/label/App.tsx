/**
 * The labeler app: sign in with a labeler key (kept in sessionStorage), then label with keys 1-9 or clicks.
 * Each task type has its widget (widgets/registry.ts): single choice, multi-label, bounding boxes, text spans.
 * The work queue (queue.ts) claims and preloads ahead; this component only shows its snapshot.
 */
import type { AnswerBody } from "@labelgate/sdk/browser";
import { Alert, Button, Group, Loader, Stack, Text, TextInput, Title } from "@mantine/core";
import { type FormEvent, useCallback, useEffect, useRef, useState, useSyncExternalStore } from "react";
import { ROUTE, useCapabilities } from "../shared/capabilities";
import { createClient, errorMessage } from "../shared/client";
import { SignIn, useStoredKey } from "../shared/SignIn";
import { DEFAULT_HOTKEYS, type Hotkeys, hotkeysProblem, INSTRUCTIONS_KEY, isTextEntry, loadHotkeys, saveHotkeys } from "./hotkeys";
import { InstructionsPanel, type InstructionsState, instructionsDue, markSeen } from "./Instructions";
import { LabelQueue, type QueueItem, type TrainingShown } from "./queue";
import { widgetOf } from "./widgets/registry";
import type { KeyHandler } from "./widgets/types";

export function App() {
  const { key, reason, signIn, signOut } = useStoredKey("labeler");
  if (!key) {
    return (
      <SignIn
        kind="labeler"
        title="labelgate · label"
        intro="Sign in with the labeler key your operator gave you. It stays in this tab only and is forgotten when the tab closes."
        reason={reason}
        field={{ label: "Labeler key", placeholder: "lk_…" }}
        submit="Start labeling"
        shapeError="A labeler key starts with lk_ followed by letters and digits."
        onSignIn={signIn}
      />
    );
  }
  return <Labeler labelerKey={key} onSignOut={signOut} />;
}

function Labeler({ labelerKey, onSignOut }: { labelerKey: string; onSignOut: (reason: string | null) => void }) {
  const caps = useCapabilities();
  const canRelease = useRef(false);
  canRelease.current = caps.has(ROUTE.releaseClaim);
  const [client] = useState(() => createClient({ labelerKey }));
  const [queue] = useState(() => new LabelQueue(client, () => canRelease.current));
  const snap = useSyncExternalStore(queue.subscribe, queue.getSnapshot);

  useEffect(() => {
    queue.start();
    const onHide = () => queue.dispose();
    // back from the back-forward cache: the claims were released on pagehide, start afresh
    const onShow = (e: PageTransitionEvent) => {
      if (e.persisted) window.location.reload();
    };
    window.addEventListener("pagehide", onHide);
    window.addEventListener("pageshow", onShow);
    return () => {
      window.removeEventListener("pagehide", onHide);
      window.removeEventListener("pageshow", onShow);
      queue.dispose();
    };
  }, [queue]);

  useEffect(() => {
    if (snap.signedOut) onSignOut("The gateway refused this labeler key. Sign in with a valid key.");
  }, [snap.signedOut, onSignOut]);

  const current = snap.current;
  const skippable = caps.has(ROUTE.releaseClaim);
  const [hotkeys, setHotkeys] = useState<Hotkeys>(loadHotkeys);
  const [editingKeys, setEditingKeys] = useState(false);
  // the current widget's key handler: one window listener, the skip key first
  const widgetKeys = useRef<KeyHandler | null>(null);
  // the instructions panel: shown before the first task of a space and when its version changes, or on demand
  const [panel, setPanel] = useState<{ claimId: string; first: boolean } | null>(null);
  const [instructions, setInstructions] = useState<InstructionsState>({ kind: "loading" });
  const panelKeys = useRef<KeyHandler | null>(null);
  const currentClaim = current?.claim ?? null;
  const openInstructions = useCallback(
    (first: boolean) => {
      if (!currentClaim || currentClaim.instructions_version === null) return;
      const version = currentClaim.instructions_version;
      setPanel({ claimId: currentClaim.claim_id, first });
      setInstructions((was) =>
        was.kind === "loaded" && was.instructions.label_space === currentClaim.label_space && was.instructions.version === version
          ? was
          : { kind: "loading" },
      );
      client.labeling.instructions(currentClaim.label_space).then(
        (loaded) => setInstructions({ kind: "loaded", instructions: loaded }),
        (err: unknown) => setInstructions({ kind: "failed", message: errorMessage(err) }),
      );
    },
    [client, currentClaim],
  );
  const closeInstructions = useCallback(() => {
    if (currentClaim && currentClaim.instructions_version !== null) markSeen(currentClaim.label_space, currentClaim.instructions_version);
    setPanel(null);
  }, [currentClaim]);
  // due instructions show from the claim's first render (before the effect below has opened the panel)
  const panelOpen =
    (panel !== null && panel.claimId === currentClaim?.claim_id) || (currentClaim !== null && instructionsDue(currentClaim));
  useEffect(() => {
    if (currentClaim && instructionsDue(currentClaim)) openInstructions(true);
  }, [currentClaim, openInstructions]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      if (isTextEntry(e.target)) return;
      if (panelOpen) {
        panelKeys.current?.(e);
        return;
      }
      if (e.key.toLowerCase() === INSTRUCTIONS_KEY && currentClaim?.instructions_version != null) {
        e.preventDefault();
        if (!e.repeat) openInstructions(false);
        return;
      }
      if (e.key.toLowerCase() === hotkeys.skip.toLowerCase()) {
        if (skippable && !e.repeat) {
          e.preventDefault();
          queue.skip();
        }
        return;
      }
      widgetKeys.current?.(e);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [queue, skippable, hotkeys, panelOpen, currentClaim, openInstructions]);

  return (
    <div className="label-page">
      <header className="label-header">
        <Group justify="space-between" wrap="wrap" gap="xs">
          <Text fw={700}>labelgate · label</Text>
          <Group gap="sm" wrap="wrap" className="label-header-tools">
            <Text data-testid="session-count" aria-live="polite">
              Labeled this session: <strong>{snap.labeled}</strong>
              {snap.sending > 0 ? ` (+${snap.sending} sending)` : ""}
            </Text>
            <Text c="dimmed" size="sm">
              {snap.ahead} ready ahead
            </Text>
            {currentClaim?.instructions_version != null && (
              <Button variant="default" size="xs" onClick={() => (panelOpen ? closeInstructions() : openInstructions(false))}>
                Instructions
              </Button>
            )}
            <Button variant="default" size="xs" onClick={() => setEditingKeys((v) => !v)} aria-expanded={editingKeys}>
              Keys
            </Button>
            <Button variant="default" size="xs" onClick={() => onSignOut(null)}>
              Sign out
            </Button>
          </Group>
        </Group>
      </header>
      <main className="label-main">
        {editingKeys && (
          <HotkeysEditor
            value={hotkeys}
            onSave={(h) => {
              saveHotkeys(h);
              setHotkeys(h);
              setEditingKeys(false);
            }}
          />
        )}
        {snap.training && <TrainingFeedback shown={snap.training} onClose={() => queue.dismissTraining()} />}
        <div role="status" aria-live="polite" className="label-notices">
          {snap.notices.map((n) => (
            <Alert
              key={n.id}
              color={n.level === "error" ? "red" : n.level === "warning" ? "yellow" : "blue"}
              withCloseButton
              closeButtonLabel="Dismiss"
              onClose={() => queue.dismiss(n.id)}
            >
              {n.text}
            </Alert>
          ))}
        </div>
        {current && panelOpen ? (
          <InstructionsPanel
            key={`${current.claim.label_space} ${current.claim.instructions_version}`}
            claim={current.claim}
            state={instructions}
            first={panel?.claimId === current.claim.claim_id ? panel.first : true}
            keys={panelKeys}
            onClose={closeInstructions}
          />
        ) : current ? (
          <Item
            key={current.claim.claim_id}
            item={current}
            hotkeys={hotkeys}
            skippable={skippable}
            keys={widgetKeys}
            onAnswer={(a) => queue.answer(a)}
            onSkip={() => queue.skip()}
          />
        ) : snap.nothingToLabel && snap.idleReason === "failed_qualification" ? (
          <Stack align="center" py="xl">
            <Title order={1} size="h2">
              Qualification not passed
            </Title>
            <Text>
              You did not reach the accuracy the customer asks for on the qualification tasks of a label space, so its tasks are not served
              to you. Tasks of other label spaces appear here when they open; this page asks again every few seconds.
            </Text>
            <Button variant="light" onClick={() => queue.retry()}>
              Check again now
            </Button>
          </Stack>
        ) : snap.nothingToLabel ? (
          <Stack align="center" py="xl">
            <Title order={1} size="h2">
              Nothing to label
            </Title>
            <Text>There is no task open for you right now. This page asks again every few seconds.</Text>
            <Button variant="light" onClick={() => queue.retry()}>
              Check again now
            </Button>
            <SampleItem />
          </Stack>
        ) : (
          <Stack align="center" py="xl">
            <Loader aria-label="Getting a task" />
            <Text>Getting a task…</Text>
          </Stack>
        )}
      </main>
    </div>
  );
}

/** A training answer's feedback (contract §qualification): right or wrong, the right answer, the explanation, the exam's state. */
function TrainingFeedback({ shown, onClose }: { shown: TrainingShown; onClose: () => void }) {
  const f = shown.feedback;
  const right = "label" in f.right_answer ? f.right_answer.label : JSON.stringify(f.right_answer);
  const state =
    f.status === "training"
      ? `Qualification: ${f.gold_answers} of ${f.gold_tasks} answered, ${f.gold_correct} right.`
      : f.status === "qualified"
        ? "Qualification passed: the label space's other tasks are open to you now."
        : "Qualification not passed: this label space's tasks will not be served to you.";
  return (
    <Alert
      role="status"
      data-testid="training-feedback"
      color={f.correct ? "green" : "orange"}
      title={f.correct ? "Right" : "Not quite"}
      withCloseButton
      closeButtonLabel="Close feedback"
      onClose={onClose}
      className="label-training"
    >
      <Text size="sm">
        Task {shown.taskId}: the right answer is <strong data-testid="training-answer">{right}</strong>.
      </Text>
      {f.explanation && (
        <Text size="sm" data-testid="training-explanation">
          {f.explanation}
        </Text>
      )}
      <Text size="sm" c="dimmed">
        {state}
      </Text>
    </Alert>
  );
}

/**
 * What an item looks like, while there is none: a sample picture the gateway serves (data/samples), and the
 * data_url a task would give to show it here.
 */
function SampleItem() {
  const url = `${window.location.origin}/samples/cat.svg`;
  return (
    <figure className="label-sample">
      <img src="/samples/cat.svg" alt="A sample item: a drawn cat" className="item-image" width={240} height={180} />
      <figcaption>
        <Text size="sm" c="dimmed">
          A sample item. A task with <code className="label-link">data_url: {url}</code> shows this picture here, with its question.
        </Text>
      </figcaption>
    </figure>
  );
}

/** The current item in the widget of its task type, with the keys hint, Skip and the task id. */
function Item({
  item,
  hotkeys,
  skippable,
  keys,
  onAnswer,
  onSkip,
}: {
  item: QueueItem;
  hotkeys: Hotkeys;
  skippable: boolean;
  keys: { current: KeyHandler | null };
  onAnswer: (answer: AnswerBody) => void;
  onSkip: () => void;
}) {
  const { claim, view } = item;
  const Widget = widgetOf(claim.task_type);
  const footer = (hint: string) => (
    <>
      <Group justify="space-between">
        <Text size="sm" c="dimmed">
          {hint}
          {skippable ? `, ${hotkeys.skip} skips` : ""}.
        </Text>
        {skippable && (
          <Button variant="subtle" size="xs" onClick={onSkip}>
            Skip
          </Button>
        )}
      </Group>
      <Text size="xs" c="dimmed">
        Task {claim.task_id}
      </Text>
    </>
  );
  return (
    <article className="label-item" aria-labelledby="question" data-task-id={claim.task_id} data-task-type={claim.task_type}>
      <Widget claim={claim} view={view} hotkeys={hotkeys} onAnswer={onAnswer} keys={keys} footer={footer} />
    </article>
  );
}

/** Changes the keys of options 1-9 and of skip (kept in localStorage: a preference, not a secret). */
function HotkeysEditor({ value, onSave }: { value: Hotkeys; onSave: (h: Hotkeys) => void }) {
  const [options, setOptions] = useState(value.options);
  const [skip, setSkip] = useState(value.skip);
  const [error, setError] = useState<string | null>(null);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const h = { options: options.trim(), skip: skip.trim() };
    const problem = hotkeysProblem(h);
    if (problem) {
      setError(problem);
      return;
    }
    onSave(h);
  };
  return (
    <form onSubmit={submit} className="label-hotkeys" aria-label="Keyboard layout">
      <Group align="flex-end">
        <TextInput
          label="Keys of options 1-9, in order"
          value={options}
          onChange={(e) => setOptions(e.currentTarget.value)}
          error={error}
          maxLength={9}
          autoComplete="off"
          w={260}
        />
        <TextInput
          label="Skip key"
          value={skip}
          onChange={(e) => setSkip(e.currentTarget.value)}
          maxLength={1}
          autoComplete="off"
          w={100}
        />
        <Button type="submit">Save keys</Button>
        <Button
          variant="subtle"
          onClick={() => {
            setOptions(DEFAULT_HOTKEYS.options);
            setSkip(DEFAULT_HOTKEYS.skip);
          }}
        >
          Default keys
        </Button>
      </Group>
    </form>
  );
}
