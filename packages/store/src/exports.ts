/**
 * Exports of jobs and batches (contract §exports): the task types of a scope (which formats fit it) and its
 * rows page by page with a keyset cursor, turned into a stream of the chosen format's text. A job's rows go
 * along the (job_id, manifest_line) index in manifest order; a batch's along (batch_id, id) (migration
 * 20261201000400_batch_export_index) in task id order (a batch's tasks have no order of their own,
 * docs/decisions/0255). Gold tasks are never exported. One page is one query and one chunk; the stream pulls
 * the next page only when the consumer took the last one (backpressure), so memory stays at a page whatever the
 * size; a format needing two passes (COCO) reads the rows twice.
 */
import { Readable } from "node:stream";
import { type AnyLabelSpec, storedLabelSpec } from "@labelgate/api";
import { type ExportFormat, type ExportRow, type ExportScope, FORMATS } from "@labelgate/api/exports";
import type { Db } from "./database";
import { Prisma } from "./generated/client";
import { queryRows } from "./sql";

/** rows per page without texts (about 1.6 MB of JSONL), and when text_span texts (up to 100,000 code points each) are read */
const PAGE_ROWS = 5000;
const TEXT_PAGE_ROWS = 200;

interface RowOfDb {
  key: string | number;
  id: string;
  task_type: string;
  label_spec: AnyLabelSpec | null;
  question: string;
  options: string[];
  data_url: string;
  data_text: string | null;
  data_url_b: string | null;
  data_text_b: string | null;
  consensus_label: string | null;
  confidence: number | null;
  consensus: Record<string, unknown> | null;
  item_error: string | null;
  ledger_txid: string | null;
  settled_at: string | null;
  source: Record<string, unknown> | null;
  metadata: Record<string, unknown> | null;
}

/** One page of a scope's rows after `after` (a manifest line, or a task id), in export order. */
function pageSql(scope: ExportScope, after: string | number, withText: boolean, limit: number): Prisma.Sql {
  const text = withText ? Prisma.sql`data_text` : Prisma.sql`NULL::text`;
  const columns = Prisma.sql`id, task_type, label_spec, question, options, data_url, ${text} AS data_text, data_url_b, data_text_b, consensus_label, confidence,
    consensus, item_error, ledger_txid, to_char(settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS settled_at, source, metadata`;
  if (scope.kind === "job") {
    return Prisma.sql`
      SELECT manifest_line AS key, ${columns} FROM tasks
      WHERE job_id = ${scope.id} AND manifest_line > ${Number(after)} AND gold_label IS NULL
      ORDER BY manifest_line LIMIT ${limit}`;
  }
  return Prisma.sql`
    SELECT id AS key, ${columns} FROM tasks
    WHERE batch_id = ${scope.id} AND id > ${String(after)} AND gold_label IS NULL
    ORDER BY id LIMIT ${limit}`;
}

export function exportsStore(db: Db) {
  const { pool } = db;

  /** The rows of a scope, page by page (a fresh pass at each call). */
  async function* pages(scope: ExportScope, withText: boolean, pageRows?: number): AsyncGenerator<ExportRow[]> {
    const limit = pageRows ?? (withText ? TEXT_PAGE_ROWS : PAGE_ROWS);
    let after: string | number = scope.kind === "job" ? 0 : "";
    let ordinal = 0;
    for (;;) {
      const rows = await queryRows<RowOfDb>(pool, pageSql(scope, after, withText, limit));
      if (rows.length === 0) return;
      after = (rows[rows.length - 1] as RowOfDb).key;
      yield rows.map((r) => {
        ordinal++;
        return {
          ordinal: scope.kind === "job" ? Number(r.key) : ordinal,
          task_id: r.id,
          task_type: r.task_type,
          label_spec: storedLabelSpec({ labelSpec: r.label_spec, question: r.question, options: r.options }),
          data_url: r.data_url,
          data_text: r.data_text,
          data_url_b: r.data_url_b,
          data_text_b: r.data_text_b,
          consensus_label: r.consensus_label,
          confidence: r.confidence,
          consensus: r.consensus,
          item_error: r.item_error,
          ledger_txid: r.ledger_txid,
          settled_at: r.settled_at,
          ...(scope.kind === "job" ? { source: r.source ?? {} } : { metadata: r.metadata }),
        };
      });
      if (rows.length < limit) return;
    }
  }

  return {
    /** The distinct `type` values of a scope's tasks other than gold tasks (a job: its one type). */
    async taskTypes(scope: ExportScope): Promise<string[]> {
      const rows =
        scope.kind === "job"
          ? await queryRows<{ task_type: string }>(pool, Prisma.sql`SELECT task_type FROM jobs WHERE id = ${scope.id}`)
          : await queryRows<{ task_type: string }>(
              pool,
              Prisma.sql`SELECT DISTINCT task_type FROM tasks WHERE batch_id = ${scope.id} AND gold_label IS NULL ORDER BY task_type`,
            );
      return rows.map((r) => r.task_type);
    },

    /** The rows of a scope page by page, in export order (`pageRows`: rows per page, default by `withText`). */
    pages,

    /**
     * A readable stream of a scope's export in `format` (the caller checked that the format fits the scope,
     * `formatsFitting`): one chunk per page of rows, the next page read only once the consumer took the last
     * (highWaterMark 1). `withText`: read text_span texts (default: when the format reads them; a caller that knows
     * the scope has no text_span task passes false, for pages of PAGE_ROWS). Destroyed with the database error if
     * a page fails.
     */
    stream(scope: ExportScope, format: ExportFormat, options: { withText?: boolean; pageRows?: number } = {}): Readable {
      const def = FORMATS[format];
      const withText = options.withText ?? def.readsText;
      const chunks = def.chunks(scope, () => pages(scope, withText, options.pageRows));
      return Readable.from(chunks, { objectMode: false, highWaterMark: 1 });
    },
  };
}

export type ExportsStore = ReturnType<typeof exportsStore>;
