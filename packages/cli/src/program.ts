/**
 * The `labelgate` command line (commander): submit task files, create one task of any type (contract §task-types), create/
 * watch/export manifest jobs, export batches (any format of contract §exports), read tasks and results (with the
 * consensus of a reserved type), claim and label tasks as a labeler (an option or an answer body as JSON), review
 * results and list the audit queue, verify a settlement on the chain. Data goes to stdout (JSON), progress bars and
 * messages to stderr. `run()` never
 * exits the process: it returns the exit code (0 ok, 1 failed, 2 usage) so main.ts owns `process.exit`.
 */
import { createHash } from "node:crypto";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import {
  type AnswerBody,
  EXPORT_FORMATS,
  type ExportFormat,
  itemFieldsOf,
  type Job,
  LabelgateClient,
  LabelgateError,
  OPERATIONS,
  PayloadTooLargeError,
  type Ranking,
  type ReviewRequest,
  TASK_TYPE_NAMES,
  type TaskRequest,
  type TaskResult,
  ValidationError,
  verifySettlement,
} from "@labelgate/sdk";
import cliProgress from "cli-progress";
import {
  attachGuide,
  choicesFieldOf,
  formatOf,
  type GuideInput,
  InputError,
  type InputFormat,
  type InputTask,
  parseTasks,
  splitOptions,
  type TaskDefaults,
} from "./input";

/** Where the CLI writes, and the defaults main.ts read from the environment. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** LABELGATE_API_KEY */
  apiKey?: string;
  /** LABELGATE_LABELER_KEY: the labeler key (`lk_…`) of the `labeler` commands */
  labelerKey?: string;
  /** LABELGATE_URL */
  url?: string;
  /** LABELGATE_RPC_URL (else EVM_RPC_URL): JSON-RPC endpoint of the chain settlements are anchored on (`verify`) */
  rpcUrl?: string;
}

/** A failure with a message for the user and an exit code. */
export class CliError extends Error {
  override name = "CliError";
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export const DEFAULT_URL = "http://127.0.0.1:3000";
/** Tasks per POST /v1/tasks/batch (the gateway takes up to 10,000; 1000 keeps each request small). */
export const MAX_CHUNK = 1000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function positiveInt(value: string, name: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new CliError(`${name} must be a positive whole number, got "${value}"`, 2);
  return Number(value);
}

/** A number in [0, 1] given as a flag. @throws CliError (exit 2) */
function probability(value: string, name: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1)
    throw new CliError(`${name} must be a number between 0 and 1, got "${value}"`, 2);
  return n;
}

/**
 * `--qualification n,a` (contract §qualification): `{gold_tasks: n, min_accuracy: a}`, n a positive whole number,
 * a in [0, 1] (the gateway checks n <= 100). @throws CliError (exit 2)
 */
function qualificationFlag(value: string): { gold_tasks: number; min_accuracy: number } {
  const parts = value.split(",");
  if (parts.length !== 2)
    throw new CliError(`--qualification must be "gold_tasks,min_accuracy" (e.g. "10,0.65") or "none", got "${value}"`, 2);
  return {
    gold_tasks: positiveInt((parts[0] as string).trim(), "--qualification gold_tasks"),
    min_accuracy: probability((parts[1] as string).trim(), "--qualification min_accuracy"),
  };
}

/** A decimal number given as a flag (the gateway checks its bounds). @throws CliError (exit 2) */
function decimalFlag(value: string, name: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new CliError(`${name} must be a number, got "${value}"`, 2);
  return n;
}

/**
 * The policy flags of `submit`, `job create` and `task create` (--threshold, --max-labels, --confidence-target,
 * --min-labels, --min-gain), checked. @throws CliError (exit 2)
 */
function policyFlags(o: Record<string, string | undefined>) {
  return {
    consensus_threshold: o.threshold === undefined ? undefined : positiveInt(o.threshold, "--threshold"),
    max_labels: o.maxLabels === undefined ? undefined : positiveInt(o.maxLabels, "--max-labels"),
    confidence_target: o.confidenceTarget === undefined ? undefined : probability(o.confidenceTarget, "--confidence-target"),
    min_labels: o.minLabels === undefined ? undefined : positiveInt(o.minLabels, "--min-labels"),
    min_gain: o.minGain === undefined ? undefined : decimalFlag(o.minGain, "--min-gain"),
  };
}

/** The choices flags of a label_spec, by its field. */
const CHOICE_FLAGS = { options: "--options", classes: "--classes", entity_types: "--entity-types" } as const;

/**
 * The label_spec of `type` from --question and the type's choices flag (--options for single choice and
 * multi_label_classification, --classes for bounding_box, --entity-types for text_span; each separated by |).
 * @throws CliError (exit 2) when the question or the type's flag is missing, or another type's flag is given
 */
