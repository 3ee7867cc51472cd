/**
 * Single choice (every task type but the reserved ones): one button per option, keys 1-9 pick at once. A claim's
 * pre-label (contract §prelabels, shown when the task's label_spec says `show_prelabel`) pre-selects its option:
 * Enter (or its button) confirms it, any other option answers instead.
 */
import { Button, Kbd, Stack, Text, Title } from "@mantine/core";
import { Media } from "../../label/widgets/Media";
import { PrelabelNote, prelabelOf } from "../../label/widgets/prelabel";
import { pickOnKey, submitOnEnter, useKeyHandler, type WidgetProps } from "../../label/widgets/types";

/** The options of a single-choice label_spec (none when the spec is of another shape). */
function optionsOf(spec: WidgetProps["claim"]["label_spec"]): string[] {
  return "options" in spec ? spec.options : [];
}

export function SingleChoice({ claim, view, hotkeys, onAnswer, keys, footer }: WidgetProps) {
  const options = optionsOf(claim.label_spec);
  const prelabel = prelabelOf(claim);
  const suggested =
    prelabel && "label" in prelabel.answer && options.includes(prelabel.answer.label as string) ? (prelabel.answer.label as string) : null;
  useKeyHandler(keys, (e) => {
    if (suggested !== null && submitOnEnter(e, () => onAnswer({ label: suggested }))) return;
    if (e.repeat) return;
    pickOnKey(e, hotkeys, options.length, (i) => onAnswer({ label: options[i] as string }));
  });
  return (
    <>
      <div className="label-media">
        <Media view={view} />
      </div>
      <Stack className="label-panel" gap="sm">
        <Title order={1} size="h3" id="question">
          {claim.label_spec.question}
        </Title>
        <ol className="label-options" aria-label="Options">
          {options.map((option, i) => (
            <li key={option}>
              <Button
                variant={option === suggested ? "filled" : "light"}
                aria-pressed={suggested === null ? undefined : option === suggested}
                data-prelabel={option === suggested ? "true" : undefined}
                fullWidth
                justify="space-between"
                onClick={() => onAnswer({ label: option })}
                rightSection={i < hotkeys.options.length ? <Kbd>{[...hotkeys.options][i]}</Kbd> : null}
              >
                {option}
              </Button>
            </li>
          ))}
        </ol>
        {prelabel && <PrelabelNote prelabel={prelabel} />}
        {suggested !== null && (
          <Text size="sm" c="dimmed">
            Enter confirms the suggestion.
          </Text>
        )}
        {footer(`Keys ${[...hotkeys.options].slice(0, options.length).join(" ")} pick an option`)}
      </Stack>
    </>
  );
}
