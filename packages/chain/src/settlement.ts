/**
 * The result's `settlement` object (contract §settlement) and the part of its verification that needs no chain
 * (browser-safe): rebuild the leaf from the result's fields, fold the inclusion proof to the root.
 */
import { equalBytes, fromHex, type Hex, isHex, toHex } from "./hex";
import { leafHash, type MerkleTree, proofFromTree, verifyInclusion } from "./merkle";
import { type LedgerRecord, leafBytes, ledgerRecordFromResult } from "./record";

/** `LEDGER=evm`: the record is a leaf of a Merkle tree whose root was anchored on an EVM chain. */
export interface EvmSettlement {
  ledger: "evm";
  /** hash of the anchor transaction (32 bytes) */
  ledger_txid: Hex;
  chain_id: number;
  /** block that holds the anchor transaction */
  block_number: number;
  /** address of the anchor contract (20 bytes) */
  contract: Hex;
  /** root of the batch's tree (32 bytes), the `root` of the `Anchored` event */
  merkle_root: Hex;
  /** the canonical record bytes (the Merkle leaf data, not its hash) */
  leaf: Hex;
  leaf_index: number;
  tree_size: number;
  /** RFC 9162 inclusion proof: sibling hashes (32 bytes each) from the leaf's level up */
  proof: Hex[];
  sequence: number;
  prev_hash: string;
}

/** `LEDGER=local`: only the hash-chained ledger table; nothing anchored. */
export interface LocalSettlement {
  ledger: "local";
  /** `0x` + the record's hash */
  ledger_txid: Hex;
  sequence: number;
  prev_hash: string;
  recorded_at: string;
}

export type Settlement = EvmSettlement | LocalSettlement;

/**
 * Why a settlement does not verify. Stable strings (tests, the CLI's output and the console key on them):
 * - `malformed_result`: not a settled result with a well-formed settlement object;
 * - `not_anchored`: `ledger: "local"`, nothing on a chain to check;
 * - `leaf_mismatch`: the result's fields do not give the settlement's `leaf` bytes;
 * - `proof_invalid`: folding the proof from the leaf does not give `merkle_root`;
 * - `rpc_error`: the chain's RPC endpoint failed or answered nonsense;
 * - `wrong_chain`: the RPC endpoint serves another chain id than `chain_id`;
 * - `tx_not_found`: no mined transaction `ledger_txid` on the canonical chain;
 * - `tx_reverted`: the transaction reverted;
 * - `wrong_contract`: the transaction was not sent to `contract`;
 * - `no_anchored_event`: the receipt has no `Anchored` event of `contract`;
 * - `root_mismatch`: the receipt's `Anchored` events anchor other roots than `merkle_root`;
 * - `sequence_out_of_range`: the anchored batch's sequence range does not hold `sequence`;
 * - `block_mismatch`: the transaction is in another block than `block_number`;
 * - `insufficient_confirmations`: fewer confirmations than required.
 */
export type SettlementFailureReason =
  | "malformed_result"
  | "not_anchored"
  | "leaf_mismatch"
  | "proof_invalid"
  | "rpc_error"
  | "wrong_chain"
  | "tx_not_found"
  | "tx_reverted"
  | "wrong_contract"
  | "no_anchored_event"
  | "root_mismatch"
  | "sequence_out_of_range"
  | "block_mismatch"
  | "insufficient_confirmations";

/** A failed verification: the reason and a sentence for people. */
export interface SettlementFailure {
  ok: false;
  reason: SettlementFailureReason;
  message: string;
}

/** The chain-free checks held: the leaf is the result's record and it is in the tree of `merkle_root`. */
export interface LocalVerification {
  ok: true;
  settlement: EvmSettlement;
  /** `H(0x00 || leaf)` */
  leaf_hash: Hex;
}

const fail = (reason: SettlementFailureReason, message: string): SettlementFailure => ({ ok: false, reason, message });
const isCount = (v: unknown, min = 0): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= min;

