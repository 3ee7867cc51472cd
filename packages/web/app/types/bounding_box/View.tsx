/**
 * `bounding_box`'s console view: the item's image with the boxes drawn over it in SVG (a blank canvas of the
 * boxes' extent when the image is not viewable), then a table of the boxes.
 */
import type { Task } from "@labelgate/sdk/browser";
import { Table, Text } from "@mantine/core";
import { useEffect, useRef, useState } from "react";
import { ColumnHeads } from "../../console/components/common";
import { boxExtent, fitSize, type Rect, type Size, scaleBox } from "../../console/task-types/geometry";
import { type ConsensusView, colorClass, percent, px } from "../../console/task-types/view-kit";
import { formatCount, safeHttpUrl } from "../../shared/format";
import { specChoices } from "../../shared/label-spec";

// --- bounding_box -----------------------------------------------------------------------------------

type BoxPart = Rect & { label: string; confidence?: number; support?: number };

/** The largest size the boxes are drawn at on a blank canvas. */
const CANVAS_MAX: Size = { width: 640, height: 480 };

function BoxesView({ task, boxes, source }: { task: Task; boxes: BoxPart[]; source: "consensus" | "gold" }) {
  const url = safeHttpUrl(task.data_url);
  const [failed, setFailed] = useState(false);
  const [sizes, setSizes] = useState<{ natural: Size; shown: Size } | null>(null);
  const image = useRef<HTMLImageElement>(null);
  const classes = specChoices(task.task_type, task.label_spec);
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

/** The console view of a box consensus or gold answer. */
export const boundingBoxView: ConsensusView = {
  parts: "Boxes",
  drawsItem: "image",
  render: (p) => ("boxes" in p.value ? <BoxesView task={p.task} boxes={p.value.boxes} source={p.source} /> : null),
};
