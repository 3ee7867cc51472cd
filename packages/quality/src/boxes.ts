/**
 * Consensus of `bounding_box` tasks (contract §task-types): each labeler answers a list of boxes `{label, x, y, w, h}` in
 * pixels of the item (x, y = the top-left corner), possibly empty.
 *
 * 1. Candidates. Boxes are matched across labelers by IoU (Jaccard index), with a Hungarian assignment per pair
 *    of labelers (hungarian.ts), keeping pairs with IoU >= 0.5 whatever their class; the matched pairs are merged
 *    into clusters in decreasing IoU, never two boxes of one labeler in a cluster (single linkage under that
 *    constraint). Each cluster is a candidate object. Ground Truth's box consolidation matches workers' boxes by
 *    their Jaccard index the same way (Amazon SageMaker Ground Truth developer guide, "Annotation consolidation").
 * 2. Which candidates are objects. A binary Dawid-Skene space over candidates (fit.ts, model.ts): every labeler
 *    of the task votes 1 on the candidates it has a box in and 0 on the others. A labeler's 2 x 2 matrix holds its
 *    recall (P(a box in the candidate | a true object)) and its false-box rate (P(a box in it | not an object)),
 *    fitted by EM across the tasks of the space, shrunk to the population of labelers, and calibrated (on gold
 *    boxes when there are gold tasks). One such space per COCO size class of the fused box (`SIZE_CLASSES`):
 *    labelers miss small objects far more often, so "four of five labelers drew nothing here" says less against
 *    a small box than against a large one (on the generated crowd of the benchmark: recall 0.925 -> 0.957,
 *    precision 0.975 -> 0.957, ECE 0.031 -> 0.018; docs/notes/types.md). This is the worker model of Branson, Van Horn & Perona 2017, "Lean
 *    Crowdsourcing: combining humans and machines in an online system", CVPR (per-worker probabilities of missing
 *    a true box and of drawing a false one, estimated jointly with the objects), in the Dawid-Skene form the
 *    single-choice engine already fits. A candidate is kept when P(object) > 0.5: "found by enough labelers,
 *    weighted by each labeler's recall and precision".
 * 3. Class. A single-choice Dawid-Skene space over the candidates, K = the classes, each member box voting its
 *    class (not used with one class).
 * 4. Coordinates. Per edge (left, top, right, bottom), the weighted mean of the member boxes, each labeler weighted
 *    by its localization precision: 1 / (its mean squared edge error relative to the box size, against the fused
 *    boxes of its clusters), shrunk to the population with LOCALIZATION_PRIOR_BOXES pseudo-boxes: the
 *    maximum-likelihood box under Gaussian edge errors of known variance. A sloppy labeler's box weighs little.
 *    (The weighted median was tried: mean IoU to the truth 0.880 against 0.899 for the weighted mean.)
 *
 * Confidence (`confidence` of a consensus box) = P(object) x P(class): the calibrated probability that the box is
 * a true object of its class. With gold tasks, "object" is calibrated to mean "matches a gold box one-to-one at
 * IoU >= 0.5", so the confidence is the probability that the box would count as a true positive at IoU 0.5.
 * The task's `taskConfidence` = prod over candidates of the posterior of their decided side x prod over kept boxes
 * of P(class) x P(no object missed by every labeler), the last = exp(-`expectedMissed`) for a Poisson number of
 * objects per item (its mean and size shares estimated by the fit).
 */
import { byLabeler } from "./answers";
import { leadingOption } from "./decision";
import { refit } from "./fit";
import { minCostAssignment } from "./hungarian";
import { confusionMatrix, emptySpace, type QualityModel, scoreTask, type Vote } from "./model";
import type { Part } from "./parts";
import { LabelTable } from "./table";

/** A box in pixels of the item: (x, y) = top-left corner, w and h > 0; `label` = class index in `classes`. */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
  label: number;
}

