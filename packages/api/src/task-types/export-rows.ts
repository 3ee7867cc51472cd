/**
 * What a task type writes in each export format (contract §exports), the shared half: the row every format
 * reads (one task of a job or batch, as the store reads it page by page), the per-format row function types
 * a type module declares in its `exportRows` (module.ts; null: the format does not fit the type), and the
 * helpers several types' rows share. The formats' framing (array brackets, COCO's two passes, the JSONL head
 * and tail of a line) is packages/api/src/exports, which walks the registry for the rows.
 */
/** The formats of `GET /v1/jobs/{id}/export?format=` and `GET /v1/batches/{id}/export?format=`. */
export const EXPORT_FORMATS = ["jsonl", "label-studio", "coco", "conll", "hf"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/**
 * One task of an export, as the store reads it (docs/decisions/0255). `Spec` is its label_spec's type: a type
 * module's rows take `unknown` and read their own spec's fields (this file imports no module, so no type
 * module's file imports the registry back); the store's rows are exports/rows.ts `ExportRow` (any spec).
 */
export interface ExportRow<Spec = unknown> {
  /** 1-based position of the task in its scope: the manifest line for a job, the rank by task id for a batch */
  ordinal: number;
  task_id: string;
  /** the task's `type` as submitted */
  task_type: string;
  label_spec: Spec;
  data_url: string;
  /** a text_span task's text, read only when the format asks for it (`needsText`); else null */
  data_text: string | null;
  /** a pairwise task's item b: its URL and its text (null when absent or another type) */
  data_url_b?: string | null;
  data_text_b?: string | null;
  consensus_label: string | null;
  confidence: number | null;
  /** a reserved type's typed consensus (each part with its confidence); null for single choice and until decided */
  consensus: Record<string, unknown> | null;
  /** why the item could not be fetched (a canceled text_span task) */
  item_error: string | null;
  ledger_txid: string | null;
  /** `Date.toISOString()`'s format */
  settled_at: string | null;
  /** a job's task: the manifest line as sent ({} when none); a batch's task: undefined */
  source?: Record<string, unknown>;
  /** a batch's task: its `metadata` (null when none); a job's task: undefined */
  metadata?: Record<string, unknown> | null;
}

/** Where an export comes from: a manifest job or a batch. */
export interface ExportScope {
  kind: "job" | "batch";
  id: string;
}

/**
 * The pixel size of an image item when the customer gave it: `width` and `height` (positive numbers) of the
 * manifest line (a job) or of the task's `metadata` (a batch); undefined when either is missing.
 */
export function itemSizeOf(row: ExportRow): { width: number; height: number } | undefined {
  const from = row.source ?? row.metadata ?? {};
  const { width, height } = from as { width?: unknown; height?: unknown };
  if (typeof width !== "number" || typeof height !== "number" || !(width > 0) || !(height > 0)) return undefined;
  return { width, height };
}

// --- jsonl --------------------------------------------------------------------------------------------------

/** `jsonl`: the fields a type adds after `confidence`, as JSON text with a leading comma ("" for none). */
export type JsonlFields = (row: ExportRow) => string;

/** `,"consensus":...` (a reserved type's typed consensus, null until decided). */
export const consensusField = (r: ExportRow): string => `,"consensus":${JSON.stringify(r.consensus)}`;
/** `,"item_error":...` when the item could not be fetched, else "". */
export const itemErrorField = (r: ExportRow): string => (r.item_error === null ? "" : `,"item_error":${JSON.stringify(r.item_error)}`);

// --- label-studio -------------------------------------------------------------------------------------------

/** One region of a Label Studio annotation (`annotations[].result[]`). */
export interface LabelStudioResult {
  id: string;
  from_name: "label";
  to_name: "item";
  type: "choices" | "rectanglelabels" | "labels" | "textarea" | "pairwise";
  value: Record<string, unknown>;
  score?: number;
  original_width?: number;
  original_height?: number;
  image_rotation?: number;
}

/** What a type puts in a task: its item (`data.item`), its results, and a note when a result cannot be written. */
export interface LabelStudioParts {
  item: string;
  result: LabelStudioResult[];
  warning?: string;
  /** further `data` fields (pairwise: `item_b`) */
  data?: Record<string, string | null>;
}

/** `label-studio`: a type's item and its consensus as Label Studio results. */
export type LabelStudioRow = (row: ExportRow) => LabelStudioParts;

/** The common fields of the `i`-th region (0-based) of a result of type `type`. */
export function labelStudioRegion(i: number, type: LabelStudioResult["type"]) {
  return { id: `r${i + 1}`, from_name: "label" as const, to_name: "item" as const, type };
}

/** A `choices` region (single choice: one option; multi-label: the options that apply; pairwise: a tie). */
export function choicesResult(choices: string[], score: number | null): LabelStudioResult {
  return { ...labelStudioRegion(0, "choices"), value: { choices }, ...(score === null ? {} : { score }) };
}

/** A `textarea` region: a free-text answer (Label Studio's `TextArea` tag keeps a list of texts). */
export function textareaResult(text: string, score: number | null): LabelStudioResult {
  return { ...labelStudioRegion(0, "textarea"), value: { text: [text] }, ...(score === null ? {} : { score }) };
}

// --- coco ---------------------------------------------------------------------------------------------------

/** One COCO annotation without its `id` and `image_id` (the writer numbers them). */
export interface CocoAnnotationPart {
  category_id: number;
  bbox: [number, number, number, number];
  area: number;
  iscrowd: 0;
  segmentation: [];
  score: number;
}

/** `coco`: a type's categories (names, in the spec's order) and its annotations of one row. */
export interface CocoRow {
  /** the category names a row's spec declares (numbered from 1 in first-seen order across the scope) */
  categories(row: ExportRow): readonly string[];
  /** the row's annotations; `categoryId` numbers a category name (from 1) */
  annotations(row: ExportRow, categoryId: (name: string) => number): CocoAnnotationPart[];
}

// --- conll --------------------------------------------------------------------------------------------------

/** One token: its text, its code point offsets in the task's text (end exclusive) and its BIO tag. */
export interface TaggedToken {
  token: string;
  start: number;
  end: number;
  tag: string;
}

/** `conll`: a type's tagged tokens of one row, or undefined when the row has no document (no consensus or no text). */
export type ConllRow = (row: ExportRow) => TaggedToken[] | undefined;

// --- hf -----------------------------------------------------------------------------------------------------

/** `hf`: a type's record of one row (without `confidence`, which every record ends with). */
export type HfRow = (row: ExportRow) => Record<string, unknown>;

/**
 * What one task type writes in each format (null: the format does not fit the type; a scope of that type is
 * refused with the formats that fit, before the first byte). Every type module declares one (`exportRows`).
 */
export interface TypeExportRows {
  /**
   * when an export reads the type's texts (`data_text`, `data_text_b`; the store then reads smaller pages):
   * "never" (it has none), "format" (when the format writes texts, `ExportFormatDef.readsText`: text spans),
   * "always" (its texts are its items, which every format that fits it writes: pairwise)
   */
  texts: "never" | "format" | "always";
  jsonl: JsonlFields;
  "label-studio": LabelStudioRow;
  coco: CocoRow | null;
  conll: ConllRow | null;
  hf: HfRow;
}
