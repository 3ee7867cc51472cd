/**
 * Replays recorded crowdsourcing data (answers.csv + gold.csv) through a running labelgate: one customer,
 * one labeler per crowd worker, one label space per dataset (one question, the dataset's labels as
 * options), one task per item. The protocol (README "Watch real crowd labels flow through it"):
 * 1. a seeded share S of the items with gold become gold tasks (`gold_label`), fed first: every recorded
 *    answer of each, a claim of that task by that worker, then its label;
 * 2. every other item becomes a task, under the threshold policy (`consensus_threshold` T, `max_labels`
 *    min(2T+1, answers)) or the confidence policy (`confidence_target` T, `max_labels` = its recorded
 *    answers, at most 50); its answers are fed in recorded order (items concurrently) until the first
 *    refused claim or `labels_needed: 0`.
 * Scored on non-gold items against gold.csv: accuracy, `label_share` (labels accepted / rows of
 * answers.csv, gold answers included), the ECE of `confidence` (10 equal-width bins) and the resolutions.
 * The pure pieces (CSV, grouping, per-item settings, gold selection, baselines, accuracy, ECE) are exported
 * for tests; `runReplay` does the whole run and returns the summary that `pnpm replay` (scripts/replay.ts) prints.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import {
  AuthenticationError,
  type ClientHooks,
  ConflictError,
  LabelgateClient,
  type RecordedLabel,
  type RequestOptions,
} from "@labelgate/sdk";

// --- dataset ----------------------------------------------------------------------------------------

/** One recorded crowd answer: `worker` said `label` about `item`. */
export interface Answer {
  item: string;
  worker: string;
  label: string;
}

/** Parses simple CSV (no quoting): strips a BOM, trims cells, skips blank lines. Returns every row, header included. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  for (const raw of text.replace(/^\uFEFF/, "").split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "") continue;
    rows.push(line.split(",").map((cell) => cell.trim()));
  }
  return rows;
}

function checkHeader(rows: string[][], expected: readonly string[], file: string): string[][] {
  const header = rows[0];
  if (!header || header.length !== expected.length || header.some((h, i) => h.toLowerCase() !== expected[i])) {
    throw new Error(`${file}: expected header "${expected.join(",")}", got "${header?.join(",") ?? ""}"`);
  }
  const body = rows.slice(1);
  body.forEach((row, i) => {
    if (row.length !== expected.length || row.some((cell) => cell === "")) {
      throw new Error(`${file}: data row ${i + 1} must have ${expected.length} non-empty fields, got "${row.join(",")}"`);
    }
  });
  return body;
}

/** Parses answers.csv (`item,worker,label`), keeping the recorded order. */
export function parseAnswers(text: string, file = "answers.csv"): Answer[] {
  return checkHeader(parseCsv(text), ["item", "worker", "label"], file).map(([item, worker, label]) => ({
    item: item as string,
    worker: worker as string,
    label: label as string,
  }));
}

/** Parses gold.csv (`item,label`) into item → true label; a conflicting duplicate is an error. */
export function parseGold(text: string, file = "gold.csv"): Map<string, string> {
  const gold = new Map<string, string>();
  for (const [item, label] of checkHeader(parseCsv(text), ["item", "label"], file) as [string, string][]) {
    const earlier = gold.get(item);
    if (earlier !== undefined && earlier !== label) throw new Error(`${file}: item ${item} has two gold labels (${earlier}, ${label})`);
    gold.set(item, label);
  }
  return gold;
}

/** Groups answers by item: items in order of first appearance, each item's answers in recorded order. */
export function groupByItem(answers: readonly Answer[]): Map<string, Answer[]> {
  const groups = new Map<string, Answer[]>();
  for (const a of answers) {
    const list = groups.get(a.item);
    if (list) list.push(a);
    else groups.set(a.item, [a]);
  }
  return groups;
}

/** Drops repeated answers of the same worker on the same item (a labeler can label a task once), keeping the first. */
export function dedupeWorkers(answers: readonly Answer[]): Answer[] {
  const seen = new Set<string>();
  return answers.filter((a) => {
    if (seen.has(a.worker)) return false;
    seen.add(a.worker);
    return true;
  });
}

/** Sorted distinct label values (numerically when every value is a number, else lexicographically). */
export function distinctLabels(answers: readonly Answer[]): string[] {
  const values = [...new Set(answers.map((a) => a.label))];
  const numeric = values.every((v) => v.trim() !== "" && Number.isFinite(Number(v)));
  return numeric ? values.sort((a, b) => Number(a) - Number(b) || (a < b ? -1 : a > b ? 1 : 0)) : values.sort();
}

export interface ItemSettings {
  consensusThreshold: number;
  maxLabels: number;
  /** true when the item has fewer answers than the default max_labels, so its settings were lowered */
  reduced: boolean;
}

/** Highest max_labels the API accepts. */
export const API_MAX_LABELS = 50;

/** Default max_labels for a threshold: 2t+1, capped at the API's limit (same rule as the gateway). */
export function defaultMaxLabels(threshold: number): number {
  return Math.min(2 * threshold + 1, API_MAX_LABELS);
}