function labelSpecFlags(type: string, o: Record<string, string | undefined>): Record<string, unknown> {
  const field = choicesFieldOf(type);
  if (field === null) {
    // a type without choices (pairwise_comparison): the question alone
    for (const flag of ["options", "classes", "entityTypes"])
      if (o[flag] !== undefined) throw new CliError(`a ${type} task takes --question only`, 2);
    if (o.question === undefined) throw new CliError(`a ${type} task needs --question`, 2);
    return { question: o.question };
  }
  const keys = { options: "options", classes: "classes", entity_types: "entityTypes" } as const;
  for (const other of Object.keys(CHOICE_FLAGS) as (keyof typeof CHOICE_FLAGS)[]) {
    if (other !== field && o[keys[other]] !== undefined)
      throw new CliError(`a ${type} task takes ${CHOICE_FLAGS[field]}, not ${CHOICE_FLAGS[other]}`, 2);
  }
  const choices = o[keys[field]];
  if (o.question === undefined || choices === undefined)
    throw new CliError(`a ${type} task needs --question and ${CHOICE_FLAGS[field]}`, 2);
  return { question: o.question, [field]: splitOptions(choices) };
}

/**
 * The guide of `--instructions <file>` (Markdown) and `--examples <file>` (a JSON array of
 * `{data_url | data_text, answer, explanation?}`), each read when given. @throws CliError naming the file
 */
async function guideFlags(o: Record<string, string | undefined>): Promise<GuideInput> {
  const guide: GuideInput = {};
  const read = async (file: string) => {
    try {
      return await readFile(file, "utf8");
    } catch (err) {
      throw new CliError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  if (o.instructions !== undefined) guide.instructions = await read(o.instructions);
  if (o.examples !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await read(o.examples));
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(`${o.examples} is not valid JSON (${err instanceof Error ? err.message : String(err)})`, 2);
    }
    if (!Array.isArray(parsed)) throw new CliError(`${o.examples} must hold a JSON array of examples`, 2);
    guide.examples = parsed;
  }
  return guide;
}

/** A JSON flag's value (`--gold-answer`, an answer body): the parsed object. @throws CliError (exit 2) naming the flag */
function jsonObjectFlag(value: string, name: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    throw new CliError(`${name} is not valid JSON (${err instanceof Error ? err.message : String(err)})`, 2);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new CliError(`${name} must be a JSON object (an answer body, e.g. {"labels":["a"]})`, 2);
  return parsed as Record<string, unknown>;
}

/**
 * What `result --consensus` prints: a reserved type's `consensus` (the answer's shape, a confidence per part), or
 * `{label, confidence}` for single choice; the progress while the task is open.
 */
export function consensusView(result: TaskResult): unknown {
  if (result.status !== "settled") return result;
  return {
    task_id: result.task_id,
    consensus_label: result.consensus_label,
    confidence: result.confidence,
    consensus: result.consensus ?? { label: result.consensus_label, confidence: result.confidence },
  };
}

/** An optional flag's value: undefined when absent, null for "none" (clears a setting), else parsed. */
function setting<T>(value: string | undefined, parse: (v: string) => T): T | null | undefined {
  if (value === undefined) return undefined;
  return value === "none" ? null : parse(value);
}

/** The idempotency key of chunk `index` of a file: same file, same chunk → same key, so a rerun creates nothing new. */
export function chunkKey(fileSha256: string, index: number): string {
  return `lgcli-${fileSha256.slice(0, 32)}-${index}`;
}

/** A 400 of a batch, its `tasks.<i>.<field>` paths turned into the file's line numbers. */
function explainBatchError(err: ValidationError, chunk: InputTask[]): CliError {
  const lines = err.details.map((d) => {
    const m = /^tasks\.(\d+)\.?(.*)$/.exec(d.path);
    const at = m ? chunk[Number(m[1])] : undefined;
    return at ? `  line ${at.line}: ${m?.[2] || "task"}: ${d.message}` : `  ${d.path || "body"}: ${d.message}`;
  });
  return new CliError(`the gateway rejected the tasks (nothing of this batch was created):\n${lines.join("\n")}`);
}

function bar(io: CliIo, format: string): cliProgress.SingleBar {
  return new cliProgress.SingleBar(
    { stream: io.stderr, format, hideCursor: false, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
}

function printJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * A ranking (`GET /v1/batches/{id}/ranking` or `/v1/jobs/{id}/ranking`) as a text table: rank, score, its 95%
 * interval, the labels that compared the item, the item; scores to 3 decimals (natural-log scale), then a line
 * with the labels fitted and Davidson's tie parameter.
 */
export function rankingTable(ranking: Ranking): string {
  const rows = ranking.items.map((i) => [
    String(i.rank),
    i.score.toFixed(3),
    `[${i.ci_low.toFixed(3)}, ${i.ci_high.toFixed(3)}]`,
    String(i.comparisons),
    i.item,
  ]);
  const header = ["rank", "score", "95% interval", "comparisons", "item"];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] as string).length)));
  // numbers right-aligned, the item left-aligned and last (it may be long)
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => (c === cells.length - 1 ? cell : c === 2 ? cell.padEnd(widths[c] as number) : cell.padStart(widths[c] as number)))
      .join("  ")
      .trimEnd();
  const body = [line(header), ...rows.map(line)].join("\n");
  return `${body}\n${ranking.items.length} items, ${ranking.labels} labels, tie parameter ${ranking.tie_parameter.toFixed(3)}\n`;
}

