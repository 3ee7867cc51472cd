/**
 * `pnpm bench:quality --spammers R [--qualification N,A] [--min-labeler-accuracy M] [--datasets ...] [--seeds 1-5]
 *   [--target 0.95] [--gold-share 0.05] [--no-clean] [--from runs.jsonl]`
 *
 * Qualification against spammers (issue 39, contract §qualification, docs/decisions/0276 and 0315), measured
 * as a customer meets it. Per data set and gold seed, each item's answers shuffled with the seed
 * (packages/quality/bench/spammers.ts), two replays through the real gateway and consensus worker
 * (packages/replay `runReplay`, confidence policy T = `--target`, gold share `--gold-share`):
 * - `clean`: the shuffled answers as recorded, no exam;
 * - `spam`: a seeded share R of the workers replaced by uniform random answerers; with `--qualification N,A`
 *   every worker first takes an exam of N questions drawn from the run's gold tasks, answered as it answers
 *   gold in the file (spammers at random), decided by the service's own `examVerdict` (packages/store) with
 *   min_accuracy A. A worker that fails is out: none of its answers reach the replay, and its exam answers are
 *   counted as labels spent. The exam answers of a worker that passes join the run's gold answers.
 * The replay feeds every gold answer first and has no `min_labeler_accuracy` (an excluded labeler's refused
 * claim would end its items), so exclusion "later" is the service's rule (packages/quality `isExcluded`, at M,
 * `min_gold_answers` 10) applied to the gold answers each worker left in the run, exam included: a figure,
 * not applied to the replay, whose accuracy therefore keeps every spammer who passed the exam.
 * Without `--qualification` the `spam` replay has the spammers and no exam; `--no-clean` runs the `spam` replays
 * alone, to be read with the `clean` lines of another run (`--from` over the lines of both).
 * Good workers: those not spammers whose answers in the file are 80% or more right on gold.
 * Writes the section "Qualification (`pnpm bench:quality --spammers`)" of docs/benchmarks.md unless `--no-write`.
 */
import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isExcluded } from "@labelgate/quality";
import { addSpammers, goldAccuracyByWorker, shuffleAnswers, takeExam, workersOf } from "@labelgate/quality/bench/spammers";
import { type Answer, distinctLabels, loadDataset, pickGoldItems, type ReplaySummary, runReplay } from "@labelgate/replay";
import { examVerdict, migrateDatabase } from "@labelgate/store";
import { benchTarget, type Started, startServices, tearDown } from "./bench-lib";

const SECTION = "## Qualification (`pnpm bench:quality --spammers`)";
/** A good worker: 80% or more right on gold in the file (issue 39). */
const GOOD = 0.8;

/** What `--spammers` / `--qualification` / `--min-labeler-accuracy` set. */
export interface QualificationOptions {
  spammers: number;
  exam?: { gold_tasks: number; min_accuracy: number };
  minLabelerAccuracy: number;
  /** `--no-clean`: only the `spam` replays (the `clean` ones of the same seeds come from another run's lines) */
  skipClean?: boolean;
}

/** "10,0.65" → {gold_tasks 10, min_accuracy 0.65}. @throws Error on anything else */
export function parseQualification(value: string): { gold_tasks: number; min_accuracy: number } {
  const [n, a] = value.split(",").map(Number);
  if (n === undefined || a === undefined || !Number.isInteger(n) || n < 1 || !(a > 0 && a < 1))
    throw new Error(`--qualification: expected "gold_tasks,min_accuracy" such as "10,0.65", got "${value}"`);
  return { gold_tasks: n, min_accuracy: a };
}

/** One replay of this bench: the summary and the exam's figures (zeros for `clean`). */
export type QualificationLine = ReplaySummary & {
  variant: "clean" | "spam";
  spammers: number;
  spammers_failed_exam: number;
  spammers_excluded_later: number;
  good_workers: number;
  good_failed_exam: number;
  good_excluded_later: number;
  /** exam answers of the workers who failed (charged, never in the replay) */
  failed_exam_labels: number;
  /** `labels` + `failed_exam_labels` */
  labels_spent: number;
  exam: string;
};

