/**
 * `free_text`: the question, a text area and its limits (`max_length` code points, a counter), and the item: an
 * audio player when it is audio (audio.ts), else the item as the queue prepared it. Enter sends `{text}`,
 * Shift-Enter starts a new line (in the text area; outside it Enter sends too). An answer with no word after
 * normalization or past `max_length` is not sent: the widget says why (the gateway would refuse it).
 */
import { Alert, Button, Kbd, Stack, Text, Textarea, Title } from "@mantine/core";
import { useRef, useState } from "react";
import { Media } from "../../label/widgets/Media";
import { submitOnEnter, useKeyHandler, type WidgetProps } from "../../label/widgets/types";
import { isAudioUrl } from "./audio";

/** The default `max_length` of a free-text answer (contract §task-types). */
const DEFAULT_MAX_LENGTH = 2000;

const codePoints = (text: string) => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

export function FreeText({ claim, view, onAnswer, keys, footer }: WidgetProps) {
  const spec = claim.label_spec as { question: string; max_length?: number; normalize?: "words" | "none" };
  const max = spec.max_length ?? DEFAULT_MAX_LENGTH;
  const [text, setText] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const area = useRef<HTMLTextAreaElement>(null);
  const length = codePoints(text);
  const audio = view.kind !== "unviewable" && isAudioUrl(view.url);

  const submit = () => {
    const empty = spec.normalize === "none" ? !/\S/u.test(text) : !/[^\p{P}\s]/u.test(text.normalize("NFKC"));
    if (empty) {
      setProblem("Write the answer first (or skip the item).");
      area.current?.focus();
      return;
    }
    if (length > max) {
      setProblem(`The answer is ${length} characters long; at most ${max}.`);
      return;
    }
    onAnswer({ text });
  };

  // keys typed outside the text area (the app does not pass keys typed into it)
  useKeyHandler(keys, (e) => {
    submitOnEnter(e, submit);
  });

  return (
    <>
      <div className="label-media">
        {audio ? (
          <Stack gap="xs">
            {/* biome-ignore lint/a11y/useMediaCaption: the labeler's task is to write what the recording says */}
            <audio controls preload="auto" src={view.url} data-testid="free-text-audio" aria-label="Recording to transcribe" />
            <a href={view.url} target="_blank" rel="noopener noreferrer" className="label-link">
              {view.url}
            </a>
          </Stack>
        ) : (
          <Media view={view} />
        )}
      </div>
      <Stack className="label-panel" gap="sm">
        <Title order={1} size="h3" id="question">
          {spec.question}
        </Title>
        <Textarea
          ref={area}
          label="Your answer"
          aria-describedby="free-text-limits"
          autosize
          minRows={3}
          maxRows={12}
          autoFocus
          value={text}
          error={problem ?? undefined}
          data-testid="free-text-input"
          onChange={(e) => {
            setText(e.currentTarget.value);
            setProblem(null);
          }}
          onKeyDown={(e) => {
            if (e.key !== "Enter" || e.shiftKey || e.nativeEvent.isComposing) return;
            e.preventDefault();
            if (!e.repeat) submit();
          }}
        />
        <Text size="xs" c={length > max ? "red" : "dimmed"} id="free-text-limits" data-testid="free-text-limits">
          {length} / {max} characters
          {spec.normalize === "none" ? " · compared exactly as written" : " · case and punctuation are not compared"}
        </Text>
        {length > max && (
          <Alert color="red" variant="light">
            Too long: shorten the answer to {max} characters.
          </Alert>
        )}
        <Button onClick={submit}>
          Submit <Kbd className="label-kbd-after">Enter</Kbd>
        </Button>
        {footer("Enter submits, Shift+Enter starts a new line")}
      </Stack>
    </>
  );
}
