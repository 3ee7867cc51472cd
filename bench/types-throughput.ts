/**
 * The throughput part of `pnpm bench:types` (bench/types.ts): answers per second of each task type (contract §task-types)
 * through the whole pipeline, against the real gateway, consensus-worker and webhook-worker processes on this
 * machine's Postgres and Redis (a database and a Redis prefix of its own, dropped at the end).
 *
 * Each phase is one task type under one policy: its tasks are submitted (`POST /v1/tasks/batch`), then
 * `labelers` labelers claim (`POST /v1/labeling/claims`) and answer (`POST /v1/labeling/claims/{id}/label`) in a
 * closed loop, 2 s of warm-up and `seconds` measured; the label transaction decides each task with the type's
 * aggregator (task-kinds.ts `decide`), the consensus worker settles the decided tasks on the ledger. Answers/s =
 * labels recorded (201s) in the measured window / its length; the phase then waits until every decided task is
 * settled ("drain": the settlement's lag behind the labels) and cancels the tasks left open, so that the next
 * phase's claims find only its own type. CPU ms per answer by process (gateway, the database's Postgres backends,
 * consensus worker with its refits, webhook worker) from the window's start until the drain ends.
 * Each policy's phases run single_choice first, then per run the other types (their order rotated run by run)
 * and single_choice again (`schedule`): a type's ratio is its answers/s over single_choice's interpolated to its
 * window between the single_choice phases around it (`floorAt`: a shared machine drifts by a factor of 2 within
 * minutes), then the median over runs.
 *
 * Answers (random per label, the truth of a task drawn from its index, which its data_url carries):
 * - single_choice: 3 options, "cat" 85% of the time, else "dog" (as bench/labels.ts);
 * - multi_label_classification: 5 options, each true with probability 0.4; a labeler flips each with 0.08;
 * - bounding_box: 3 classes, 3–5 true boxes of 30–300 px in a 1280 × 720 image; a labeler draws each with its
 *   edges off by up to 3% of its size, misses one with 0.05 and adds a spurious one with 0.05;
 * - text_span: ~1,000-character text (data_text), 3 entity types, 3–5 true spans of 1–3 words; a labeler moves a
 *   span's end by a word with 0.1 and misses a span with 0.05;
 * - free_text: a transcription of ~2,000 code points (about 330 words); a labeler gets each word right with 0.97;
 * - pairwise_comparison: two image URLs, no tie; a labeler picks item a with 0.8.
 * Policies: threshold (consensus_threshold 3, max_labels 7) and confidence (confidence_target 0.95,
 * min_labels 2, max_labels 7), both on every type.
 *
 * Then, in this process, the decision's CPU per answer of each type (`decisionCosts`): the label transaction's
 * per-label JavaScript (readAnswer, scoringModel, decide) replayed on settled tasks of the run with the space's
 * fitted model as stored, and the bytes of model JSON (space row and the task's labelers' rows) the
 * transaction reads per answer.
 */
import type { ChildProcess } from "node:child_process";
import os from "node:os";
import type { AnswerBody, AnyLabelSpec } from "@labelgate/api";
import { type StoredLabelerRow, type StoredVote, taskKindOf } from "@labelgate/quality";
import { migrateDatabase, pgConfigFromUrl, policyOf } from "@labelgate/store";
import { Pool } from "pg";
import {
  api,
  benchTarget,
  type ClaimBody,
  claimAndLabel,
  createLabelers,
  JsonClient,
  type Labeler,
  median,
  newStats,
  productionCustomer,
  startServices,
  tearDown,
} from "./bench-lib";
import { CpuTracker, countCpuPer, cpuSeconds, type LatencySummary, latencySummary, nowMs, postgresBackends, round, sleep } from "./measure";

/** The types measured, single choice first (the floor the others are compared with). */
export const THROUGHPUT_TYPES = [
  "single_choice",
  "multi_label_classification",
  "bounding_box",
  "text_span",
  "free_text",
  "pairwise_comparison",
] as const;

/** A transcription of about 2,000 code points (issue 37: free text of 2,000 code points included), per task. */
function freeTextTruth(i: number): string[] {
  const words: string[] = [];
  let length = 0;
  for (let w = 0; length < 1950; w++) {
    const word = `w${(i * 7919 + w * 104729) % 5000}`;
    words.push(word);
    length += word.length + 1;
  }
  return words;
}
export type ThroughputType = (typeof THROUGHPUT_TYPES)[number];
export const POLICIES = ["threshold", "confidence"] as const;
export type ThroughputPolicy = (typeof POLICIES)[number];

