/**
 * The ledger record of a settled task, whose canonical bytes are its Merkle leaf (browser-safe).
 * The record is exactly these fields of the task's result: `{confidence, consensus_label, label_counts,
 * labels_collected, posterior, prev_hash, resolution, sequence, settled_at, task_id}`, with `sequence` and
 * `prev_hash` from the hash-chained ledger table (each record's hash = SHA-256(prev_hash || canonical
 * bytes); the first record's prev_hash is 64 zeros). Its bytes are the UTF-8 of its canonical JSON
 * ({@link canonicalJson}); the server and every verifier (Node or browser) produce the same bytes.
 */

import { canonicalJson } from "@labelgate/canonical-json";
import { utf8ToBytes } from "@noble/hashes/utils";

/** The leaf record of one settlement. Number fields are JSON numbers (sequence: a whole number). */
export interface LedgerRecord {
  task_id: string;
  consensus_label: string;
  confidence: number | null;
  resolution: string | null;
  /** option → labels */
  label_counts: Record<string, number> | null;
  labels_collected: number;
  /** option → posterior probability */
  posterior: Record<string, number> | null;
  /** ISO 8601 time the settlement was recorded */
  settled_at: string;
  /** position in the hash-chained ledger */
  sequence: number;
  /** hex SHA-256 (64 digits, no 0x) of the previous ledger record; 64 zeros for the first */
  prev_hash: string;
}

/** The fields of a {@link LedgerRecord}, in canonical (sorted) order. */
export const LEDGER_RECORD_FIELDS = [
  "confidence",
  "consensus_label",
  "label_counts",
  "labels_collected",
  "posterior",
  "prev_hash",
  "resolution",
  "sequence",
  "settled_at",
  "task_id",
] as const satisfies readonly (keyof LedgerRecord)[];

/** The record's fields and nothing else (extra properties of `source` are dropped). */
export function pickLedgerRecord(source: LedgerRecord): LedgerRecord {
  return {
    task_id: source.task_id,
    consensus_label: source.consensus_label,
    confidence: source.confidence,
    resolution: source.resolution,
    label_counts: source.label_counts,
    labels_collected: source.labels_collected,
    posterior: source.posterior,
    settled_at: source.settled_at,
    sequence: source.sequence,
    prev_hash: source.prev_hash,
  };
}

/** Canonical JSON text of the record (its fields only). */
export function ledgerRecordJson(record: LedgerRecord): string {
  return canonicalJson(pickLedgerRecord(record));
}

/**
 * The Merkle leaf of a record: UTF-8 bytes of its canonical JSON.
 * @throws TypeError when a field holds a value canonical JSON cannot encode (e.g. a non-finite number).
 */
export function leafBytes(record: LedgerRecord): Uint8Array {
  return utf8ToBytes(ledgerRecordJson(record));
}

/**
 * Rebuilds the record from a settled result: the record's fields from the result's top level, `sequence`
 * and `prev_hash` from `result.settlement`. Returns `undefined` when a field is missing (a result of
 * another shape); values are taken as they are, the leaf comparison judges them.
 */
export function ledgerRecordFromResult(result: unknown): LedgerRecord | undefined {
  if (typeof result !== "object" || result === null) return undefined;
  const r = result as Record<string, unknown>;
  const s = r.settlement;
  if (typeof s !== "object" || s === null) return undefined;
  const settlement = s as Record<string, unknown>;
  const source: Record<string, unknown> = { ...r, sequence: settlement.sequence, prev_hash: settlement.prev_hash };
  for (const field of LEDGER_RECORD_FIELDS) if (source[field] === undefined) return undefined;
  return pickLedgerRecord(source as unknown as LedgerRecord);
}