/** Whether `value` has the shape of an {@link EvmSettlement} (types, hex lengths, integer ranges). */
export function isEvmSettlement(value: unknown): value is EvmSettlement {
  if (typeof value !== "object" || value === null) return false;
  const s = value as Record<string, unknown>;
  return (
    s.ledger === "evm" &&
    isHex(s.ledger_txid, 32) &&
    isCount(s.chain_id, 1) &&
    isCount(s.block_number) &&
    isHex(s.contract, 20) &&
    isHex(s.merkle_root, 32) &&
    isHex(s.leaf) &&
    isCount(s.leaf_index) &&
    isCount(s.tree_size, 1) &&
    Array.isArray(s.proof) &&
    s.proof.every((p) => isHex(p, 32)) &&
    isCount(s.sequence) &&
    typeof s.prev_hash === "string" &&
    /^[0-9a-f]{64}$/.test(s.prev_hash)
  );
}

/**
 * The chain-free part of verifying a settled result (no RPC; browser-safe): `ledger` must be `evm`, the
 * record rebuilt from the result's fields must give exactly the `leaf` bytes, and the RFC 9162 §2.1.3.2
 * fold of `proof` from `H(0x00 || leaf)` at `leaf_index` of `tree_size` must give `merkle_root`.
 * Failure reasons: `malformed_result`, `not_anchored`, `leaf_mismatch`, `proof_invalid`. Never throws.
 */
export function verifySettlementLocal(result: unknown): LocalVerification | SettlementFailure {
  if (typeof result !== "object" || result === null) return fail("malformed_result", "the result is not an object");
  const settlement = (result as { settlement?: unknown }).settlement;
  if (typeof settlement !== "object" || settlement === null) return fail("malformed_result", "the result has no settlement object");
  const ledger = (settlement as { ledger?: unknown }).ledger;
  if (ledger === "local")
    return fail("not_anchored", 'ledger "local": the settlement is in the local ledger table only, nothing is anchored');
  if (!isEvmSettlement(settlement)) return fail("malformed_result", "the settlement object is not a well-formed evm settlement");
  const record = ledgerRecordFromResult(result);
  if (!record) return fail("malformed_result", "the result lacks a field of the ledger record");
  let bytes: Uint8Array;
  try {
    bytes = leafBytes(record);
  } catch (err) {
    return fail("malformed_result", `the result's fields cannot be encoded: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!equalBytes(bytes, fromHex(settlement.leaf)))
    return fail("leaf_mismatch", "the result's fields do not give the settlement's leaf bytes");
  const hash = leafHash(bytes);
  const proof = settlement.proof.map(fromHex);
  if (!verifyInclusion(hash, settlement.leaf_index, settlement.tree_size, proof, fromHex(settlement.merkle_root))) {
    return fail("proof_invalid", "the inclusion proof does not fold to merkle_root");
  }
  return { ok: true, settlement, leaf_hash: toHex(hash) };
}

/** Where a batch's root was anchored: the transaction and its block. */
export interface AnchorLocation {
  txid: Hex;
  chainId: number;
  blockNumber: number;
  contract: Hex;
}

/**
 * The `settlement` object of leaf `leafIndex` of an anchored batch (contract §settlement): `record` must be the
 * record whose {@link leafBytes} are that leaf of `tree`.
 * @throws RangeError when `leafIndex` is not in the tree; Error when the record is not that leaf.
 */
export function evmSettlement(record: LedgerRecord, tree: MerkleTree, leafIndex: number, anchor: AnchorLocation): EvmSettlement {
  const proof = proofFromTree(tree, leafIndex);
  const bytes = leafBytes(record);
  if (!equalBytes(leafHash(bytes), tree.levels[0]?.[leafIndex] as Uint8Array)) {
    throw new Error(`record ${record.task_id} is not leaf ${leafIndex} of the tree`);
  }
  return {
    ledger: "evm",
    ledger_txid: anchor.txid,
    chain_id: anchor.chainId,
    block_number: anchor.blockNumber,
    contract: anchor.contract,
    merkle_root: toHex(tree.root),
    leaf: toHex(bytes),
    leaf_index: leafIndex,
    tree_size: tree.size,
    proof: proof.map(toHex),
    sequence: record.sequence,
    prev_hash: record.prev_hash,
  };
}
