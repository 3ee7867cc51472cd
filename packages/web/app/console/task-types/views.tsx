/**
 * The console's consensus views of the reserved task types (DESIGN §12), one entry per type in
 * {@link CONSENSUS_VIEWS}: each draws a consensus (its parts with their confidences) or a gold task's
 * `gold_answer` (the same shape without confidences) over the task's item.
 *
 * - multi_label_classification: the options, chosen or not, each with P(applies) as a bar;
 * - bounding_box: the item's image with the boxes drawn over it in SVG (a blank canvas of the boxes' extent
 *   when the image is not viewable), then a table of the boxes;
 * - text_span: `data_text` with the spans highlighted per entity type (a legend), then a table of the spans.
 *
 * Colors are classes of console.css (`tt-color-<n>`, by the name's place in the label_spec): the CSP allows no
 * inline style.
 */
import type { ReservedTaskType, Task } from "@labelgate/sdk/browser";
import { Badge, Table, Text } from "@mantine/core";
import { type ReactNode, useEffect, useMemo, useRef, useState } from "react";
import { formatCount, formatShare, safeHttpUrl } from "../../shared/format";
import { specChoices } from "../../shared/label-spec";
import { ColumnHeads, LabeledProgress } from "../components/common";
import { boxExtent, fitSize, type Rect, type Size, scaleBox, segmentText, truncateCodePoints } from "./geometry";

/** A consensus of a reserved type, or a gold task's answer of one. */
export type ConsensusValue = NonNullable<Task["consensus"]> | NonNullable<Task["gold_answer"]>;

/** What a view draws: `value` of `task`; `posterior` (option → P) when known; `source` says which it is. */
export interface ConsensusViewProps {
  task: Task;
  value: ConsensusValue;
  posterior: Record<string, number> | null;
  source: "consensus" | "gold";
}

/** The consensus view of one reserved task type. */
export interface ConsensusView {
  /** what the type's answer is made of, for a heading ("Options", "Boxes", "Spans") */
  parts: string;
  /** the drawing of `props.value`, or null when the value is not of this type's shape */
  render: (props: ConsensusViewProps) => ReactNode;
}

/** The consensus views, by reserved task type. */
export const CONSENSUS_VIEWS: Record<ReservedTaskType, ConsensusView> = {
  multi_label_classification: {
    parts: "Options",
    render: (p) => ("labels" in p.value ? <MultiLabelView {...p} labels={p.value.labels} /> : null),
  },
  bounding_box: {
    parts: "Boxes",
    render: (p) => ("boxes" in p.value ? <BoxesView task={p.task} boxes={p.value.boxes} source={p.source} /> : null),
  },
  text_span: {
    parts: "Spans",
    render: (p) => ("spans" in p.value ? <SpansView task={p.task} spans={p.value.spans} source={p.source} /> : null),
  },
};

/** The consensus view of `taskType`, or undefined for a single-choice type. */
export function consensusViewOf(taskType: string): ConsensusView | undefined {
  return Object.hasOwn(CONSENSUS_VIEWS, taskType) ? CONSENSUS_VIEWS[taskType as ReservedTaskType] : undefined;
}

/** Number of colors of console.css's `tt-color-<n>`. */
const COLORS = 8;

/** The color class of `name`: by its place among the spec's names (names outside the spec share the last). */
function colorClass(names: readonly string[], name: string): string {
  const i = names.indexOf(name);
  return `tt-color-${(i < 0 ? names.length : i) % COLORS}`;
}

/** A confidence as a percentage, `—` when there is none (a gold answer). */
function percent(p: number | undefined): string {
  return formatShare(p ?? null);
}

/** A coordinate in pixels, at most one decimal. */
function px(n: number): string {
  return String(Math.round(n * 10) / 10);
}

// --- multi_label_classification ---------------------------------------------------------------------

function MultiLabelView({ task, value, labels, posterior, source }: ConsensusViewProps & { labels: string[] }) {
  const chosen = new Set(labels);
  const confidence = "confidence" in value ? value.confidence : null;
  return (
    <ul className="tt-options" aria-label={source === "gold" ? "Options of the gold answer" : "Options of the consensus"}>
      {specChoices(task.label_spec).map((o) => {
        const p = posterior?.[o];
        const on = chosen.has(o);
        return (
          <li key={o} className="tt-option" data-testid="consensus-option" data-chosen={on}>
            <Text span fw={600}>
              {o}
            </Text>
            <Badge color={on ? "green" : "gray"} variant="light">
              {on ? "chosen" : "not chosen"}
            </Badge>
            {p !== undefined ? (
              <>
                <LabeledProgress value={100 * p} label={`P(${o} applies)`} size="lg" color={on ? "green" : "gray"} />
                <Text span size="sm">
                  P(applies) {percent(p)}
                  {confidence?.[o] !== undefined ? ` · confidence ${percent(confidence[o])}` : ""}
                </Text>
              </>
            ) : (
              <span />
            )}
          </li>
        );
      })}
    </ul>
  );
}

// --- bounding_box -----------------------------------------------------------------------------------

