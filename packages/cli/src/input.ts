/**
 * Task files of `labelgate submit`: JSONL (one task body of POST /v1/tasks per line) or CSV (one task per
 * record, columns below). Pure functions: text in, task bodies with their line numbers out.
 *
 * CSV columns (header row required; empty cells count as absent):
 * - `data_url` (required)
 * - `type` (default --type, else `image_classification`; contract §task-types: `multi_label_classification`, `bounding_box`,
 *   `text_span` or any other value for single choice)
 * - `question` and the choices of the type (required unless given with --question and the matching flag), each
 *   separated by `|`: `options` (single choice, `multi_label_classification`), `classes` (`bounding_box`),
 *   `entity_types` (`text_span`)
 * - `data_text` (`text_span`: the text to mark, spans count its code points; quote the cell to keep edge spaces;
 *   without it the gateway fetches `data_url`; `pairwise_comparison`: item a as text)
 * - `data_url_b`, `data_text_b` (`pairwise_comparison`: item b, a URL or, with `data_text`, a text)
 * - `free_text` and `pairwise_comparison` take `question` alone (no choices column)
 * - `consensus_threshold`, `max_labels`, `min_labels` (integers), `confidence_target` (a number in 0.5..0.999),
 *   `min_gain` (a number in 0.001..0.5)
 * - `gold_label` (single choice: one of the options: a gold task), `gold_answer` (a reserved type: the answer body
 *   as JSON, e.g. `{"labels":["red"]}`: a gold task), or the column named by `--gold-column` (either, by type);
 *   `gold_explanation` (a gold task's explanation, shown after a qualification training answer, contract §qualification)
 * - `prelabel` (a model's answer, contract §prelabels: an option for single choice, the answer body as JSON for a
 *   reserved type), `prelabel_model` (its model; default --prelabel-model), `prelabel_score` (0..1, optional)
 * - `callback_url`, `idempotency_key`
 * - `metadata` (a JSON object), and `metadata.<name>` columns (each a string field of `metadata`)
 * Any other column is an error (a typo would otherwise be dropped silently).
 */

import { choicesFieldOf, isReservedTaskType, type TaskRequest } from "@labelgate/sdk";
import { parse } from "csv-parse/sync";

/** A task read from a file, with the 1-based line where it starts. */
export interface InputTask {
  line: number;
  task: TaskRequest;
}

/** Values applied to tasks that do not set them, and the column that holds gold labels. */
export interface TaskDefaults {
  type?: string;
  question?: string;
  /** single choice and `multi_label_classification` */
  options?: string[];
  /** `bounding_box` */
  classes?: string[];
  /** `text_span` */
  entity_types?: string[];
  consensus_threshold?: number;
  max_labels?: number;
  confidence_target?: number;
  min_labels?: number;
  min_gain?: number;
  callback_url?: string;
  /**
   * the CSV column or JSONL field whose non-empty value is the task's `gold_label` (single choice) or `gold_answer`
   * (a reserved type: an answer body, as JSON text in a CSV cell) (it is not sent as such)
   */
  goldColumn?: string;
  /** the model of a `prelabel` cell without `prelabel_model` */
  prelabelModel?: string;
  /** label_spec.show_prelabel of every task: claims carry the pre-labels and the labeler app pre-fills them */
  showPrelabel?: boolean;
}

/** A problem of the input file, naming the line. */
export class InputError extends Error {
  override name = "InputError";
}

export type InputFormat = "jsonl" | "csv";

/** The format of a file by its extension (`.jsonl`/`.ndjson`/`.json` → jsonl, `.csv` → csv). @throws InputError otherwise */
export function formatOf(file: string): InputFormat {
  const lower = file.toLowerCase();
  if (lower.endsWith(".csv")) return "csv";
  if (lower.endsWith(".jsonl") || lower.endsWith(".ndjson") || lower.endsWith(".json")) return "jsonl";
  throw new InputError(`${file}: unknown file type; use .jsonl or .csv (or --format)`);
}

/** Splits an options cell or flag: `cat|dog|bird` → ["cat", "dog", "bird"] (trimmed, empty parts dropped). */
export function splitOptions(value: string): string[] {
  return value
    .split("|")
    .map((o) => o.trim())
    .filter((o) => o !== "");
}

const DEFAULT_TYPE = "image_classification";

/** The label_spec field holding a type's choices (the type's wire module: `options`, `classes`, `entity_types`). */
export { choicesFieldOf };

/** The flag or column naming a type's choices, for messages (`options`, `classes`, `entity_types`). */
const choicesFlag = (field: "options" | "classes" | "entity_types") => `--${field.replace("_", "-")}`;

/**
 * A gold value of a reserved type's task: an answer body, or its JSON text (a CSV cell).
 * @throws InputError naming the line and `what` when it is not a JSON object
 */
export function parseGoldAnswer(value: unknown, what: string, line: number): Record<string, unknown> {
  let parsed = value;
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new InputError(`line ${line}: ${what} must be an answer body as JSON, e.g. {"labels":["a"]}`);
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new InputError(`line ${line}: ${what} must be an answer body (a JSON object), e.g. {"boxes":[...]}`);
  return parsed as Record<string, unknown>;
}

