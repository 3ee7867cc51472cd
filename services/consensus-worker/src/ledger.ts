/**
 * The local settlement ledger (DESIGN §5, `LEDGER=local`): an append-only, hash-chained table.
 * Each record's hash = SHA-256(prev_hash ‖ canonical JSON of its payload); `ledger_txid` = "0x" + hash
 * (a 32-byte hex transaction hash). Appends are serialized by a transaction-scoped advisory lock so the
 * chain has no forks; rewriting any record breaks every later hash, which `verifyLedger` detects.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "@labelgate/core";
import { Prisma, type PrismaClient } from "@labelgate/store";

/** prev_hash of the first record */
export const GENESIS_HASH = "0".repeat(64);
/** advisory lock key of ledger appends ("lgledger" as int64) */
const LEDGER_LOCK_KEY = 0x6c676c6564676572n;

export interface SettlementRecord {
  task_id: string;
  customer_id: string;
  consensus_label: string;
  confidence: number;
  resolution: string;
  label_counts: Record<string, number>;
  labels: { label_id: string; labeler_id: string; value: string }[];
  settled_at: string;
}

export function recordHash(prevHash: string, payload: unknown): string {
  return createHash("sha256").update(prevHash).update(canonicalJson(payload)).digest("hex");
}

/** Statement 1 of an append: the ledger's advisory lock, held until the transaction ends. */
export const LEDGER_LOCK_SQL = Prisma.sql`SELECT pg_advisory_xact_lock(${LEDGER_LOCK_KEY})`;

/**
 * Statement 2 of an append, to run in a LATER statement than `LEDGER_LOCK_SQL` of the same transaction (a
 * fresh snapshot, so the head committed by the lock's previous holder is seen), last in the transaction:
 * `INSERT INTO ledger_entries ... RETURNING txid, seq` of `record` after the chain head, usable as a CTE.
 * The hash is computed by Postgres over the exact bytes `recordHash` hashes: SHA-256 of the UTF-8 of
 * prev_hash ‖ canonical JSON of the record (the canonical text is made here and sent as a parameter), so
 * `verifyLedger` recomputes the same hash in JS. One statement: the lock is held for no application round
 * trip (it used to be held across three Prisma round trips of the worker, serializing settlements).
 */
export function ledgerAppendSql(record: SettlementRecord): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO ledger_entries (txid, task_id, prev_hash, hash, payload)
    SELECT '0x' || x.hash, ${record.task_id}, x.prev, x.hash, ${JSON.stringify(record)}::jsonb
    FROM (
      SELECT p.prev, encode(sha256(convert_to(p.prev || ${canonicalJson(record)}::text, 'UTF8')), 'hex') AS hash
      FROM (SELECT COALESCE((SELECT hash FROM ledger_entries ORDER BY seq DESC LIMIT 1), ${GENESIS_HASH}::text) AS prev) p
    ) x
    RETURNING txid, seq`;
}

export interface LedgerVerification {
  ok: boolean;
  records: number;
  /** sequence number of the first record whose hash or link does not verify */
  brokenAt?: bigint;
}

/** Walks the whole chain in order and recomputes every hash (pages of 1,000 records). */
export async function verifyLedger(prisma: PrismaClient): Promise<LedgerVerification> {
  let prev = GENESIS_HASH;
  let records = 0;
  let after = -1n;
  for (;;) {
    const page = await prisma.ledgerEntry.findMany({ where: { seq: { gt: after } }, orderBy: { seq: "asc" }, take: 1000 });
    if (page.length === 0) return { ok: true, records };
    for (const e of page) {
      if (e.prevHash !== prev || recordHash(e.prevHash, e.payload) !== e.hash || e.txid !== `0x${e.hash}`) {
        return { ok: false, records, brokenAt: e.seq };
      }
      prev = e.hash;
      records++;
      after = e.seq;
    }
  }
}