export interface TypesThroughputOptions {
  /** measured seconds per phase (after 2 s of warm-up) */
  seconds: number;
  /** runs through every type under each policy (0: the policy is not measured) */
  runs: Record<ThroughputPolicy, number>;
  /** concurrent labelers (one key each) */
  labelers: number;
  /** the types measured (single_choice is always measured: the floor) */
  types: ThroughputType[];
  /** the gateway's and workers' LOG_LEVEL */
  logLevel: string;
}

/** One phase: a type under a policy, one run. */
export interface PhaseResult {
  type: ThroughputType;
  policy: ThroughputPolicy;
  /** the run (single_choice: 0 for the phase before the first run, r for the one that closes run r) */
  run: number;
  /** the middle of the measured window, epoch ms */
  at_ms: number;
  answers_per_s: number;
  answers: number;
  /** tasks settled per second of the window (the tasks whose deciding answer fell in the window) */
  tasks_decided: number;
  /** answers per decided task (all answers of those tasks) */
  answers_per_task: number;
  /** from the window's end until no task waits for its settlement, ms */
  drain_ms: number;
  /** claims answered 204 (the phase ran out of open tasks: should be 0) */
  empty: number;
  errors: number;
  statuses: Record<string, number>;
  claim: LatencySummary;
  label: LatencySummary;
  /** CPU ms per answer from the window's start until the drain's end, by process */
  cpu_ms_per_answer: { gateway: number; postgres: number; consensus_worker: number; webhook_worker: number; total: number };
}

/** The per-answer JavaScript of the label transaction for one type, replayed in this process. */
export interface DecisionCost {
  type: ThroughputType;
  /** answers replayed */
  answers: number;
  /** µs per answer: readAnswer (checks and canonical value), JSON.parse of the model rows + scoringModel, decide; CPU time, median of 5 passes */
  read_answer_us: number;
  scoring_model_us: number;
  decide_us: number;
  total_us: number;
  /** bytes of model JSON the transaction reads per answer: the space row and the task's labelers' rows */
  model_json_bytes: number;
  /** bytes of the task's other state read per answer: its stored answers and data_text */
  task_json_bytes: number;
}

export interface TypesThroughputResult {
  date: string;
  machine: { cpu: string; cores: number; node: string; load_average_at_start: number[] };
  options: TypesThroughputOptions;
  phases: PhaseResult[];
  /** per policy and type: median answers/s, median ratio to single_choice of the same run, and more */
  summary: {
    policy: ThroughputPolicy;
    type: ThroughputType;
    answers_per_s: number[];
    median_answers_per_s: number;
    ratios: number[];
    median_ratio: number;
    answers_per_task: number;
    drain_ms: number;
    cpu_ms_per_answer: number;
    /** single_choice's median CPU per answer over this type's: the answers/s ratio if the machine were CPU-bound */
    cpu_ratio: number;
    label_p50_ms: number;
    label_p99_ms: number;
  }[];
  decision: DecisionCost[];
  seconds: number;
}

// --- answers ----------------------------------------------------------------------------------------------

/** A small seeded PRNG (mulberry32): the truth of task `i` is the same for every labeler. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const int = (r: () => number, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

const MULTI_OPTIONS = ["person", "vehicle", "animal", "building", "plant"];
const BOX_CLASSES = ["car", "person", "bicycle"];
const IMAGE = { width: 1280, height: 720 };
const ENTITY_TYPES = ["PERSON", "DRUG", "CONDITION"];
const WORDS = (
  "the patient was given a daily dose and reported mild symptoms after two weeks of treatment while the control group " +
  "received placebo tablets under the same schedule with blood pressure measured each morning before breakfast"
).split(" ");

interface Box {
  label: string;
  x: number;
  y: number;
  w: number;
  h: number;
}
interface Span {
  start: number;
  end: number;
  label: string;
}

function multiTruth(i: number): string[] {
  const r = prng(i * 7919 + 1);
  return MULTI_OPTIONS.filter(() => r() < 0.4);
}

function boxTruth(i: number): Box[] {
  const r = prng(i * 7919 + 2);
  return Array.from({ length: int(r, 3, 5) }, () => {
    const w = int(r, 30, 300);
    const h = int(r, 30, 300);
    return { label: BOX_CLASSES[int(r, 0, 2)] as string, x: int(r, 0, IMAGE.width - w - 1), y: int(r, 0, IMAGE.height - h - 1), w, h };
  });
}

/** A ~1,000-character ASCII text of words (offsets of code points = of characters) and the word offsets. */
function spanText(i: number): { text: string; words: { start: number; end: number }[] } {
  const r = prng(i * 7919 + 3);
  const words: { start: number; end: number }[] = [];
  let text = "";
  while (text.length < 1000) {
    const word = WORDS[int(r, 0, WORDS.length - 1)] as string;
    if (text.length > 0) text += r() < 0.08 ? ". " : " ";
    words.push({ start: text.length, end: text.length + word.length });
    text += word;
  }
  return { text, words };
}