/** One labeler's answer to a box task. */
export interface BoxAnswer {
  labelerId: string;
  boxes: readonly Box[];
}

/** A task for the fit, with its gold boxes when it is a gold task. */
export interface BoxTask {
  id: string;
  answers: readonly BoxAnswer[];
  gold?: readonly Box[];
}

/** A labeler's localization record: boxes in clusters of two or more and the sum of their squared relative edge errors. */
export interface LocalizationParams {
  boxes: number;
  sumSquares: number;
}

/** The model of a box space. */
export interface BoxModel {
  /** number of classes (1..50) */
  classes: number;
  /** candidate is an object (option 1) or not (0), one space per size class of the fused box (`sizeClass`) */
  objects: QualityModel[];
  /** class of a candidate (K = classes), null with one class */
  class: QualityModel | null;
  /** per labeler id: localization record */
  localization: Map<string, LocalizationParams>;
  /** population mean squared relative edge error (the prior of a labeler's) */
  localizationVariance: number;
  /** expected number of true objects per item (Poisson mean), for P(no object missed by every labeler) */
  objectsPerItem: number;
  /** share of the true objects in each size class (sums to 1) */
  sizeShare: number[];
}

/** IoU threshold of the candidate matching (and of a true positive, by the usual detection criterion). */
export const MATCH_IOU = 0.5;
/** Pseudo-boxes of the population's localization variance in a labeler's (how many boxes before its own weigh half). */
export const LOCALIZATION_PRIOR_BOXES = 10;
/** Localization variance before any fit: relative edge error of 10% of the box size. */
export const DEFAULT_LOCALIZATION_VARIANCE = 0.01;
/**
 * Size classes of a box by its area in square pixels, COCO's (Lin et al. 2014; cocodataset.org detection
 * evaluation): small < 32^2, medium < 96^2, large. Labelers miss small objects far more often than large ones,
 * so a labeler's recall and false-box rate are fitted per size class: a large box that four of five labelers did
 * not draw is weaker evidence of an object than a small one.
 */
export const SIZE_CLASSES = ["small", "medium", "large"] as const;

/** The size class index (SIZE_CLASSES) of a box. */
export function sizeClass(box: { w: number; h: number }): number {
  const area = box.w * box.h;
  return area < 32 * 32 ? 0 : area < 96 * 96 ? 1 : 2;
}

/** Objects per item before any fit. */
export const DEFAULT_OBJECTS_PER_ITEM = 1;

/** Intersection over union of two boxes (0 when they do not overlap or a box has no area). */
export function iou(a: Omit<Box, "label">, b: Omit<Box, "label">): number {
  const ix = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const iy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  if (ix <= 0 || iy <= 0) return 0;
  const inter = ix * iy;
  const union = a.w * a.h + b.w * b.h - inter;
  return union > 0 ? inter / union : 0;
}

/**
 * The one-to-one matching of two box lists that maximizes the summed IoU over pairs with IoU >= threshold
 * (Hungarian assignment on cost 1 - IoU, pairs below the threshold cost 1 like no match). Returns [i, j, iou]
 * triples, by ascending i. Only pairs at the threshold can be matched, so the assignment is solved separately on
 * each connected component of the graph of those pairs: the same optimum, at a cost that stays near linear for
 * boxes spread over an image (500 x 500 boxes would otherwise be a 500 x 500 assignment per pair of labelers).
 */
