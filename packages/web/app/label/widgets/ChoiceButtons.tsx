/**
 * The panel's list of classes or entity types (bounding_box, text_span): one button per choice with its color
 * swatch (label.css `.choice-color-N`) and its hotkey, in a fieldset. `current` marks the pressed choice (the
 * class of the next box); `keepSelection` stops a click from clearing the page's text selection (the span a click
 * marks).
 */
import { Button, Kbd } from "@mantine/core";
import type { Hotkeys } from "../hotkeys";
import { CHOICE_COLORS } from "./types";

export function ChoiceButtons(props: {
  legend: string;
  label: string;
  choices: readonly string[];
  hotkeys: Hotkeys;
  onPick: (index: number) => void;
  current?: number;
  keepSelection?: boolean;
}) {
  const { legend, label, choices, hotkeys, onPick, current, keepSelection } = props;
  return (
    <fieldset className="label-fieldset">
      <legend className="label-legend">{legend}</legend>
      <ol className="label-options" aria-label={label}>
        {choices.map((c, i) => (
          <li key={c}>
            <Button
              variant={i === current ? "filled" : "light"}
              fullWidth
              justify="space-between"
              aria-pressed={current === undefined ? undefined : i === current}
              onMouseDown={keepSelection ? (e) => e.preventDefault() : undefined}
              onClick={() => onPick(i)}
              leftSection={<span className={`label-swatch choice-color-${i % CHOICE_COLORS}`} aria-hidden="true" />}
              rightSection={i < hotkeys.options.length ? <Kbd>{[...hotkeys.options][i]}</Kbd> : null}
            >
              {c}
            </Button>
          </li>
        ))}
      </ol>
    </fieldset>
  );
}