/** 3–5 spans of 1–3 words, each in its own fifth of the text (never overlapping, never touching), and the words. */
function spanTruth(i: number): { spans: (Span & { first: number; last: number })[]; words: { start: number; end: number }[] } {
  const { words } = spanText(i);
  const r = prng(i * 7919 + 4);
  const n = int(r, 3, 5);
  const slot = Math.floor(words.length / n);
  const spans = Array.from({ length: n }, (_, k) => {
    const first = k * slot + int(r, 1, slot - 5);
    const last = first + int(r, 0, 2);
    return {
      start: (words[first] as { start: number }).start,
      end: (words[last] as { end: number }).end,
      label: ENTITY_TYPES[int(r, 0, 2)] as string,
      first,
      last,
    };
  });
  return { spans, words };
}

/** The task index its data_url ends with (`.../<i>.<ext>`). */
function indexOf(claim: ClaimBody): number {
  const m = /\/(\d+)\.\w+$/.exec(claim.data_url);
  if (!m) throw new Error(`no task index in ${claim.data_url}`);
  return Number(m[1]);
}

const jitter = (size: number) => Math.round((Math.random() * 2 - 1) * 0.03 * size);

/** A labeler's answer to a claimed task (see the header for the noise of each type). */
export function answerOf(claim: ClaimBody): unknown {
  if (claim.task_type === "multi_label_classification") {
    const truth = new Set(multiTruth(indexOf(claim)));
    return { labels: MULTI_OPTIONS.filter((o) => truth.has(o) !== Math.random() < 0.08) };
  }
  if (claim.task_type === "bounding_box") {
    const boxes: Box[] = [];
    for (const b of boxTruth(indexOf(claim))) {
      if (Math.random() < 0.05) continue;
      const x = Math.max(0, b.x + jitter(b.w));
      const y = Math.max(0, b.y + jitter(b.h));
      boxes.push({ label: b.label, x, y, w: Math.max(1, b.x + b.w + jitter(b.w) - x), h: Math.max(1, b.y + b.h + jitter(b.h) - y) });
    }
    if (Math.random() < 0.05) boxes.push({ label: "car", x: int(Math.random, 0, 1000), y: int(Math.random, 0, 500), w: 60, h: 40 });
    return { boxes };
  }
  if (claim.task_type === "text_span") {
    const { spans, words } = spanTruth(indexOf(claim));
    const out: Span[] = [];
    for (const s of spans) {
      if (Math.random() < 0.05) continue;
      const move = Math.random() < 0.1 ? (s.last > s.first && Math.random() < 0.5 ? -1 : 1) : 0;
      out.push({ start: s.start, end: (words[s.last + move] as { end: number }).end, label: s.label });
    }
    return { spans: out };
  }
  if (claim.task_type === "free_text") {
    // each word right 97% of the time, else a wrong word: most answers differ somewhere, as transcriptions do
    const words = freeTextTruth(indexOf(claim)).map((w) => (Math.random() < 0.97 ? w : `x${w}`));
    return { text: words.join(" ") };
  }
  if (claim.task_type === "pairwise_comparison") {
    // item a is the better one; a labeler agrees 80% of the time
    return { winner: Math.random() < 0.8 ? "a" : "b" };
  }
  return { label: Math.random() < 0.85 ? "cat" : "dog" };
}

/** The policy fields of a task body. */
function policyFields(policy: ThroughputPolicy): Record<string, unknown> {
  return policy === "threshold"
    ? { consensus_threshold: 3, max_labels: 7, confidence_target: null }
    : { confidence_target: 0.95, min_labels: 2, max_labels: 7 };
}

