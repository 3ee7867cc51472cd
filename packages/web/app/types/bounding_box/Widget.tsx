/**
 * `bounding_box`: the item's image with an SVG overlay of the boxes, kept in natural image pixels (the
 * overlay's viewBox is the natural size, so what is drawn is what is sent).
 *
 * Mouse: drag on the image draws a box (of the current class); a click on a box selects it, a drag moves
 * it, its corner handle resizes it. Keyboard: "n" adds a box at the center, Tab / Shift+Tab cycle through the
 * boxes, arrows move the selected box (Shift+arrows resize it), Delete/Backspace deletes it, Escape
 * deselects. Keys 1-9 set the selected box's class and the class of the next box. Enter sends `{boxes}`.
 */
import { Button, Kbd, Stack, Title } from "@mantine/core";
import { type PointerEvent as ReactPointerEvent, useRef, useState } from "react";
import {
  type Box,
  boxFromCorners,
  centeredBox,
  moveBox,
  nudgeStep,
  type Point,
  resizeBox,
  resizeBoxTo,
  roundBox,
  type Size,
  toNatural,
} from "../../label/boxes";
import { optionOfKey } from "../../label/hotkeys";
import { ChoiceButtons } from "../../label/widgets/ChoiceButtons";
import { ImageState, Media, useImageHolder } from "../../label/widgets/Media";
import { CHOICE_COLORS, pickOnKey, submitOnEnter, useKeyHandler, type WidgetProps } from "../../label/widgets/types";

type Drag =
  | { mode: "draw"; from: Point; pointer: number }
  | { mode: "move"; index: number; from: Point; box: Box; pointer: number }
  | { mode: "resize"; index: number; pointer: number };

