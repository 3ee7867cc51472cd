/**
 * What the console reads from a settled result beyond today's SDK types: the posterior (contract §quality) and the
 * EVM settlement proof (contract §settlement). Both are optional: a gateway on the local ledger sends neither, and the
 * task page shows what is there.
 */
import type { SettledResult } from "@labelgate/sdk/browser";

/** The Merkle proof of an anchored settlement (contract §settlement, `LEDGER=evm`). */
export interface EvmSettlement {
  ledger: "evm";
  ledger_txid: string;
  chain_id: number;
  block_number: number;
  contract: string;
  merkle_root: string;
  leaf: string;
  leaf_index: number;
  tree_size: number;
  proof: string[];
  sequence: number;
  prev_hash: string;
}

/** A settled result (`posterior` is part of it since contract §quality). */
export type ResultView = SettledResult;

/** The EVM proof of a result, when its settlement has one. */
export function evmProofOf(result: SettledResult): EvmSettlement | null {
  const s = result.settlement as unknown as Partial<EvmSettlement> & { ledger: string };
  if (s.ledger !== "evm" || !Array.isArray(s.proof) || typeof s.merkle_root !== "string" || typeof s.leaf !== "string") return null;
  return s as EvmSettlement;
}