/** The body of task `i` of `type`. */
export function taskBodyOf(type: ThroughputType, i: number, policy: ThroughputPolicy): Record<string, unknown> {
  const common = { metadata: { source: "bench-types" }, ...policyFields(policy) };
  if (type === "multi_label_classification")
    return {
      type,
      data_url: `https://img.example.com/multi/${i}.jpg`,
      label_spec: { question: "Which of these are in the picture?", options: MULTI_OPTIONS },
      ...common,
    };
  if (type === "bounding_box")
    return {
      type,
      data_url: `https://img.example.com/street/${i}.jpg`,
      label_spec: { question: "Box every car, person and bicycle", classes: BOX_CLASSES },
      ...common,
    };
  if (type === "free_text")
    return {
      type,
      data_url: `https://audio.example.com/read/${i}.flac`,
      label_spec: { question: "Transcribe the recording", max_length: 2400 },
      ...common,
    };
  if (type === "pairwise_comparison")
    return {
      type,
      data_url: `https://img.example.com/pairs/${i}.jpg`,
      data_url_b: `https://img.example.com/pairs/${i}-b.jpg`,
      label_spec: { question: "Which photo is older?", allow_tie: false },
      ...common,
    };
  if (type === "text_span")
    return {
      type,
      data_url: `https://texts.example.com/trial/${i}.txt`,
      data_text: spanText(i).text,
      label_spec: { question: "Mark the people, drugs and conditions", entity_types: ENTITY_TYPES },
      ...common,
    };
  return {
    type: "image_classification",
    data_url: `https://img.example.com/cats/${i}.jpg`,
    label_spec: { question: "Which animal is in the picture?", options: ["cat", "dog", "bird"] },
    ...common,
  };
}

// --- the phases ---------------------------------------------------------------------------------------------

/** Submits `count` tasks of `type` from index `from` (1,000 per batch call, two calls at a time). */
async function submitTasks(
  base: string,
  key: string,
  type: ThroughputType,
  policy: ThroughputPolicy,
  from: number,
  count: number,
): Promise<void> {
  const calls = Array.from({ length: Math.ceil(count / 1000) }, (_, c) => ({
    start: from + c * 1000,
    n: Math.min(1000, count - c * 1000),
  }));
  for (let c = 0; c < calls.length; c += 2) {
    await Promise.all(
      calls
        .slice(c, c + 2)
        .map(({ start, n }) =>
          api(base, "POST", "/v1/tasks/batch", key, { tasks: Array.from({ length: n }, (_, i) => taskBodyOf(type, start + i, policy)) }),
        ),
    );
  }
}