/**
 * Task settings for an item with `answerCount` recorded answers: a task can only settle once it has
 * max_labels labels (or a threshold-sized agreement), so max_labels = min(2t+1, n) and
 * consensus_threshold = min(t, max_labels).
 */
export function itemSettings(answerCount: number, threshold: number): ItemSettings {
  if (answerCount < 1) throw new Error("an item needs at least one answer");
  const full = defaultMaxLabels(threshold);
  const maxLabels = Math.min(full, answerCount);
  return { consensusThreshold: Math.min(threshold, maxLabels), maxLabels, reduced: maxLabels < full };
}

/**
 * Task settings for an item under the confidence policy: `max_labels` = its recorded answers (at most 50),
 * `consensus_threshold` = min(3, max_labels) (the threshold is not used by this policy, but must not
 * exceed max_labels).
 */
export function confidenceItemSettings(answerCount: number): ItemSettings {
  if (answerCount < 1) throw new Error("an item needs at least one answer");
  const maxLabels = Math.min(answerCount, API_MAX_LABELS);
  return { consensusThreshold: Math.min(3, maxLabels), maxLabels, reduced: false };
}

/**
 * The items that become gold tasks: `share` of the items with gold (rounded), chosen by a seeded order
 * (SHA-256 of `seed:item`, ascending), so the same seed picks the same items on every run and machine.
 * @throws RangeError when share is outside [0, 1]
 */
/** A uniform number in [0, 1) from SHA-256 of `key` (its first 48 bits): the same key, the same number. */
function hashUniform(key: string): number {
  return Number.parseInt(createHash("sha256").update(key).digest("hex").slice(0, 12), 16) / 2 ** 48;
}

/**
 * A simulated model's answer on an item of truth `truth`: right with probability `accuracy`, otherwise one of
 * the other `options` uniformly, drawn from SHA-256 of `seed:item` (the same seed gives the same answers on every
 * run and machine).
 */
export function simulatedPrelabel(item: string, truth: string, options: readonly string[], accuracy: number, seed: number): string {
  if (hashUniform(`prelabel:${seed}:${item}`) < accuracy) return truth;
  const others = options.filter((o) => o !== truth);
  return others[Math.floor(hashUniform(`prelabel-error:${seed}:${item}`) * others.length)] ?? truth;
}

