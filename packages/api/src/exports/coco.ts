/**
 * `coco` (contract §exports): COCO object detection JSON (https://cocodataset.org/#format-data), one object
 * `{info, licenses, images, categories, annotations}`: one image per task (`id` its export ordinal, `file_name`
 * and `coco_url` the data_url, `width` and `height` when the customer gave them, docs/decisions/0257), the
 * annotations of each task as its type module writes them (`exportRows.coco`), categories numbered from 1 in
 * the order the rows' specs name them (a batch: of the first spec naming each). Written in two passes over the
 * store (images, then annotations) so that nothing but the categories is held in memory.
 */
import type { CocoRow, ExportRow, ExportScope } from "../task-types/export-rows";
import { itemSizeOf } from "../task-types/export-rows";

export type { CocoAnnotationPart, CocoRow } from "../task-types/export-rows";

/** The image of a row. */
function cocoImage(r: ExportRow): string {
  const size = itemSizeOf(r);
  return JSON.stringify({
    id: r.ordinal,
    file_name: r.data_url,
    coco_url: r.data_url,
    ...(size ? { width: size.width, height: size.height } : {}),
    labelgate_task_id: r.task_id,
  });
}

/**
 * The chunks of a COCO export of `scope`: `pages()` starts a pass over its rows (called twice); `rowOf` gives a
 * row's type's COCO rows (never null for a scope the format fits).
 */
export async function* cocoChunks(
  scope: ExportScope,
  pages: () => AsyncIterable<ExportRow[]>,
  rowOf: (r: ExportRow) => CocoRow,
  now: Date = new Date(),
): AsyncGenerator<string> {
  const categories = new Map<string, number>();
  const categoryId = (name: string) => {
    let id = categories.get(name);
    if (id === undefined) {
      id = categories.size + 1;
      categories.set(name, id);
    }
    return id;
  };
  const info = {
    description: `labelgate export of ${scope.kind} ${scope.id}`,
    version: "1.0",
    year: now.getUTCFullYear(),
    contributor: "labelgate",
    url: "",
    date_created: now.toISOString(),
  };
  yield `{"info":${JSON.stringify(info)},"licenses":[],"images":[`;
  let first = true;
  for await (const page of pages()) {
    let chunk = "";
    for (const r of page) {
      for (const c of rowOf(r).categories(r)) categoryId(c);
      chunk += (first ? "\n" : ",\n") + cocoImage(r);
      first = false;
    }
    if (chunk) yield chunk;
  }
  const cats = [...categories].map(([name, id]) => ({ id, name, supercategory: "none" }));
  yield `\n],"categories":${JSON.stringify(cats)},"annotations":[`;
  first = true;
  let annotationId = 0;
  for await (const page of pages()) {
    let chunk = "";
    for (const r of page) {
      for (const a of rowOf(r).annotations(r, categoryId)) {
        annotationId++;
        chunk += (first ? "\n" : ",\n") + JSON.stringify({ id: annotationId, image_id: r.ordinal, ...a });
        first = false;
      }
    }
    if (chunk) yield chunk;
  }
  yield "\n]}\n";
}