export function matchBoxes(
  a: readonly Omit<Box, "label">[],
  b: readonly Omit<Box, "label">[],
  threshold = MATCH_IOU,
): [number, number, number][] {
  if (a.length === 0 || b.length === 0) return [];
  // edges at the threshold; components by union-find over a's boxes (0..n-1) and b's (n..n+m-1)
  const n = a.length;
  // only boxes that overlap in x can reach the threshold: b by left edge, each a box scans the b boxes whose left
  // edge lies in (p.x - widest b, p.x + p.w)
  const order = b.map((_, j) => j).sort((x, y) => (b[x] as Omit<Box, "label">).x - (b[y] as Omit<Box, "label">).x || x - y);
  const lefts = order.map((j) => (b[j] as Omit<Box, "label">).x);
  let widest = 0;
  for (const q of b) widest = Math.max(widest, q.w);
  const edges: [number, number, number][] = [];
  a.forEach((p, i) => {
    let lo = 0;
    let hi = lefts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((lefts[mid] as number) <= p.x - widest) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < lefts.length && (lefts[k] as number) < p.x + p.w; k++) {
      const j = order[k] as number;
      const v = iou(p, b[j] as Omit<Box, "label">);
      if (v >= threshold) edges.push([i, j, v]);
    }
  });
  edges.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const parent = Int32Array.from({ length: n + b.length }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x] as number] as number;
      x = parent[x] as number;
    }
    return x;
  };
  for (const [i, j] of edges) {
    const ri = find(i);
    const rj = find(n + j);
    if (ri !== rj) parent[Math.max(ri, rj)] = Math.min(ri, rj);
  }
  const components = new Map<number, [number, number, number][]>();
  for (const e of edges) {
    const root = find(e[0]);
    const list = components.get(root);
    if (list) list.push(e);
    else components.set(root, [e]);
  }
  const out: [number, number, number][] = [];
  for (const list of components.values()) {
    if (list.length === 1) {
      out.push(list[0] as [number, number, number]);
      continue;
    }
    const rows = [...new Set(list.map((e) => e[0]))].sort((x, y) => x - y);
    const cols = [...new Set(list.map((e) => e[1]))].sort((x, y) => x - y);
    const rowIndex = new Map(rows.map((r, k) => [r, k]));
    const colIndex = new Map(cols.map((c, k) => [c, k]));
    const overlap = rows.map(() => new Array<number>(cols.length).fill(0));
    for (const [i, j, v] of list) (overlap[rowIndex.get(i) as number] as number[])[colIndex.get(j) as number] = v;
    const cost = overlap.map((row) => row.map((v) => (v >= threshold ? 1 - v : 1)));
    minCostAssignment(cost).forEach((k, r) => {
      const v = k >= 0 ? ((overlap[r] as number[])[k] as number) : 0;
      if (k >= 0 && v >= threshold) out.push([rows[r] as number, cols[k] as number, v]);
    });
  }
  return out.sort((x, y) => x[0] - y[0]);
}

/** A candidate object: its member boxes, one per labeler at most ({answer, box} indexes into the canonical answers). */
export interface Candidate {
  members: { answer: number; box: number }[];
}

/** A total order on boxes (coordinates, then class), for canonical orders. */
function compareBoxes(a: Box, b: Box): number {
  return a.x - b.x || a.y - b.y || a.w - b.w || a.h - b.h || a.label - b.label;
}

/**
 * The answers in canonical order: by labeler id, each answer's boxes sorted by coordinates and class, so that
 * neither the order of the answers nor of their boxes changes the consensus.
 * @throws RangeError on two answers of one labeler
 */
export function canonicalAnswers(answers: readonly BoxAnswer[]): BoxAnswer[] {
  return byLabeler(answers).map((a) => ({ labelerId: a.labelerId, boxes: [...a.boxes].sort(compareBoxes) }));
}

/**
 * Candidates of one task (module doc, step 1) from answers in canonical order (`canonicalAnswers`). Candidates are
 * returned in the order of their first member (answer, then box index), which is canonical too.
 */
