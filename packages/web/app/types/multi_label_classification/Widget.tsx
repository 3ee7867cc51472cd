/**
 * `multi_label_classification`: a checkbox per option; keys 1-9 toggle, Enter (or the Submit button) sends the
 * ticked options as `{labels}` (none ticked is an answer too).
 */
import { Button, Checkbox, Kbd, Stack, Title } from "@mantine/core";
import { useState } from "react";
import { Media } from "../../label/widgets/Media";
import { PrelabelNote, prelabelOf } from "../../label/widgets/prelabel";
import { pickOnKey, submitOnEnter, useKeyHandler, type WidgetProps } from "../../label/widgets/types";

export function MultiLabel({ claim, view, hotkeys, onAnswer, keys, footer }: WidgetProps) {
  const spec = claim.label_spec;
  const options = "options" in spec ? spec.options : [];
  // a claim's pre-label (contract §prelabels) ticks its options to start with
  const prelabel = prelabelOf(claim);
  const [ticked, setTicked] = useState<ReadonlySet<string>>(
    () =>
      new Set(
        prelabel && Array.isArray(prelabel.answer.labels) ? (prelabel.answer.labels as string[]).filter((l) => options.includes(l)) : [],
      ),
  );
  const toggle = (option: string) =>
    setTicked((t) => {
      const next = new Set(t);
      if (!next.delete(option)) next.add(option);
      return next;
    });
  const submit = () => onAnswer({ labels: options.filter((o) => ticked.has(o)) });

  useKeyHandler(keys, (e) => {
    if (submitOnEnter(e, submit) || e.repeat) return;
    pickOnKey(e, hotkeys, options.length, (i) => toggle(options[i] as string));
  });

  return (
    <>
      <div className="label-media">
        <Media view={view} />
      </div>
      <Stack className="label-panel" gap="sm">
        <Title order={1} size="h3" id="question">
          {spec.question}
        </Title>
        <fieldset className="label-fieldset">
          <legend className="label-legend">Tick every option that applies</legend>
          <ol className="label-options" aria-label="Options">
            {options.map((option, i) => (
              <li key={option} className="label-check">
                <Checkbox label={option} checked={ticked.has(option)} onChange={() => toggle(option)} />
                {i < hotkeys.options.length && <Kbd>{[...hotkeys.options][i]}</Kbd>}
              </li>
            ))}
          </ol>
        </fieldset>
        {prelabel && <PrelabelNote prelabel={prelabel} />}
        <Button onClick={submit}>
          Submit {ticked.size === 0 ? "(none apply)" : `(${ticked.size})`} <Kbd className="label-kbd-after">Enter</Kbd>
        </Button>
        {footer(`Keys ${[...hotkeys.options].slice(0, options.length).join(" ")} tick or untick an option, Enter submits`)}
      </Stack>
    </>
  );
}
