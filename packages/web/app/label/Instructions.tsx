/**
 * A label space's instructions in the labeler app: the customer's Markdown (sanitized, shared/markdown.ts) and
 * its worked examples, each drawn with its task type's own view (the console's views of boxes and spans; the
 * options with the right ones marked for single choice and multi-label). The app shows the panel in place of
 * the item before a labeler's first task of a space, whenever the space's `instructions_version` changes, and
 * on demand (the `i` key or the Instructions button). While it is open, the keys are the panel's: Enter, Escape
 * or `i` close it; the option and skip keys do nothing (no task is answered unseen).
 */
import type { AnswerBody, AnyLabelSpec, Claim, Instructions, Task } from "@labelgate/sdk/browser";
import { Alert, Badge, Button, Group, Kbd, Loader, Stack, Text, Title } from "@mantine/core";
import { useEffect, useRef } from "react";
import { consensusViewOf } from "../console/task-types/views";
import { safeHttpUrl } from "../shared/format";
import { specChoices } from "../shared/label-spec";
import { markdownToSafeHtml } from "../shared/markdown";
import { INSTRUCTIONS_KEY } from "./hotkeys";
import type { KeyHandler } from "./widgets/types";

const SEEN = "labelgate.instructions.seen";

/** The instructions version this session has shown per label space (sessionStorage, as the key: one labeler per tab). */
export function seenVersions(): Record<string, number> {
  try {
    const parsed = JSON.parse(sessionStorage.getItem(SEEN) ?? "{}") as unknown;
    return parsed !== null && typeof parsed === "object" ? (parsed as Record<string, number>) : {};
  } catch {
    // an entry that is not JSON (edited by hand): nothing seen yet
    return {};
  }
}

/** Notes that this session showed `version` of the space's instructions. */
export function markSeen(space: string, version: number): void {
  sessionStorage.setItem(SEEN, JSON.stringify({ ...seenVersions(), [space]: version }));
}

/** Whether the claim's space has instructions this session has not shown at their current version. */
export function instructionsDue(claim: Claim): boolean {
  return claim.instructions_version !== null && seenVersions()[claim.label_space] !== claim.instructions_version;
}

export type InstructionsState = { kind: "loading" } | { kind: "loaded"; instructions: Instructions } | { kind: "failed"; message: string };

/** The instructions panel of the claim's space; `onClose` returns to the item. */
export function InstructionsPanel({
  claim,
  state,
  first,
  keys,
  onClose,
}: {
  claim: Claim;
  state: InstructionsState;
  /** shown before the task (first time or new version) rather than on demand */
  first: boolean;
  keys: { current: KeyHandler | null };
  onClose: () => void;
}) {
  const start = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    start.current?.focus();
  }, []);
  useEffect(() => {
    keys.current = (e) => {
      if (e.key === "Enter" || e.key === "Escape" || e.key.toLowerCase() === INSTRUCTIONS_KEY) {
        e.preventDefault();
        if (!e.repeat) onClose();
      }
      // every other key belongs to the panel (scrolling) and answers nothing
    };
    return () => {
      keys.current = null;
    };
  }, [keys, onClose]);

  return (
    <section className="label-instructions" aria-labelledby="instructions-title" data-testid="instructions">
      <Group justify="space-between" wrap="wrap">
        <Title order={1} size="h3" id="instructions-title">
          Instructions
        </Title>
        {state.kind === "loaded" && (
          <Badge variant="light" data-testid="instructions-version">
            version {state.instructions.version}
          </Badge>
        )}
      </Group>
      {first && state.kind === "loaded" && state.instructions.version > 1 && (
        <Alert color="blue">The instructions of this task changed since you last read them.</Alert>
      )}
      {state.kind === "loading" && <Loader size="sm" aria-label="Loading the instructions" />}
      {state.kind === "failed" && (
        <Alert color="yellow" title="The instructions could not be loaded">
          {state.message}
        </Alert>
      )}
      {state.kind === "loaded" && <InstructionsBody claim={claim} instructions={state.instructions} />}
      <Group>
        <Button ref={start} onClick={onClose}>
          {first ? "Start labeling" : "Back to the task"}
        </Button>
        <Text size="sm" c="dimmed">
          <Kbd>Enter</Kbd> closes, <Kbd>{INSTRUCTIONS_KEY}</Kbd> shows them again at any time.
        </Text>
      </Group>
    </section>
  );
}

