/**
 * `bounding_box` (contract §task-types): label_spec `{question, classes}` (1..50 unique); answer
 * `{boxes: [{label, x, y, w, h}]}` in pixels of the item (x, y: top left; w, h > 0; at most MAX_PARTS; may be
 * empty), each of a known class and inside the item when its size is known; canonical form: boxes sorted by
 * x, y, w, h, label.
 */
import { z } from "zod";
import { type AnswerIssue, choices, count, defineWireTaskType, MAX_PARTS, probability, question } from "../module";
import { boundingBoxExportRows } from "./export";

/** `bounding_box`: the question and the object classes (1..50 unique). */
export const boundingBoxSpec = z.object({ question, classes: choices("classes", 1) }).strict();
export type BoundingBoxSpec = z.output<typeof boundingBoxSpec>;

const coordinate = z.number().finite();
/** One box of an answer: its class and its rectangle in pixels of the item (x, y: top left; w, h > 0). */
export const answerBox = z
  .object({
    label: z.string().min(1).max(200),
    x: coordinate.min(0),
    y: coordinate.min(0),
    w: coordinate.positive(),
    h: coordinate.positive(),
  })
  .strict();
/** `{boxes}`: a box answer (may be empty). */
export const boxAnswer = z.object({ boxes: z.array(answerBox).max(MAX_PARTS) }).strict();
export type BoxAnswer = z.output<typeof boxAnswer>;

export const boundingBoxWire = defineWireTaskType({
  name: "bounding_box",
  title: "bounding_box",
  labelSpec: boundingBoxSpec,
  choicesField: "classes",
  answer: boxAnswer,
  answerKey: "boxes",
  answerShape: "{boxes: [{label, x, y, w, h}, ...]}",
  answerIssues: (spec, answer, item) => {
    const known = new Set(spec.classes);
    const issues: AnswerIssue[] = [];
    answer.boxes.forEach((b, i) => {
      if (!known.has(b.label)) issues.push({ path: ["boxes", i, "label"], message: `unknown class "${b.label}"` });
      if (item.width !== undefined && b.x + b.w > item.width)
        issues.push({ path: ["boxes", i], message: `box ends at x = ${b.x + b.w}, outside the item (width ${item.width})` });
      if (item.height !== undefined && b.y + b.h > item.height)
        issues.push({ path: ["boxes", i], message: `box ends at y = ${b.y + b.h}, outside the item (height ${item.height})` });
    });
    return issues;
  },
  canonicalAnswer: (_spec, answer) => ({
    boxes: [...answer.boxes].sort(
      (a, b) => a.x - b.x || a.y - b.y || a.w - b.w || a.h - b.h || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0),
    ),
  }),
  exportLine: {
    annotations: z
      .array(
        z.strictObject({
          bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]).describe("COCO: [x, y, width, height] in pixels"),
          category_id: z.int().min(1).describe("1-based index of the class in label_spec.classes"),
          category: z.string(),
          score: probability,
        }),
      )
      .optional()
      .describe("bounding_box only: the consensus boxes as COCO detection results"),
  },
  exportRows: boundingBoxExportRows,
  responseSpec: z.strictObject({ question: z.string(), classes: z.array(z.string()) }),
  consensus: z.strictObject({
    boxes: z.array(
      z.strictObject({
        label: z.string(),
        x: z.number(),
        y: z.number(),
        w: z.number(),
        h: z.number(),
        confidence: probability.describe("P(this is an object of this class, here)"),
        support: count.describe("labelers whose box is in this box's cluster"),
      }),
    ),
  }),
  task: {
    fields: {},
    goldDescription: "a gold task's true boxes",
    description: "A bounding-box task: the labeler draws a box around every object of the classes (possibly none).",
  },
});
