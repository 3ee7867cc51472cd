/**
 * The qualification bench's pure pieces (packages/quality/bench/spammers.ts, docs/decisions/0315): seeded
 * spammers, the shuffle that keeps every answer, and the exam answered as the file says, decided by the
 * service's own `examVerdict`.
 */

import { addSpammers, goldAccuracyByWorker, shuffleAnswers, takeExam, workersOf } from "@labelgate/quality/bench/spammers";
import type { Answer } from "@labelgate/replay";
import { examVerdict } from "@labelgate/store";

const OPTIONS = ["a", "b", "c"];
const items = Array.from({ length: 40 }, (_, i) => `i${i}`);
const gold = new Map(items.map((item, i) => [item, OPTIONS[i % 3] as string]));
// w0..w9 answer every item: w0..w4 always right, w5..w9 always wrong
const answers: Answer[] = items.flatMap((item) =>
  Array.from({ length: 10 }, (_, w) => {
    const truth = gold.get(item) as string;
    return { item, worker: `w${w}`, label: w < 5 ? truth : (OPTIONS[(OPTIONS.indexOf(truth) + 1) % 3] as string) };
  }),
);

test("spammers: a seeded share of the workers, every answer of theirs an option, the others untouched", () => {
  const one = addSpammers(answers, OPTIONS, 0.2, 7);
  expect(one.spammers.size).toBe(2);
  expect(addSpammers(answers, OPTIONS, 0.2, 7).spammers).toEqual(one.spammers);
  one.answers.forEach((a, i) => {
    expect(a.item).toBe(answers[i]?.item);
    if (one.spammers.has(a.worker)) expect(OPTIONS).toContain(a.label);
    else expect(a).toEqual(answers[i]);
  });
  const spamRight = one.answers.filter((a) => one.spammers.has(a.worker) && a.label === gold.get(a.item)).length;
  // 80 uniform answers over 3 options: about a third right, neither all nor none
  expect(spamRight).toBeGreaterThan(10);
  expect(spamRight).toBeLessThan(45);
});

test("shuffle: every answer kept, each row keeps its item", () => {
  const shuffled = shuffleAnswers(answers, 3);
  expect(shuffled.map((a) => a.item)).toEqual(answers.map((a) => a.item));
  const key = (a: Answer) => `${a.item}/${a.worker}/${a.label}`;
  expect(shuffled.map(key).sort()).toEqual(answers.map(key).sort());
  expect(shuffled.map(key)).not.toEqual(answers.map(key));
});

test("exam: recorded answers decide, through the service's examVerdict; spammers answer at random", () => {
  const exam = { gold_tasks: 10, min_accuracy: 0.65 };
  const goldTasks = items.slice(0, 20);
  const verdict = (n: number, correct: number) => examVerdict(exam, n, correct, goldTasks.length);
  const spammers = new Set(["w9"]);
  const results = takeExam(answers, gold, goldTasks, OPTIONS, spammers, 10, verdict, 1);
  expect(results.map((r) => r.worker)).toEqual(workersOf(answers));
  for (const r of results) {
    expect(r.answers).toHaveLength(10);
    for (const q of r.answers) expect(goldTasks).toContain(q.item);
  }
  const of = (w: string) => results.find((r) => r.worker === w) as (typeof results)[number];
  expect(of("w0")).toMatchObject({ correct: 10, status: "qualified" });
  expect(of("w5")).toMatchObject({ correct: 0, status: "failed_qualification" });
  expect(goldAccuracyByWorker(answers, gold).get("w5")).toBe(0);
  // a worker with no recorded answer on an exam question answers it with its rate on gold in the file
  const partial = answers.filter((a) => a.worker !== "w1" || !goldTasks.includes(a.item));
  const again = takeExam(partial, gold, goldTasks, OPTIONS, spammers, 10, verdict, 1);
  expect(again.find((r) => r.worker === "w1")).toMatchObject({ correct: 10, status: "qualified" });
});