function withDefaults(raw: Record<string, unknown>, defaults: TaskDefaults, line: number): TaskRequest {
  const task: Record<string, unknown> = { ...raw };
  task.type ??= defaults.type ?? DEFAULT_TYPE;
  const type = String(task.type);
  const reserved = isReservedTaskType(type);
  if (defaults.goldColumn !== undefined && defaults.goldColumn !== "gold_label" && defaults.goldColumn !== "gold_answer") {
    const gold = task[defaults.goldColumn];
    delete task[defaults.goldColumn];
    if (gold !== undefined && gold !== null && gold !== "") {
      if (reserved) task.gold_answer = parseGoldAnswer(gold, defaults.goldColumn, line);
      else if (typeof gold !== "string") throw new InputError(`line ${line}: ${defaults.goldColumn} must be a string (an option)`);
      else task.gold_label = gold;
    }
  }
  if (typeof task.gold_answer === "string") task.gold_answer = parseGoldAnswer(task.gold_answer, "gold_answer", line);
  if (task.label_spec === undefined) {
    const field = choicesFieldOf(type);
    // a type without choices (pairwise_comparison) takes the question alone
    if (field === null && defaults.question) task.label_spec = { question: defaults.question };
    else if (field === null) throw new InputError(`line ${line}: no label_spec (give a question column or --question; type ${type})`);
    const choices = field === null ? undefined : defaults[field];
    if (field !== null && (!defaults.question || !choices)) {
      throw new InputError(
        `line ${line}: no label_spec (give question and ${field} columns, or --question and ${choicesFlag(field)}; type ${type})`,
      );
    }
    if (field !== null) task.label_spec = { question: defaults.question, [field]: choices };
  }
  if (task.consensus_threshold === undefined && defaults.consensus_threshold !== undefined)
    task.consensus_threshold = defaults.consensus_threshold;
  if (task.max_labels === undefined && defaults.max_labels !== undefined) task.max_labels = defaults.max_labels;
  if (task.confidence_target === undefined && defaults.confidence_target !== undefined) task.confidence_target = defaults.confidence_target;
  if (task.min_labels === undefined && defaults.min_labels !== undefined) task.min_labels = defaults.min_labels;
  if (task.min_gain === undefined && defaults.min_gain !== undefined) task.min_gain = defaults.min_gain;
  if (task.callback_url === undefined && defaults.callback_url !== undefined) task.callback_url = defaults.callback_url;
  if (typeof task.data_url !== "string" || task.data_url === "") throw new InputError(`line ${line}: data_url is required`);
  if (defaults.showPrelabel) task.label_spec = { ...(task.label_spec as Record<string, unknown>), show_prelabel: true };
  return task as unknown as TaskRequest;
}