/** Polls until no task of `customerId` waits for its settlement; the time it took, ms. */
async function waitSettled(pool: Pool, customerId: string, timeoutMs = 120_000): Promise<number> {
  const started = nowMs();
  for (;;) {
    const { rows } = await pool.query<{ n: string }>("SELECT count(*) AS n FROM tasks WHERE customer_id = $1 AND status = 'settling'", [
      customerId,
    ]);
    if (Number(rows[0]?.n) === 0) return Math.round(nowMs() - started);
    if (nowMs() - started > timeoutMs) throw new Error(`${rows[0]?.n} tasks still wait for their settlement after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Every labeler claims and answers in a loop for `seconds`; the stats. */
async function closedLoop(port: number, labelers: Labeler[], seconds: number) {
  const client = new JsonClient(port, labelers.length);
  const stats = newStats();
  const started = nowMs();
  const until = started + seconds * 1000;
  try {
    await Promise.all(
      labelers.map(async (l) => {
        while (nowMs() < until) {
          if (!(await claimAndLabel(client, l, stats, answerOf))) await sleep(20);
        }
      }),
    );
  } finally {
    client.close();
  }
  return { stats, startedAt: new Date(started), endedAt: new Date(), elapsedS: (nowMs() - started) / 1000 };
}

/**
 * Runs the throughput part: starts the services, runs every phase, replays the decisions, tears down.
 * @throws Error when a service does not start or a phase's settlement does not drain within 120 s
 */
export async function runTypesThroughput(options: TypesThroughputOptions, log: (line: string) => void): Promise<TypesThroughputResult> {
  const startedAt = performance.now();
  const loadAtStart = os.loadavg().map((l) => round(l, 2));
  const target = benchTarget("types");
  const children: ChildProcess[] = [];
  let pool: Pool | undefined;
  const phases: PhaseResult[] = [];
  let decision: DecisionCost[] = [];
  try {
    await migrateDatabase(target.databaseUrl);
    pool = new Pool({ ...pgConfigFromUrl(target.databaseUrl), max: 2 });
    const services = await startServices(target, ["gateway", "consensus-worker", "webhook-worker"], { LOG_LEVEL: options.logLevel });
    for (const s of services.values()) children.push(s.child);
    const pidOf = (name: "gateway" | "consensus-worker" | "webhook-worker") => services.get(name)?.child.pid ?? 0;
    const port = services.get("gateway")?.port as number;
    const base = `http://127.0.0.1:${port}`;
    const customer = await productionCustomer(base, target.adminToken, "bench-types");
    const labelers = await createLabelers(base, target.adminToken, options.labelers);
    log(`gateway on ${port}, ${labelers.length} labelers`);

    /** the next task index per type (indices never repeat: a task's truth is its index's) */
    const next = new Map<ThroughputType, number>(THROUGHPUT_TYPES.map((t) => [t, 0]));
    /** the best answers/s seen per type, to size the next phase's tasks */
    const seen = new Map<ThroughputType, number>();
    let first = true;
    const measured = THROUGHPUT_TYPES.filter((t) => t === "single_choice" || options.types.includes(t));
    for (const policy of POLICIES) {
      for (const { type, run } of schedule(measured, options.runs[policy])) {
        if (!first) await pool.query("VACUUM (ANALYZE)");
        first = false;
        // twice the best rate of any type so far (the machine's rate doubles within minutes when others stop)
        const rate = 2 * Math.max(400, ...seen.values());
        const minLabels = policy === "threshold" ? 3 : 2;
        const count = Math.ceil((rate * (options.seconds + 2)) / minLabels);
        const from = next.get(type) as number;
        next.set(type, from + count);
        await submitTasks(base, customer.key, type, policy, from, count);
        await closedLoop(port, labelers, 2);
        const postgres = new CpuTracker(postgresBackends(target.database, new Set()));
        const cpu = countCpuPer(
          {
            gateway: () => cpuSeconds([pidOf("gateway")]),
            postgres: () => postgres.seconds(),
            consensus_worker: () => cpuSeconds([pidOf("consensus-worker")]),
            webhook_worker: () => cpuSeconds([pidOf("webhook-worker")]),
          },
          3,
        );
        const loop = await closedLoop(port, labelers, options.seconds);
        const midMs = (loop.startedAt.getTime() + loop.endedAt.getTime()) / 2;
        const drainMs = await waitSettled(pool, customer.id);
        const perAnswer = cpu(loop.stats.labels);
        postgres.stop();
        const decided = await pool.query<{ tasks: string; answers: string }>(
          `SELECT count(*) AS tasks, coalesce(sum(t.labels_collected), 0) AS answers FROM tasks t JOIN labels l ON l.id = t.last_label_id
             WHERE t.customer_id = $1 AND t.status = 'settled' AND l.created_at >= $2 AND l.created_at < $3`,
          [customer.id, loop.startedAt, loop.endedAt],
        );
        await pool.query(
          "UPDATE tasks SET status = 'canceled', canceled_at = now() WHERE customer_id = $1 AND status IN ('pending', 'labeling')",
          [customer.id],
        );
        const answersPerS = round(loop.stats.labels / loop.elapsedS, 1);
        seen.set(type, Math.max(seen.get(type) ?? 0, answersPerS));
        const tasks = Number(decided.rows[0]?.tasks ?? 0);
        const phase: PhaseResult = {
          type,
          policy,
          run,
          at_ms: midMs,
          answers_per_s: answersPerS,
          answers: loop.stats.labels,
          tasks_decided: tasks,
          answers_per_task: tasks === 0 ? Number.NaN : round(Number(decided.rows[0]?.answers ?? 0) / tasks, 2),
          drain_ms: drainMs,
          empty: loop.stats.empty,
          errors: loop.stats.errors,
          statuses: loop.stats.statuses,
          claim: latencySummary(loop.stats.claimMs),
          label: latencySummary(loop.stats.labelMs),
          cpu_ms_per_answer: {
            ...perAnswer,
            total: round(
              Object.values(perAnswer).reduce((a, b) => a + b, 0),
              3,
            ),
          },
        };
        phases.push(phase);
        log(
          `${policy} run ${run} ${type}: ${phase.answers_per_s} answers/s, ${phase.answers_per_task} answers/task, drain ${drainMs} ms, ` +
            `${phase.cpu_ms_per_answer.total} CPU ms/answer, label p50 ${phase.label.p50_ms} ms` +
            (phase.empty + phase.errors > 0
              ? `, ${phase.empty} empty claims, ${phase.errors} errors ${JSON.stringify(phase.statuses)}`
              : ""),
        );
      }
    }
    decision = await decisionCosts(pool, customer.id, measured, log);
  } finally {
    await pool?.end();
    await tearDown(target, children);
  }
  return {
    date: new Date().toISOString(),
    machine: { cpu: os.cpus()[0]?.model ?? "cpu", cores: os.cpus().length, node: process.version, load_average_at_start: loadAtStart },
    options,
    phases,
    summary: summarize(
      phases,
      POLICIES.filter((p) => options.runs[p] > 0),
    ),
    decision,
    seconds: round((performance.now() - startedAt) / 1000, 0),
  };
}

/**
 * The order of one policy's phases: single_choice, then each run's other types (rotated run by run) followed by
 * single_choice again, so that every phase of another type lies between two single_choice phases of the same
 * policy (`floorAt`).
 */
export function schedule(types: readonly ThroughputType[], runs: number): { type: ThroughputType; run: number }[] {
  if (runs === 0) return [];
  const others = types.filter((t) => t !== "single_choice");
  const out: { type: ThroughputType; run: number }[] = [{ type: "single_choice", run: 0 }];
  for (let run = 1; run <= runs; run++) {
    for (let k = 0; k < others.length; k++) out.push({ type: others[(k + run - 1) % others.length] as ThroughputType, run });
    out.push({ type: "single_choice", run });
  }
  return out;
}

/**
 * single_choice's answers/s at the time of `phase`: linear between the single_choice phases of its policy just
 * before and just after it (the machine drifts; a shared machine drifts a lot). @returns NaN without both.
 */
export function floorAt(phases: readonly PhaseResult[], phase: PhaseResult): number {
  const floors = phases.filter((q) => q.policy === phase.policy && q.type === "single_choice");
  const before = floors.filter((q) => q.at_ms <= phase.at_ms).at(-1);
  const after = floors.find((q) => q.at_ms >= phase.at_ms);
  if (!before || !after) return Number.NaN;
  if (after.at_ms === before.at_ms) return before.answers_per_s;
  const f = (phase.at_ms - before.at_ms) / (after.at_ms - before.at_ms);
  return before.answers_per_s + f * (after.answers_per_s - before.answers_per_s);
}

/** Per policy and type: medians over the phases, ratios to single_choice (`floorAt`). */
export function summarize(phases: PhaseResult[], policies: ThroughputPolicy[]): TypesThroughputResult["summary"] {
  return policies.flatMap((policy) =>
    THROUGHPUT_TYPES.filter((type) => phases.some((p) => p.type === type)).map((type) => {
      const mine = phases.filter((p) => p.policy === policy && p.type === type);
      const ratios = type === "single_choice" ? [] : mine.map((p) => round(p.answers_per_s / floorAt(phases, p), 3));
      return {
        policy,
        type,
        answers_per_s: mine.map((p) => p.answers_per_s),
        median_answers_per_s: round(median(mine.map((p) => p.answers_per_s)), 1),
        ratios,
        median_ratio: type === "single_choice" ? 1 : round(median(ratios), 3),
        answers_per_task: round(median(mine.map((p) => p.answers_per_task)), 2),
        drain_ms: Math.round(median(mine.map((p) => p.drain_ms))),
        cpu_ms_per_answer: round(median(mine.map((p) => p.cpu_ms_per_answer.total)), 2),
        cpu_ratio: round(
          median(phases.filter((p) => p.policy === policy && p.type === "single_choice").map((p) => p.cpu_ms_per_answer.total)) /
            median(mine.map((p) => p.cpu_ms_per_answer.total)),
          2,
        ),
        label_p50_ms: round(median(mine.map((p) => p.label.p50_ms)), 0),
        label_p99_ms: round(median(mine.map((p) => p.label.p99_ms)), 0),
      };
    }),
  );
}

// --- the decision's CPU ---------------------------------------------------------------------------------------

/**
 * Replays the label transaction's per-answer JavaScript on up to 200 settled tasks of each type (threshold and
 * confidence alike): for each answer in recording order, `readAnswer` of its body, `scoringModel` from the space's
 * stored model and the rows of the task's labelers, `decide` over the answers so far (as labeling.ts does). Each
 * task 5 times after a warm-up pass; µs per answer. Model JSON bytes: the space row plus the task's labelers'
 * rows, as the transaction reads them.
 */
async function decisionCosts(
  pool: Pool,
  customerId: string,
  types: readonly ThroughputType[],
  log: (line: string) => void,
): Promise<DecisionCost[]> {
  const out: DecisionCost[] = [];
  for (const type of types) {
    const dbType = type === "single_choice" ? "image_classification" : type;
    const { rows: tasks } = await pool.query<{
      id: string;
      label_space_id: string;
      label_spec: AnyLabelSpec | null;
      question: string;
      options: string[];
      data_text: string | null;
      consensus_threshold: number;
      max_labels: number;
      confidence_target: number | null;
      min_labels: number | null;
    }>(
      `SELECT id, label_space_id, label_spec, question, options, data_text, consensus_threshold, max_labels, confidence_target, min_labels
       FROM tasks WHERE customer_id = $1 AND task_type = $2 AND status = 'settled' ORDER BY settled_at DESC LIMIT 200`,
      [customerId, dbType],
    );
    if (tasks.length === 0) continue;
    const spaceIds = [...new Set(tasks.map((t) => t.label_space_id))];
    const spaces = new Map(
      (
        await pool.query<{ id: string; model: string | null }>("SELECT id, model::text AS model FROM label_spaces WHERE id = ANY($1)", [
          spaceIds,
        ])
      ).rows.map((r) => [r.id, r.model]),
    );
    const { rows: labels } = await pool.query<{ task_id: string; labeler_id: string; value: string }>(
      "SELECT task_id, labeler_id, value FROM labels WHERE task_id = ANY($1) ORDER BY created_at, id",
      [tasks.map((t) => t.id)],
    );
    const { rows: params } = await pool.query<{ label_space_id: string; labeler_id: string; params: string | null }>(
      "SELECT label_space_id, labeler_id, params::text AS params FROM labeler_models WHERE label_space_id = ANY($1)",
      [spaceIds],
    );
    const paramsOf = new Map(params.map((p) => [`${p.label_space_id} ${p.labeler_id}`, p.params]));
    const votesOf = new Map<string, StoredVote[]>();
    for (const l of labels) votesOf.set(l.task_id, [...(votesOf.get(l.task_id) ?? []), { labelerId: l.labeler_id, value: l.value }]);
    const kind = taskKindOf(dbType);
    /** the prepared replay of one task: its spec, policy, votes, answer bodies, the JSON of its model rows */
    const prepared = tasks.map((t) => {
      const votes = votesOf.get(t.id) ?? [];
      const spaceJson = spaces.get(t.label_space_id) ?? "null";
      const rowJson = votes.map((v) => ({ labeler_id: v.labelerId, json: paramsOf.get(`${t.label_space_id} ${v.labelerId}`) ?? "null" }));
      const bodies: AnswerBody[] = votes.map((v) => (type === "single_choice" ? { label: v.value } : (JSON.parse(v.value) as AnswerBody)));
      return {
        spec: t.label_spec ?? { question: t.question, options: t.options },
        policy: { policy: policyOf(t), gold: false },
        item: { text: t.data_text ?? undefined },
        votes,
        bodies,
        spaceJson,
        rowJson,
        taskBytes: Buffer.byteLength(JSON.stringify(votes)) + Buffer.byteLength(t.data_text ?? ""),
      };
    });
    let answers = 0;
    let modelBytes = 0;
    let taskBytes = 0;
    for (const p of prepared) {
      answers += p.votes.length;
      for (let k = 1; k <= p.votes.length; k++) {
        modelBytes += Buffer.byteLength(p.spaceJson) + p.rowJson.slice(0, k).reduce((n, r) => n + Buffer.byteLength(r.json), 0);
        taskBytes += p.taskBytes;
      }
    }
    /** One pass over every answer doing the first `steps` steps (1 read, 2 + model, 3 + decide); its CPU µs (process.cpuUsage). */
    const pass = (steps: 1 | 2 | 3): number => {
      const before = process.cpuUsage();
      for (const p of prepared) {
        for (let k = 1; k <= p.votes.length; k++) {
          const read = kind.readAnswer(p.spec, p.bodies[k - 1] as AnswerBody, p.item);
          if ("issues" in read) throw new Error(`a stored answer does not read back: ${JSON.stringify(read.issues)}`);
          if (steps === 1) continue;
          // the transaction gets the rows as JSON text from Postgres and parses them (pg's json type parser)
          const space = JSON.parse(p.spaceJson) as unknown;
          const rows: StoredLabelerRow[] = p.rowJson
            .slice(0, k)
            .map((r) => ({ labeler_id: r.labeler_id, params: JSON.parse(r.json) as unknown }));
          const model = kind.scoringModel(p.spec, space, rows);
          if (steps === 2) continue;
          kind.decide(p.spec, p.policy, p.votes.slice(0, k), model, p.item);
        }
      }
      const used = process.cpuUsage(before);
      return used.user + used.system;
    };
    // CPU time, not wall time: the machine is shared and a preempted call would count another's time
    for (const steps of [1, 2, 3] as const) pass(steps);
    const cpu: Record<1 | 2 | 3, number[]> = { 1: [], 2: [], 3: [] };
    for (let i = 0; i < 5; i++) for (const steps of [1, 2, 3] as const) cpu[steps].push(pass(steps));
    const per = (steps: 1 | 2 | 3) => median(cpu[steps]) / Math.max(1, answers);
    const cost: DecisionCost = {
      type,
      answers,
      read_answer_us: round(per(1), 1),
      scoring_model_us: round(Math.max(0, per(2) - per(1)), 1),
      decide_us: round(Math.max(0, per(3) - per(2)), 1),
      total_us: round(per(3), 1),
      model_json_bytes: Math.round(modelBytes / Math.max(1, answers)),
      task_json_bytes: Math.round(taskBytes / Math.max(1, answers)),
    };
    log(`decision of ${type}: ${JSON.stringify(cost)}`);
    out.push(cost);
  }
  return out;
}

// --- the section ------------------------------------------------------------------------------------------------

/** The markdown lines of the throughput section's body (after its heading and run line). */
export function renderTypesThroughput(result: TypesThroughputResult): string[] {
  const o = result.options;
  const lines: string[] = [
    `${o.labelers} labelers in a closed loop (claim, answer, claim again), ${o.seconds} s measured after 2 s of warm-up per phase, ` +
      `${o.runs.threshold} run(s) under the threshold policy and ${o.runs.confidence} under the confidence policy, each through every type (order rotated, single_choice before and after each run), gateway + consensus-worker + webhook-worker processes, ` +
      `LOG_LEVEL=${o.logLevel}. Load average at start: ${result.machine.load_average_at_start.join(", ")}. ` +
      "Ratio: a type's answers/s over single_choice's at the same time (linear between the single_choice phases run " +
      "just before and just after it, same policy), median over runs. Answers per task: of the tasks decided in the window. Drain: from the window's end until " +
      "every decided task is settled by the consensus worker. CPU per answer: gateway + Postgres + both workers, window and drain, " +
      "median over phases; CPU ratio: single_choice's over the type's, the answers/s ratio a CPU-bound machine would give " +
      "(steadier than the rates on a shared machine, whose rate changes by a factor of 2 or more within a minute).",
    "",
    "| policy | type | answers/s (median) | runs | ratio to single_choice (median) | per run | answers per task | drain, ms | CPU ms per answer | CPU ratio | label p50 / p99, ms | target ≥ 0.5 |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const s of result.summary) {
    const floor = s.type === "single_choice";
    lines.push(
      `| ${s.policy} | ${s.type} | ${s.median_answers_per_s} | ${s.answers_per_s.join(", ")} | ${floor ? "1" : s.median_ratio.toFixed(2)} | ` +
        `${floor ? "–" : s.ratios.map((r) => r.toFixed(2)).join(", ")} | ${s.answers_per_task} | ${s.drain_ms} | ${s.cpu_ms_per_answer} | ${floor ? "1" : s.cpu_ratio.toFixed(2)} | ` +
        `${s.label_p50_ms} / ${s.label_p99_ms} | ${floor ? "(floor)" : s.median_ratio >= 0.5 ? "met" : "**missed**"} |`,
    );
  }
  const trouble = result.phases.filter((p) => p.empty + p.errors > 0);
  if (trouble.length > 0) {
    lines.push(
      "",
      `Phases with empty claims or refused answers: ${trouble.map((p) => `${p.policy} run ${p.run} ${p.type}: ${p.empty} empty, ${p.errors} refused ${JSON.stringify(p.statuses)}`).join("; ")}. ` +
        'An empty claim (204) means the phase ran out of open tasks (its labeler waits 20 ms); a 409 "task no longer accepts labels" ' +
        "is an answer to a task decided while the labeler held its claim (more labelers may claim a task than its decision " +
        "turns out to need: under the confidence policy a single-choice task admits more claims than the 2 answers that " +
        "decide it). Refused answers are not counted in answers/s.",
    );
  }
  lines.push(
    "",
    "Reading the CPU column: the consensus worker's share (settlement, ledger, events and the model refits) is paid per " +
      "decided task, so a type decided after fewer answers (single_choice: ~3.5 under the threshold policy, 2 under the " +
      "confidence policy; the typed tasks ~3.6–4.2 and up to max_labels 7 under the confidence policy, where every part's " +
      "posterior must reach 0.95) pays more of it per answer.",
  );
  if (result.decision.length > 0) {
    lines.push(
      "",
      "The decision in the label transaction, per answer (the transaction's JavaScript replayed in the bench process on up to 200 " +
        "settled tasks of each type, with the space's fitted model as stored; CPU µs per answer, median of 5 passes; " +
        "\"model\" = JSON.parse of the space row and the task's labelers' rows + `scoringModel`):",
      "",
      "| type | answers replayed | readAnswer, µs | model, µs | decide, µs | total, µs | model JSON read per answer, bytes | answers + text read per answer, bytes |",
      "|---|---|---|---|---|---|---|---|",
      ...result.decision.map(
        (d) =>
          `| ${d.type} | ${d.answers} | ${d.read_answer_us} | ${d.scoring_model_us} | ${d.decide_us} | ${d.total_us} | ${d.model_json_bytes} | ${d.task_json_bytes} |`,
      ),
    );
  }
  return lines;
}
