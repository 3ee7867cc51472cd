/**
 * The geometry of the bounding-box widget, as pure functions. Boxes are kept in pixels of the item's natural
 * image size (what the answer carries: x, y the top-left corner, w, h > 0); the overlay maps the pointer from
 * the displayed size to natural pixels with {@link toNatural}.
 */

/** A box of an answer: its class and its rectangle in natural image pixels. */
export interface Box {
  label: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A size in pixels (the image's natural size). */
export interface Size {
  width: number;
  height: number;
}

/** Where the image is displayed, in client pixels (a DOMRect's fields). */
export interface DisplayRect {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** A point in natural image pixels. */
export interface Point {
  x: number;
  y: number;
}

/** A drag shorter than this (natural pixels, either side) draws no box: it was a click. */
export const MIN_DRAWN_SIZE = 3;

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

/**
 * The natural-pixel point under a client point (clientX, clientY) on an image displayed at `rect` whose
 * natural size is `natural`, clamped inside the image. A rect of zero size maps to the origin.
 */
export function toNatural(clientX: number, clientY: number, rect: DisplayRect, natural: Size): Point {
  const sx = rect.width > 0 ? natural.width / rect.width : 0;
  const sy = rect.height > 0 ? natural.height / rect.height : 0;
  return {
    x: clamp((clientX - rect.left) * sx, 0, natural.width),
    y: clamp((clientY - rect.top) * sy, 0, natural.height),
  };
}

/** The box spanned by two corners (any order), or null when it is smaller than {@link MIN_DRAWN_SIZE}. */
export function boxFromCorners(a: Point, b: Point, label: string): Box | null {
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  const w = Math.abs(a.x - b.x);
  const h = Math.abs(a.y - b.y);
  if (w < MIN_DRAWN_SIZE || h < MIN_DRAWN_SIZE) return null;
  return { label, x, y, w, h };
}

/**
 * `box` rounded to whole pixels and clamped inside an image of `size`: corners rounded to the nearest pixel,
 * w and h at least 1 and x + w <= width, y + h <= height (an image at least 1 pixel wide and high).
 */
export function roundBox(box: Box, size: Size): Box {
  const W = Math.max(1, Math.round(size.width));
  const H = Math.max(1, Math.round(size.height));
  const x1 = clamp(Math.round(box.x), 0, W - 1);
  const y1 = clamp(Math.round(box.y), 0, H - 1);
  const x2 = clamp(Math.round(box.x + box.w), x1 + 1, W);
  const y2 = clamp(Math.round(box.y + box.h), y1 + 1, H);
  return { label: box.label, x: x1, y: y1, w: x2 - x1, h: y2 - y1 };
}

/** `box` moved by (dx, dy) natural pixels, kept whole inside the image (its size unchanged). */
export function moveBox(box: Box, dx: number, dy: number, size: Size): Box {
  const w = Math.min(box.w, size.width);
  const h = Math.min(box.h, size.height);
  return { ...box, w, h, x: clamp(box.x + dx, 0, size.width - w), y: clamp(box.y + dy, 0, size.height - h) };
}

/** `box` with its bottom-right corner moved by (dw, dh): at least 1 pixel, not past the image. */
export function resizeBox(box: Box, dw: number, dh: number, size: Size): Box {
  return { ...box, w: clamp(box.w + dw, 1, size.width - box.x), h: clamp(box.h + dh, 1, size.height - box.y) };
}

/** `box` with its bottom-right corner at `corner` (natural pixels): the top-left corner stays. */
export function resizeBoxTo(box: Box, corner: Point, size: Size): Box {
  return resizeBox(box, corner.x - (box.x + box.w), corner.y - (box.y + box.h), size);
}

/** A new box for the keyboard ("n"): a quarter of each side of the image, centered, whole pixels. */
export function centeredBox(size: Size, label: string): Box {
  const w = Math.max(1, Math.round(size.width / 4));
  const h = Math.max(1, Math.round(size.height / 4));
  return roundBox({ label, x: (size.width - w) / 2, y: (size.height - h) / 2, w, h }, size);
}

/** How far one arrow key press moves or resizes a box: 1% of the image's longer side, at least 1 pixel. */
export function nudgeStep(size: Size): number {
  return Math.max(1, Math.round(Math.max(size.width, size.height) / 100));
}