export function BoundingBox({ claim, view, hotkeys, onAnswer, keys, footer }: WidgetProps) {
  const spec = claim.label_spec;
  const classes = "classes" in spec ? spec.classes : [];
  const image = view.kind === "image" && view.state === "ready" ? view.image : null;
  const holder = useImageHolder(view.kind === "image" ? view.image : null);
  const natural: Size | null = image && image.naturalWidth > 0 ? { width: image.naturalWidth, height: image.naturalHeight } : null;
  const [boxes, setBoxes] = useState<Box[]>([]);
  const [selected, setSelected] = useState<number | null>(null);
  const [current, setCurrent] = useState(0);
  const [drawing, setDrawing] = useState<Box | null>(null);
  const drag = useRef<Drag | null>(null);
  const svg = useRef<SVGSVGElement>(null);
  const className = classes[current] ?? classes[0] ?? "";

  const submit = () => onAnswer({ boxes: natural ? boxes.map((b) => roundBox(b, natural)) : [] });
  const update = (index: number, f: (b: Box) => Box) => setBoxes((bs) => bs.map((b, i) => (i === index ? f(b) : b)));
  const remove = (index: number) => {
    setBoxes((bs) => bs.filter((_, i) => i !== index));
    setSelected(null);
  };
  const setClass = (index: number) => {
    const label = classes[index];
    if (label === undefined) return;
    setCurrent(index);
    if (selected !== null) update(selected, (b) => ({ ...b, label }));
  };
  const add = () => {
    if (!natural) return;
    setSelected(boxes.length);
    setBoxes([...boxes, centeredBox(natural, className)]);
  };

  useKeyHandler(keys, (e) => {
    const target = e.target;
    if (submitOnEnter(e, submit)) return;
    if (e.key === "Tab") {
      // Tab cycles through the boxes from the page or the image; past the last box it leaves as usual
      if (target !== document.body || boxes.length === 0) return;
      const next = selected === null ? (e.shiftKey ? boxes.length - 1 : 0) : selected + (e.shiftKey ? -1 : 1);
      if (next < 0 || next >= boxes.length) {
        setSelected(null);
        return;
      }
      e.preventDefault();
      setSelected(next);
      return;
    }
    if (e.key === "Escape") {
      setSelected(null);
      return;
    }
    if (!natural) return;
    const arrow = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
    if (arrow) {
      if (selected === null) return;
      e.preventDefault();
      const step = nudgeStep(natural);
      const [dx, dy] = [(arrow[0] as number) * step, (arrow[1] as number) * step];
      update(selected, (b) => (e.shiftKey ? resizeBox(b, dx, dy, natural) : moveBox(b, dx, dy, natural)));
      return;
    }
    if (e.repeat) return;
    if (e.key === "Delete" || e.key === "Backspace") {
      if (selected === null) return;
      e.preventDefault();
      remove(selected);
      return;
    }
    if (e.key.toLowerCase() === "n" && optionOfKey(hotkeys, e.key) === -1) {
      e.preventDefault();
      add();
      return;
    }
    pickOnKey(e, hotkeys, classes.length, setClass);
  });

  const pointAt = (e: ReactPointerEvent): Point | null =>
    svg.current && natural ? toNatural(e.clientX, e.clientY, svg.current.getBoundingClientRect(), natural) : null;

  const onPointerDown = (e: ReactPointerEvent<SVGSVGElement>) => {
    if (e.button !== 0 || !natural) return;
    const from = pointAt(e);
    if (!from) return;
    e.preventDefault();
    // the keys work on the page: a button focused before would take Enter
    if (document.activeElement instanceof HTMLElement) document.activeElement.blur();
    const part = (e.target as Element).closest("[data-box]");
    const index = part ? Number(part.getAttribute("data-box")) : -1;
    const box = boxes[index];
    if (box) {
      setSelected(index);
      drag.current =
        (e.target as Element).getAttribute("data-part") === "handle"
          ? { mode: "resize", index, pointer: e.pointerId }
          : { mode: "move", index, from, box, pointer: e.pointerId };
    } else {
      drag.current = { mode: "draw", from, pointer: e.pointerId };
    }
    svg.current?.setPointerCapture(e.pointerId);
  };
  const onPointerMove = (e: ReactPointerEvent<SVGSVGElement>) => {
    const d = drag.current;
    const at = pointAt(e);
    if (!d || d.pointer !== e.pointerId || !at || !natural) return;
    if (d.mode === "draw") setDrawing(boxFromCorners(d.from, at, className));
    else if (d.mode === "move") update(d.index, () => moveBox(d.box, at.x - d.from.x, at.y - d.from.y, natural));
    else update(d.index, (b) => resizeBoxTo(b, at, natural));
  };
  const onPointerUp = (e: ReactPointerEvent<SVGSVGElement>) => {
    const d = drag.current;
    if (!d || d.pointer !== e.pointerId) return;
    drag.current = null;
    setDrawing(null);
    const at = pointAt(e);
    if (d.mode !== "draw" || !at || !natural) return;
    const box = boxFromCorners(d.from, at, className);
    if (box) {
      setSelected(boxes.length);
      setBoxes([...boxes, roundBox(box, natural)]);
    } else {
      setSelected(null);
    }
  };

  const handle = natural ? Math.max(natural.width, natural.height) / 60 : 0;
  const colorOf = (label: string) => `choice-color-${Math.max(0, classes.indexOf(label)) % CHOICE_COLORS}`;

  return (
    <>
      <div className="label-media">
        {view.kind === "image" ? (
          <>
            <div className="bbox-stage" hidden={view.state === "error"}>
              <div ref={holder} className="bbox-image" />
              {natural && (
                // an SVG drawing surface (its keys work anywhere on the page); the boxes are also listed as buttons
                <svg
                  ref={svg}
                  className="bbox-overlay"
                  viewBox={`0 0 ${natural.width} ${natural.height}`}
                  preserveAspectRatio="none"
                  role="img"
                  aria-label={`The image with ${boxes.length} boxes: drag to draw a box, press N for a new one`}
                  onPointerDown={onPointerDown}
                  onPointerMove={onPointerMove}
                  onPointerUp={onPointerUp}
                  onPointerCancel={onPointerUp}
                >
                  {boxes.map((b, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: boxes have no identity but their place
                    <g key={i} data-box={i} className={`bbox ${colorOf(b.label)}${i === selected ? " bbox-selected" : ""}`}>
                      <rect x={b.x} y={b.y} width={b.w} height={b.h} className="bbox-rect" vectorEffect="non-scaling-stroke" />
                      {i === selected && (
                        <rect
                          data-part="handle"
                          className="bbox-handle"
                          x={b.x + b.w - handle / 2}
                          y={b.y + b.h - handle / 2}
                          width={handle}
                          height={handle}
                          vectorEffect="non-scaling-stroke"
                        />
                      )}
                    </g>
                  ))}
                  {drawing && (
                    <rect
                      x={drawing.x}
                      y={drawing.y}
                      width={drawing.w}
                      height={drawing.h}
                      className={`bbox-rect bbox-drawing ${colorOf(drawing.label)}`}
                      vectorEffect="non-scaling-stroke"
                    />
                  )}
                </svg>
              )}
            </div>
            {/* outside the stage, whose line-height 0 laid the alert's text over itself */}
            <ImageState view={view} />
          </>
        ) : (
          <Media view={view} />
        )}
      </div>
      <Stack className="label-panel" gap="sm">
        <Title order={1} size="h3" id="question">
          {spec.question}
        </Title>
        <ChoiceButtons
          legend="Class of the selected box and of the next box"
          label="Classes"
          choices={classes}
          hotkeys={hotkeys}
          onPick={setClass}
          current={current}
        />
        <ol className="label-parts" aria-label="Boxes">
          {boxes.map((b, i) => {
            const r = natural ? roundBox(b, natural) : b;
            return (
              // biome-ignore lint/suspicious/noArrayIndexKey: boxes have no identity but their place
              <li key={i} className="label-part">
                <Button
                  variant={i === selected ? "filled" : "subtle"}
                  size="xs"
                  aria-pressed={i === selected}
                  onClick={() => setSelected(i === selected ? null : i)}
                >
                  {`Box ${i + 1}: ${b.label} at ${r.x},${r.y}, ${r.w}×${r.h}`}
                </Button>
                <Button variant="subtle" color="red" size="xs" aria-label={`Delete box ${i + 1}`} onClick={() => remove(i)}>
                  Delete
                </Button>
              </li>
            );
          })}
        </ol>
        <BoxActions onAdd={add} onSubmit={submit} count={boxes.length} canAdd={natural !== null} />
        {footer(
          "Drag on the image or press N to add a box; Tab selects, arrows move, Shift+arrows resize, Delete removes; " +
            `keys ${[...hotkeys.options].slice(0, classes.length).join(" ")} set the class; Enter submits`,
        )}
      </Stack>
    </>
  );
}

/** The panel's buttons: a new box (as the N key does) and Submit (as Enter does). */
function BoxActions({ onAdd, onSubmit, count, canAdd }: { onAdd: () => void; onSubmit: () => void; count: number; canAdd: boolean }) {
  return (
    <div className="label-actions">
      <Button variant="light" onClick={onAdd} disabled={!canAdd} rightSection={<Kbd>N</Kbd>}>
        New box
      </Button>
      <Button onClick={onSubmit} rightSection={<Kbd>Enter</Kbd>}>
        Submit {count === 0 ? "(no boxes)" : `(${count})`}
      </Button>
    </div>
  );
}
