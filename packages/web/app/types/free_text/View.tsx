/**
 * `free_text`'s console view: the consensus text, each word with its confidence (in its title), the words below
 * the task's confidence target (0.9 under the threshold policy) marked; then the answers aligned word by word
 * beside it (ROVER's network: one column per slot, the consensus row first, a word that differs from the
 * consensus marked, "·" where an answer has no word). A gold answer shows its text.
 */
import type { Task } from "@labelgate/sdk/browser";
import { Table, Text } from "@mantine/core";
import { ColumnHeads } from "../../console/components/common";
import { type ConsensusView, type ConsensusViewProps, percent } from "../../console/task-types/view-kit";
import "./free-text.css";

interface Slot {
  word: string | null;
  confidence: number;
  answers: (string | null)[];
}
interface TextValue {
  text: string;
  words?: { word: string; confidence: number }[];
  slots?: Slot[];
}

/** Below this a word is marked (the task's confidence target, else 0.9). */
function lowBelow(task: Task): number {
  return task.confidence_target ?? 0.9;
}

function FreeTextView({ task, value, source }: ConsensusViewProps & { value: TextValue }) {
  if (source === "gold" || value.words === undefined)
    return (
      <Text className="ft-text" data-testid="free-text-gold">
        {value.text}
      </Text>
    );
  const low = lowBelow(task);
  const slots = value.slots ?? [];
  const answers = slots[0]?.answers.length ?? 0;
  const lows = value.words.filter((w) => w.confidence < low).length;
  return (
    <div>
      <Text className="ft-text" data-testid="free-text-consensus" aria-label="Consensus text">
        {value.words.map((w, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: words have no id (a word may repeat)
          <span key={i}>
            <span
              className={w.confidence < low ? "ft-word ft-low" : "ft-word"}
              title={`confidence ${percent(w.confidence)}`}
              data-testid="free-text-word"
              data-low={w.confidence < low}
            >
              {w.word}
            </span>{" "}
          </span>
        ))}
      </Text>
      <Text size="xs" c="dimmed">
        {value.words.length} words · {lows} below {percent(low)} confidence (marked)
      </Text>
      {slots.length > 0 && (
        <div className="table-scroll">
          <Table captionSide="top" mt="sm" className="ft-align" data-testid="free-text-alignment">
            <caption>The answers aligned word by word ({answers} answers)</caption>
            <ColumnHeads names={["", ...slots.map((_, j) => String(j + 1))]} />
            <Table.Tbody>
              <Table.Tr data-testid="free-text-alignment-consensus">
                <Table.Th scope="row">Consensus</Table.Th>
                {slots.map((s, j) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: slots have no id
                  <Table.Td key={j} className={s.confidence < low ? "ft-low" : undefined} title={`confidence ${percent(s.confidence)}`}>
                    {s.word ?? <span className="ft-gap">·</span>}
                  </Table.Td>
                ))}
              </Table.Tr>
              {Array.from({ length: answers }, (_, a) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: answers are in recording order
                <Table.Tr key={a} data-testid="free-text-alignment-answer">
                  <Table.Th scope="row">Answer {a + 1}</Table.Th>
                  {slots.map((s, j) => {
                    const w = s.answers[a] ?? null;
                    return (
                      // biome-ignore lint/suspicious/noArrayIndexKey: slots have no id
                      <Table.Td key={j} className={w === s.word ? undefined : "ft-differs"}>
                        {w ?? <span className="ft-gap">·</span>}
                      </Table.Td>
                    );
                  })}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </div>
      )}
    </div>
  );
}

/** The console view of a free-text consensus or gold answer. */
export const freeTextView: ConsensusView = {
  parts: "Words",
  drawsItem: null,
  render: (p) => ("text" in p.value ? <FreeTextView {...p} value={p.value as unknown as TextValue} /> : null),
};
