/**
 * A generated crowd for the `bounding_box` benchmark (`pnpm bench:types`): true objects with real object sizes,
 * labelers who miss, add, jitter and mislabel boxes at stated rates; the fixed-overlap greedy Jaccard baseline; the
 * detection scoring (precision, recall, mean IoU at IoU 0.5, ECE of box confidence). Seeded (pure-rand
 * xoroshiro128+) and deterministic.
 *
 * Object sizes, from the COCO detection data (Lin et al. 2014, "Microsoft COCO: Common Objects in Context", ECCV,
 * and the COCO detection evaluation page, cocodataset.org/#detection-eval):
 * - images 640 x 480 (COCO's usual size: the longer side is 640);
 * - objects per image ~ Poisson(7.7), COCO's mean instances per image (Lin et al. 2014, §5);
 * - size class: small (area < 32^2 px) 41%, medium (32^2..96^2) 34%, large (> 96^2) 24% (the evaluation page:
 *   "approximately 41% of objects are small, 34% are medium, and 24% are large"; renormalized to sum 1);
 *   within a class, the area is log-uniform over [12^2, 32^2], [32^2, 96^2] or [96^2, 0.4 x image area];
 * - aspect ratio w / h = exp(N(0, 0.5^2)), clamped to [1/4, 4] (our assumption: COCO publishes no aspect-ratio
 *   statistic on those pages);
 * - 5 classes with frequencies proportional to 1 / rank (COCO's classes are long-tailed: "person" alone is about
 *   a quarter of the instances), position uniform inside the image.
 *
 * Labelers: a pool of POOL labelers of four kinds (`LABELER_KINDS`, shares and rates stated there); each image is
 * labeled by 5 distinct labelers drawn from the pool (SageMaker Ground Truth's default for bounding boxes). A
 * labeler finds each true object with its recall for the object's size class, draws its edges with Gaussian
 * jitter (sd = jitter x the object's width or height), gives the wrong class with probability `mislabel` (uniform
 * among the others), and adds Poisson(`falseBoxes`) boxes per image at random places with random classes.
 */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";
import { type Box, type BoxAnswer, iou, minCostAssignment } from "../src/index";

export const IMAGE_WIDTH = 640;
export const IMAGE_HEIGHT = 480;
export const OBJECTS_PER_IMAGE = 7.7;
export const CLASSES = ["person", "car", "chair", "dog", "bottle"];
export const LABELERS_PER_IMAGE = 5;
export const POOL = 40;

/** A kind of labeler: its share of the pool and its rates. */
export interface LabelerKind {
  name: string;
  share: number;
  /** P(finds a true object) by size class */
  recall: { small: number; medium: number; large: number };
  /** mean number of boxes per image on no object */
  falseBoxes: number;
  /** sd of each edge, as a fraction of the object's width (left/right) or height (top/bottom) */
  jitter: number;
  /** P(a found object gets a wrong class) */
  mislabel: number;
}

export const LABELER_KINDS: readonly LabelerKind[] = [
  { name: "careful", share: 0.3, recall: { small: 0.8, medium: 0.95, large: 0.98 }, falseBoxes: 0.1, jitter: 0.04, mislabel: 0.02 },
  { name: "average", share: 0.4, recall: { small: 0.55, medium: 0.85, large: 0.95 }, falseBoxes: 0.3, jitter: 0.08, mislabel: 0.08 },
  { name: "sloppy", share: 0.2, recall: { small: 0.3, medium: 0.6, large: 0.8 }, falseBoxes: 1, jitter: 0.15, mislabel: 0.2 },
  { name: "spammer", share: 0.1, recall: { small: 0.1, medium: 0.25, large: 0.4 }, falseBoxes: 3, jitter: 0.25, mislabel: 0.5 },
];

export interface CrowdImage {
  id: string;
  truth: Box[];
  answers: BoxAnswer[];
}

export interface BoxCrowd {
  images: CrowdImage[];
  /** labeler id -> kind name */
  kinds: Map<string, string>;
}

function uniform(r: RandomGenerator): number {
  return uniformFloat64(r);
}

/** Standard normal (Box-Muller). */
function normal(r: RandomGenerator): number {
  const u = Math.max(uniform(r), 1e-300);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform(r));
}

/** Poisson(mean) by Knuth's multiplication method (means here are below 10). */
function poisson(r: RandomGenerator, mean: number): number {
  const limit = Math.exp(-mean);
  let k = 0;
  let p = uniform(r);
  while (p > limit) {
    k++;
    p *= uniform(r);
  }
  return k;
}