export function candidates(answers: readonly BoxAnswer[], threshold = MATCH_IOU): Candidate[] {
  const offsets: number[] = [];
  let n = 0;
  for (const a of answers) {
    offsets.push(n);
    n += a.boxes.length;
  }
  const edges: { u: number; v: number; iou: number }[] = [];
  for (let a = 0; a < answers.length; a++) {
    for (let b = a + 1; b < answers.length; b++) {
      for (const [i, j, v] of matchBoxes((answers[a] as BoxAnswer).boxes, (answers[b] as BoxAnswer).boxes, threshold)) {
        edges.push({ u: (offsets[a] as number) + i, v: (offsets[b] as number) + j, iou: v });
      }
    }
  }
  edges.sort((p, q) => q.iou - p.iou || p.u - q.u || p.v - q.v);
  const answerOf = new Int32Array(n);
  answers.forEach((a, k) => {
    for (let i = 0; i < a.boxes.length; i++) answerOf[(offsets[k] as number) + i] = k;
  });
  // union-find; each root keeps the set of answers in its cluster
  const parent = Int32Array.from({ length: n }, (_, i) => i);
  const labelers = Array.from({ length: n }, (_, i) => new Set([answerOf[i] as number]));
  const find = (x: number): number => {
    let r = x;
    while (parent[r] !== r) r = parent[r] as number;
    while (parent[x] !== r) {
      const next = parent[x] as number;
      parent[x] = r;
      x = next;
    }
    return r;
  };
  for (const e of edges) {
    const ru = find(e.u);
    const rv = find(e.v);
    if (ru === rv) continue;
    const su = labelers[ru] as Set<number>;
    const sv = labelers[rv] as Set<number>;
    let disjoint = true;
    for (const l of sv) if (su.has(l)) disjoint = false;
    if (!disjoint) continue;
    const [keep, drop] = ru < rv ? [ru, rv] : [rv, ru];
    parent[drop] = keep;
    for (const l of labelers[drop] as Set<number>) (labelers[keep] as Set<number>).add(l);
  }
  const byRoot = new Map<number, Candidate>();
  for (let u = 0; u < n; u++) {
    const r = find(u);
    let c = byRoot.get(r);
    if (!c) {
      c = { members: [] };
      byRoot.set(r, c);
    }
    const answer = answerOf[u] as number;
    c.members.push({ answer, box: u - (offsets[answer] as number) });
  }
  return [...byRoot.values()];
}

/**
 * Fuses boxes by the weighted mean of each edge (left, top, right, bottom): with weights 1 / (a labeler's edge
 * variance), the maximum-likelihood box under independent Gaussian edge errors. Boxes that are all identical fuse
 * to that box exactly.
 */
export function fuseBoxes(
  boxes: readonly Omit<Box, "label">[],
  weights: readonly number[],
): { x: number; y: number; w: number; h: number } {
  const first = boxes[0];
  if (!first) throw new RangeError("fuseBoxes needs at least one box");
  if (boxes.every((b) => b.x === first.x && b.y === first.y && b.w === first.w && b.h === first.h))
    return { x: first.x, y: first.y, w: first.w, h: first.h };
  let total = 0;
  let x1 = 0;
  let y1 = 0;
  let x2 = 0;
  let y2 = 0;
  boxes.forEach((b, i) => {
    const w = weights[i] as number;
    total += w;
    x1 += w * b.x;
    y1 += w * b.y;
    x2 += w * (b.x + b.w);
    y2 += w * (b.y + b.h);
  });
  return { x: x1 / total, y: y1 / total, w: (x2 - x1) / total, h: (y2 - y1) / total };
}

/** Squared relative edge error of a box against a reference box: mean over the 4 edges of (error / reference size)^2. */
export function relativeEdgeError(box: Omit<Box, "label">, ref: Omit<Box, "label">): number {
  const dx1 = (box.x - ref.x) / ref.w;
  const dx2 = (box.x + box.w - ref.x - ref.w) / ref.w;
  const dy1 = (box.y - ref.y) / ref.h;
  const dy2 = (box.y + box.h - ref.y - ref.h) / ref.h;
  return (dx1 * dx1 + dx2 * dx2 + dy1 * dy1 + dy2 * dy2) / 4;
}

function checkClasses(classes: number): void {
  if (!Number.isInteger(classes) || classes < 1 || classes > 50) throw new RangeError(`a box space has 1..50 classes, got ${classes}`);
}

