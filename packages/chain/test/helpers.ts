/**
 * Test helpers shared by the chain, SDK and CLI tests: a funded random signer on a test's own anvil, raw
 * JSON-RPC calls (anvil_* methods), sample ledger records, and a batch anchored for real with its results.
 */
import {
  type AnchorClient,
  buildMerkleTree,
  type EvmSettlement,
  evmSettlement,
  type LedgerRecord,
  type LocalSettlement,
  leafBytes,
  type MerkleTree,
  toHex,
} from "@labelgate/chain/node";
import type { Hex, TransactionReceipt } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";

/** One JSON-RPC call; throws on an error answer. */
export async function rpc<T = unknown>(rpcUrl: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** A fresh random key whose account anvil credits with 100 ETH (`anvil_setBalance`): no well-known key in tests. */
export async function fundedKey(rpcUrl: string): Promise<Hex> {
  const key = generatePrivateKey();
  await rpc(rpcUrl, "anvil_setBalance", [privateKeyToAddress(key), "0x56bc75e2d63100000"]);
  return key;
}

/** `n` settled-task records with sequences first..first+n-1, hash-chained through made-up prev hashes. */
export function sampleRecords(n: number, first = 1): LedgerRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const cat = 3 + (i % 3);
    const conf = Number((0.9 + (i % 10) / 100).toFixed(4));
    return {
      task_id: `tsk_test${String(first + i).padStart(6, "0")}`,
      consensus_label: i % 4 === 0 ? "dog" : "cat",
      confidence: conf,
      resolution: i % 7 === 0 ? "max_labels" : "consensus",
      label_counts: { cat, dog: 1 },
      labels_collected: cat + 1,
      posterior: { cat: conf, dog: Number((1 - conf).toFixed(4)) },
      settled_at: new Date(Date.UTC(2026, 10, 24, 10, 0, i % 60, i % 1000)).toISOString(),
      sequence: first + i,
      prev_hash: (i === 0 ? "0" : (i % 16).toString(16)).repeat(64),
    };
  });
}

/** A settled result (as GET /v1/tasks/{id}/result answers it) for `record` with `settlement`. */
export function resultOf(record: LedgerRecord, settlement: EvmSettlement): Record<string, unknown> & { settlement: EvmSettlement } {
  const { sequence: _s, prev_hash: _p, ...fields } = record;
  return { ...fields, status: "settled", settlement };
}

/** A settlement of the local ledger (`LEDGER=local`: nothing anchored), as a settled result carries it. */
export const LOCAL_SETTLEMENT: LocalSettlement = {
  ledger: "local",
  ledger_txid: `0x${"ab".repeat(32)}`,
  sequence: 1,
  prev_hash: "0".repeat(64),
  recorded_at: "2026-11-24T10:00:00.000Z",
};

export interface AnchoredBatch {
  records: LedgerRecord[];
  tree: MerkleTree;
  txid: Hex;
  receipt: TransactionReceipt;
  results: (Record<string, unknown> & { settlement: EvmSettlement })[];
}

/**
 * Builds the batch's tree, anchors its root via `client` (range first..last of the records unless given)
 * with the signer's next nonce, waits for the receipt and returns every record's result.
 */
export async function anchorBatch(
  client: AnchorClient,
  records: LedgerRecord[],
  range?: { first: number; last: number },
): Promise<AnchoredBatch> {
  const tree = buildMerkleTree(records.map(leafBytes));
  const first = range?.first ?? (records[0] as LedgerRecord).sequence;
  const last = range?.last ?? (records[records.length - 1] as LedgerRecord).sequence;
  const txid = await client.sendAnchor({
    root: toHex(tree.root),
    firstSequence: first,
    lastSequence: last,
    nonce: await client.nonce("pending"),
  });
  const receipt = await client.waitForReceipt(txid);
  const contract = client.contract as Hex;
  const results = records.map((r, i) =>
    resultOf(r, evmSettlement(r, tree, i, { txid, chainId: client.chainId, blockNumber: Number(receipt.blockNumber), contract })),
  );
  return { records, tree, txid, receipt, results };
}
