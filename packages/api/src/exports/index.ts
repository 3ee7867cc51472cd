/**
 * The export formats (contract §exports): `jsonl` (the default), `label-studio`, `coco`, `conll` and `hf`, for
 * jobs and batches. What a task type writes in each format is its module's `exportRows` (task-types/<type>/
 * export.ts; null: the format does not fit the type), found by walking the registry, so a type without its rows
 * does not compile; each format's file here holds only its framing. A format turns pages of rows (the store's
 * cursor) into chunks of text, one page at a time: nothing holds the whole export.
 */
import { EXPORT_FORMATS, type ExportFormat, type TypeExportRows } from "../task-types/export-rows";
import type { AnyWireTaskType } from "../task-types/module";
import { wireTaskTypeOf } from "../task-types/registry";
import { cocoChunks } from "./coco";
import { conllDocument } from "./conll";
import { hfLine } from "./hf";
import { jsonlLine } from "./jsonl";
import { labelStudioTask } from "./label-studio";
import { type ExportRow, type ExportScope, taskTypeNameOf } from "./rows";

export { EXPORT_FORMATS, type ExportFormat, type TypeExportRows } from "../task-types/export-rows";
export * from "./coco";
export * from "./conll";
export * from "./hf";
export * from "./jsonl";
export * from "./label-studio";
export * from "./rows";

/** A task `type`'s rows of each format (its registry module's `exportRows`; every unreserved value: single choice's). */
const exportRowsOf = (type: string): TypeExportRows => (wireTaskTypeOf(type) as AnyWireTaskType).exportRows;

/** A row's functions (by its task type). */
const rowsOf = (r: { task_type: string }): TypeExportRows => exportRowsOf(r.task_type);

/** Starts a pass over the rows of an export, page by page, in export order. */
export type ExportPages = () => AsyncIterable<ExportRow[]>;

/** How a format is served and written. */
export interface ExportFormatDef {
  /** the response's Content-Type */
  contentType: string;
  /** the file extension of its Content-Disposition */
  extension: string;
  /** whether it writes texts of types whose texts are read for such a format (a type's `exportRows.texts`: "format") */
  readsText: boolean;
  /** whether its output has one schema, so a batch mixing task types does not fit it */
  oneType: boolean;
  /** the export's text, chunk by chunk (a chunk per page of rows, and the framing) */
  chunks(scope: ExportScope, pages: ExportPages): AsyncIterable<string>;
}

/** A format whose output is one chunk per page, each row written alone. */
async function* perRow(pages: ExportPages, write: (r: ExportRow) => string): AsyncGenerator<string> {
  for await (const page of pages()) {
    let chunk = "";
    for (const r of page) chunk += write(r);
    if (chunk) yield chunk;
  }
}

/** A format's row function of a row, for a scope the format fits (checked before the first byte). */
function fitting<T>(f: T | null, r: { task_type: string }, format: ExportFormat): T {
  if (f === null) throw new Error(`format ${format} does not fit task type ${r.task_type}`);
  return f;
}

export const FORMATS: Record<ExportFormat, ExportFormatDef> = {
  jsonl: {
    contentType: "application/x-ndjson; charset=utf-8",
    extension: "jsonl",
    readsText: false,
    oneType: false,
    chunks: (_scope, pages) => perRow(pages, (r) => jsonlLine(r, rowsOf(r).jsonl)),
  },
  "label-studio": {
    contentType: "application/json; charset=utf-8",
    extension: "json",
    readsText: true,
    oneType: false,
    async *chunks(_scope, pages) {
      yield "[";
      let first = true;
      for await (const chunk of perRow(pages, (r) => {
        const task = (first ? "\n" : ",\n") + labelStudioTask(r, rowsOf(r)["label-studio"]);
        first = false;
        return task;
      }))
        yield chunk;
      yield "\n]\n";
    },
  },
  coco: {
    contentType: "application/json; charset=utf-8",
    extension: "json",
    readsText: false,
    oneType: true,
    chunks: (scope, pages) => cocoChunks(scope, pages, (r) => fitting(rowsOf(r).coco, r, "coco")),
  },
  conll: {
    contentType: "text/plain; charset=utf-8",
    extension: "conll",
    readsText: true,
    oneType: true,
    chunks: (_scope, pages) => perRow(pages, (r) => conllDocument(r, fitting(rowsOf(r).conll, r, "conll"))),
  },
  hf: {
    contentType: "application/x-ndjson; charset=utf-8",
    extension: "jsonl",
    readsText: true,
    oneType: true,
    chunks: (_scope, pages) => perRow(pages, (r) => hfLine(r, rowsOf(r).hf)),
  },
};

/**
 * Whether an export in `format` of a scope whose tasks have these `type` values reads the tasks' texts
 * (`data_text`, `data_text_b`): when a type's `exportRows.texts` is "always", or "format" and the format
 * writes texts (`readsText`). The store reads texts in smaller pages, and only then.
 */
export function exportReadsTexts(types: readonly string[], format: ExportFormat): boolean {
  return types.some((t) => {
    const texts = exportRowsOf(t).texts;
    return texts === "always" || (texts === "format" && FORMATS[format].readsText);
  });
}

/**
 * The formats that fit a scope whose tasks have these `type` values: a format fits when each type has a row
 * function for it and, for a format of one schema (`oneType`), when the types are of one TaskTypeName. A scope
 * without tasks fits every format.
 */
export function formatsFitting(types: readonly string[]): ExportFormat[] {
  const names = [...new Set(types.map(taskTypeNameOf))];
  return EXPORT_FORMATS.filter((f) => names.every((n) => exportRowsOf(n)[f] !== null) && (names.length <= 1 || !FORMATS[f].oneType));
}
