/**
 * The JSONL export of a manifest job (DESIGN §8): one line per manifest line in manifest order,
 * `{task_id, data_url, consensus_label, confidence, ledger_txid, settled_at, source}`, read page by page
 * along the (job_id, manifest_line) index, one page per `read()`: constant memory and backpressure at any
 * size. Used by the HTTP export and by the copy written to a job's output_url.
 */
import { Readable } from "node:stream";
import type { PrismaClient } from "./generated/client";

const PAGE = 2000;

interface ExportRow {
  id: string;
  manifest_line: number;
  data_url: string;
  consensus_label: string | null;
  confidence: number | null;
  ledger_txid: string | null;
  settled_at: Date | null;
  source: unknown;
}

/** A readable stream of the job's export lines; it is destroyed with the database error if a page fails. */
export function exportStream(prisma: PrismaClient, jobId: string): Readable {
  let after = 0;
  return new Readable({
    async read() {
      try {
        const rows = await prisma.$queryRaw<ExportRow[]>`
          SELECT id, manifest_line, data_url, consensus_label, confidence, ledger_txid, settled_at, source
          FROM tasks WHERE job_id = ${jobId} AND manifest_line > ${after}
          ORDER BY manifest_line LIMIT ${PAGE}`;
        if (rows.length === 0) {
          this.push(null);
          return;
        }
        after = (rows[rows.length - 1] as ExportRow).manifest_line;
        let chunk = "";
        for (const r of rows) {
          chunk += `${JSON.stringify({
            task_id: r.id,
            data_url: r.data_url,
            consensus_label: r.consensus_label,
            confidence: r.confidence,
            ledger_txid: r.ledger_txid,
            settled_at: r.settled_at ? r.settled_at.toISOString() : null,
            source: r.source ?? {},
          })}\n`;
        }
        this.push(chunk);
      } catch (err) {
        this.destroy(err as Error);
      }
    },
  });
}
