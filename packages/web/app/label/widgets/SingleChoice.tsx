/** Single choice (every task type but the reserved ones): one button per option, keys 1-9 pick at once. */
import { Button, Kbd, Stack, Title } from "@mantine/core";
import { Media } from "./Media";
import { pickOnKey, useKeyHandler, type WidgetProps } from "./types";

/** The options of a single-choice label_spec (none when the spec is of another shape). */
function optionsOf(spec: WidgetProps["claim"]["label_spec"]): string[] {
  return "options" in spec ? spec.options : [];
}

export function SingleChoice({ claim, view, hotkeys, onAnswer, keys, footer }: WidgetProps) {
  const options = optionsOf(claim.label_spec);
  useKeyHandler(keys, (e) => {
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
                variant="light"
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
        {footer(`Keys ${[...hotkeys.options].slice(0, options.length).join(" ")} pick an option`)}
      </Stack>
    </>
  );
}
