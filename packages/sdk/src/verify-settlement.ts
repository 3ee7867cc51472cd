/**
 * Verifying a settled result against the chain alone (contract §settlement): recompute the leaf from the result's
 * fields, fold the RFC 9162 inclusion proof to `merkle_root` (both in {@link verifySettlementLocal}), then
 * read the anchor transaction's receipt over JSON-RPC and check it: same chain, mined and not reverted,
 * sent to `contract`, an `Anchored` event of `contract` with `merkle_root` whose sequence range holds the
 * record, in `block_number`, with enough confirmations.
 * Browser-safe (viem + @labelgate/chain; no Node imports): the console's "verify" button runs it, from
 * `@labelgate/sdk/verify` so the rest of the SDK is not bundled.
 */
import { type EvmSettlement, type SettlementFailure, type SettlementFailureReason, verifySettlementLocal } from "@labelgate/chain";
import { anchoredEvents } from "@labelgate/chain/events";
import { createPublicClient, type Hex, http, type TransactionReceipt, TransactionReceiptNotFoundError } from "viem";

export type { EvmSettlement, LocalSettlement, Settlement, SettlementFailure, SettlementFailureReason } from "@labelgate/chain";
export { verifySettlementLocal } from "@labelgate/chain";

export interface VerifySettlementOptions {
  /** JSON-RPC endpoint of the chain the settlement names */
  rpcUrl: string;
  /** confirmations required (1 = mined in the latest block); default 1 */
  confirmations?: number;
  /** fetch implementation for the RPC calls; default the global `fetch` */
  fetch?: typeof fetch;
  /** per-RPC-call timeout (ms); default 10,000 */
  timeoutMs?: number;
}

/** Every check held. Chain figures as read from the chain. */
export interface SettlementVerified {
  ok: true;
  ledger_txid: Hex;
  chain_id: number;
  block_number: number;
  contract: Hex;
  merkle_root: Hex;
  /** `H(0x00 || leaf)` */
  leaf_hash: Hex;
  leaf_index: number;
  tree_size: number;
  sequence: number;
  /** the anchored batch's range (from the `Anchored` event) */
  first_sequence: number;
  last_sequence: number;
  confirmations: number;
}

/** A failure of {@link verifySettlement}; `insufficient_confirmations` also carries the counts. */
export type SettlementVerificationFailure = SettlementFailure & { confirmations?: number; required?: number };

export type SettlementVerification = SettlementVerified | SettlementVerificationFailure;

const fail = (reason: SettlementFailureReason, message: string, extra: object = {}): SettlementVerificationFailure => ({
  ok: false,
  reason,
  message,
  ...extra,
});

const describe = (err: unknown) =>
  err instanceof Error ? ((err as Error & { shortMessage?: string }).shortMessage ?? err.message) : String(err);

/**
 * Verifies a settled result (`GET /v1/tasks/{id}/result` 200 body) with the chain alone. Never throws:
 * every failure is `{ok: false, reason, message}` with one of the stable reasons of
 * {@link SettlementFailureReason}, checked in this order: `malformed_result`, `not_anchored`,
 * `leaf_mismatch`, `proof_invalid` (no RPC needed), then `rpc_error` (any RPC failure), `wrong_chain`,
 * `tx_not_found`, `tx_reverted`, `wrong_contract`, `no_anchored_event`, `root_mismatch`,
 * `sequence_out_of_range`, `block_mismatch`, `insufficient_confirmations`.
 * RPC calls: eth_chainId, eth_getTransactionReceipt, eth_blockNumber.
 */