function writeSet(root: string, name: string, answers: readonly Answer[], gold: ReadonlyMap<string, string>): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "answers.csv"), `item,worker,label\n${answers.map((a) => `${a.item},${a.worker},${a.label}`).join("\n")}\n`);
  writeFileSync(path.join(dir, "gold.csv"), `item,label\n${[...gold].map(([i, l]) => `${i},${l}`).join("\n")}\n`);
  return dir;
}

/** The spammed answers with the exam applied: failed workers out, passing workers' exam answers added. */
function applyExam(
  answers: readonly Answer[],
  gold: ReadonlyMap<string, string>,
  goldTasks: readonly string[],
  options: readonly string[],
  spammers: ReadonlySet<string>,
  opts: QualificationOptions,
  seed: number,
): { answers: Answer[]; failed: Set<string>; failedLabels: number } {
  if (!opts.exam) return { answers: [...answers], failed: new Set(), failedLabels: 0 };
  const exam = opts.exam;
  // the service's decision (packages/store examVerdict); every gold task of the run is open during the exam
  const verdict = (n: number, correct: number) => examVerdict(exam, n, correct, goldTasks.length);
  const results = takeExam(answers, gold, goldTasks, options, spammers, exam.gold_tasks, verdict, seed);
  const failed = new Set(results.filter((r) => r.status === "failed_qualification").map((r) => r.worker));
  const failedLabels = results.filter((r) => failed.has(r.worker)).reduce((s, r) => s + r.answers.length, 0);
  const kept = answers.filter((a) => !failed.has(a.worker));
  const seen = new Set(kept.map((a) => `${a.worker}\u0000${a.item}`));
  for (const r of results) {
    if (failed.has(r.worker)) continue;
    for (const q of r.answers) if (!seen.has(`${r.worker}\u0000${q.item}`)) kept.push({ item: q.item, worker: r.worker, label: q.label });
  }
  return { answers: kept, failed, failedLabels };
}