/** Builds the commander program; `client()` makes the SDK client from the global options. */
async function buildProgram(io: CliIo) {
  const { Command, Option } = await import("commander");
  const program = new Command("labelgate")
    .description("labelgate: submit labeling tasks, follow manifest jobs, fetch results")
    .option("--api-key <key>", "customer API key (default: LABELGATE_API_KEY)")
    .option("--labeler-key <key>", "labeler key of the labeler commands (default: LABELGATE_LABELER_KEY)")
    .option("--url <url>", `gateway base URL (default: LABELGATE_URL, else ${DEFAULT_URL})`)
    .option("--max-attempts <n>", "attempts per request, retries of 429/503 included", "4")
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });

  const client = (): LabelgateClient => {
    const opts = program.opts<{ apiKey?: string; url?: string; maxAttempts: string }>();
    const apiKey = opts.apiKey ?? io.apiKey;
    if (!apiKey) throw new CliError("no API key: pass --api-key or set LABELGATE_API_KEY", 2);
    return new LabelgateClient({
      baseUrl: opts.url ?? io.url ?? DEFAULT_URL,
      apiKey,
      maxAttempts: positiveInt(opts.maxAttempts, "--max-attempts"),
    });
  };

  const labelerClient = (): LabelgateClient => {
    const opts = program.opts<{ labelerKey?: string; url?: string; maxAttempts: string }>();
    const labelerKey = opts.labelerKey ?? io.labelerKey;
    if (!labelerKey) throw new CliError("no labeler key: pass --labeler-key or set LABELGATE_LABELER_KEY", 2);
    return new LabelgateClient({
      baseUrl: opts.url ?? io.url ?? DEFAULT_URL,
      labelerKey,
      maxAttempts: positiveInt(opts.maxAttempts, "--max-attempts"),
    });
  };

  program
    .command("submit")
    .summary("submit a JSONL or CSV file of tasks in batches (a rerun creates no duplicates)")
    .description(
      "submit every task of a JSONL or CSV file, in batches; a rerun of the same file creates no duplicates.\n" +
        `JSONL: one POST ${OPERATIONS.createTask.path} body per line.` +
        " CSV columns: data_url, type, question, the type's choices separated\n" +
        "by | (options: single choice and multi_label_classification; classes: bounding_box; entity_types: text_span),\n" +
        "data_text (text_span; pairwise_comparison: item a as text), data_url_b and data_text_b (pairwise_comparison: item b),\n" +
        "consensus_threshold, max_labels, confidence_target, min_labels, min_gain, gold_label (single\n" +
        "choice), gold_answer (reserved types: the answer body as JSON), gold_explanation (a gold task's: shown\n" +
        "after a qualification training answer), callback_url, idempotency_key, metadata (JSON\n" +
        "object), metadata.<name>, prelabel (a model's answer: an option, or the answer body as JSON for a reserved\n" +
        "type), prelabel_model, prelabel_score. A task with a gold label or answer is a gold task (it measures the labelers).\n" +
        "Prints one JSON line per task: {line, task_id, batch_id}.",
    )
    .argument("<file>", "tasks file (.jsonl or .csv)")
    .addOption(new Option("--format <format>", "file format (default: by extension)").choices(["jsonl", "csv"]))
    .option("--type <type>", "task type for tasks without one", "image_classification")
    .option("--question <text>", "question for tasks without a label_spec")
    .option("--options <list>", "options for tasks without a label_spec, separated by | (single choice, multi_label_classification)")
    .option("--classes <list>", "classes for bounding_box tasks without a label_spec, separated by |")
    .option("--entity-types <list>", "entity types for text_span tasks without a label_spec, separated by |")
    .option("--threshold <n>", "consensus_threshold for tasks without one")
    .option("--max-labels <n>", "max_labels for tasks without one")
    .option("--confidence-target <p>", "confidence_target (0.5..0.999: the confidence policy) for tasks without one")
    .option("--min-labels <n>", "min_labels for tasks without one")
    .option(
      "--min-gain <g>",
      "min_gain (0.001..0.5, confidence policy: settle when a label cannot raise the confidence by g) for tasks without one",
    )
    .option(
      "--gold-column <name>",
      "CSV column / JSONL field holding gold labels (an answer body as JSON for a reserved type): a row with a value is a gold task",
    )
    .option("--callback-url <url>", "callback_url for tasks without one")
    .option("--instructions <file>", "Markdown instructions for labelers (given once per label space; at most 20,000 characters)")
    .option("--examples <file>", "JSON array of worked examples: [{data_url | data_text, answer, explanation?}] (at most 20)")
    .option("--prelabel-model <name>", "model of the CSV prelabel cells without a prelabel_model (a model's answers: never charged)")
    .option("--show-prelabel", "show the pre-labels to labelers (label_spec.show_prelabel: the labeler app pre-fills them)")
    .option("--batch-size <n>", `tasks per request (1..${MAX_CHUNK})`, String(MAX_CHUNK))
    .action(async (file: string, o: Record<string, string | undefined>) => {
      const batchSize = positiveInt(o.batchSize ?? String(MAX_CHUNK), "--batch-size");
      if (batchSize > MAX_CHUNK) throw new CliError(`--batch-size must be at most ${MAX_CHUNK}`, 2);
      const defaults: TaskDefaults = {
        type: o.type,
        question: o.question,
        options: o.options === undefined ? undefined : splitOptions(o.options),
        classes: o.classes === undefined ? undefined : splitOptions(o.classes),
        entity_types: o.entityTypes === undefined ? undefined : splitOptions(o.entityTypes),
        ...policyFlags(o),
        callback_url: o.callbackUrl,
        goldColumn: o.goldColumn,
        prelabelModel: o.prelabelModel,
        showPrelabel: (o.showPrelabel as unknown) === true,
      };
      const lg = client();
      const format: InputFormat = (o.format as InputFormat | undefined) ?? formatOf(file);
      let bytes: Buffer;
      try {
        bytes = await readFile(file);
      } catch (err) {
        throw new CliError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
      }
      const sha = createHash("sha256").update(bytes).digest("hex");
      const tasks = attachGuide(parseTasks(bytes.toString("utf8"), format, defaults), await guideFlags(o));
      if (tasks.length === 0) throw new CliError(`${file}: no tasks`);
      const progress = bar(io, "submit [{bar}] {value}/{total} tasks | {percentage}% | ETA {eta_formatted}");
      progress.start(tasks.length, 0);
      let batches = 0;
      try {
        for (let start = 0, index = 0; start < tasks.length; start += batchSize, index++) {
          const chunk = tasks.slice(start, start + batchSize);
          let res: Awaited<ReturnType<typeof lg.tasks.createBatch>>;
          try {
            res = await lg.tasks.createBatch({ tasks: chunk.map((t) => t.task) }, { idempotencyKey: chunkKey(sha, index) });
          } catch (err) {
            if (err instanceof ValidationError) throw explainBatchError(err, chunk);
            if (err instanceof PayloadTooLargeError) throw new CliError(`${err.message}: use a smaller --batch-size`);
            throw err;
          }
          if (res.task_ids.length !== chunk.length) {
            throw new CliError(`batch ${index}: the gateway answered ${res.task_ids.length} task ids for ${chunk.length} tasks`);
          }
          io.stdout.write(
            chunk.map((t, i) => `${JSON.stringify({ line: t.line, task_id: res.task_ids[i], batch_id: res.batch_id })}\n`).join(""),
          );
          batches++;
          progress.increment(chunk.length);
        }
      } finally {
        progress.stop();
      }
      io.stderr.write(`submitted ${tasks.length} tasks of ${file} in ${batches} batches (a rerun of this file answers the same tasks)\n`);
    });

  const job = program.command("job").description("manifest jobs");
  job
    .command("create")
    .description("create a manifest job; prints {job_id, status, created_at}")
    .argument("<manifest_url>", "s3://bucket/key, gs://bucket/key or https://... (JSONL with data_url or source-ref per line)")
    .requiredOption("--question <text>", "the question of every task")
    .option("--options <list>", "the options, separated by | (single choice, multi_label_classification)")
    .option("--classes <list>", "bounding_box: the classes, separated by |")
    .option("--entity-types <list>", "text_span: the entity types, separated by | (each line's text is fetched from its data_url)")
    .option(
      "--type <type>",
      "task type (multi_label_classification, bounding_box, text_span, free_text, pairwise_comparison: lines carry data_url_b,\n" +
        "or data_text and data_text_b; any other: single choice)",
      "image_classification",
    )
    .option("--threshold <n>", "consensus_threshold (default 3)")
    .option("--max-labels <n>", "max_labels (default 2t+1)")
    .option("--confidence-target <p>", "confidence_target of every task (0.5..0.999: the confidence policy)")
    .option("--min-labels <n>", "min_labels of every task (confidence policy)")
    .option(
      "--min-gain <g>",
      "min_gain of every task (0.001..0.5, confidence policy: settle when a label cannot raise the confidence by g)",
    )
    .option("--callback-url <url>", "callback_url of every task (needs an active webhook)")
    .option("--output-url <url>", "s3:// or gs:// URL to write the export to as well")
    .option("--credentials <file>", "JSON file: {access_key_id, secret_access_key, region, endpoint?} or {service_account_json}")
    .option("--instructions <file>", "Markdown instructions for labelers (given once per label space; at most 20,000 characters)")
    .option("--examples <file>", "JSON array of worked examples: [{data_url | data_text, answer, explanation?}] (at most 20)")
    .action(async (manifestUrl: string, o: Record<string, string | undefined>) => {
      const type = o.type ?? "image_classification";
      const labelSpec = { ...labelSpecFlags(type, o), ...(await guideFlags(o)) };
      const lg = client();
      let credentials: Record<string, unknown> | undefined;
      if (o.credentials) {
        try {
          credentials = JSON.parse(await readFile(o.credentials, "utf8")) as Record<string, unknown>;
        } catch (err) {
          throw new CliError(`cannot read credentials ${o.credentials}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      const created = await lg.jobs.create({
        manifest_url: manifestUrl,
        label_spec: labelSpec,
        type,
        ...policyFlags(o),
        callback_url: o.callbackUrl,
        output_url: o.outputUrl,
        credentials: credentials as never,
      });
      printJson(io, created);
    });

  job
    .command("get")
    .description("print a job's status and progress")
    .argument("<job_id>")
    .action(async (jobId: string) => printJson(io, await client().jobs.get(jobId)));

  job
    .command("watch")
    .description("follow a job with a progress bar until it is completed (exit 0) or failed (exit 1); prints the final job")
    .argument("<job_id>")
    .option("--interval <ms>", "poll interval", "2000")
    .action(async (jobId: string, o: { interval: string }) => {
      const lg = client();
      const interval = positiveInt(o.interval, "--interval");
      const progress = bar(io, "{status} [{bar}] {value}/{total} {unit} | {percentage}%");
      let phase: "ingesting" | "labeling" | undefined;
      let lastStatus: string | undefined;
      let job: Job;
      try {
        for (;;) {
          job = await lg.jobs.get(jobId);
          const ingesting = job.status === "queued" || job.status === "ingesting";
          // ingestion: lines read so far (the total is unknown until the manifest is in); then: tasks settled
          const [value, total, unit] = ingesting
            ? [job.lines_ingested, job.lines_ingested, "lines"]
            : [job.tasks_settled, job.task_count, "settled"];
          const next = ingesting ? "ingesting" : "labeling";
          if (phase !== next) {
            if (phase) progress.stop();
            progress.start(Math.max(1, total), value, { status: job.status, unit });
            phase = next;
          }
          progress.setTotal(Math.max(1, total));
          progress.update(value, { status: job.status, unit });
          if (!io.stderr.isTTY && job.status !== lastStatus) io.stderr.write(`job ${jobId}: ${job.status}\n`);
          lastStatus = job.status;
          if (job.status === "completed" || job.status === "failed") break;
          await sleep(interval);
        }
      } finally {
        if (phase) progress.stop();
      }
      printJson(io, job);
      if (job.status === "failed") throw new CliError(`job ${jobId} failed: ${job.error ?? "no error given"}`);
    });

  /** `<kind> export <id> [--format f] [-o file]`: a job's or a batch's export, streamed (contract §exports). */
  const exportCommand = (parent: InstanceType<typeof Command>, kind: "job" | "batch") =>
    parent
      .command("export")
      .description(`download a completed ${kind}'s export (streamed; to stdout without -o)`)
      .argument(`<${kind}_id>`)
      .addOption(
        new Option("--format <format>", "jsonl (default), label-studio, coco (bounding_box), conll (text_span) or hf").choices([
          ...EXPORT_FORMATS,
        ]),
      )
      .option("-o, --output <file>", "write to this file (written to <file>.part, renamed when complete)")
      .action(async (id: string, o: { output?: string; format?: ExportFormat }) => {
        const lg = client();
        const api = kind === "job" ? lg.jobs : lg.batches;
        const options = o.format ? { format: o.format } : undefined;
        if (o.output) {
          const written = await api.exportToFile(id, o.output, options);
          io.stderr.write(`wrote ${written.lines} lines (${written.bytes} bytes) to ${written.path}\n`);
          return;
        }
        const stream = await api.exportStream(id, options);
        for await (const chunk of stream) {
          if (!io.stdout.write(chunk as Buffer)) await once(io.stdout, "drain");
        }
      });
  exportCommand(job, "job");
  const batch = program.command("batch").description("batches of tasks");
  exportCommand(batch, "batch");
  const rankingCommand = (parent: InstanceType<typeof Command>, kind: "job" | "batch") =>
    parent
      .command("ranking")
      .description(
        `the ranking of the items a ${kind}'s pairwise_comparison tasks compared (Bradley-Terry scores with 95% intervals, best first): a table, or --json`,
      )
      .argument(`<${kind}_id>`)
      .option("--json", "print the ranking as the gateway answers it (JSON)")
      .action(async (id: string, o: { json?: boolean }) => {
        const lg = client();
        const ranking = kind === "job" ? await lg.jobs.ranking(id) : await lg.batches.ranking(id);
        if (o.json) printJson(io, ranking);
        else io.stdout.write(rankingTable(ranking));
      });
  rankingCommand(job, "job");
  rankingCommand(batch, "batch");

  const settings = program.command("settings").description("the customer's settings: task defaults and quality (contract §quality)");
  settings
    .command("get")
    .description("print the settings (unset fields are null)")
    .action(async () => printJson(io, await client().settings.get()));
  settings
    .command("set")
    .description('change settings; a flag given "none" clears it, flags not given are kept; prints the settings')
    .option("--threshold <n>", "default consensus_threshold")
    .option("--confidence-target <p>", "default confidence_target (0.5..0.999: the confidence policy)")
    .option("--min-labels <n>", "default min_labels")
    .option("--min-gain <g>", "default min_gain (0.001..0.5, confidence policy)")
    .option("--max-labels <n>", "default max_labels")
    .option("--gold-rate <p>", "share of a labeler's claims served from unanswered gold tasks (default 0.1)")
    .option("--min-labeler-accuracy <p>", "exclude labelers whose gold accuracy is below this (95% posterior probability)")
    .option("--min-gold-answers <n>", "gold answers before exclusion may apply (default 10)")
    .option("--audit-rate <p>", "share of settled tasks drawn into the audit queue for review (0..1, default 0)")
    .option(
      "--qualification <n,a>",
      'exam of a labeler new to a label space: n gold tasks (1..100), passed at a posterior mean of gold accuracy >= a (e.g. "10,0.65")',
    )
    .action(async (o: Record<string, string | undefined>) => {
      const patch = {
        task_defaults: {
          consensus_threshold: setting(o.threshold, (v) => positiveInt(v, "--threshold")),
          confidence_target: setting(o.confidenceTarget, (v) => probability(v, "--confidence-target")),
          min_labels: setting(o.minLabels, (v) => positiveInt(v, "--min-labels")),
          min_gain: setting(o.minGain, (v) => decimalFlag(v, "--min-gain")),
          max_labels: setting(o.maxLabels, (v) => positiveInt(v, "--max-labels")),
        },
        quality: {
          gold_rate: setting(o.goldRate, (v) => probability(v, "--gold-rate")),
          min_labeler_accuracy: setting(o.minLabelerAccuracy, (v) => probability(v, "--min-labeler-accuracy")),
          min_gold_answers: setting(o.minGoldAnswers, (v) => positiveInt(v, "--min-gold-answers")),
          audit_rate: setting(o.auditRate, (v) => probability(v, "--audit-rate")),
          qualification: setting(o.qualification, qualificationFlag),
        },
      };
      printJson(io, await client().settings.update(patch));
    });

  const task = program.command("task").description("tasks");
  task
    .command("create")
    .summary("create one task of any type; prints {task_id, status, ...}")
    .description(
      `create one task (POST ${OPERATIONS.createTask.path}).` +
        " --type picks the label_spec (contract §task-types): single choice (any type but the\n" +
        "reserved ones) and multi_label_classification take --options, bounding_box --classes, text_span --entity-types\n" +
        "(each separated by |) and the text to mark (--data-text or --data-text-file; without either the gateway\n" +
        "fetches data_url), free_text and pairwise_comparison --question alone (pairwise: item b with --data-url-b, or two\n" +
        "texts with --data-text and --data-text-b). A gold task: --gold-label (single choice) or --gold-answer (a reserved type's answer body\n" +
        'as JSON, e.g. \'{"boxes":[{"label":"car","x":10,"y":20,"w":30,"h":40}]}\').',
    )
    .requiredOption("--data-url <url>", "the item: http(s)://, s3:// or gs:// URL")
    .requiredOption("--question <text>", "the question")
    .option(
      "--type <type>",
      "multi_label_classification, bounding_box, text_span, free_text, pairwise_comparison, or any other (single choice)",
      "image_classification",
    )
    .option("--options <list>", "single choice, multi_label_classification: the options, separated by |")
    .option("--classes <list>", "bounding_box: the classes, separated by |")
    .option("--entity-types <list>", "text_span: the entity types, separated by |")
    .option("--data-text <text>", "text_span: the text to mark (spans count its code points); pairwise_comparison: item a as text")
    .option("--data-text-file <file>", "text_span: read the text to mark from this UTF-8 file (as is, no trimming); pairwise: item a")
    .option("--data-url-b <url>", "pairwise_comparison: item b (http(s)://, s3:// or gs:// URL; item a is --data-url)")
    .option("--data-text-b <text>", "pairwise_comparison: item b as text (with --data-text for item a)")
    .option("--data-text-b-file <file>", "pairwise_comparison: read item b's text from this UTF-8 file")
    .option("--gold-label <option>", "single choice: the true option (a gold task)")
    .option("--gold-answer <json>", "a reserved type: the true answer body as JSON (a gold task)")
    .option("--threshold <n>", "consensus_threshold")
    .option("--max-labels <n>", "max_labels")
    .option("--confidence-target <p>", "confidence_target (0.5..0.999: the confidence policy)")
    .option("--min-labels <n>", "min_labels (confidence policy)")
    .option("--min-gain <g>", "min_gain (0.001..0.5, confidence policy: settle when a label cannot raise the confidence by g)")
    .option("--callback-url <url>", "callback_url (needs an active webhook)")
    .option("--idempotency-key <key>", "idempotency_key: the same key answers the same task")
    .action(async (o: Record<string, string | undefined>) => {
      const type = o.type ?? "image_classification";
      const body: Record<string, unknown> = {
        type,
        data_url: o.dataUrl,
        label_spec: labelSpecFlags(type, o),
        ...policyFlags(o),
        callback_url: o.callbackUrl,
        idempotency_key: o.idempotencyKey,
      };
      // the item fields beside data_url, each taken only by the types whose bodies have it (itemFieldsOf)
      const items = [
        { field: "data_text", text: o.dataText, file: o.dataTextFile, flags: "--data-text and --data-text-file" },
        { field: "data_url_b", text: o.dataUrlB, file: undefined, flags: "--data-url-b" },
        { field: "data_text_b", text: o.dataTextB, file: o.dataTextBFile, flags: "--data-text-b and --data-text-b-file" },
      ];
      for (const { field, text, file, flags } of items) {
        if (text !== undefined && file !== undefined) throw new CliError(`give ${flags.replace(" and ", " or ")}, not both`, 2);
        if (file !== undefined) {
          try {
            body[field] = await readFile(file, "utf8");
          } catch (err) {
            throw new CliError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
          }
        } else if (text !== undefined) body[field] = text;
        if (body[field] !== undefined && !itemFieldsOf(type).includes(field)) {
          const takers = TASK_TYPE_NAMES.filter((t) => itemFieldsOf(t).includes(field));
          throw new CliError(`${flags} ${flags.includes(" and ") ? "are" : "is"} for ${takers.join(" and ")} tasks`, 2);
        }
      }
      if (o.goldAnswer !== undefined) body.gold_answer = jsonObjectFlag(o.goldAnswer, "--gold-answer");
      if (o.goldLabel !== undefined) body.gold_label = o.goldLabel;
      for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k];
      printJson(io, await client().tasks.create(body as TaskRequest));
    });
  task
    .command("get")
    .description("print a task")
    .argument("<task_id>")
    .action(async (taskId: string) => printJson(io, await client().tasks.get(taskId)));
  task
    .command("cancel")
    .description("cancel an open task")
    .argument("<task_id>")
    .action(async (taskId: string) => printJson(io, await client().tasks.cancel(taskId)));

  program
    .command("result")
    .description("print a task's result: the consensus once settled, else its labeling progress")
    .argument("<task_id>")
    .option("--wait", "poll until the task is settled")
    .option("--timeout <seconds>", "with --wait: give up after this long")
    .option("--interval <ms>", "with --wait: poll interval", "1000")
    .option(
      "--consensus",
      "print only the consensus once settled: {task_id, consensus_label, confidence, consensus} (a reserved type's consensus has a confidence per part; single choice: {label, confidence})",
    )
    .action(async (taskId: string, o: { wait?: boolean; timeout?: string; interval: string; consensus?: boolean }) => {
      const lg = client();
      const show = (r: TaskResult) => printJson(io, o.consensus ? consensusView(r) : r);
      if (!o.wait) {
        show(await lg.tasks.result(taskId));
        return;
      }
      const timeoutMs = o.timeout === undefined ? undefined : positiveInt(o.timeout, "--timeout") * 1000;
      try {
        show(await lg.tasks.waitForResult(taskId, { intervalMs: positiveInt(o.interval, "--interval"), timeoutMs }));
      } catch (err) {
        if (err instanceof LabelgateError) throw err;
        throw new CliError(err instanceof Error ? err.message : String(err));
      }
    });

  program
    .command("review")
    .summary("review a settled task's result: accept it, or reject it (with the right answer)")
    .description(
      "review a settled task's result (contract §review); prints {review, result}. accept: the result is right.\n" +
        "reject --answer <answer>: the answer is right (an option of a single-choice task, or an answer body as JSON,\n" +
        'e.g. {"labels":["a"]}); a different answer makes the next revision. reject alone (single choice only): the\n' +
        "task reopens for more labels, never settling on the rejected option. Reviewing a task closes its audit.",
    )
    .argument("<task_id>")
    .argument("<verdict>", "accept or reject")
    .option("--answer <answer>", "with reject: the right answer, an option or an answer body as JSON (starts with {)")
    .action(async (taskId: string, verdict: string, o: { answer?: string }) => {
      if (verdict !== "accept" && verdict !== "reject") throw new CliError(`<verdict> must be accept or reject, got "${verdict}"`, 2);
      if (verdict === "accept" && o.answer !== undefined) throw new CliError("accept takes no --answer (reject with the right answer)", 2);
      const body: ReviewRequest = { verdict };
      if (o.answer !== undefined)
        body.answer = o.answer.trimStart().startsWith("{") ? (jsonObjectFlag(o.answer, "--answer") as AnswerBody) : { label: o.answer };
      printJson(io, await client().tasks.review(taskId, body));
    });

  const audits = program.command("audits").description("the audit queue: settled tasks drawn for review at quality.audit_rate");
  audits
    .command("list")
    .description("print a page of the audit queue, oldest first: {page, per_page, total, items}")
    .option("--status <status>", "open (not reviewed yet) or done (closed by a review)", "open")
    .option("--page <n>", "page, from 1", "1")
    .option("--per-page <n>", "audits per page (1 to 100)", "20")
    .action(async (o: { status: string; page: string; perPage: string }) => {
      if (o.status !== "open" && o.status !== "done") throw new CliError(`--status must be open or done, got "${o.status}"`, 2);
      const perPage = positiveInt(o.perPage, "--per-page");
      if (perPage > 100) throw new CliError(`--per-page must be at most 100, got ${perPage}`, 2);
      printJson(io, await client().audits.list({ status: o.status, page: positiveInt(o.page, "--page"), per_page: perPage }));
    });

  const labeler = program.command("labeler").description("label tasks as a labeler (--labeler-key or LABELGATE_LABELER_KEY, `lk_…`)");
  labeler
    .command("claim")
    .description(
      "claim a task (the next one of the queue, or <task_id>); prints the claim {claim_id, task_id, task_type, label_spec,\n" +
        "data_text?, expires_at}, or null (exit 0) when there is nothing to label",
    )
    .argument("[task_id]", "claim this task")
    .action(async (taskId: string | undefined) => printJson(io, await labelerClient().labeling.claim(taskId)));
  labeler
    .command("label")
    .description(
      "label a claimed task; prints the recorded label (with `answer` for a reserved type). <answer> is an option of a\n" +
        'single-choice task, or an answer body as JSON: {"labels":[...]} (multi_label_classification),\n' +
        '{"boxes":[{"label","x","y","w","h"}]} (bounding_box, pixels), {"spans":[{"start","end","label"}]} (text_span,\n' +
        "code points, end exclusive). A refused answer leaves the claim open.",
    )
    .argument("<claim_id>")
    .argument("[answer]", "an option, or an answer body as JSON (starts with {)")
    .option("--answer-file <file>", "read the answer body (JSON) from this file")
    .action(async (claimId: string, answer: string | undefined, o: { answerFile?: string }) => {
      if ((answer === undefined) === (o.answerFile === undefined)) throw new CliError("give <answer> or --answer-file, one of them", 2);
      let text = answer ?? "";
      if (o.answerFile !== undefined) {
        try {
          text = await readFile(o.answerFile, "utf8");
        } catch (err) {
          throw new CliError(`cannot read ${o.answerFile}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      const body: string | AnswerBody =
        o.answerFile !== undefined || text.trimStart().startsWith("{")
          ? (jsonObjectFlag(text, o.answerFile !== undefined ? "--answer-file" : "<answer>") as AnswerBody)
          : text;
      printJson(io, await labelerClient().labeling.label(claimId, body));
    });

  program
    .command("verify")
    .summary("verify a settled task's settlement on the chain (prints a JSON verdict; exit 0 when it holds)")
    .description(
      "fetch the task's result and verify its settlement with the chain alone: the leaf rebuilt from the result's\n" +
        "fields, the Merkle proof folded to the anchored root, the anchor transaction's receipt and Anchored event\n" +
        "read over JSON-RPC. Prints {task_id, ok, ...} on stdout; exit 0 when it holds, 1 with the reason otherwise\n" +
        "(reasons: not_settled, not_anchored, leaf_mismatch, proof_invalid, tx_not_found, tx_reverted, wrong_contract,\n" +
        "no_anchored_event, root_mismatch, sequence_out_of_range, block_mismatch, wrong_chain,\n" +
        "insufficient_confirmations, rpc_error, malformed_result).",
    )
    .argument("<task_id>")
    .option("--rpc-url <url>", "JSON-RPC endpoint of the chain (default: LABELGATE_RPC_URL, else EVM_RPC_URL)")
    .option("--confirmations <n>", "confirmations required", "1")
    .action(async (taskId: string, o: { rpcUrl?: string; confirmations: string }) => {
      const rpcUrl = o.rpcUrl ?? io.rpcUrl;
      if (!rpcUrl) throw new CliError("no RPC URL: pass --rpc-url or set LABELGATE_RPC_URL or EVM_RPC_URL", 2);
      const confirmations = positiveInt(o.confirmations, "--confirmations");
      const result = await client().tasks.result(taskId);
      if (result.status !== "settled") {
        printJson(io, { task_id: taskId, ok: false, reason: "not_settled", message: `task ${taskId} is ${result.status}` });
        throw new CliError(`task ${taskId} is not settled (${result.status}): nothing to verify`);
      }
      const verdict = await verifySettlement(result, { rpcUrl, confirmations });
      printJson(io, { task_id: taskId, ...verdict });
      if (!verdict.ok) throw new CliError(`the settlement of ${taskId} does not verify: ${verdict.reason}: ${verdict.message}`);
    });

  return program;
}

/** A failure as the user sees it: the message, validation details, the request id. */
export function describeFailure(err: unknown): { message: string; exitCode: number } {
  if (err instanceof CliError) return { message: err.message, exitCode: err.exitCode };
  if (err instanceof InputError) return { message: err.message, exitCode: 1 };
  if (err instanceof LabelgateError) {
    const id = err.requestId ? ` (request id ${err.requestId})` : "";
    const hint = err.status === 401 ? "; check --api-key or LABELGATE_API_KEY" : err.status === 0 ? "; check --url or LABELGATE_URL" : "";
    return { message: `${err.message}${hint}${id}`, exitCode: 1 };
  }
  return { message: err instanceof Error ? err.message : String(err), exitCode: 1 };
}

/** Runs the CLI on `argv` (without `node` and the script). Returns the exit code; never throws. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { CommanderError } = await import("commander");
  const program = await buildProgram(io);
  try {
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    const { message, exitCode } = describeFailure(err);
    io.stderr.write(`labelgate: ${message}\n`);
    return exitCode;
  }
}
