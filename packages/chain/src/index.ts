/**
 * @labelgate/chain, browser-safe part (no Node imports; safe for the console's "verify" button):
 * canonical JSON, the ledger record and its leaf bytes, the RFC 9162 Merkle tree over keccak-256, the
 * settlement types, the chain-free verifier and the anchor contract's ABI.
 * The Node side (anvil launcher, anchor client) is `@labelgate/chain/node`.
 */

export { canonicalJson } from "@labelgate/canonical-json";
export * from "./anchor-abi";
export * from "./hex";
export * from "./merkle";
export * from "./record";
export * from "./settlement";