export function pickGoldItems(items: readonly string[], gold: ReadonlyMap<string, string>, share: number, seed: number): Set<string> {
  if (!(share >= 0 && share <= 1)) throw new RangeError(`gold share must be between 0 and 1, got ${share}`);
  const withGold = items.filter((item) => gold.has(item));
  const count = Math.round(share * withGold.length);
  const key = (item: string) => createHash("sha256").update(`${seed}:${item}`).digest("hex");
  const ordered = withGold.map((item) => ({ item, key: key(item) })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return new Set(ordered.slice(0, count).map((o) => o.item));
}

/** One bin of a reliability diagram: tasks, mean confidence and accuracy in [lower, upper). */
export interface ReliabilityBin {
  lower: number;
  upper: number;
  tasks: number;
  mean_confidence: number | null;
  accuracy: number | null;
}

/**
 * Expected calibration error over 10 equal-width confidence bins (Naeini et al. 2015; Guo et al. 2017,
 * "On Calibration of Modern Neural Networks", eq. 3): sum over bins of |accuracy - mean confidence| weighted
 * by the bin's share of predictions. A confidence of 1 falls in the last bin. `null` without predictions.
 */
export function expectedCalibrationError(predictions: readonly { confidence: number; correct: boolean }[]): {
  ece: number | null;
  bins: ReliabilityBin[];
} {
  const n = 10;
  const acc = Array.from({ length: n }, () => ({ tasks: 0, confidence: 0, correct: 0 }));
  for (const p of predictions) {
    const bin = acc[Math.min(n - 1, Math.max(0, Math.floor(p.confidence * n)))] as { tasks: number; confidence: number; correct: number };
    bin.tasks++;
    bin.confidence += p.confidence;
    if (p.correct) bin.correct++;
  }
  const total = predictions.length;
  const ece =
    total === 0
      ? null
      : acc.reduce((e, b) => e + (b.tasks === 0 ? 0 : (b.tasks / total) * Math.abs(b.correct / b.tasks - b.confidence / b.tasks)), 0);
  const bins = acc.map((b, i) => ({
    lower: i / n,
    upper: (i + 1) / n,
    tasks: b.tasks,
    mean_confidence: b.tasks === 0 ? null : b.confidence / b.tasks,
    accuracy: b.tasks === 0 ? null : b.correct / b.tasks,
  }));
  return { ece, bins };
}

/** Share of correct predictions among items that have a gold label (`null` when none has). */
export interface AccuracyResult {
  correct: number;
  total: number;
  accuracy: number | null;
}

/** Accuracy of `predictions` (item → label) against gold; only items present in both count. */
export function computeAccuracy(predictions: ReadonlyMap<string, string>, gold: ReadonlyMap<string, string>): AccuracyResult {
  let correct = 0;
  let total = 0;
  for (const [item, label] of predictions) {
    const truth = gold.get(item);
    if (truth === undefined) continue;
    total++;
    if (truth === label) correct++;
  }
  return { correct, total, accuracy: total === 0 ? null : correct / total };
}

/**
 * Baseline: plain majority vote over all recorded answers of each item with gold. A tie among k labels
 * earns 1/k when gold is among them (the expected accuracy of a uniformly random tie-break).
 */
export function majorityVoteAccuracy(groups: ReadonlyMap<string, readonly Answer[]>, gold: ReadonlyMap<string, string>): AccuracyResult {
  let credit = 0;
  let total = 0;
  for (const [item, answers] of groups) {
    const truth = gold.get(item);
    if (truth === undefined || answers.length === 0) continue;
    const counts = new Map<string, number>();
    for (const a of answers) counts.set(a.label, (counts.get(a.label) ?? 0) + 1);
    const top = Math.max(...counts.values());
    const tied = [...counts.entries()].filter(([, c]) => c === top).map(([label]) => label);
    total++;
    if (tied.includes(truth)) credit += 1 / tied.length;
  }
  return { correct: credit, total, accuracy: total === 0 ? null : credit / total };
}

/** Rounds to `digits` decimals. */
export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** A dataset folder: answers.csv (required) and gold.csv (optional). */
export interface Dataset {
  name: string;
  answers: Answer[];
  gold: Map<string, string>;
}

/** Reads a dataset folder; its name is the folder's base name. */
export function loadDataset(dir: string): Dataset {
  const abs = path.resolve(dir);
  const answersFile = path.join(abs, "answers.csv");
  if (!existsSync(answersFile)) throw new Error(`no answers.csv in ${abs}`);
  const answers = parseAnswers(readFileSync(answersFile, "utf8"), answersFile);
  if (answers.length === 0) throw new Error(`${answersFile} has no answers`);
  const goldFile = path.join(abs, "gold.csv");
  const gold = existsSync(goldFile) ? parseGold(readFileSync(goldFile, "utf8"), goldFile) : new Map<string, string>();
  return { name: path.basename(abs), answers, gold };
}

/** Admin token: the explicit value, else `ADMIN_TOKEN`, else the file `.data/admin-token` under `cwd`. */
export function resolveAdminToken(explicit: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  if (explicit?.trim()) return explicit.trim();
  const fromEnv = env["ADMIN_TOKEN"]?.trim();
  if (fromEnv) return fromEnv;
  const file = path.resolve(cwd, ".data", "admin-token");
  const fromFile = existsSync(file) ? readFileSync(file, "utf8").trim() : "";
  if (fromFile) return fromFile;
  throw new Error(
    `no admin token: pass --admin-token, set ADMIN_TOKEN, or run from the folder whose ${file} was written by \`pnpm start\``,
  );
}

// --- HTTP (through @labelgate/sdk) -------------------------------------------------------------------

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Counts the SDK's requests (attempts) and retries and times every call by route (ids replaced by `:id`),
 * through the client's hooks.
 */
export class RequestStats {
  /** retries made so far (all requests) */
  retries = 0;
  /** attempts made so far (all requests) */
  requests = 0;
  /** wall time of every call (retries included), ms, by route */
  private readonly timings = new Map<string, number[]>();

  /** The hooks to pass to `new LabelgateClient({hooks})`. */
  readonly hooks: ClientHooks = {
    onAttempt: (e) => {
      this.requests++;
      if (e.attempt > 1) this.retries++;
    },
    onResponse: (e) => {
      const route = `${e.method} ${e.path.replace(/\/[a-z]+_[A-Za-z0-9]+/g, "/:id")}`;
      const list = this.timings.get(route);
      if (list) list.push(e.durationMs);
      else this.timings.set(route, [e.durationMs]);
    },
  };

  /** One line per route: count, mean, p50, p95 and max latency. */
  latencyReport(): string[] {
    return [...this.timings].map(([route, list]) => {
      const sorted = [...list].sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
      const f = (ms: number) => ms.toFixed(0);
      return `${route}: n=${sorted.length} mean ${f(mean)} ms, p50 ${f(at(0.5))}, p95 ${f(at(0.95))}, max ${f(at(1))}`;
    });
  }
}

/**
 * The replay's client options: 5 attempts, 200 ms first backoff, 5 s longest, 60 s per attempt. Every
 * request of the replay may be retried (`retry: true`): a retried claim or label is recognized by its
 * answer (see runReplay), and task batches carry an idempotency key.
 */
export const REPLAY_RETRIES = { maxAttempts: 5, initialBackoffMs: 200, maxBackoffMs: 5000, timeoutMs: 60_000 } as const;
const RETRY: RequestOptions = { retry: true };

/** Runs `fn` over `items`, at most `concurrency` at a time; the first failure stops new work and rejects. */
export async function mapPool<T, R>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i] as T, i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  return results;
}

// --- replay -----------------------------------------------------------------------------------------

