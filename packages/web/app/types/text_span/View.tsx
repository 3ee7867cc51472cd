/** `text_span`'s console view: `data_text` with the spans highlighted per entity type (a legend), then a table of the spans. */
import type { Task } from "@labelgate/sdk/browser";
import { Table, Text } from "@mantine/core";
import { useMemo } from "react";
import { ColumnHeads } from "../../console/components/common";
import { segmentText, truncateCodePoints } from "../../console/task-types/geometry";
import { type ConsensusView, colorClass, percent } from "../../console/task-types/view-kit";
import { formatCount } from "../../shared/format";
import { specChoices } from "../../shared/label-spec";

// --- text_span --------------------------------------------------------------------------------------

type SpanPart = { start: number; end: number; label: string; confidence?: number };

/** A span's text in the table is cut to this many code points. */
const SPAN_TEXT_MAX = 80;

function SpansView({ task, spans, source }: { task: Task; spans: SpanPart[]; source: "consensus" | "gold" }) {
  const text = task.data_text;
  const types = specChoices(task.task_type, task.label_spec);
  const cut = useMemo(() => (text === undefined ? null : segmentText(text, spans)), [text, spans]);
  if (text === undefined || cut === null)
    return (
      <Text size="sm" c="dimmed">
        The task's text is not available yet (its body is being fetched from the item URL).
      </Text>
    );
  const spanText = new Map<number, string>();
  for (const s of cut.segments) if (s.span !== null) spanText.set(s.span, s.text);
  const counts = new Map<string, number>();
  for (const s of spans) counts.set(s.label, (counts.get(s.label) ?? 0) + 1);
  const what = source === "gold" ? "gold" : "consensus";
  return (
    <div>
      <ul className="span-legend" aria-label="Entity types">
        {types.map((t) => (
          <li key={t}>
            <span className={`span-swatch ${colorClass(types, t)}`} aria-hidden="true" />
            {t} ({counts.get(t) ?? 0})
          </li>
        ))}
      </ul>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolled region must take the focus to be read by keyboard */}
      <section className="span-text" aria-label={`Text with the ${what} spans highlighted`} tabIndex={0} data-testid="span-text">
        {cut.segments.map((s) =>
          s.span === null ? (
            s.text
          ) : (
            <SpanMark
              key={s.start}
              span={spans[s.span] as SpanPart}
              text={s.text}
              color={colorClass(types, (spans[s.span] as SpanPart).label)}
            />
          ),
        )}
      </section>
      <Text size="xs" c="dimmed" mt={4}>
        {formatCount(cut.length)} code points · {formatCount(spans.length)} spans
        {cut.skipped.length > 0 ? ` · ${cut.skipped.length} not drawn (past the text or overlapping another)` : ""}
      </Text>
      <div className="table-scroll">
        <Table captionSide="top" mt="sm" data-testid="span-table">
          <caption>{source === "gold" ? "Gold spans" : "Consensus spans"} (offsets in code points, end exclusive)</caption>
          <ColumnHeads names={["Text", "Entity type", "Start", "End", "Confidence"]} />
          <Table.Tbody>
            {spans.map((s, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: spans have no id
              <Table.Tr key={i}>
                <Table.Td className="span-cell">
                  {spanText.has(i) ? truncateCodePoints(spanText.get(i) as string, SPAN_TEXT_MAX) : "—"}
                </Table.Td>
                <Table.Td>{s.label}</Table.Td>
                <Table.Td>{s.start}</Table.Td>
                <Table.Td>{s.end}</Table.Td>
                <Table.Td>{percent(s.confidence)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </div>
    </div>
  );
}

/** One highlighted span: its text, then (for assistive technology) its entity type and confidence. */
function SpanMark({ span, text, color }: { span: SpanPart; text: string; color: string }) {
  const note = `${span.label}${span.confidence !== undefined ? `, confidence ${percent(span.confidence)}` : ""}`;
  return (
    <mark className={`tt-span ${color}`} title={note} data-testid="consensus-span" data-label={span.label}>
      <span className="tt-span-text">{text}</span>
      <span className="visually-hidden"> ({note})</span>
    </mark>
  );
}

/** The console view of a span consensus or gold answer. */
export const textSpanView: ConsensusView = {
  parts: "Spans",
  drawsItem: "text",
  render: (p) => ("spans" in p.value ? <SpansView task={p.task} spans={p.value.spans} source={p.source} /> : null),
};