/** The model of a box space with no labels yet. */
export function emptyBoxModel(classes: number): BoxModel {
  checkClasses(classes);
  return {
    classes,
    objects: SIZE_CLASSES.map(() => ({ space: emptySpace(2), labelers: new Map() })),
    class: classes >= 2 ? { space: emptySpace(classes), labelers: new Map() } : null,
    localization: new Map(),
    localizationVariance: DEFAULT_LOCALIZATION_VARIANCE,
    objectsPerItem: DEFAULT_OBJECTS_PER_ITEM,
    sizeShare: SIZE_CLASSES.map(() => 1 / SIZE_CLASSES.length),
  };
}

/** A labeler's localization weight: 1 / its variance, shrunk to the population (module doc, step 4). */
export function localizationWeight(model: BoxModel, labelerId: string): number {
  const rec = model.localization.get(labelerId);
  const prior = LOCALIZATION_PRIOR_BOXES * model.localizationVariance;
  const variance = ((rec?.sumSquares ?? 0) + prior) / ((rec?.boxes ?? 0) + LOCALIZATION_PRIOR_BOXES);
  return 1 / variance;
}

/** A labeler's recall for objects of a size class (P(it draws a box on a true object of that size)) under the model. */
export function labelerRecall(model: BoxModel, labelerId: string, size: number): number {
  const space = model.objects[size] as QualityModel;
  return (confusionMatrix(space.space, space.labelers.get(labelerId))[1] as number[])[1] as number;
}

/**
 * Expected number of true objects of an item that none of `labelerIds` drew: objectsPerItem x sum over size
 * classes of (share of objects of that size) x prod_i (1 - recall_i for that size). Poisson thinning: the objects
 * every labeler missed are Poisson with this mean, so P(none missed) = exp(-it).
 */
export function expectedMissed(model: BoxModel, labelerIds: readonly string[]): number {
  let missed = 0;
  model.sizeShare.forEach((share, size) => {
    missed += share * labelerIds.reduce((p, id) => p * (1 - labelerRecall(model, id, size)), 1);
  });
  return model.objectsPerItem * missed;
}

/** Options of `fitBoxes`. */
export interface BoxFitOptions {
  /** the previous model (same classes), to warm-start the fits and weigh the coordinates */
  previous?: BoxModel;
  /** EM iteration limit (fit.ts) */
  maxIterations?: number;
}

function checkAnswer(classes: number, a: BoxAnswer): void {
  for (const b of a.boxes) {
    if (!Number.isInteger(b.label) || b.label < 0 || b.label >= classes)
      throw new RangeError(`class index must be in 0..${classes - 1}, got ${b.label}`);
  }
}

/**
 * Fits the box model of a space to every task (module doc): candidates per task, then the object and class
 * Dawid-Skene spaces, the labelers' localization and the objects per item. Gold tasks' candidates are clamped:
 * object when the fused box matches a gold box one-to-one at IoU >= 0.5 (then of its class), else not.
 * Deterministic for a given task order.
 * @throws RangeError on a class index out of range, two answers of one labeler, or a `previous` of other classes
 */