function pick(r: RandomGenerator, weights: readonly number[]): number {
  const total = weights.reduce((a, b) => a + b, 0);
  let u = uniform(r) * total;
  for (let i = 0; i < weights.length; i++) {
    u -= weights[i] as number;
    if (u < 0) return i;
  }
  return weights.length - 1;
}

type SizeClass = "small" | "medium" | "large";

function sizeClass(box: { w: number; h: number }): SizeClass {
  const area = box.w * box.h;
  return area < 32 * 32 ? "small" : area < 96 * 96 ? "medium" : "large";
}

/** A random object box (module doc). */
function randomObject(r: RandomGenerator, classWeights: readonly number[]): Box {
  const kind = pick(r, [0.41, 0.34, 0.24]);
  const [lo, hi] = kind === 0 ? [12 * 12, 32 * 32] : kind === 1 ? [32 * 32, 96 * 96] : [96 * 96, 0.4 * IMAGE_WIDTH * IMAGE_HEIGHT];
  const area = Math.exp(Math.log(lo) + uniform(r) * (Math.log(hi) - Math.log(lo)));
  const aspect = Math.min(4, Math.max(0.25, Math.exp(0.5 * normal(r))));
  const w = Math.min(IMAGE_WIDTH, Math.sqrt(area * aspect));
  const h = Math.min(IMAGE_HEIGHT, Math.sqrt(area / aspect));
  return { x: uniform(r) * (IMAGE_WIDTH - w), y: uniform(r) * (IMAGE_HEIGHT - h), w, h, label: pick(r, classWeights) };
}

/** A labeler's drawing of a true box: jittered edges, clipped to the image, at least 1 px. */
function jittered(r: RandomGenerator, box: Box, jitter: number): Omit<Box, "label"> {
  let x1 = box.x + normal(r) * jitter * box.w;
  let x2 = box.x + box.w + normal(r) * jitter * box.w;
  let y1 = box.y + normal(r) * jitter * box.h;
  let y2 = box.y + box.h + normal(r) * jitter * box.h;
  x1 = Math.max(0, Math.min(IMAGE_WIDTH - 1, x1));
  y1 = Math.max(0, Math.min(IMAGE_HEIGHT - 1, y1));
  x2 = Math.max(x1 + 1, Math.min(IMAGE_WIDTH, x2));
  y2 = Math.max(y1 + 1, Math.min(IMAGE_HEIGHT, y2));
  return { x: x1, y: y1, w: x2 - x1, h: y2 - y1 };
}