export async function verifySettlement(result: unknown, options: VerifySettlementOptions): Promise<SettlementVerification> {
  const required = options.confirmations ?? 1;
  if (!Number.isSafeInteger(required) || required < 0) return fail("malformed_result", "confirmations must be a whole number >= 0");
  const local = verifySettlementLocal(result);
  if (!local.ok) return local;
  const s: EvmSettlement = local.settlement;

  const client = createPublicClient({
    transport: http(options.rpcUrl, { fetchFn: options.fetch, retryCount: 0, timeout: options.timeoutMs ?? 10_000 }),
    cacheTime: 0,
  });

  let chainId: number;
  try {
    chainId = await client.getChainId();
  } catch (err) {
    return fail("rpc_error", `eth_chainId failed: ${describe(err)}`);
  }
  if (chainId !== s.chain_id)
    return fail("wrong_chain", `the RPC endpoint serves chain ${chainId}, the settlement names chain ${s.chain_id}`);

  let receipt: TransactionReceipt;
  try {
    receipt = await client.getTransactionReceipt({ hash: s.ledger_txid });
  } catch (err) {
    if (err instanceof TransactionReceiptNotFoundError)
      return fail("tx_not_found", `no mined transaction ${s.ledger_txid} on chain ${chainId}`);
    return fail("rpc_error", `eth_getTransactionReceipt failed: ${describe(err)}`);
  }
  if (receipt.status !== "success") return fail("tx_reverted", `transaction ${s.ledger_txid} reverted`);
  if (receipt.to?.toLowerCase() !== s.contract.toLowerCase()) {
    return fail(
      "wrong_contract",
      `transaction ${s.ledger_txid} was sent to ${receipt.to ?? "no address (a deployment)"}, not ${s.contract}`,
    );
  }
  const events = anchoredEvents(receipt, s.contract);
  if (events.length === 0) return fail("no_anchored_event", `transaction ${s.ledger_txid} emitted no Anchored event of ${s.contract}`);
  const sameRoot = events.filter((e) => e.root.toLowerCase() === s.merkle_root.toLowerCase());
  if (sameRoot.length === 0)
    return fail("root_mismatch", `transaction ${s.ledger_txid} anchored ${events.map((e) => e.root).join(", ")}, not ${s.merkle_root}`);
  // the leaf's sequence is in the anchored range, and its position and the tree's size fit in that range
  const seq = BigInt(s.sequence);
  const event = sameRoot.find(
    (e) =>
      e.firstSequence <= seq &&
      seq <= e.lastSequence &&
      BigInt(s.leaf_index) <= seq - e.firstSequence &&
      BigInt(s.tree_size) <= e.lastSequence - e.firstSequence + 1n,
  );
  if (!event) {
    const ranges = sameRoot.map((e) => `${e.firstSequence}..${e.lastSequence}`).join(", ");
    return fail(
      "sequence_out_of_range",
      `sequence ${s.sequence} (leaf ${s.leaf_index} of ${s.tree_size}) does not fit the anchored range ${ranges}`,
    );
  }
  if (receipt.blockNumber !== BigInt(s.block_number)) {
    return fail("block_mismatch", `transaction ${s.ledger_txid} is in block ${receipt.blockNumber}, the settlement says ${s.block_number}`);
  }
  let latest: bigint;
  try {
    latest = await client.getBlockNumber({ cacheTime: 0 });
  } catch (err) {
    return fail("rpc_error", `eth_blockNumber failed: ${describe(err)}`);
  }
  const confirmations = Number(latest - receipt.blockNumber + 1n);
  if (confirmations < required) {
    return fail("insufficient_confirmations", `${confirmations} confirmations, ${required} required`, { confirmations, required });
  }
  return {
    ok: true,
    ledger_txid: s.ledger_txid,
    chain_id: chainId,
    block_number: Number(receipt.blockNumber),
    contract: s.contract,
    merkle_root: s.merkle_root,
    leaf_hash: local.leaf_hash,
    leaf_index: s.leaf_index,
    tree_size: s.tree_size,
    sequence: s.sequence,
    first_sequence: Number(event.firstSequence),
    last_sequence: Number(event.lastSequence),
    confirmations,
  };
}