export interface ReplayOptions {
  /** dataset folder with answers.csv and gold.csv */
  dataset: string;
  baseUrl: string;
  adminToken: string;
  /** threshold policy: consensus threshold T (default 3); max_labels is 2T+1, lowered for items with fewer answers */
  threshold?: number;
  /** confidence policy instead: `confidence_target` T in (0.5, 1); max_labels = each item's recorded answers (at most 50) */
  confidenceTarget?: number;
  /** share S of the items with gold that become gold tasks, fed first (default 0) */
  goldShare?: number;
  /** seed of the gold items' choice (default 1) */
  seed?: number;
  /**
   * the customer's `quality.audit_rate` (0..1, default 0): the replay answers every audit of an item with gold as
   * soon as it sees it (polling `GET /v1/audits` while it labels): accept when the consensus is right, else reject
   * with the gold answer
   */
  auditRate?: number;
  /** `min_gain` of every task (confidence policy only; default: off) */
  minGain?: number;
  /**
   * pre-labels from a simulated model right this share of the time (0..1), its errors uniform over the other
   * options (`simulatedPrelabel`), on every task whose item has gold (default: none)
   */
  prelabelAccuracy?: number;
  /** tasks per POST /v1/tasks/batch (default 500) */
  batchSize?: number;
  /** items labeled at a time, and the concurrency of setup and result requests (default 32) */
  concurrency?: number;
  /** only the first N items (in order of first appearance in answers.csv) */
  limit?: number;
  /** how long to wait for every task to settle once labeling ends (default 120 s) */
  settleTimeoutMs?: number;
  /** progress and info lines (default: discarded) */
  log?: (line: string) => void;
}

/** The replay's result: the fields of the JSON line, in its order. */
export interface ReplaySummary {
  dataset: string;
  /** "threshold" or "confidence" */
  policy: "threshold" | "confidence";
  /** the policy's parameter: the consensus threshold or the confidence target */
  target: number;
  gold_share: number;
  seed: number;
  /** regular (non-gold) tasks */
  tasks: number;
  settled: number;
  gold_tasks: number;
  /** share of regular tasks with gold whose consensus label equals gold (null when no task has gold) */
  accuracy: number | null;
  /** labels accepted (gold tasks' included) / rows of answers.csv */
  label_share: number;
  /** people's labels accepted (gold tasks' included): what the customer paid for */
  labels: number;
  /** the simulated model's accuracy of the run's pre-labels (`prelabelAccuracy`), null without pre-labels */
  prelabel_accuracy: number | null;
  /** mean labels_collected over settled tasks */
  labels_per_task: number;
  /** mean reported confidence over settled tasks */
  mean_confidence: number | null;
  /** expected calibration error of `confidence` (10 equal-width bins) over settled tasks with gold */
  ece: number | null;
  /** settled tasks by resolution */
  resolutions: Record<string, number>;
  /** settled tasks whose consensus label has a lower posterior than another option (contract §quality: always 0) */
  not_leader: number;
  /** majority vote over all recorded answers vs gold (ties: 1/k credit), on the same (non-gold) items */
  majority_vote_accuracy_all_labels: number | null;
  /** the customer's audit rate (0: none) */
  audit_rate: number;
  /** the tasks' min_gain (null: off) */
  min_gain: number | null;
  /** audits the replay answered (reviews posted) */
  reviews: number;
  /** of those, rejections (the consensus was wrong) */
  rejections: number;
  /**
   * ECE of the tasks settled in the second half of the replay (by settled_at, 10 bins); every figure of the
   * summary scores each task's first settlement, before any review corrected it
   */
  ece_second_half: number | null;
  /** accuracy against gold of the tasks resolved `confidence` (null without any), and how many there are */
  confidence_resolved: { tasks: number; accuracy: number | null };
  /** wall time of the whole replay */
  seconds: number;
}

/** One item of `GET /v1/audits`. */
type AuditItem = Awaited<ReturnType<LabelgateClient["audits"]["list"]>>["items"][number];

interface ItemPlan {
  item: string;
  answers: Answer[];
  settings: ItemSettings;
  taskId?: string;
  batchId?: string;
}

interface TaskResult {
  item: string;
  /** settled_at of the first settlement (ISO) */
  settledAt: string;
  consensusLabel: string;
  labelsCollected: number;
  resolution: string;
  confidence: number | null;
  /** another option has a higher posterior than the consensus label */
  notLeader: boolean;
}

/** Whether `label` has a lower posterior than another option (beyond rounding). */
export function belowLeader(posterior: Readonly<Record<string, number>> | null | undefined, label: string): boolean {
  if (!posterior) return false;
  const own = posterior[label] ?? 0;
  return Object.values(posterior).some((p) => p > own + 1e-9);
}

function positiveInt(value: number | undefined, fallback: number, name: string, max = Number.MAX_SAFE_INTEGER): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1 || v > max) throw new Error(`${name} must be an integer between 1 and ${max}, got ${v}`);
  return v;
}

