/**
 * The JSONL export of a manifest job (DESIGN §8): one line per manifest line in manifest order,
 * `{task_id, data_url, consensus_label, confidence, ledger_txid, settled_at, source}`, read page by page
 * along the (job_id, manifest_line) index, one page per `read()`: constant memory and backpressure at any
 * size. Used by the HTTP export and by the copy written to a job's output_url.
 */
import { Readable } from "node:stream";
import type { PrismaClient } from "./generated/client";

/** rows per page (one query, one pushed chunk of about 1.6 MB) */
const PAGE = 5000;

interface ExportRow {
  manifest_line: number;
  id: string;
  data_url: string;
  consensus_label: string | null;
  confidence: number | null;
  ledger_txid: string | null;
  /** `Date.toISOString()`'s format, made by Postgres */
  settled_at: string | null;
  /** the jsonb as text (Postgres spacing): parsed and re-serialized compact */
  source: string | null;
}

/**
 * A readable stream of the job's export lines; it is destroyed with the database error if a page fails.
 * Each line is built as a string (the object's keys in the documented order): the same bytes as
 * `JSON.stringify` of `{task_id, data_url, consensus_label, confidence, ledger_txid, settled_at, source}`.
 * `settled_at` and `source` come as text, which spares the driver a Date and an object per row.
 */
export function exportStream(prisma: PrismaClient, jobId: string): Readable {
  let after = 0;
  return new Readable({
    async read() {
      try {
        const rows = await prisma.$queryRaw<ExportRow[]>`
          SELECT manifest_line, id, data_url, consensus_label, confidence, ledger_txid,
                 to_char(settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS settled_at, source::text AS source
          FROM tasks WHERE job_id = ${jobId} AND manifest_line > ${after}
          ORDER BY manifest_line LIMIT ${PAGE}`;
        if (rows.length === 0) {
          this.push(null);
          return;
        }
        after = (rows[rows.length - 1] as ExportRow).manifest_line;
        let chunk = "";
        for (const r of rows) {
          chunk +=
            `{"task_id":${JSON.stringify(r.id)},"data_url":${JSON.stringify(r.data_url)},` +
            `"consensus_label":${JSON.stringify(r.consensus_label)},"confidence":${JSON.stringify(r.confidence)},` +
            `"ledger_txid":${JSON.stringify(r.ledger_txid)},"settled_at":${r.settled_at === null ? "null" : `"${r.settled_at}"`},` +
            `"source":${JSON.stringify((r.source === null ? null : JSON.parse(r.source)) ?? {})}}\n`;
        }
        this.push(chunk);
      } catch (err) {
        this.destroy(err as Error);
      }
    },
  });
}
