/** Seeded synthetic crowds for the quality tests (pure-rand xoroshiro128+). */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";
import { LabelTable } from "../src/index";

export function rng(seed: number): RandomGenerator {
  return xoroshiro128plus(seed);
}

/** Index drawn with probability proportional to `weights`. */
export function draw(r: RandomGenerator, weights: readonly number[]): number {
  const total = weights.reduce((a, b) => a + b, 0);
  let u = uniformFloat64(r) * total;
  for (let i = 0; i < weights.length; i++) {
    u -= weights[i] as number;
    if (u < 0) return i;
  }
  return weights.length - 1;
}

export interface Crowd {
  table: LabelTable;
  truth: number[];
  /** confusion[labeler][true][given] */
  confusion: number[][][];
}

/**
 * Every labeler labels every task: task t's true option is drawn from `prior`, labeler j answers from
 * confusion[j][truth]. Tasks are "t<i>", labelers "w<j>".
 */
export function crowd(seed: number, tasks: number, prior: readonly number[], confusion: number[][][]): Crowd {
  const r = rng(seed);
  const table = new LabelTable(prior.length);
  const truth: number[] = [];
  for (let t = 0; t < tasks; t++) {
    const z = draw(r, prior);
    truth.push(z);
    confusion.forEach((m, j) => {
      table.add(`t${t}`, `w${j}`, draw(r, m[z] as number[]));
    });
  }
  return { table, truth, confusion };
}

/** a[i], or a thrown error when it is missing (tests index arrays of known shape). */
export function at<T>(a: ArrayLike<T> | undefined, i: number): T {
  const v = a?.[i];
  if (v === undefined) throw new Error(`no element ${i}`);
  return v;
}
