/**
 * Spammers and a qualification exam on a recorded crowd data set (issue 39's bench, `pnpm bench:quality
 * --spammers R --qualification N,A`; bench/quality-qualification.ts runs it through the real service).
 *
 * - `shuffleAnswers`: each item's answers in a seeded random order (the rule of shuffle-answers.ts: every row
 *   keeps its item, the item's answers are dealt to its rows in a Fisher-Yates order).
 * - `addSpammers`: a seeded share of the workers (round(R × workers), drawn without replacement) becomes
 *   spammers: every answer of theirs is replaced by an option drawn uniformly at random.
 * - `takeExam`: every worker answers an exam of `goldTasks` questions drawn (without replacement, seeded per
 *   worker) from the run's gold tasks, before any real task. A spammer answers uniformly at random; any other
 *   worker answers a question it answered in the file with that answer, and one it did not with its record on
 *   gold in the file: right with probability (its right answers on items with gold) / (its answers on them),
 *   else an option drawn uniformly among the wrong ones (a worker with no answer on gold: the pooled record of
 *   the workers who are not spammers). The verdict is the caller's function (the service's `examVerdict`,
 *   packages/store/src/labeling.ts), so the exam is decided by the code the service runs.
 * Random numbers: xoroshiro128+ (pure-rand), seeded from the run's seed and a tag, so every variant of a run sees
 * the same spammers and the same exams.
 */
import type { Answer } from "@labelgate/replay";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";

type Rng = ReturnType<typeof xoroshiro128plus>;

/** A seeded generator for `seed` and a tag (distinct tags give independent streams of the same run). */
function rngOf(seed: number, tag: string): Rng {
  let h = seed >>> 0;
  for (let i = 0; i < tag.length; i++) h = (Math.imul(h ^ tag.charCodeAt(i), 0x9e3779b1) + 0x7f4a7c15) >>> 0;
  return xoroshiro128plus(h);
}

/** An integer in [0, n). */
function below(rng: Rng, n: number): number {
  return Math.min(n - 1, Math.floor(uniformFloat64(rng) * n));
}

/** Fisher-Yates shuffle in place. */
function shuffle<T>(list: T[], rng: Rng): T[] {
  for (let i = list.length - 1; i > 0; i--) {
    const j = below(rng, i + 1);
    [list[i], list[j]] = [list[j] as T, list[i] as T];
  }
  return list;
}

/** The answers with each item's answers in a seeded random order; rows keep their items, so item order is kept. */
export function shuffleAnswers(answers: readonly Answer[], seed: number): Answer[] {
  const rng = rngOf(seed, "shuffle");
  const byItem = new Map<string, Answer[]>();
  for (const a of answers) {
    const list = byItem.get(a.item) ?? [];
    list.push(a);
    byItem.set(a.item, list);
  }
  for (const list of byItem.values()) shuffle(list, rng);
  const next = new Map<string, number>();
  return answers.map((a) => {
    const n = next.get(a.item) ?? 0;
    next.set(a.item, n + 1);
    return (byItem.get(a.item) as Answer[])[n] as Answer;
  });
}

/** The distinct workers of the answers, sorted. */
export function workersOf(answers: readonly Answer[]): string[] {
  return [...new Set(answers.map((a) => a.worker))].sort();
}

/**
 * Replaces a share of the workers by spammers (uniform random answers over `options`).
 * @returns the new answers (same rows, same order) and the spammers' ids
 * @throws RangeError when `share` is outside [0, 1] or there are no options
 */
export function addSpammers(
  answers: readonly Answer[],
  options: readonly string[],
  share: number,
  seed: number,
): { answers: Answer[]; spammers: Set<string> } {
  if (!(share >= 0 && share <= 1)) throw new RangeError(`spammer share must be in [0, 1], got ${share}`);
  if (options.length === 0) throw new RangeError("no options");
  const workers = shuffle(workersOf(answers), rngOf(seed, "spammers"));
  const spammers = new Set(workers.slice(0, Math.round(share * workers.length)));
  const rng = rngOf(seed, "spam answers");
  return {
    answers: answers.map((a) => (spammers.has(a.worker) ? { ...a, label: options[below(rng, options.length)] as string } : a)),
    spammers,
  };
}