/** Tasks of a JSONL text: each non-blank line a JSON object (a POST /v1/tasks body). @throws InputError naming the line */
export function parseJsonl(text: string, defaults: TaskDefaults = {}): InputTask[] {
  const out: InputTask[] = [];
  text
    .replace(/^\uFEFF/, "")
    .split(/\r?\n/)
    .forEach((raw, i) => {
      const line = i + 1;
      if (raw.trim() === "") return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch (err) {
        throw new InputError(`line ${line}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new InputError(`line ${line}: not a JSON object`);
      out.push({ line, task: withDefaults(parsed as Record<string, unknown>, defaults, line) });
    });
  return out;
}

const CSV_COLUMNS = new Set([
  "data_url",
  "question",
  "options",
  "classes",
  "entity_types",
  "data_text",
  "data_url_b",
  "data_text_b",
  "gold_answer",
  "type",
  "consensus_threshold",
  "max_labels",
  "min_labels",
  "min_gain",
  "confidence_target",
  "gold_label",
  "gold_explanation",
  "callback_url",
  "idempotency_key",
  "metadata",
  "prelabel",
  "prelabel_model",
  "prelabel_score",
]);

/** A CSV row's pre-label (contract §prelabels) from its `prelabel`, `prelabel_model` and `prelabel_score` cells, or undefined. */
function csvPrelabel(
  record: Record<string, string>,
  type: string,
  defaults: TaskDefaults,
  line: number,
): Record<string, unknown> | undefined {
  const value = record.prelabel ?? "";
  if (value === "") {
    if (record.prelabel_model || record.prelabel_score)
      throw new InputError(`line ${line}: prelabel_model and prelabel_score need a prelabel`);
    return undefined;
  }
  const model = record.prelabel_model || defaults.prelabelModel;
  if (!model) throw new InputError(`line ${line}: a prelabel needs its model (a prelabel_model column, or --prelabel-model)`);
  const answer = isReservedTaskType(type) ? parseGoldAnswer(value, "prelabel", line) : { label: value };
  return { answer, model, ...(record.prelabel_score ? { score: decimal(record.prelabel_score, "prelabel_score", line) } : {}) };
}

function decimal(value: string, column: string, line: number): number {
  const n = Number(value.trim());
  if (value.trim() === "" || !Number.isFinite(n)) throw new InputError(`line ${line}: ${column} must be a number, got "${value}"`);
  return n;
}

function integer(value: string, column: string, line: number): number {
  if (!/^\d+$/.test(value.trim())) throw new InputError(`line ${line}: ${column} must be a whole number, got "${value}"`);
  return Number(value);
}

/** Tasks of a CSV text with a header row (columns: see the module doc). @throws InputError naming the line */
export function parseCsv(text: string, defaults: TaskDefaults = {}): InputTask[] {
  let records: { record: Record<string, string>; info: { lines: number } }[];
  try {
    records = parse(text, { columns: true, bom: true, skip_empty_lines: true, trim: true, info: true, relax_column_count: false });
  } catch (err) {
    throw new InputError(`CSV: ${err instanceof Error ? err.message : String(err)}`);
  }
  const first = records[0];
  if (first) {
    const unknown = Object.keys(first.record).filter((c) => !CSV_COLUMNS.has(c) && !c.startsWith("metadata.") && c !== defaults.goldColumn);
    if (unknown.length > 0) {
      throw new InputError(`CSV: unknown column(s) ${unknown.join(", ")}; known: ${[...CSV_COLUMNS].join(", ")}, metadata.<name>`);
    }
  }
  return records.map(({ record, info }) => {
    // info.lines is the line where the record ends; records of one line are the common case
    const line = info.lines;
    const task: Record<string, unknown> = {};
    const metadata: Record<string, unknown> = {};
    let hasMetadata = false;
    for (const [column, value] of Object.entries(record)) {
      if (value === "") continue;
      if (column.startsWith("metadata.")) {
        metadata[column.slice("metadata.".length)] = value;
        hasMetadata = true;
        continue;
      }
      switch (column) {
        case "consensus_threshold":
        case "max_labels":
        case "min_labels":
          task[column] = integer(value, column, line);
          break;
        case "confidence_target":
        case "min_gain":
          task[column] = decimal(value, column, line);
          break;
        case "metadata": {
          let parsed: unknown;
          try {
            parsed = JSON.parse(value);
          } catch {
            throw new InputError(`line ${line}: metadata is not valid JSON`);
          }
          if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
            throw new InputError(`line ${line}: metadata must be a JSON object`);
          Object.assign(metadata, parsed);
          hasMetadata = true;
          break;
        }
        case "question":
        case "options":
        case "classes":
        case "entity_types":
        case "prelabel":
        case "prelabel_model":
        case "prelabel_score":
          break;
        default:
          task[column] = value;
      }
    }
    // the type's choices column (options, classes or entity_types), else its flag
    const type = record.type || defaults.type || DEFAULT_TYPE;
    const field = choicesFieldOf(type);
    for (const other of ["options", "classes", "entity_types"] as const) {
      if (other !== field && record[other])
        throw new InputError(`line ${line}: a ${type} task takes ${field ?? "no choices"}, not ${other}`);
    }
    const question = record.question || defaults.question;
    if (field === null) {
      if (question) task.label_spec = { question };
    } else {
      const choices = record[field] ? splitOptions(record[field]) : defaults[field];
      if (question && choices) task.label_spec = { question, [field]: choices };
    }
    if (hasMetadata) task.metadata = metadata;
    const prelabel = csvPrelabel(record, type, defaults, line);
    if (prelabel) task.prelabel = prelabel;
    return { line, task: withDefaults(task, defaults, line) };
  });
}

/** Tasks of a file's text in the given format. @throws InputError */
export function parseTasks(text: string, format: InputFormat, defaults: TaskDefaults = {}): InputTask[] {
  return format === "csv" ? parseCsv(text, defaults) : parseJsonl(text, defaults);
}

/** Instructions and examples for the label spaces of a file (`--instructions`, `--examples`). */
export interface GuideInput {
  instructions?: string;
  examples?: unknown[];
}

/**
 * Gives `guide` to the first task of each label space of `tasks` (same type, question and choices) that does
 * not carry a guide of its own: the latest guide given is a space's current version, so once per space is
 * enough, and a batch does not repeat 20,000 characters on every task. Returns the tasks (the same objects).
 */
export function attachGuide(tasks: InputTask[], guide: GuideInput): InputTask[] {
  if (guide.instructions === undefined && guide.examples === undefined) return tasks;
  const seen = new Set<string>();
  for (const { task } of tasks) {
    const spec = task.label_spec as Record<string, unknown>;
    const { instructions: _i, examples: _e, ...identity } = spec;
    const key = JSON.stringify([task.type, identity]);
    if (seen.has(key)) continue;
    seen.add(key);
    if (spec.instructions !== undefined || spec.examples !== undefined) continue;
    if (guide.instructions !== undefined) spec.instructions = guide.instructions;
    if (guide.examples !== undefined) spec.examples = guide.examples;
  }
  return tasks;
}
