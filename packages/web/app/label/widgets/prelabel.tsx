/**
 * A claim's pre-label (contract §prelabels): a model's answer the task's label_spec asked to show (`show_prelabel`),
 * which the widgets pre-fill for the person to confirm or change, and the note saying whose suggestion it is.
 */
import { Text } from "@mantine/core";
import type { WidgetProps } from "./types";

/** The pre-label a claim carries, or undefined. */
export interface ClaimPrelabel {
  answer: Record<string, unknown>;
  model: string;
  score?: number;
}

/** The claim's pre-label, or undefined when its task shows none. */
export function prelabelOf(claim: WidgetProps["claim"]): ClaimPrelabel | undefined {
  return (claim as { prelabel?: ClaimPrelabel }).prelabel;
}

/** "Suggested by model X (score 0.91)": shown under the options while a pre-label is pre-filled. */
export function PrelabelNote({ prelabel }: { prelabel: ClaimPrelabel }) {
  return (
    <Text size="sm" className="label-prelabel" data-testid="prelabel-note">
      Pre-filled with the suggestion of model <strong>{prelabel.model}</strong>
      {prelabel.score !== undefined ? ` (score ${prelabel.score.toFixed(2)})` : ""}: confirm it or choose another answer.
    </Text>
  );
}