/** The generated crowd (module doc): `images` images, seeded. */
export function generateBoxCrowd(seed: number, images: number): BoxCrowd {
  const r = xoroshiro128plus(seed);
  const classWeights = CLASSES.map((_, i) => 1 / (i + 1));
  const pool: { id: string; kind: LabelerKind }[] = [];
  const kinds = new Map<string, string>();
  // kinds by their shares: the first round(share x POOL) labelers of each kind
  let id = 0;
  for (const kind of LABELER_KINDS) {
    const n = Math.round(kind.share * POOL);
    for (let i = 0; i < n; i++) {
      const labelerId = `L${String(id++).padStart(3, "0")}`;
      pool.push({ id: labelerId, kind });
      kinds.set(labelerId, kind.name);
    }
  }
  const out: CrowdImage[] = [];
  for (let m = 0; m < images; m++) {
    const truth = Array.from({ length: poisson(r, OBJECTS_PER_IMAGE) }, () => randomObject(r, classWeights));
    // LABELERS_PER_IMAGE distinct labelers (partial Fisher-Yates)
    const order = pool.map((_, i) => i);
    for (let i = 0; i < LABELERS_PER_IMAGE; i++) {
      const j = i + Math.floor(uniform(r) * (order.length - i));
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    const answers: BoxAnswer[] = order.slice(0, LABELERS_PER_IMAGE).map((p) => {
      const { id: labelerId, kind } = pool[p] as { id: string; kind: LabelerKind };
      const boxes: Box[] = [];
      for (const obj of truth) {
        if (uniform(r) >= kind.recall[sizeClass(obj)]) continue;
        let label = obj.label;
        if (uniform(r) < kind.mislabel) label = (obj.label + 1 + Math.floor(uniform(r) * (CLASSES.length - 1))) % CLASSES.length;
        boxes.push({ ...jittered(r, obj, kind.jitter), label });
      }
      const extra = poisson(r, kind.falseBoxes);
      for (let k = 0; k < extra; k++) {
        const fake = randomObject(r, classWeights);
        boxes.push({ ...fake, label: Math.floor(uniform(r) * CLASSES.length) });
      }
      return { labelerId, boxes };
    });
    out.push({ id: `img${String(m).padStart(5, "0")}`, truth, answers });
  }
  return { images: out, kinds };
}

/** A detection with its confidence. */
export type Detection = Box & { confidence: number };

/**
 * The fixed-overlap greedy Jaccard baseline: boxes of the answers in order each join the first cluster whose
 * first box overlaps them at IoU >= 0.5 and has no box of their labeler yet, else open a cluster; clusters with
 * boxes of at least half the labelers (rounded up) are kept; coordinates = the mean of the cluster's boxes; class =
 * the most frequent (ties: the first seen); confidence = the share of labelers in the cluster.
 */
export function greedyJaccard(answers: readonly BoxAnswer[], threshold = 0.5): Detection[] {
  const clusters: { boxes: Box[]; labelers: Set<string> }[] = [];
  for (const a of answers) {
    for (const b of a.boxes) {
      const c = clusters.find((k) => !k.labelers.has(a.labelerId) && iou(k.boxes[0] as Box, b) >= threshold);
      if (c) {
        c.boxes.push(b);
        c.labelers.add(a.labelerId);
      } else {
        clusters.push({ boxes: [b], labelers: new Set([a.labelerId]) });
      }
    }
  }
  const needed = Math.ceil(answers.length / 2);
  return clusters
    .filter((c) => c.labelers.size >= needed)
    .map((c) => {
      const n = c.boxes.length;
      const mean = (f: (b: Box) => number) => c.boxes.reduce((s, b) => s + f(b), 0) / n;
      const votes = new Map<number, number>();
      for (const b of c.boxes) votes.set(b.label, (votes.get(b.label) ?? 0) + 1);
      let label = (c.boxes[0] as Box).label;
      for (const [l, v] of votes) if (v > (votes.get(label) ?? 0)) label = l;
      return {
        x: mean((b) => b.x),
        y: mean((b) => b.y),
        w: mean((b) => b.w),
        h: mean((b) => b.h),
        label,
        confidence: c.labelers.size / answers.length,
      };
    });
}

/** Detection scores of one image: true positives = one-to-one matches of the same class at IoU >= 0.5 (Hungarian, max summed IoU). */
export function scoreImage(truth: readonly Box[], detections: readonly Detection[]): { tp: number; iouSum: number; correct: boolean[] } {
  const correct = detections.map(() => false);
  if (truth.length === 0 || detections.length === 0) return { tp: 0, iouSum: 0, correct };
  const overlaps = detections.map((d) => truth.map((t) => (t.label === d.label ? iou(d, t) : 0)));
  const cost = overlaps.map((row) => row.map((v) => (v >= 0.5 ? 1 - v : 1)));
  let tp = 0;
  let iouSum = 0;
  minCostAssignment(cost).forEach((j, i) => {
    const v = j >= 0 ? ((overlaps[i] as number[])[j] as number) : 0;
    if (j >= 0 && v >= 0.5) {
      tp++;
      iouSum += v;
      correct[i] = true;
    }
  });
  return { tp, iouSum, correct };
}

/** Precision, recall, mean IoU of the true positives and ECE (10 equal-width bins) of detections over images. */
export interface DetectionSummary {
  detections: number;
  truths: number;
  precision: number;
  recall: number;
  meanIou: number;
  ece: number;
  meanConfidence: number;
}

/** Sums `scoreImage` over images and computes the summary. */
export function summarize(rows: readonly { truth: readonly Box[]; detections: readonly Detection[] }[]): DetectionSummary {
  let detections = 0;
  let truths = 0;
  let tp = 0;
  let iouSum = 0;
  let confidenceSum = 0;
  const bins = Array.from({ length: 10 }, () => ({ n: 0, confidence: 0, correct: 0 }));
  for (const row of rows) {
    const s = scoreImage(row.truth, row.detections);
    detections += row.detections.length;
    truths += row.truth.length;
    tp += s.tp;
    iouSum += s.iouSum;
    row.detections.forEach((d, i) => {
      const bin = bins[Math.min(9, Math.floor(d.confidence * 10))] as { n: number; confidence: number; correct: number };
      bin.n++;
      bin.confidence += d.confidence;
      bin.correct += s.correct[i] ? 1 : 0;
      confidenceSum += d.confidence;
    });
  }
  let ece = 0;
  for (const b of bins) if (b.n > 0) ece += Math.abs(b.confidence - b.correct) / Math.max(detections, 1);
  return {
    detections,
    truths,
    precision: detections > 0 ? tp / detections : 0,
    recall: truths > 0 ? tp / truths : 0,
    meanIou: tp > 0 ? iouSum / tp : 0,
    ece,
    meanConfidence: detections > 0 ? confidenceSum / detections : 0,
  };
}
