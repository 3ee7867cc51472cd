/**
 * The local settlement ledger (DESIGN §5, `LEDGER=local`): an append-only, hash-chained table.
 * Each record's hash = SHA-256(prev_hash ‖ canonical JSON of its payload); `ledger_txid` = "0x" + hash
 * (a 32-byte hex transaction hash). Appends are serialized by a transaction-scoped advisory lock so the
 * chain has no forks; rewriting any record breaks every later hash, which `verifyLedger` detects.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "@labelgate/core";
import type { Prisma, PrismaClient } from "@labelgate/db";

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

/**
 * Appends a settlement record inside the caller's transaction. Call it last in the transaction: the
 * advisory lock is held until commit. Three raw statements: the lock; then, in a later statement (a fresh
 * snapshot, so the head committed by the lock's previous holder is seen), the chain head; then the insert.
 * @returns the txid ("0x" + 64 hex).
 */
export async function appendSettlement(tx: Prisma.TransactionClient, record: SettlementRecord): Promise<{ txid: string; seq: bigint }> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${LEDGER_LOCK_KEY})`;
  const head = await tx.$queryRaw<{ hash: string }[]>`SELECT hash FROM ledger_entries ORDER BY seq DESC LIMIT 1`;
  const prevHash = head[0]?.hash ?? GENESIS_HASH;
  const hash = recordHash(prevHash, record);
  const txid = `0x${hash}`;
  const inserted = await tx.$queryRaw<{ seq: bigint }[]>`
    INSERT INTO ledger_entries (txid, task_id, prev_hash, hash, payload)
    VALUES (${txid}, ${record.task_id}, ${prevHash}, ${hash}, ${JSON.stringify(record)}::jsonb)
    RETURNING seq`;
  return { txid, seq: BigInt((inserted[0] as { seq: bigint }).seq) };
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