/** Throttled progress line: the latest state is printed at most once per second. */
class Progress {
  private line: (() => string) | undefined;
  private printed = "";
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly log: (line: string) => void,
    private readonly started: number,
  ) {
    this.timer = setInterval(() => this.flush(), 1000);
    this.timer.unref();
  }

  set(render: () => string): void {
    this.line = render;
  }

  elapsed(): string {
    return `${((Date.now() - this.started) / 1000).toFixed(1)} s`;
  }

  private flush(): void {
    if (!this.line) return;
    const text = `${this.line()}, ${this.elapsed()}`;
    if (text !== this.printed) this.log(text);
    this.printed = text;
  }

  stop(): void {
    clearInterval(this.timer);
    this.line = undefined;
  }
}

function emailFor(dataset: string): string {
  const slug =
    dataset
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "") || "dataset";
  return `replay-${slug}-${Date.now()}-${randomBytes(4).toString("hex")}@example.com`;
}

/**
 * Replays a dataset through a running labelgate and returns the summary. Phases: set up (labelers, customer,
 * quota), submit the tasks in batches, label (items concurrently, each item's answers in
 * recorded order until `labels_needed` reaches 0), wait until every batch is settled, fetch the results.
 */
export async function runReplay(options: ReplayOptions): Promise<ReplaySummary> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const threshold = positiveInt(options.threshold, 3, "threshold", 25);
  const confidenceTarget = options.confidenceTarget;
  if (confidenceTarget !== undefined && !(confidenceTarget > 0.5 && confidenceTarget < 1)) {
    throw new Error(`confidenceTarget must be between 0.5 and 1 (exclusive), got ${confidenceTarget}`);
  }
  const goldShare = options.goldShare ?? 0;
  const seed = options.seed ?? 1;
  if (!Number.isInteger(seed)) throw new Error(`seed must be an integer, got ${seed}`);
  const batchSize = positiveInt(options.batchSize, 500, "batchSize", 10_000);
  const concurrency = positiveInt(options.concurrency, 32, "concurrency", 1024);
  const limit = options.limit === undefined ? undefined : positiveInt(options.limit, 1, "limit");
  const settleTimeoutMs = options.settleTimeoutMs ?? 120_000;
  const auditRate = options.auditRate ?? 0;
  if (!(auditRate >= 0 && auditRate <= 1)) throw new Error(`auditRate must be between 0 and 1, got ${auditRate}`);
  const minGain = options.minGain;
  if (minGain !== undefined && confidenceTarget === undefined) throw new Error("minGain needs the confidence policy (confidenceTarget)");
  if (!options.adminToken) throw new Error("no admin token");
  const prelabelAccuracy = options.prelabelAccuracy;
  if (prelabelAccuracy !== undefined && !(prelabelAccuracy >= 0 && prelabelAccuracy <= 1))
    throw new Error(`prelabelAccuracy must be between 0 and 1, got ${prelabelAccuracy}`);

  const dataset = loadDataset(options.dataset);
  const labelOptions = distinctLabels(dataset.answers);
  if (labelOptions.length < 2) throw new Error(`${dataset.name}: a classification task needs at least 2 distinct labels`);
  const grouped = [...groupByItem(dataset.answers)];
  const selected = limit === undefined ? grouped : grouped.slice(0, limit);
  const goldItems = pickGoldItems(
    selected.map(([item]) => item),
    dataset.gold,
    goldShare,
    seed,
  );
  const allPlans: ItemPlan[] = selected.map(([item, answers]) => {
    const unique = dedupeWorkers(answers);
    const settings = confidenceTarget === undefined ? itemSettings(unique.length, threshold) : confidenceItemSettings(unique.length);
    return { item, answers: unique, settings };
  });
  const plans = allPlans.filter((p) => !goldItems.has(p.item));
  const goldPlans = allPlans.filter((p) => goldItems.has(p.item));
  const recordedRows = selected.reduce((s, [, a]) => s + a.length, 0);
  const totalAnswers = plans.reduce((s, p) => s + p.answers.length, 0);
  const goldAnswers = goldPlans.reduce((s, p) => s + p.answers.length, 0);
  const duplicates = recordedRows - totalAnswers - goldAnswers;
  const workers = [...new Set(allPlans.flatMap((p) => p.answers.map((a) => a.worker)))];
  const reduced = plans.filter((p) => p.settings.reduced).length;
  const reducedThreshold = plans.filter((p) => p.settings.consensusThreshold < threshold).length;
  const full = defaultMaxLabels(threshold);
  log(
    `${dataset.name}: ${plans.length} items, ${totalAnswers} answers, ${workers.length} workers, options [${labelOptions.join(", ")}], ` +
      (confidenceTarget === undefined
        ? `threshold ${threshold}, max_labels ${full}; ${reduced} tasks with reduced max_labels (fewer than ${full} answers), ` +
          `${reducedThreshold} of them with a reduced threshold`
        : `confidence_target ${confidenceTarget}, max_labels = recorded answers (at most ${API_MAX_LABELS})`) +
      `; ${goldPlans.length} gold tasks (${goldAnswers} answers, share ${goldShare}, seed ${seed})` +
      (duplicates > 0 ? `; ${duplicates} repeated worker answers skipped` : ""),
  );

  const stats = new RequestStats();
  const admin = new LabelgateClient({ baseUrl: options.baseUrl, adminToken: options.adminToken, ...REPLAY_RETRIES, hooks: stats.hooks });
  const progress = new Progress(log, started);
  const phaseTimes: string[] = [];
  let phaseStart = Date.now();
  const endPhase = (name: string) => {
    phaseTimes.push(`${name} ${((Date.now() - phaseStart) / 1000).toFixed(1)} s`);
    phaseStart = Date.now();
  };

  try {
    // --- setup: labelers first (an admin call: a wrong token fails before anything is created), customer, quota ---
    const adminCall = async <T>(call: Promise<T>): Promise<T> => {
      try {
        return await call;
      } catch (err) {
        if (err instanceof AuthenticationError) {
          throw new Error(`${err.message} (the admin token was rejected: check --admin-token, ADMIN_TOKEN or .data/admin-token)`);
        }
        throw err;
      }
    };
    const labelers = new Map<string, LabelgateClient>();
    progress.set(() => `labelers ${labelers.size}/${workers.length}`);
    const createLabeler = async (worker: string) => {
      const created = await adminCall(admin.admin.createLabeler(`crowd-${worker}`, RETRY));
      labelers.set(worker, admin.withCredentials({ labelerKey: created.api_key }));
    };
    await createLabeler(workers[0] as string);
    await mapPool(workers.slice(1), concurrency, createLabeler);

    const created = await admin.customers.register({ name: `replay ${dataset.name}`, email: emailFor(dataset.name) }, RETRY);
    const customerId = created.customer_id;
    // The replay is an operator's load: it runs as a production customer (the production rate-limit
    // budget) with its live key, and grants itself the quota the dataset needs.
    const upgraded = await adminCall(admin.admin.upgradeCustomer(customerId, {}, RETRY));
    const customer = admin.withCredentials({ apiKey: upgraded.api_key });
    // every answer may become a label, and each task reserves at most max_labels
    const quota = allPlans.reduce((s, p) => s + p.settings.maxLabels + p.answers.length, 0);
    await adminCall(admin.admin.updateCustomer(customerId, { label_quota: quota }, RETRY));
    if (auditRate > 0) await customer.settings.update({ quality: { audit_rate: auditRate } }, RETRY);
    endPhase(`setup (${workers.length} labelers)`);

    // --- submit: gold tasks first, then the regular ones (one question for the whole dataset: one label space) ---
    const batches: { id: string; size: number }[] = [];
    let submitted = 0;
    const question = `${dataset.name}: which label?`;
    progress.set(() => `submitting ${submitted}/${allPlans.length} tasks`);
    // the simulated model answers every item with gold (it needs the truth to be right P of the time)
    const prelabelOf = (item: string) => {
      const truth = dataset.gold.get(item);
      if (prelabelAccuracy === undefined || truth === undefined || !labelOptions.includes(truth)) return {};
      return {
        prelabel: { answer: { label: simulatedPrelabel(item, truth, labelOptions, prelabelAccuracy, seed) }, model: "simulated" },
      };
    };
    const submit = async (list: ItemPlan[], gold: boolean) => {
      for (let start = 0; start < list.length; start += batchSize) {
        const chunk = list.slice(start, start + batchSize);
        const tasks = chunk.map((p) => ({
          type: "classification",
          data_url: `https://data.example/${encodeURIComponent(dataset.name)}/${encodeURIComponent(p.item)}`,
          label_spec: { question, options: labelOptions },
          consensus_threshold: p.settings.consensusThreshold,
          max_labels: p.settings.maxLabels,
          ...(confidenceTarget === undefined ? {} : { confidence_target: confidenceTarget }),
          ...(minGain === undefined ? {} : { min_gain: minGain }),
          ...(gold ? { gold_label: dataset.gold.get(p.item) as string } : {}),
          ...prelabelOf(p.item),
          metadata: { item: p.item },
        }));
        const res = await customer.tasks.createBatch({ tasks }, RETRY);
        const ids = res.task_ids;
        if (ids.length !== chunk.length) {
          throw new Error(`POST /v1/tasks/batch: expected ${chunk.length} task_ids, got ${JSON.stringify(ids)}`);
        }
        chunk.forEach((p, i) => {
          p.taskId = ids[i];
          p.batchId = res.batch_id;
        });
        // a batch's counts leave its gold tasks out: only regular batches are waited on
        if (!gold) batches.push({ id: res.batch_id, size: chunk.length });
        submitted += chunk.length;
      }
    };
    await submit(goldPlans, true);
    await submit(plans, false);
    endPhase(`submit (${batches.length} batches)`);

    // --- gold: every recorded answer of each gold item, before any regular item ---
    let goldLabels = 0;
    progress.set(() => `gold ${goldLabels}/${goldAnswers} answers`);
    await mapPool(goldPlans, concurrency, async (plan) => {
      for (const answer of plan.answers) {
        const labeler = labelers.get(answer.worker) as LabelgateClient;
        const claim = await labeler.labeling.claim(plan.taskId as string, RETRY);
        if (claim === null) continue;
        try {
          await labeler.labeling.label(claim.claim_id, answer.label, RETRY);
        } catch (err) {
          if (!(err instanceof ConflictError && err.error === "claim already labeled" && err.attempts > 1)) throw err;
        }
        goldLabels++;
      }
    });
    if (goldPlans.length > 0) endPhase(`gold (${goldLabels} labels)`);

    // --- audits: answered from gold as soon as they are seen, while the replay labels and settles ---
    // the first settlement of each audited task as the audit showed it (a rejection with an answer revises it)
    const audited = new Map<string, { settledAt: string; consensusLabel: string; confidence: number | null; resolution: string }>();
    const planOfTask = new Map(plans.map((p) => [p.taskId as string, p]));
    let rejections = 0;
    const answerAudits = async (): Promise<void> => {
      const open: AuditItem[] = [];
      for (let page = 1; ; page++) {
        const { items } = await customer.audits.list({ status: "open", page, per_page: 100 }, RETRY);
        open.push(...items);
        if (items.length < 100) break;
      }
      const todo = open.filter((a) => !audited.has(a.task_id) && a.consensus_label !== null);
      await mapPool(todo, 8, async (a) => {
        const plan = planOfTask.get(a.task_id);
        const truth = plan ? dataset.gold.get(plan.item) : undefined;
        if (truth === undefined) return; // no gold: left open
        audited.set(a.task_id, {
          settledAt: a.settled_at ?? new Date().toISOString(),
          consensusLabel: a.consensus_label as string,
          confidence: a.confidence,
          resolution: a.resolution ?? "",
        });
        if (a.consensus_label === truth) await customer.tasks.review(a.task_id, { verdict: "accept" });
        else {
          rejections++;
          await customer.tasks.review(a.task_id, { verdict: "reject", answer: { label: truth } });
        }
      });
    };
    let auditing = auditRate > 0;
    const auditLoop = (async () => {
      while (auditing) {
        await answerAudits();
        await sleep(500);
      }
    })();

    // --- label ---
    let answersDone = 0;
    let labelsPosted = 0;
    let decidable = 0;
    let closedOnClaim = 0;
    let closedOnLabel = 0;
    const undecided: string[] = [];
    progress.set(
      () => `labeling ${answersDone}/${totalAnswers} answers (${labelsPosted} labels), ${decidable}/${plans.length} tasks decidable`,
    );
    await mapPool(plans, concurrency, async (plan) => {
      const taskId = plan.taskId as string;
      let handled = 0;
      let open = true;
      for (const answer of plan.answers) {
        handled++;
        answersDone++;
        const labeler = labelers.get(answer.worker) as LabelgateClient;
        let claimAttempts = 0;
        const claim = await labeler.labeling.claim(taskId, { ...RETRY, onResponse: (e) => (claimAttempts = e.attempts) });
        if (claim === null) {
          if (claimAttempts > 1) log(`warning: claim on ${taskId} answered 204 after a retry (a lost claim may hold a slot)`);
          closedOnClaim++;
          decidable++;
          open = false;
          break;
        }
        let recorded: RecordedLabel;
        try {
          recorded = await labeler.labeling.label(claim.claim_id, answer.label, RETRY);
        } catch (err) {
          if (!(err instanceof ConflictError)) throw err;
          // A retried request whose first attempt was recorded: the label is in, its labels_needed unknown.
          if (err.error === "claim already labeled" && err.attempts > 1) {
            labelsPosted++;
            continue;
          }
          if (err.error !== "task no longer accepts labels") throw err;
          closedOnLabel++;
          decidable++;
          open = false;
          break;
        }
        labelsPosted++;
        if (recorded.labels_needed === 0) {
          decidable++;
          open = false;
          break;
        }
      }
      answersDone += plan.answers.length - handled;
      if (open) undecided.push(plan.item);
    });
    endPhase(`label (${labelsPosted} labels)`);
    log(
      `labeling done: ${labelsPosted} labels posted for ${totalAnswers} recorded answers; ${decidable}/${plans.length} tasks decidable` +
        (closedOnClaim + closedOnLabel > 0 ? ` (${closedOnClaim} closed at claim, ${closedOnLabel} closed at label)` : ""),
    );
    if (undecided.length > 0) {
      log(`warning: ${undecided.length} tasks still need labels after all answers (items ${undecided.slice(0, 10).join(", ")}...)`);
    }

    // --- wait for settlement ---
    const deadline = Date.now() + settleTimeoutMs;
    const settledBy = new Map<string, number>();
    const settledCount = () => [...settledBy.values()].reduce((a, b) => a + b, 0);
    progress.set(() => `settling ${settledCount()}/${plans.length} tasks settled`);
    for (;;) {
      let canceled = 0;
      await mapPool(batches, concurrency, async (b) => {
        const { counts } = await customer.batches.get(b.id, RETRY);
        settledBy.set(b.id, counts.settled);
        canceled += counts.canceled;
      });
      if (canceled > 0) throw new Error(`${canceled} tasks were canceled; the replay never cancels tasks`);
      if (batches.every((b) => settledBy.get(b.id) === b.size)) break;
      if (Date.now() > deadline) {
        throw new Error(
          `timed out after ${settleTimeoutMs / 1000} s waiting for settlement: ${settledCount()}/${plans.length} tasks settled ` +
            `(${undecided.length} never became decidable)`,
        );
      }
      await sleep(250);
    }
    auditing = false;
    await auditLoop;
    // the audits drawn by the last settlements
    if (auditRate > 0) await answerAudits();
    endPhase(auditRate > 0 ? `settle (${audited.size} audits answered)` : "settle");

    // --- results ---
    let fetched = 0;
    progress.set(() => `results ${fetched}/${plans.length} tasks`);
    const results = await mapPool(plans, concurrency, async (plan): Promise<TaskResult> => {
      const what = `GET /v1/tasks/${plan.taskId}/result`;
      const res = await customer.tasks.result(plan.taskId as string, RETRY);
      if (res.status !== "settled") throw new Error(`${what}: expected a settled task, got status ${res.status}`);
      fetched++;
      // an audited task is scored as it first settled (a rejection may have revised it since)
      const first = audited.get(plan.taskId as string);
      if (first)
        return {
          item: plan.item,
          settledAt: first.settledAt,
          consensusLabel: first.consensusLabel,
          labelsCollected: res.labels_collected,
          resolution: first.resolution,
          confidence: first.confidence,
          notLeader: false,
        };
      return {
        item: plan.item,
        settledAt: res.settled_at,
        consensusLabel: res.consensus_label,
        labelsCollected: res.labels_collected,
        resolution: res.resolution,
        confidence: typeof res.confidence === "number" ? res.confidence : null,
        notLeader: belowLeader(res.posterior, res.consensus_label),
      };
    });
    endPhase("results");
    progress.stop();

    const predictions = new Map(results.map((r) => [r.item, r.consensusLabel]));
    const acc = computeAccuracy(predictions, dataset.gold);
    const baseline = majorityVoteAccuracy(new Map(selected.filter(([item]) => !goldItems.has(item))), dataset.gold);
    const calibration = expectedCalibrationError(
      results.flatMap((r) => {
        const truth = dataset.gold.get(r.item);
        return truth === undefined || r.confidence === null ? [] : [{ confidence: r.confidence, correct: truth === r.consensusLabel }];
      }),
    );
    const labels = results.reduce((s, r) => s + r.labelsCollected, 0);
    const bySettlement = [...results].sort((a, b) => (a.settledAt < b.settledAt ? -1 : a.settledAt > b.settledAt ? 1 : 0));
    const secondHalf = expectedCalibrationError(
      bySettlement.slice(Math.floor(bySettlement.length / 2)).flatMap((r) => {
        const truth = dataset.gold.get(r.item);
        return truth === undefined || r.confidence === null ? [] : [{ confidence: r.confidence, correct: truth === r.consensusLabel }];
      }),
    );
    const confident = computeAccuracy(
      new Map(results.filter((r) => r.resolution === "confidence").map((r) => [r.item, r.consensusLabel])),
      dataset.gold,
    );
    const resolutions = new Map<string, number>();
    for (const r of results) resolutions.set(r.resolution, (resolutions.get(r.resolution) ?? 0) + 1);
    const confidences = results.flatMap((r) => (r.confidence === null ? [] : [r.confidence]));
    const meanConfidence = confidences.length ? confidences.reduce((a, b) => a + b, 0) / confidences.length : Number.NaN;
    log(
      `results: ${acc.correct}/${acc.total} correct vs gold; resolutions ${[...resolutions].map(([k, v]) => `${k} ${v}`).join(", ")}; ` +
        `mean confidence ${meanConfidence.toFixed(3)}; ${stats.requests} requests, ${stats.retries} retries; ${phaseTimes.join(", ")}`,
    );
    for (const line of stats.latencyReport()) log(`  latency ${line}`);

    return {
      dataset: dataset.name,
      policy: confidenceTarget === undefined ? "threshold" : "confidence",
      target: confidenceTarget ?? threshold,
      gold_share: goldShare,
      seed,
      tasks: plans.length,
      settled: settledCount(),
      gold_tasks: goldPlans.length,
      accuracy: acc.accuracy === null ? null : round(acc.accuracy, 4),
      label_share: round((labelsPosted + goldLabels) / recordedRows, 4),
      labels: labelsPosted + goldLabels,
      prelabel_accuracy: prelabelAccuracy ?? null,
      labels_per_task: results.length === 0 ? 0 : round(labels / results.length, 2),
      mean_confidence: Number.isNaN(meanConfidence) ? null : round(meanConfidence, 4),
      ece: calibration.ece === null ? null : round(calibration.ece, 4),
      resolutions: Object.fromEntries(resolutions),
      not_leader: results.filter((r) => r.notLeader).length,
      majority_vote_accuracy_all_labels: baseline.accuracy === null ? null : round(baseline.accuracy, 4),
      audit_rate: auditRate,
      min_gain: minGain ?? null,
      reviews: audited.size,
      rejections,
      ece_second_half: secondHalf.ece === null ? null : round(secondHalf.ece, 4),
      confidence_resolved: { tasks: confident.total, accuracy: confident.accuracy === null ? null : round(confident.accuracy, 4) },
      seconds: round((Date.now() - started) / 1000, 1),
    };
  } finally {
    progress.stop();
  }
}
