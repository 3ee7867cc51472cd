/**
 * A second verifier of settled results, independent of @labelgate/chain and viem: raw JSON-RPC over
 * `fetch` (eth_chainId, eth_getTransactionReceipt, eth_blockNumber), keccak-256 from @noble/hashes, its own
 * canonical JSON, RFC 9162 §2.1.3.2 fold and ABI decoding of the Anchored log. Used by the tests to check
 * that `verifySettlement` reaches the same verdict.
 */
import { keccak_256 } from "@noble/hashes/sha3";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const enc = new TextEncoder();
const hexOf = (b: Uint8Array) => `0x${Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("")}`;
const bytesOf = (h: string) => Uint8Array.from((h.slice(2).match(/../g) ?? []).map((x) => Number.parseInt(x, 16)));
const H = (...parts: Uint8Array[]) => {
  const h = keccak_256.create();
  for (const p of parts) h.update(p);
  return h.digest();
};

function canonical(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k] as Json)}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

async function call(rpcUrl: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  if (body.error !== undefined) throw new Error(JSON.stringify(body.error));
  return body.result;
}

const FIELDS = ["confidence", "consensus_label", "label_counts", "labels_collected", "posterior", "resolution", "settled_at", "task_id"];
const ANCHORED_TOPIC = hexOf(H(enc.encode("Anchored(bytes32,uint64,uint64)")));

interface RpcLog {
  address: string;
  topics: string[];
  data: string;
}

/** `{ok: true}` or `{ok: false, reason}` with the reasons of verifySettlement. */
export async function independentVerdict(
  result: Record<string, unknown>,
  rpcUrl: string,
  confirmations = 1,
): Promise<{ ok: boolean; reason?: string }> {
  const no = (reason: string) => ({ ok: false, reason });
  const s = result.settlement as Record<string, unknown> | undefined;
  if (!s) return no("malformed_result");
  if (s.ledger === "local") return no("not_anchored");
  const record: Record<string, Json> = { sequence: s.sequence as Json, prev_hash: s.prev_hash as Json };
  for (const f of FIELDS) {
    if (result[f] === undefined) return no("malformed_result");
    record[f] = result[f] as Json;
  }
  const leaf = enc.encode(canonical(record));
  if (hexOf(leaf) !== String(s.leaf).toLowerCase()) return no("leaf_mismatch");
  // RFC 9162 §2.1.3.2
  const index = s.leaf_index as number;
  const size = s.tree_size as number;
  if (index >= size) return no("proof_invalid");
  let fn = index;
  let sn = size - 1;
  let r = H(new Uint8Array([0]), leaf);
  for (const p of s.proof as string[]) {
    if (sn === 0) return no("proof_invalid");
    if (fn % 2 === 1 || fn === sn) {
      r = H(new Uint8Array([1]), bytesOf(p), r);
      while (fn % 2 === 0 && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else r = H(new Uint8Array([1]), r, bytesOf(p));
    fn >>= 1;
    sn >>= 1;
  }
  const root = String(s.merkle_root).toLowerCase();
  if (sn !== 0 || hexOf(r) !== root) return no("proof_invalid");

  let chainId: number;
  let receipt: { status: string; to: string | null; blockNumber: string; logs: RpcLog[] } | null;
  let latest: number;
  try {
    chainId = Number(await call(rpcUrl, "eth_chainId", []));
    if (chainId !== s.chain_id) return no("wrong_chain");
    receipt = (await call(rpcUrl, "eth_getTransactionReceipt", [s.ledger_txid])) as typeof receipt;
    latest = Number(await call(rpcUrl, "eth_blockNumber", []));
  } catch {
    return no("rpc_error");
  }
  if (!receipt) return no("tx_not_found");
  if (receipt.status !== "0x1") return no("tx_reverted");
  const contract = String(s.contract).toLowerCase();
  if (receipt.to?.toLowerCase() !== contract) return no("wrong_contract");
  const events = receipt.logs.filter((l) => l.address.toLowerCase() === contract && l.topics[0] === ANCHORED_TOPIC);
  if (events.length === 0) return no("no_anchored_event");
  const same = events.filter((l) => l.topics[1]?.toLowerCase() === root);
  if (same.length === 0) return no("root_mismatch");
  const seq = s.sequence as number;
  const fits = same.some((l) => {
    const first = Number(BigInt(`0x${l.data.slice(2, 66)}`));
    const last = Number(BigInt(`0x${l.data.slice(66, 130)}`));
    return first <= seq && seq <= last && index <= seq - first && size <= last - first + 1;
  });
  if (!fits) return no("sequence_out_of_range");
  if (Number(receipt.blockNumber) !== s.block_number) return no("block_mismatch");
  if (latest - Number(receipt.blockNumber) + 1 < confirmations) return no("insufficient_confirmations");
  return { ok: true };
}