function InstructionsBody({ claim, instructions }: { claim: Claim; instructions: Instructions }) {
  return (
    <Stack gap="md">
      {instructions.instructions !== null && (
        // sanitized by DOMPurify (shared/markdown.ts): no script, no style, no remote image
        // biome-ignore lint/security/noDangerouslySetInnerHtml: the HTML is DOMPurify's output
        <div className="label-markdown" dangerouslySetInnerHTML={{ __html: markdownToSafeHtml(instructions.instructions) }} />
      )}
      {instructions.examples.length > 0 && (
        <Stack gap="sm">
          <Title order={2} size="h4">
            Examples
          </Title>
          <ol className="label-examples">
            {instructions.examples.map((example, i) => (
              // examples have no id of their own: their place is their identity in this version
              // biome-ignore lint/suspicious/noArrayIndexKey: a version's examples never reorder
              <li key={i} data-testid="instructions-example">
                <ExampleView claim={claim} example={example} index={i} />
              </li>
            ))}
          </ol>
        </Stack>
      )}
    </Stack>
  );
}

type Example = Instructions["examples"][number];

/** One example: its item and its right answer, drawn as the task type draws an answer, then why. */
function ExampleView({ claim, example, index }: { claim: Claim; example: Example; index: number }) {
  const view = consensusViewOf(claim.task_type);
  const url = example.data_url === undefined ? null : safeHttpUrl(example.data_url);
  return (
    <Stack gap="xs">
      {view ? (
        view.render({
          task: exampleTask(claim, example, index),
          value: example.answer as Parameters<typeof view.render>[0]["value"],
          posterior: null,
          source: "gold",
        })
      ) : (
        <>
          {example.data_text !== undefined && <Text className="label-example-text">{example.data_text}</Text>}
          {url !== null && <ExampleItem url={url} />}
          <AnswerChoices type={claim.task_type} spec={claim.label_spec} answer={example.answer} />
        </>
      )}
      {example.explanation !== undefined && (
        // biome-ignore lint/security/noDangerouslySetInnerHtml: the HTML is DOMPurify's output (shared/markdown.ts)
        <div className="label-markdown" dangerouslySetInnerHTML={{ __html: markdownToSafeHtml(example.explanation) }} />
      )}
    </Stack>
  );
}

/** An example item of a choice task: its image when it names one, else a link. */
function ExampleItem({ url }: { url: string }) {
  if (/\.(avif|bmp|gif|jpe?g|png|svg|webp)$/i.test(new URL(url).pathname))
    return <img src={url} alt="Example item" className="label-example-image" referrerPolicy="no-referrer" />;
  return (
    <a href={url} target="_blank" rel="noopener noreferrer" className="label-link">
      {url}
    </a>
  );
}

/** The options of a choice task, the example's answer marked (one for single choice, a set for multi-label). */
function AnswerChoices({ type, spec, answer }: { type: string; spec: AnyLabelSpec; answer: AnswerBody }) {
  const right = new Set("label" in answer ? [answer.label] : "labels" in answer ? answer.labels : []);
  return (
    <ul className="label-example-options" aria-label="Right answer">
      {specChoices(type, spec).map((option) => (
        <li key={option} data-right={right.has(option) ? "true" : "false"}>
          {right.has(option) ? "✓ " : ""}
          {option}
        </li>
      ))}
    </ul>
  );
}

/** The task a console view draws an example as: the claim's spec and the example's item. */
function exampleTask(claim: Claim, example: Example, index: number): Task {
  return {
    task_id: `example ${index + 1}`,
    data_url: example.data_url ?? "",
    ...(example.data_text !== undefined ? { data_text: example.data_text } : {}),
    label_spec: claim.label_spec,
  } as Task;
}