export function fitBoxes(classes: number, tasks: readonly BoxTask[], options: BoxFitOptions = {}): BoxModel {
  checkClasses(classes);
  const previous = options.previous;
  if (previous && previous.classes !== classes) throw new RangeError(`previous model has ${previous.classes} classes, expected ${classes}`);
  const weighting = previous ?? emptyBoxModel(classes);
  const objectTables = SIZE_CLASSES.map(() => new LabelTable(2));
  const classTable = classes >= 2 ? new LabelTable(classes) : null;
  const localization = new Map<string, LocalizationParams>();
  let goldObjects = 0;
  const goldBySize = SIZE_CLASSES.map(() => 0);
  let goldTasks = 0;
  const taskLabelers: string[][] = [];
  for (const task of tasks) {
    const answers = canonicalAnswers(task.answers);
    for (const a of answers) {
      checkAnswer(classes, a);
      if (!localization.has(a.labelerId)) localization.set(a.labelerId, { boxes: 0, sumSquares: 0 });
    }
    taskLabelers.push(answers.map((a) => a.labelerId));
    const cands = candidates(answers);
    const fused = cands.map((c) => fuseMembers(answers, c, weighting));
    let goldMatch: Map<number, Box> | null = null;
    if (task.gold) {
      goldTasks++;
      goldObjects += task.gold.length;
      for (const g of task.gold) goldBySize[sizeClass(g)] = (goldBySize[sizeClass(g)] as number) + 1;
      goldMatch = new Map(matchBoxes(fused, task.gold).map(([i, j]) => [i, task.gold?.[j] as Box]));
    }
    cands.forEach((c, k) => {
      const id = `${task.id}\u0000${k}`;
      const members = new Set(c.members.map((m) => m.answer));
      const objectTable = objectTables[sizeClass(fused[k] as Box)] as LabelTable;
      answers.forEach((a, i) => {
        objectTable.add(id, a.labelerId, members.has(i) ? 1 : 0);
      });
      if (classTable)
        for (const m of c.members) classTable.add(id, (answers[m.answer] as BoxAnswer).labelerId, memberBox(answers, m).label);
      if (goldMatch) {
        const g = goldMatch.get(k);
        objectTable.setGold(id, g ? 1 : 0);
        if (g && classTable) classTable.setGold(id, g.label);
      }
      if (c.members.length >= 2) {
        const ref = fused[k] as Omit<Box, "label">;
        for (const m of c.members) {
          const rec = localization.get((answers[m.answer] as BoxAnswer).labelerId) as LocalizationParams;
          rec.boxes++;
          rec.sumSquares += relativeEdgeError(memberBox(answers, m), ref);
        }
      }
    });
  }
  const objects = objectTables.map((table, size) => refit(table, previous?.objects[size], { maxIterations: options.maxIterations }));
  const classModel = classTable ? refit(classTable, previous?.class ?? undefined, { maxIterations: options.maxIterations }).model : null;
  let boxes = 0;
  let sum = 0;
  for (const rec of localization.values()) {
    boxes += rec.boxes;
    sum += rec.sumSquares;
  }
  const model: BoxModel = {
    classes,
    objects: objects.map((o) => o.model),
    class: classModel,
    localization,
    localizationVariance: boxes > 0 ? sum / boxes : weighting.localizationVariance,
    objectsPerItem: DEFAULT_OBJECTS_PER_ITEM,
    sizeShare: weighting.sizeShare,
  };
  // objects per item and their sizes: from the gold boxes when there are gold tasks, else the found objects of each
  // size corrected for the share of them every labeler of a task would miss
  if (goldTasks > 0 && goldObjects > 0) {
    model.objectsPerItem = goldObjects / goldTasks;
    model.sizeShare = goldBySize.map((n) => n / goldObjects);
  } else if (tasks.length > 0) {
    const perSize = objects.map((o, size) => {
      let found = 0;
      // a refused refit keeps the previous model and has no posteriors of these tasks
      const q = o.taskPosteriors;
      if (q) for (let t = 0; t < (objectTables[size] as LabelTable).taskCount; t++) found += q[t * 2 + 1] as number;
      let missed = 0;
      for (const ids of taskLabelers) missed += ids.reduce((p, id) => p * (1 - labelerRecall(model, id, size)), 1);
      return found / Math.max(1 - missed / tasks.length, 1e-3);
    });
    const total = perSize.reduce((a, b) => a + b, 0);
    if (total > 0) {
      model.objectsPerItem = total / tasks.length;
      model.sizeShare = perSize.map((n) => n / total);
    }
  }
  return model;
}

function memberBox(answers: readonly BoxAnswer[], m: { answer: number; box: number }): Box {
  return (answers[m.answer] as BoxAnswer).boxes[m.box] as Box;
}

