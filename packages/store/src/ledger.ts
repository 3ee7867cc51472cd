/**
 * The settlement ledger (contract §settlement): an append-only, hash-chained table, one record per settled
 * task and revision (a review that changes a result appends the new revision's record). A record is the canonical JSON (object keys sorted, no whitespace: `canonicalJson` of @labelgate/canonical-json) of
 *   {confidence, consensus_label, label_counts, labels_collected, posterior, prev_hash, resolution, sequence,
 *    settled_at, task_id}
 * (exactly the fields of the task's result, so anyone holding a result can rebuild it), and its hash is
 * SHA-256(prev_hash ‖ those bytes), hex; `prev_hash` is the previous record's hash (64 zeros for the first)
 * and `sequence` its position (1, 2, ...). With `LEDGER=local` the `ledger_txid` is "0x" + hash. Appends are
 * serialized by a transaction-scoped advisory lock, so the chain has no forks; rewriting any record breaks
 * every later hash, which `verifyLedger` detects.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "@labelgate/canonical-json";
import type { PrismaClient } from "./generated/client";
import { Prisma } from "./generated/client";

/** prev_hash of the first record */
export const GENESIS_HASH = "0".repeat(64);
/** advisory lock key of ledger appends ("lgledger" as int64) */
const LEDGER_LOCK_KEY = 0x6c676c6564676572n;

/** A ledger record: the settled result's fields, as hashed. */
export interface LedgerRecord {
  task_id: string;
  consensus_label: string;
  confidence: number;
  resolution: string;
  label_counts: Record<string, number>;
  posterior: Record<string, number>;
  labels_collected: number;
  /** ISO time the settlement was recorded */
  settled_at: string;
  /** position in the chain, from 1 */
  sequence: number;
  /** hash of the previous record (hex), GENESIS_HASH for the first */
  prev_hash: string;
}

/** The record fields known before the chain head is (prev_hash and sequence are filled in under the lock). */
export type LedgerRecordBody = Omit<LedgerRecord, "prev_hash" | "sequence">;

/** SHA-256 (hex) of prev_hash ‖ canonical JSON of the record. */
export function recordHash(record: LedgerRecord): string {
  return createHash("sha256").update(record.prev_hash).update(canonicalJson(record)).digest("hex");
}

/** Statement 1 of an append: the ledger's advisory lock, held until the transaction ends. */
export const LEDGER_LOCK_SQL = Prisma.sql`SELECT pg_advisory_xact_lock(${LEDGER_LOCK_KEY})`;

/**
 * The canonical JSON of a record around its two holes, `prev_hash` and `sequence` (known only under the
 * ledger lock): `[before prev_hash value, between prev_hash and sequence values, after sequence value]`, so
 * that `parts[0] + JSON.stringify(prev) + parts[1] + String(seq) + parts[2]` is `canonicalJson(record)`
 * (keys in sorted order: ... posterior, prev_hash, resolution, sequence, settled_at, task_id).
 */
export function canonicalParts(body: LedgerRecordBody): [string, string, string] {
  const head = canonicalJson({
    confidence: body.confidence,
    consensus_label: body.consensus_label,
    label_counts: body.label_counts,
    labels_collected: body.labels_collected,
    posterior: body.posterior,
  });
  return [
    `${head.slice(0, -1)},"prev_hash":`,
    `,"resolution":${canonicalJson(body.resolution)},"sequence":`,
    `,"settled_at":${canonicalJson(body.settled_at)},"task_id":${canonicalJson(body.task_id)}}`,
  ];
}

/**
 * Statement 2 of an append, to run in a LATER statement than `LEDGER_LOCK_SQL` of the same transaction (a
 * fresh snapshot, so the head committed by the lock's previous holder is seen): `INSERT INTO ledger_entries
 * ... RETURNING txid, seq` of the record after the chain head, usable as a CTE. Postgres fills in the head's
 * hash and sequence + 1 between the canonical parts made here and hashes the exact bytes `recordHash` hashes,
 * so `verifyLedger` recomputes the same hash in JS. The lock is held for no application round trip.
 * `revision`: the task's revision the record settles (docs/decisions/0261); it is a column, not part of the
 * record, so a revision's record has the same fields and verifies the same way as a first settlement's.
 */
export function ledgerAppendSql(body: LedgerRecordBody, revision = 1): Prisma.Sql {
  const [a, b, c] = canonicalParts(body);
  return Prisma.sql`
    INSERT INTO ledger_entries (seq, txid, task_id, revision, prev_hash, hash, payload)
    SELECT x.seq, '0x' || x.hash, ${body.task_id}, ${revision}::int, x.prev, x.hash, x.record::jsonb
    FROM (
      SELECT p.seq, p.prev, r.record, encode(sha256(convert_to(p.prev || r.record, 'UTF8')), 'hex') AS hash
      FROM (
        SELECT COALESCE(h.seq, 0) + 1 AS seq, COALESCE(h.hash, ${GENESIS_HASH}::text) AS prev
        FROM (SELECT 1) one LEFT JOIN (SELECT seq, hash FROM ledger_entries ORDER BY seq DESC LIMIT 1) h ON true
      ) p
      CROSS JOIN LATERAL (SELECT ${a}::text || to_json(p.prev)::text || ${b}::text || p.seq::text || ${c}::text AS record) r
    ) x
    RETURNING txid, seq, prev_hash`;
}

export interface LedgerVerification {
  ok: boolean;
  records: number;
  /** sequence number of the first record whose hash, link or position does not verify */
  brokenAt?: bigint;
}

/**
 * Walks the whole chain in order and recomputes every hash (pages of 1,000 records): each record's hash is
 * SHA-256(its prev_hash ‖ canonical JSON of its payload), its prev_hash the hash before it, and a record
 * that states its `sequence` and `prev_hash` (every record since the store wrote them) must state its own.
 */
export async function verifyLedger(prisma: PrismaClient): Promise<LedgerVerification> {
  let prev = GENESIS_HASH;
  let records = 0;
  let after = 0n;
  for (;;) {
    const page = await prisma.ledgerEntry.findMany({ where: { seq: { gt: after } }, orderBy: { seq: "asc" }, take: 1000 });
    if (page.length === 0) return { ok: true, records };
    for (const e of page) {
      const payload = e.payload as Partial<LedgerRecord>;
      const selfConsistent = payload.sequence === undefined || (BigInt(payload.sequence) === e.seq && payload.prev_hash === e.prevHash);
      const hash = createHash("sha256").update(e.prevHash).update(canonicalJson(e.payload)).digest("hex");
      if (e.prevHash !== prev || !selfConsistent || hash !== e.hash || e.txid !== `0x${e.hash}`)
        return { ok: false, records, brokenAt: e.seq };
      prev = e.hash;
      records++;
      after = e.seq;
    }
  }
}