type BoxPart = Rect & { label: string; confidence?: number; support?: number };

/** The largest size the boxes are drawn at on a blank canvas. */
const CANVAS_MAX: Size = { width: 640, height: 480 };

function BoxesView({ task, boxes, source }: { task: Task; boxes: BoxPart[]; source: "consensus" | "gold" }) {
  const url = safeHttpUrl(task.data_url);
  const [failed, setFailed] = useState(false);
  const [sizes, setSizes] = useState<{ natural: Size; shown: Size } | null>(null);
  const image = useRef<HTMLImageElement>(null);
  const classes = specChoices(task.label_spec);
  const what = source === "gold" ? "gold" : "consensus";

  // the image's drawn size follows the page's width
  useEffect(() => {
    const img = image.current;
    if (!img || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => {
      if (img.naturalWidth > 0 && img.naturalHeight > 0)
        setSizes({
          natural: { width: img.naturalWidth, height: img.naturalHeight },
          shown: { width: img.clientWidth, height: img.clientHeight },
        });
    });
    observer.observe(img);
    return () => observer.disconnect();
  }, []);

  const viewable = url !== null && !failed;
  const extent = boxExtent(boxes);
  const canvas = fitSize(extent, CANVAS_MAX);
  const drawn = viewable ? sizes : { natural: extent, shown: canvas };
  const overlay = drawn && drawn.shown.width > 0 && drawn.shown.height > 0 && (
    <svg
      className={viewable ? "box-overlay" : "box-canvas"}
      width={viewable ? undefined : canvas.width}
      height={viewable ? undefined : canvas.height}
      viewBox={`0 0 ${drawn.shown.width} ${drawn.shown.height}`}
      role="img"
      aria-label={`${boxes.length} ${what} boxes (listed in the table below)`}
      data-testid="box-overlay"
    >
      {!viewable && <rect className="box-canvas-ground" x={0} y={0} width={canvas.width} height={canvas.height} />}
      {boxes.map((b, i) => {
        const r = scaleBox(b, drawn.natural, drawn.shown);
        const caption = `${b.label}${b.confidence !== undefined ? ` ${percent(b.confidence)}` : ""}${b.support !== undefined ? ` ×${b.support}` : ""}`;
        const color = colorClass(classes, b.label);
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: boxes have no id; two boxes may be equal
          <g key={i} className={color}>
            <rect className="box-rect" data-label={b.label} x={r.x} y={r.y} width={r.w} height={r.h} />
            <text className="box-caption" x={r.x + 3} y={r.y >= 16 ? r.y - 4 : r.y + 14}>
              {caption}
            </text>
          </g>
        );
      })}
    </svg>
  );
  return (
    <div>
      {viewable ? (
        <div className="box-stage">
          <img
            ref={image}
            src={url}
            alt={`Item of task ${task.task_id}`}
            className="box-image"
            onLoad={(e) => {
              const img = e.currentTarget;
              setSizes({
                natural: { width: img.naturalWidth, height: img.naturalHeight },
                shown: { width: img.clientWidth, height: img.clientHeight },
              });
            }}
            onError={() => setFailed(true)}
          />
          {overlay}
        </div>
      ) : (
        <>
          <Text size="sm" c="dimmed" mb="xs" data-testid="image-not-viewable">
            The item's image is not viewable here ({url === null ? "not an http(s) URL" : "it did not load"}): the boxes are drawn on a
            blank canvas of their extent, {extent.width} × {extent.height} pixels.
          </Text>
          {overlay}
        </>
      )}
      <div className="table-scroll">
        <Table captionSide="top" mt="sm" data-testid="box-table">
          <caption>{source === "gold" ? "Gold boxes" : "Consensus boxes"} (pixels of the item)</caption>
          <ColumnHeads names={["Class", "x", "y", "Width", "Height", "Confidence", "Support"]} />
          <Table.Tbody>
            {boxes.map((b, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: boxes have no id; two boxes may be equal
              <Table.Tr key={i}>
                <Table.Td>{b.label}</Table.Td>
                <Table.Td>{px(b.x)}</Table.Td>
                <Table.Td>{px(b.y)}</Table.Td>
                <Table.Td>{px(b.w)}</Table.Td>
                <Table.Td>{px(b.h)}</Table.Td>
                <Table.Td>{percent(b.confidence)}</Table.Td>
                <Table.Td>{b.support === undefined ? "—" : `${formatCount(b.support)} labelers`}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </div>
      {boxes.length === 0 && (
        <Text size="sm" mt="xs">
          No boxes: the {what} is that the item has no object of the task's classes.
        </Text>
      )}
    </div>
  );
}

// --- text_span --------------------------------------------------------------------------------------

type SpanPart = { start: number; end: number; label: string; confidence?: number };

/** A span's text in the table is cut to this many code points. */
const SPAN_TEXT_MAX = 80;

function SpansView({ task, spans, source }: { task: Task; spans: SpanPart[]; source: "consensus" | "gold" }) {
  const text = task.data_text;
  const types = specChoices(task.label_spec);
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