function fuseMembers(answers: readonly BoxAnswer[], c: Candidate, model: BoxModel): { x: number; y: number; w: number; h: number } {
  return fuseBoxes(
    c.members.map((m) => memberBox(answers, m)),
    c.members.map((m) => localizationWeight(model, (answers[m.answer] as BoxAnswer).labelerId)),
  );
}

/** A consensus box. */
export interface ConsensusBox extends Box {
  /** P(object) x P(class): the calibrated probability that this is a true object of this class */
  confidence: number;
  /** number of labelers with a box in its cluster */
  support: number;
  /** P(object) alone */
  objectPosterior: number;
  /** P(class) per class index (length = classes; [1] with one class) */
  classPosterior: number[];
}

/** The consensus of one box task. */
export interface BoxConsensus {
  /** kept boxes (P(object) > 0.5), in canonical order; a kept box's confidence may be lower (an uncertain class) */
  boxes: ConsensusBox[];
  /** every candidate, kept or not, with its object posterior (for the console and the bench) */
  candidates: ConsensusBox[];
  /** P(no object missed by every labeler of the task) */
  noneMissed: number;
  /** P(the whole list is right): see the module doc */
  taskConfidence: number;
  /** parts of the stopping rule (parts.ts): per candidate its object decision, per kept box its class, and "none missed" */
  parts: Part[];
}

/**
 * The consensus of one task from its answers (one per labeler) and the space's model; labelers the model does not
 * know count at the population mean. The result does not depend on the order of the answers or of their boxes.
 * @throws RangeError on a class index out of range or two answers of one labeler
 */
export function aggregateBoxes(model: BoxModel, input: readonly BoxAnswer[]): BoxConsensus {
  const answers = canonicalAnswers(input);
  for (const a of answers) checkAnswer(model.classes, a);
  const all: ConsensusBox[] = [];
  const parts: Part[] = [];
  let logWhole = 0;
  for (const c of candidates(answers)) {
    const members = new Set(c.members.map((m) => m.answer));
    const box = fuseMembers(answers, c, model);
    const objects = model.objects[sizeClass(box)] as QualityModel;
    const votes: Vote[] = answers.map((a, i) => ({ labeler: objects.labelers.get(a.labelerId), option: members.has(i) ? 1 : 0 }));
    const objectPosterior = scoreTask(objects.space, votes).posterior[1] as number;
    const support = members.size;
    parts.push({ posterior: [1 - objectPosterior, objectPosterior], counts: [answers.length - support, support] });
    let classPosterior = [1];
    let label = 0;
    if (model.class) {
      const classModel = model.class;
      const classVotes: Vote[] = c.members.map((m) => ({
        labeler: classModel.labelers.get((answers[m.answer] as BoxAnswer).labelerId),
        option: memberBox(answers, m).label,
      }));
      classPosterior = scoreTask(classModel.space, classVotes).posterior;
      const counts = new Array<number>(model.classes).fill(0);
      for (const v of classVotes) counts[v.option] = (counts[v.option] as number) + 1;
      label = leadingOption(classPosterior, counts);
      if (objectPosterior > 0.5) {
        parts.push({ posterior: classPosterior, counts });
        logWhole += Math.log(classPosterior[label] as number);
      }
    }
    logWhole += Math.log(Math.max(objectPosterior, 1 - objectPosterior));
    all.push({ ...box, label, confidence: objectPosterior * (classPosterior[label] as number), support, objectPosterior, classPosterior });
  }
  const noneMissed = Math.exp(
    -expectedMissed(
      model,
      answers.map((a) => a.labelerId),
    ),
  );
  parts.push({ posterior: [1 - noneMissed, noneMissed], counts: null });
  logWhole += Math.log(noneMissed);
  all.sort(compareBoxes);
  return { boxes: all.filter((b) => b.objectPosterior > 0.5), candidates: all, noneMissed, taskConfidence: Math.exp(logWhole), parts };
}