/** Runs the replays of every set and seed. @returns their lines (also printed on stdout) */
export async function runQualificationBench(o: {
  folder: string;
  names: string[];
  seeds: number[];
  target: number;
  goldShare: number;
  options: QualificationOptions;
  log: (line: string) => void;
}): Promise<QualificationLine[]> {
  const db = benchTarget("quality-qualification");
  const children: ChildProcess[] = [];
  const lines: QualificationLine[] = [];
  const tmp = mkdtempSync(path.join(os.tmpdir(), "bench-qualification-"));
  try {
    await migrateDatabase(db.databaseUrl);
    const services = await startServices(db, ["gateway", "consensus-worker"], { LOG_LEVEL: "warn" });
    children.push(...[...services.values()].map((s) => s.child));
    const baseUrl = `http://127.0.0.1:${(services.get("gateway") as Started).port}`;
    for (const seed of o.seeds) {
      for (const name of o.names) {
        const ds = loadDataset(path.join(o.folder, name));
        const shuffled = shuffleAnswers(ds.answers, seed);
        const options = distinctLabels(ds.answers);
        const items = [...new Set(ds.answers.map((a) => a.item))];
        const goldTasks = [...pickGoldItems(items, ds.gold, o.goldShare, seed)];
        const spam = addSpammers(shuffled, options, o.options.spammers, seed);
        const fileAccuracy = goldAccuracyByWorker(ds.answers, ds.gold);
        const good = workersOf(ds.answers).filter((w) => !spam.spammers.has(w) && (fileAccuracy.get(w) ?? 0) >= GOOD);
        const examined = applyExam(spam.answers, ds.gold, goldTasks, options, spam.spammers, o.options, seed);
        // exclusion later: the service's rule on the gold answers each worker left in the run (exam included)
        const goldSet = new Set(goldTasks);
        const record = new Map<string, { goldAnswers: number; goldCorrect: number }>();
        for (const a of examined.answers) {
          if (!goldSet.has(a.item)) continue;
          const r = record.get(a.worker) ?? { goldAnswers: 0, goldCorrect: 0 };
          r.goldAnswers += 1;
          if (a.label === ds.gold.get(a.item)) r.goldCorrect += 1;
          record.set(a.worker, r);
        }
        const later = (w: string) =>
          !examined.failed.has(w) &&
          isExcluded(record.get(w) ?? { goldAnswers: 0, goldCorrect: 0 }, {
            minLabelerAccuracy: o.options.minLabelerAccuracy,
            minGoldAnswers: 10,
          });
        const spammers = [...spam.spammers];
        const variants = [
          ...(o.options.skipClean ? [] : [{ variant: "clean" as const, answers: shuffled }]),
          { variant: "spam" as const, answers: examined.answers },
        ];
        for (const v of variants) {
          const dir = writeSet(path.join(tmp, `${v.variant}-${seed}`), name, v.answers, ds.gold);
          o.log(`${name}: seed ${seed}, ${v.variant}`);
          const summary = await runReplay({
            dataset: dir,
            baseUrl,
            adminToken: db.adminToken,
            confidenceTarget: o.target,
            goldShare: o.goldShare,
            seed,
            log: (l: string) => o.log(`  ${name}: ${l}`),
          });
          const isSpam = v.variant === "spam";
          const line: QualificationLine = {
            ...summary,
            variant: v.variant,
            spammers: isSpam ? spammers.length : 0,
            spammers_failed_exam: isSpam ? spammers.filter((w) => examined.failed.has(w)).length : 0,
            spammers_excluded_later: isSpam ? spammers.filter(later).length : 0,
            good_workers: good.length,
            good_failed_exam: isSpam ? good.filter((w) => examined.failed.has(w)).length : 0,
            good_excluded_later: isSpam ? good.filter(later).length : 0,
            failed_exam_labels: isSpam ? examined.failedLabels : 0,
            labels_spent: summary.labels + (isSpam ? examined.failedLabels : 0),
            exam: isSpam && o.options.exam ? `${o.options.exam.gold_tasks},${o.options.exam.min_accuracy}` : "none",
          };
          process.stdout.write(`${JSON.stringify(line)}\n`);
          lines.push(line);
        }
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    await tearDown(db, children);
  }
  return lines;
}

/** Reads the lines of an earlier run (`--from`); a repeated line is read once. */
export function readQualificationLines(text: string): QualificationLine[] {
  return [...new Set(text.split("\n").filter((l) => l.trim() !== ""))]
    .map((l) => JSON.parse(l) as QualificationLine)
    .filter((l) => l.variant === "clean" || l.variant === "spam");
}

const pt = (v: number) => `${(v * 100).toFixed(1)}%`;
const signed = (v: number) => `${v >= 0 ? "+" : "−"}${Math.abs(v * 100).toFixed(1)}`;
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/**
 * Workers of a line who failed the exam: each answered exactly min(gold_tasks, the run's gold tasks) questions
 * (`examVerdict` decides only at that length), so their exam answers divided by that length.
 */
function failedWorkers(l: QualificationLine): number {
  const n = Number(l.exam.split(",")[0]);
  return l.exam === "none" || !(n > 0) ? 0 : Math.round(l.failed_exam_labels / Math.min(n, Math.max(1, l.gold_tasks)));
}

/** The mean accuracy of the runs with spammers and no exam of the same seeds as `runs` ("–" without any). */
function noExam(mine: readonly QualificationLine[], runs: readonly QualificationLine[]): string {
  const seeds = new Set(runs.filter((l) => l.exam !== "none").map((l) => l.seed));
  const lines = mine.filter((l) => l.variant === "spam" && l.exam === "none" && seeds.has(l.seed));
  return lines.length === 0 ? "–" : `${pt(sum(lines.map((l) => l.accuracy ?? 0)) / lines.length)} (${lines.map((l) => l.seed).join(",")})`;
}

/** The section: per set, paired by seed, the runs with spammers against those without; and the issue's targets. */
export function renderQualificationSection(
  lines: readonly QualificationLine[],
  opts: { target: number; goldShare: number; options: QualificationOptions; command: string },
): string {
  const sets = [...new Set(lines.map((l) => l.dataset))];
  const exam = opts.options.exam;
  const out = [
    SECTION,
    "",
    `Run ${new Date().toISOString().slice(0, 10)} with \`${opts.command}\` (bench/quality-qualification.ts). Confidence policy T = ${opts.target}, ` +
      `gold share ${opts.goldShare}, each item's answers shuffled per seed. \`spam\`: ${pt(opts.options.spammers)} of the workers replaced by ` +
      `uniform random answerers${exam ? `, every worker first taking an exam of ${exam.gold_tasks} gold questions at min_accuracy ${exam.min_accuracy} (the service's \`examVerdict\`; a worker answers a question it answered in the file as recorded, another with its gold record in the file), those who fail left out` : ", no exam"}. ` +
      `\`clean\`: the same shuffled answers, no spammers, no exam. "Later": the service's \`min_labeler_accuracy\` rule at ${opts.options.minLabelerAccuracy} ` +
      "(10 gold answers, 95% posterior) on the gold answers each remaining worker gives in the run: a figure only; the replay keeps their answers. " +
      "Good workers: not spammers, 80% or more right on gold in the file; other workers: neither. A worker who fails is left out of the replay " +
      "with all its answers and nobody replaces it (docs/decisions/0315), so `spam` items may end with fewer answers than `clean` ones. Labels spent: people's labels accepted plus the failed workers' exam answers. " +
      "Accuracy on the regular tasks with gold.",
    "",
    "| set | seeds | spammers (failed exam / later) | good workers (failed exam / later) | other workers failing the exam | accuracy clean | accuracy spam | Δ | accuracy spam, no exam | labels clean | labels spent spam |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  const pairs: { clean: QualificationLine; spam: QualificationLine }[] = [];
  for (const set of sets) {
    const mine = lines.filter((l) => l.dataset === set);
    const paired = mine
      .filter((l) => l.variant === "spam" && (l.exam !== "none" || !exam))
      .flatMap((spam) => {
        const clean = mine.find((l) => l.variant === "clean" && l.seed === spam.seed);
        return clean ? [{ clean, spam }] : [];
      });
    if (paired.length === 0) continue;
    pairs.push(...paired);
    const s = paired.map((p) => p.spam);
    const c = paired.map((p) => p.clean);
    const acc = (ls: QualificationLine[]) => sum(ls.map((l) => l.accuracy ?? 0)) / ls.length;
    out.push(
      `| ${set} | ${s.map((l) => l.seed).join(",")} | ${sum(s.map((l) => l.spammers))} (${sum(s.map((l) => l.spammers_failed_exam))} / ${sum(s.map((l) => l.spammers_excluded_later))}) | ` +
        `${sum(s.map((l) => l.good_workers))} (${sum(s.map((l) => l.good_failed_exam))} / ${sum(s.map((l) => l.good_excluded_later))}) | ` +
        `${sum(s.map((l) => failedWorkers(l) - l.spammers_failed_exam - l.good_failed_exam))} | ` +
        `${pt(acc(c))} | ${pt(acc(s))} | ${signed(acc(s) - acc(c))} | ${noExam(mine, s)} | ${(sum(c.map((l) => l.labels)) / c.length).toFixed(0)} | ${(sum(s.map((l) => l.labels_spent)) / s.length).toFixed(0)} |`,
    );
  }
  if (pairs.length > 0) {
    const spammers = sum(pairs.map((p) => p.spam.spammers));
    const spamOut = sum(pairs.map((p) => p.spam.spammers_failed_exam + p.spam.spammers_excluded_later));
    const good = sum(pairs.map((p) => p.spam.good_workers));
    const goodOut = sum(pairs.map((p) => p.spam.good_failed_exam + p.spam.good_excluded_later));
    const delta = sum(pairs.map((p) => (p.spam.accuracy ?? 0) - (p.clean.accuracy ?? 0))) / pairs.length;
    const check = (met: boolean, text: string) => `- ${met ? "met" : "**missed**"}: ${text}`;
    out.push(
      "",
      `Targets (issue 39), over ${pairs.length} paired runs:`,
      "",
      check(
        spamOut >= 0.75 * spammers,
        `≥ 75% of the spammers excluded, at the exam or later (${spamOut} of ${spammers}, ${pt(spamOut / Math.max(1, spammers))})`,
      ),
      check(
        goodOut <= 0.15 * good,
        `≤ 15% of the good workers excluded (${goodOut} of ${good}, ${pt(goodOut / Math.max(1, good))}; at the exam ${sum(pairs.map((p) => p.spam.good_failed_exam))})`,
      ),
      check(delta >= -0.01, `mean accuracy ≥ the runs without spammers − 1 pt (${signed(delta)})`),
    );
  }
  out.push("");
  return out.join("\n");
}
