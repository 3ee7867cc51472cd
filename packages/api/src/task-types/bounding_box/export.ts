/**
 * Bounding boxes' export rows (contract §exports, docs/decisions/0257 and 0258): jsonl adds `consensus`,
 * `annotations` (COCO detection results) and `item_error`; Label Studio `rectanglelabels` regions in percent of
 * the image (it needs the image's size); COCO one annotation per consensus box (`bbox` [x, y, w, h] in pixels,
 * `area` w·h, `score` its confidence; categories: the spec's classes); hf `{task_id, image, width, height,
 * objects: {bbox, category, score}}` (the `objects` layout of the Hub's detection sets); CoNLL does not fit.
 */
import {
  consensusField,
  type ExportRow,
  itemErrorField,
  itemSizeOf,
  type LabelStudioResult,
  labelStudioRegion,
  type TypeExportRows,
} from "../export-rows";

/** A consensus box (bounding_box's `consensus.boxes[]`). */
export interface ConsensusBox {
  label: string;
  x: number;
  y: number;
  w: number;
  h: number;
  confidence: number;
}

/** The consensus boxes of a row ([] until decided). */
export function boxesOf(row: ExportRow): ConsensusBox[] {
  return ((row.consensus?.boxes as ConsensusBox[] | undefined) ?? []).slice();
}

/** The classes of a box row's spec. */
const classesOf = (r: ExportRow): string[] => (r.label_spec as { classes: string[] }).classes;

/**
 * The consensus boxes as COCO detection results `{bbox: [x, y, w, h], category_id (1-based in classes),
 * category, score}` ([] when not decided).
 */
function annotationsField(r: ExportRow): string {
  const classes = classesOf(r);
  const annotations = boxesOf(r).map((b) => ({
    bbox: [b.x, b.y, b.w, b.h],
    category_id: classes.indexOf(b.label) + 1,
    category: b.label,
    score: b.confidence,
  }));
  return `,"annotations":${JSON.stringify(annotations)}`;
}

/** Label Studio's regions of a row: `rectanglelabels` in percent of the image, none (with a warning) without its size. */
function labelStudioParts(r: ExportRow) {
  const boxes = boxesOf(r);
  const size = itemSizeOf(r);
  if (!size) {
    return {
      item: r.data_url,
      result: [],
      ...(boxes.length > 0 ? { warning: "image size unknown: give width and height (pixels) with the item to export its boxes" } : {}),
    };
  }
  const pct = (v: number, of: number) => (v / of) * 100;
  return {
    item: r.data_url,
    result: boxes.map(
      (b, i): LabelStudioResult => ({
        ...labelStudioRegion(i, "rectanglelabels"),
        original_width: size.width,
        original_height: size.height,
        image_rotation: 0,
        value: {
          x: pct(b.x, size.width),
          y: pct(b.y, size.height),
          width: pct(b.w, size.width),
          height: pct(b.h, size.height),
          rotation: 0,
          rectanglelabels: [b.label],
        },
        score: b.confidence,
      }),
    ),
  };
}

export const boundingBoxExportRows: TypeExportRows = {
  texts: "never",
  jsonl: (r) => consensusField(r) + annotationsField(r) + itemErrorField(r),
  "label-studio": labelStudioParts,
  coco: {
    categories: classesOf,
    annotations: (r, categoryId) =>
      boxesOf(r).map((b) => ({
        category_id: categoryId(b.label),
        bbox: [b.x, b.y, b.w, b.h],
        area: b.w * b.h,
        iscrowd: 0,
        segmentation: [],
        score: b.confidence,
      })),
  },
  conll: null,
  hf: (r) => {
    const boxes = boxesOf(r);
    const size = itemSizeOf(r);
    return {
      task_id: r.task_id,
      image: r.data_url,
      width: size?.width ?? null,
      height: size?.height ?? null,
      objects: {
        bbox: boxes.map((b) => [b.x, b.y, b.w, b.h]),
        category: boxes.map((b) => b.label),
        score: boxes.map((b) => b.confidence),
      },
    };
  },
};
