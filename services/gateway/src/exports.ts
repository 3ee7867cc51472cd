/**
 * The HTTP side of exports (contract §exports), shared by `GET /v1/jobs/{id}/export` and
 * `GET /v1/batches/{id}/export`: parse `format`, refuse a format that does not fit the scope's task types (400
 * `validation failed` naming the formats that fit, in the detail and in `formats`), then stream the store's
 * export with the format's Content-Type. The scope's owner and completion are checked by the caller.
 */
import { ApiError, exportQuery } from "@labelgate/api";
import { type ExportFormat, type ExportScope, exportReadsTexts, FORMATS, formatsFitting } from "@labelgate/api/exports";
import type { Logger } from "@labelgate/core";
import type { Store } from "@labelgate/store";
import type { Request, Response } from "express";
import { parse } from "./errors";

/** The request's `format` (default jsonl). @throws ApiError validation on an unknown format or another query field */
export function exportFormatOf(req: Request): ExportFormat {
  return parse(exportQuery, req.query).format;
}

/** Streams the export of `scope` in `format`. @throws ApiError validation when the format does not fit the scope's task types */
export async function sendExport(
  deps: { store: Store; logger: Logger },
  res: Response,
  scope: ExportScope,
  format: ExportFormat,
): Promise<void> {
  const types = await deps.store.exports.taskTypes(scope);
  const fitting = formatsFitting(types);
  if (!fitting.includes(format)) {
    const what = types.length === 1 ? `task type ${types[0]}` : `a ${scope.kind} of task types ${types.join(", ")}`;
    throw new ApiError(
      "validation",
      [{ path: "format", message: `${format} does not fit ${what}; formats that fit: ${fitting.join(", ")}` }],
      {
        formats: fitting,
      },
    );
  }
  const def = FORMATS[format];
  res.status(200);
  res.setHeader("Content-Type", def.contentType);
  res.setHeader("Content-Disposition", `attachment; filename="${scope.id}.${def.extension}"`);
  // texts are read (in smaller pages) only when a type of the scope writes them in this format
  const withText = exportReadsTexts(types, format);
  const stream = deps.store.exports.stream(scope, format, { withText });
  stream.on("error", (err) => {
    // Headers are sent: the only honest signal left is to cut the response short.
    deps.logger.error({ err, [`${scope.kind}_id`]: scope.id, format }, "export failed mid-stream");
    res.destroy(err);
  });
  stream.pipe(res);
}
