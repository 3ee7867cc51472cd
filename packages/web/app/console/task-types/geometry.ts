/**
 * Pure helpers of the consensus views of the reserved task types (contract §task-types): box geometry (an item's
 * pixels to the pixels it is drawn at) and text spans (offsets in Unicode code points, `end` exclusive, to
 * UTF-16 string indices). No DOM: unit-tested in packages/web/test.
 */

/** A size in pixels. */
export interface Size {
  width: number;
  height: number;
}

/** A rectangle in pixels: top left corner (x, y), width w and height h. */
export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A span of a text: code points `start..end` (end exclusive) and its entity type. */
export interface SpanLike {
  start: number;
  end: number;
  label: string;
}

/**
 * The extent of `boxes`: the smallest size from (0, 0) that holds every box, at least 1 × 1 pixel (the blank
 * canvas boxes are drawn on when the item's image is not viewable).
 */
export function boxExtent(boxes: readonly Rect[]): Size {
  let width = 1;
  let height = 1;
  for (const b of boxes) {
    if (Number.isFinite(b.x + b.w)) width = Math.max(width, b.x + b.w);
    if (Number.isFinite(b.y + b.h)) height = Math.max(height, b.y + b.h);
  }
  return { width: Math.ceil(width), height: Math.ceil(height) };
}

/**
 * `box`, in pixels of an item of size `natural`, in pixels of the item drawn at size `shown` (each axis scaled
 * on its own). Throws a RangeError when a side of `natural` is not a positive number.
 */
export function scaleBox(box: Rect, natural: Size, shown: Size): Rect {
  if (!(natural.width > 0) || !(natural.height > 0))
    throw new RangeError(`the item's size must be positive: ${natural.width} × ${natural.height}`);
  const sx = shown.width / natural.width;
  const sy = shown.height / natural.height;
  return { x: box.x * sx, y: box.y * sy, w: box.w * sx, h: box.h * sy };
}

/** `natural` scaled down (never up) to fit inside `max`, keeping its aspect ratio; sides rounded, at least 1. */
export function fitSize(natural: Size, max: Size): Size {
  const scale = Math.min(1, max.width / natural.width, max.height / natural.height);
  return { width: Math.max(1, Math.round(natural.width * scale)), height: Math.max(1, Math.round(natural.height * scale)) };
}

/**
 * The UTF-16 index of every code point offset of `text`: `index[k]` is where code point k starts, and
 * `index[n]` is `text.length` (n code points). A surrogate pair (an emoji) is one code point; a lone
 * surrogate is one too. O(text.length).
 */
export function codePointIndex(text: string): Uint32Array {
  const index = new Uint32Array(text.length + 1);
  let k = 0;
  for (let i = 0; i < text.length; i++) {
    index[k++] = i;
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  index[k] = text.length;
  return index.subarray(0, k + 1);
}

/** A piece of a text: a run outside every span (`span` null) or the text of span number `span`. */
export interface TextSegment {
  text: string;
  /** index of the span in the list given to {@link segmentText}, or null outside spans */
  span: number | null;
  /** code points of the text, end exclusive */
  start: number;
  end: number;
}

/**
 * `text` cut into segments at `spans` (code points, end exclusive), in text order: runs outside spans and
 * one segment per span. A span past the text is cut at its end; a span that is then empty, or that overlaps
 * an earlier one (by start), is left out and listed in `skipped` (indices into `spans`). `length` is the text's
 * length in code points. O(text.length + spans log spans), so a text of 100,000 code points is cut at once.
 */
export function segmentText(text: string, spans: readonly SpanLike[]): { segments: TextSegment[]; length: number; skipped: number[] } {
  const index = codePointIndex(text);
  const length = index.length - 1;
  const at = (k: number) => index[k] ?? text.length;
  const order = spans.map((_, i) => i).sort((p, q) => (spans[p]?.start ?? 0) - (spans[q]?.start ?? 0) || p - q);
  const segments: TextSegment[] = [];
  const skipped: number[] = [];
  let cursor = 0;
  for (const i of order) {
    const s = spans[i] as SpanLike;
    const start = Math.max(0, Math.trunc(s.start));
    const end = Math.min(length, Math.trunc(s.end));
    if (!(end > start) || start < cursor) {
      skipped.push(i);
      continue;
    }
    if (start > cursor) segments.push({ text: text.slice(at(cursor), at(start)), span: null, start: cursor, end: start });
    segments.push({ text: text.slice(at(start), at(end)), span: i, start, end });
    cursor = end;
  }
  if (cursor < length || segments.length === 0) segments.push({ text: text.slice(at(cursor)), span: null, start: cursor, end: length });
  skipped.sort((p, q) => p - q);
  return { segments, length, skipped };
}

/** `text` cut to its first `max` code points, with an ellipsis when it was longer. */
export function truncateCodePoints(text: string, max: number): string {
  if (text.length <= max) return text;
  const index = codePointIndex(text.slice(0, 2 * max + 2));
  return index.length - 1 > max ? `${text.slice(0, index[max])}…` : text;
}