/** One worker's exam: its answers (`item`, `label`, right or not) and the verdict. */
export interface ExamResult {
  worker: string;
  answers: { item: string; label: string; right: boolean }[];
  correct: number;
  status: "training" | "qualified" | "failed_qualification";
}

/** The verdict after `answers` exam answers of which `correct` are right (the service's `examVerdict`, bound). */
export type ExamVerdict = (answers: number, correct: number) => ExamResult["status"];

/**
 * Every worker's exam on the run's gold tasks (see the module's comment for how each question is answered).
 * @param answers the run's answers (spammers' already replaced)
 * @param gold the truth of every item with gold
 * @param goldTasks the run's gold tasks: the exam's questions are drawn from them
 * @param spammers workers answering at random
 * @param length `gold_tasks` of the exam; a worker answers min(length, gold tasks) questions
 * @param verdict decides after each answer; the exam stops at the first verdict other than `training`
 * @throws RangeError when there is no gold task or no option
 */
export function takeExam(
  answers: readonly Answer[],
  gold: ReadonlyMap<string, string>,
  goldTasks: readonly string[],
  options: readonly string[],
  spammers: ReadonlySet<string>,
  length: number,
  verdict: ExamVerdict,
  seed: number,
): ExamResult[] {
  if (goldTasks.length === 0) throw new RangeError("an exam needs gold tasks");
  if (options.length === 0) throw new RangeError("no options");
  const recorded = new Map<string, Map<string, string>>();
  const record = new Map<string, { answers: number; right: number }>();
  for (const a of answers) {
    const mine = recorded.get(a.worker) ?? new Map<string, string>();
    if (!mine.has(a.item)) mine.set(a.item, a.label);
    recorded.set(a.worker, mine);
    const truth = gold.get(a.item);
    if (truth === undefined || spammers.has(a.worker)) continue;
    const r = record.get(a.worker) ?? { answers: 0, right: 0 };
    r.answers += 1;
    if (a.label === truth) r.right += 1;
    record.set(a.worker, r);
  }
  const pooled = [...record.values()].reduce((s, r) => ({ answers: s.answers + r.answers, right: s.right + r.right }), {
    answers: 0,
    right: 0,
  });
  const pooledRate = pooled.answers === 0 ? 1 / options.length : pooled.right / pooled.answers;
  return workersOf(answers).map((worker) => {
    const rng = rngOf(seed, `exam ${worker}`);
    const questions = shuffle([...goldTasks], rng).slice(0, Math.min(length, goldTasks.length));
    const mine = recorded.get(worker) ?? new Map<string, string>();
    const r = record.get(worker);
    const rate = r && r.answers > 0 ? r.right / r.answers : pooledRate;
    const out: ExamResult = { worker, answers: [], correct: 0, status: "training" };
    for (const item of questions) {
      const truth = gold.get(item) as string;
      let label: string;
      if (spammers.has(worker)) label = options[below(rng, options.length)] as string;
      else if (mine.has(item)) label = mine.get(item) as string;
      else if (uniformFloat64(rng) < rate || options.length === 1) label = truth;
      else {
        const wrong = options.filter((o) => o !== truth);
        label = wrong[below(rng, wrong.length)] as string;
      }
      const right = label === truth;
      out.answers.push({ item, label, right });
      if (right) out.correct += 1;
      out.status = verdict(out.answers.length, out.correct);
      if (out.status !== "training") break;
    }
    return out;
  });
}

/**
 * Each worker's accuracy on the items with gold in the answers (workers without such an answer are left out).
 * @returns worker → right / answered
 */
export function goldAccuracyByWorker(answers: readonly Answer[], gold: ReadonlyMap<string, string>): Map<string, number> {
  const tally = new Map<string, { n: number; right: number }>();
  for (const a of answers) {
    const truth = gold.get(a.item);
    if (truth === undefined) continue;
    const t = tally.get(a.worker) ?? { n: 0, right: 0 };
    t.n += 1;
    if (a.label === truth) t.right += 1;
    tally.set(a.worker, t);
  }
  return new Map([...tally].map(([w, t]) => [w, t.right / t.n]));
}
