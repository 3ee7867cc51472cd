/**
 * `pairwise_comparison` (contract §task-types): item a and item b side by side (stacked on a narrow screen), each
 * an image, a link, or a text; keys 1 (a), 2 (b) and 0 (tie, when the spec allows ties) answer at once.
 */
import { Button, Kbd, Paper, Stack, Text, Title } from "@mantine/core";
import { Media } from "../../label/widgets/Media";
import { useKeyHandler, type WidgetProps } from "../../label/widgets/types";

type Winner = "a" | "b" | "tie";

/** One item: its text, else its URL as an image (item a uses the queue's prepared view). */
function Item({ name, text, url, view }: { name: string; text?: string; url?: string; view?: WidgetProps["view"] }) {
  let body: React.ReactNode;
  if (text !== undefined) body = <Text className="pairwise-text">{text}</Text>;
  else if (view) body = <Media view={view} />;
  else body = <img src={url} alt={`Item ${name}`} className="pairwise-image" />;
  return (
    <Paper withBorder p="sm" data-testid={`pairwise-item-${name}`} aria-label={`Item ${name.toUpperCase()}`}>
      <Text fw={700} mb="xs">
        {name.toUpperCase()}
      </Text>
      {body}
    </Paper>
  );
}

export function Pairwise({ claim, view, onAnswer, keys, footer }: WidgetProps) {
  const spec = claim.label_spec as { question: string; allow_tie?: boolean };
  const allowTie = spec.allow_tie === true;
  const choices: { winner: Winner; key: string; label: string }[] = [
    { winner: "a", key: "1", label: "A wins" },
    { winner: "b", key: "2", label: "B wins" },
    ...(allowTie ? [{ winner: "tie" as const, key: "0", label: "Tie" }] : []),
  ];
  useKeyHandler(keys, (e) => {
    if (e.repeat) return;
    const choice = choices.find((c) => c.key === e.key);
    if (!choice) return;
    e.preventDefault();
    onAnswer({ winner: choice.winner });
  });
  const c = claim as typeof claim & { data_text?: string; data_url_b?: string; data_text_b?: string };
  return (
    <>
      <div className="label-media pairwise-items" data-testid="pairwise-items">
        <Item name="a" text={c.data_text} view={c.data_text === undefined ? view : undefined} />
        <Item name="b" text={c.data_text_b} url={c.data_url_b} />
      </div>
      <Stack className="label-panel" gap="sm">
        <Title order={1} size="h3" id="question">
          {spec.question}
        </Title>
        <ol className="label-options" aria-label="Options">
          {choices.map((choice) => (
            <li key={choice.winner}>
              <Button
                variant="light"
                fullWidth
                justify="space-between"
                onClick={() => onAnswer({ winner: choice.winner })}
                rightSection={<Kbd>{choice.key}</Kbd>}
              >
                {choice.label}
              </Button>
            </li>
          ))}
        </ol>
        {footer(allowTie ? "Keys 1 (A), 2 (B), 0 (tie)" : "Keys 1 (A), 2 (B)")}
      </Stack>
    </>
  );
}
