/**
 * `bounding_box` (contract §task-types): boxes fused across labelers (boxes.ts: matching, a Dawid-Skene model
 * of detection per size class, localization noise per labeler); parts are the candidate objects; a gold answer
 * matches when it has as many boxes, each met by one of its class at IoU >= MATCH_IOU; the export line adds
 * `annotations`, the consensus boxes as COCO detection results.
 */
import { type BoundingBoxSpec, boundingBoxSpec, boxAnswer as boxAnswerShape, type ItemContext } from "@labelgate/api";
import { canonicalJson } from "@labelgate/canonical-json";
import type { z } from "zod";
import {
  type Box,
  type BoxModel,
  emptyBoxModel,
  fitBoxes,
  iou,
  type LocalizationParams,
  MATCH_IOU,
  aggregateBoxes as runBoxes,
} from "../../boxes";
import type { QualityModel } from "../../model";
import {
  indexer,
  joinModels,
  labelsOf,
  type ModelRows,
  refinedAnswer,
  type StoredTypedLabeler,
  splitModels,
  type TaskTypeDefinition,
  typedTaskType,
} from "../module";

export interface BoxAnswerBody {
  boxes: { label: string; x: number; y: number; w: number; h: number }[];
}
export interface BoxConsensusBody {
  boxes: { label: string; x: number; y: number; w: number; h: number; confidence: number; support: number }[];
}

/** The answer schema of a box task: `{boxes}`, at most MAX_PARTS, each of a known class, w and h > 0, inside the item when its size is known. */
export function boxAnswer(spec: BoundingBoxSpec, item: ItemContext = {}): z.ZodType<BoxAnswerBody> {
  return refinedAnswer("bounding_box", boxAnswerShape, spec, item);
}

function toBoxes(spec: BoundingBoxSpec, answer: BoxAnswerBody): Box[] {
  const cls = indexer(spec.classes, "class");
  return answer.boxes.map((b) => ({ x: b.x, y: b.y, w: b.w, h: b.h, label: cls(b.label) }));
}

export const boundingBoxType: TaskTypeDefinition<BoundingBoxSpec, BoxAnswerBody, BoxModel, BoxConsensusBody> = {
  type: "bounding_box",
  labelSpec: boundingBoxSpec,
  answerSchema: (spec, item) => boxAnswer(spec, item),
  canonicalAnswer: (_spec, answer) => ({
    boxes: [...answer.boxes].sort(
      (a, b) => a.x - b.x || a.y - b.y || a.w - b.w || a.h - b.h || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0),
    ),
  }),
  emptyModel: (spec) => emptyBoxModel(spec.classes.length),
  fit: (spec, tasks, previous) =>
    fitBoxes(
      spec.classes.length,
      tasks.map((t) => ({
        id: t.id,
        answers: t.answers.map((a) => ({ labelerId: a.labelerId, boxes: toBoxes(spec, a.answer) })),
        gold: t.gold ? toBoxes(spec, t.gold) : undefined,
      })),
      { previous },
    ),
  aggregate: (spec, model, answers) => {
    const r = runBoxes(
      model,
      answers.map((a) => ({ labelerId: a.labelerId, boxes: toBoxes(spec, a.answer) })),
    );
    const boxes = r.boxes.map((b) => ({
      label: spec.classes[b.label] as string,
      x: b.x,
      y: b.y,
      w: b.w,
      h: b.h,
      confidence: b.confidence,
      support: b.support,
    }));
    return {
      consensus: { boxes },
      consensusLabel: canonicalJson({ boxes: boxes.map(({ label, x, y, w, h }) => ({ label, x, y, w, h })) }),
      confidence: r.taskConfidence,
      parts: r.parts,
    };
  },
};

/** The rows of a box model: one sub-space per size class, the class space, each labeler's localization. */
const boxRows: ModelRows<BoxModel> = {
  split(model) {
    const all = model.class ? [...model.objects, model.class] : model.objects;
    const { ids } = splitModels(all);
    for (const id of model.localization.keys()) ids.add(id);
    const labelers = [...ids].map((id): StoredTypedLabeler => {
      const parts = model.objects.map((m) => m.labelers.get(id) ?? null);
      const cls = model.class?.labelers.get(id) ?? null;
      return { labelerId: id, labels: labelsOf([...parts, cls]), parts, class: cls, localization: model.localization.get(id) ?? null };
    });
    return {
      space: {
        parts: model.objects.map((m) => m.space),
        class: model.class?.space ?? null,
        localizationVariance: model.localizationVariance,
        objectsPerItem: model.objectsPerItem,
        sizeShare: model.sizeShare,
      },
      labelers,
    };
  },
  join(spec, space, rows) {
    const objects = joinModels(space.parts, rows, (r, j) => r.parts[j]);
    const cls = space.class ? (joinModels([space.class], rows, (r) => r.class)[0] as QualityModel) : null;
    return {
      classes: (spec as BoundingBoxSpec).classes.length,
      objects,
      class: cls,
      localization: new Map(rows.flatMap((r): [string, LocalizationParams][] => (r.localization ? [[r.labelerId, r.localization]] : []))),
      localizationVariance: space.localizationVariance as number,
      objectsPerItem: space.objectsPerItem as number,
      sizeShare: space.sizeShare as number[],
    };
  },
};

/** A box answer matches the gold boxes: as many boxes, each gold box met by one of its class at IoU >= MATCH_IOU. */
function boxesMatch(gold: BoxAnswerBody, answer: BoxAnswerBody): boolean {
  if (!("boxes" in gold) || !("boxes" in answer) || gold.boxes.length !== answer.boxes.length) return false;
  const used = new Set<number>();
  return gold.boxes.every((g) => {
    let best = -1;
    let bestIou = MATCH_IOU;
    answer.boxes.forEach((b, i) => {
      if (used.has(i) || b.label !== g.label) return;
      const overlap = iou(b, g);
      if (overlap >= bestIou) {
        best = i;
        bestIou = overlap;
      }
    });
    if (best < 0) return false;
    used.add(best);
    return true;
  });
}

export const boundingBoxQuality = typedTaskType({
  definition: boundingBoxType,
  rows: boxRows,
  needsText: false,
  namesOf: (answer) => answer.boxes.map((b) => b.label),
  goldMatch: boxesMatch,
  reviewed: (_spec, answer) => ({ posterior: {}, consensus: { boxes: answer.boxes.map((b) => ({ ...b, confidence: 1, support: 0 })) } }),
});
