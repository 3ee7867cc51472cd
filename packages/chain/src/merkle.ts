/**
 * The Merkle tree of RFC 9162 (Certificate Transparency 2.0) §2.1 over keccak-256, browser-safe.
 * - Domain separation (§2.1.1): a leaf hashes as `H(0x00 || leaf)`, an inner node as `H(0x01 || left || right)`,
 *   so a leaf can never be passed off as an inner node (second-preimage attack).
 * - Shape (§2.1.1): the tree of n > 1 leaves splits at k, the largest power of two smaller than n:
 *   `MTH(D[n]) = H(0x01 || MTH(D[0:k]) || MTH(D[k:n]))`. Built here level by level (pair left to right, an
 *   unpaired last node moves up unchanged), which yields the same tree.
 * - Inclusion proofs (§2.1.3.1 PATH) list the siblings from the leaf's level up to the root's children;
 *   {@link verifyInclusion} is the §2.1.3.2 verification algorithm.
 * The empty tree's hash is `H()` (keccak-256 of no bytes).
 * Reference: https://www.rfc-editor.org/rfc/rfc9162#section-2.1
 */

import { canonicalJson } from "@labelgate/canonical-json";
import { keccak_256 } from "@noble/hashes/sha3";
import { equalBytes, toHex } from "./hex";

const LEAF_PREFIX = new Uint8Array([0x00]);
const NODE_PREFIX = new Uint8Array([0x01]);

/** keccak-256 of `H(0x00 || leaf)`: the hash of a leaf's data (32 bytes). */
export function leafHash(leaf: Uint8Array): Uint8Array {
  return keccak_256.create().update(LEAF_PREFIX).update(leaf).digest();
}

/** keccak-256 of `H(0x01 || left || right)`: the hash of an inner node (32 bytes). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return keccak_256.create().update(NODE_PREFIX).update(left).update(right).digest();
}

/** A built tree: its root and every level (level 0 = leaf hashes), to answer proofs in O(log n). */
export interface MerkleTree {
  /** number of leaves */
  size: number;
  /** the tree head (32 bytes); `H()` for 0 leaves */
  root: Uint8Array;
  /** levels[0] = leaf hashes, levels[last] = [root] (empty for 0 leaves) */
  levels: Uint8Array[][];
}

/** Builds the RFC 9162 tree of `leaves` (leaf data, each hashed with {@link leafHash}). O(n) hashes. */
export function buildMerkleTree(leaves: readonly Uint8Array[]): MerkleTree {
  if (leaves.length === 0) return { size: 0, root: keccak_256(new Uint8Array(0)), levels: [] };
  return buildFromLeafHashes(leaves.map(leafHash));
}

/** {@link buildMerkleTree} from leaf hashes (`H(0x00 || leaf)` already taken). */
export function buildFromLeafHashes(hashes: readonly Uint8Array[]): MerkleTree {
  if (hashes.length === 0) return { size: 0, root: keccak_256(new Uint8Array(0)), levels: [] };
  const levels: Uint8Array[][] = [hashes.slice()];
  let level = levels[0] as Uint8Array[];
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(nodeHash(level[i] as Uint8Array, level[i + 1] as Uint8Array));
    if (level.length % 2 === 1) next.push(level[level.length - 1] as Uint8Array);
    levels.push(next);
    level = next;
  }
  return { size: hashes.length, root: level[0] as Uint8Array, levels };
}

/** The root (Merkle tree head) of `leaves` per RFC 9162 §2.1.1 (32 bytes). */
export function merkleRoot(leaves: readonly Uint8Array[]): Uint8Array {
  return buildMerkleTree(leaves).root;
}

/**
 * The audit path of leaf `index` in `tree` (RFC 9162 §2.1.3.1), siblings from the leaf's level upwards.
 * @throws RangeError when `index` is not a leaf of the tree.
 */
export function proofFromTree(tree: MerkleTree, index: number): Uint8Array[] {
  if (!Number.isInteger(index) || index < 0 || index >= tree.size) throw new RangeError(`leaf ${index} is not in a tree of ${tree.size}`);
  const proof: Uint8Array[] = [];
  let i = index;
  for (let l = 0; l < tree.levels.length - 1; l++) {
    const level = tree.levels[l] as Uint8Array[];
    const sibling = i ^ 1;
    // an unpaired last node has no sibling at this level: it moves up unchanged
    if (sibling < level.length) proof.push(level[sibling] as Uint8Array);
    i >>= 1;
  }
  return proof;
}

/**
 * The inclusion proof of `leaves[index]` (RFC 9162 §2.1.3.1). Builds the tree: for many proofs of one
 * batch, build once with {@link buildMerkleTree} and call {@link proofFromTree}.
 * @throws RangeError when `index` is out of range.
 */
export function inclusionProof(leaves: readonly Uint8Array[], index: number): Uint8Array[] {
  return proofFromTree(buildMerkleTree(leaves), index);
}

/**
 * The root that `proof` gives for leaf hash `hash` at `index` of a tree of `treeSize` leaves, following
 * RFC 9162 §2.1.3.2; `undefined` when the proof does not fit the index and size (wrong length, index out
 * of range). Comparing it with the expected root is {@link verifyInclusion}.
 */
export function rootFromInclusionProof(
  hash: Uint8Array,
  index: number,
  treeSize: number,
  proof: readonly Uint8Array[],
): Uint8Array | undefined {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(treeSize) || index < 0 || index >= treeSize) return undefined;
  // BigInt-free: sizes stay far below 2^53, and the shifts below are divisions by 2
  let fn = index;
  let sn = treeSize - 1;
  let r = hash;
  for (const p of proof) {
    if (p.length !== 32) return undefined;
    if (sn === 0) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : undefined;
}

/**
 * RFC 9162 §2.1.3.2: whether `proof` proves that the leaf with hash `hash` (`H(0x00 || leaf)`) is leaf
 * `index` of the tree of `treeSize` leaves whose root is `root`.
 */
export function verifyInclusion(
  hash: Uint8Array,
  index: number,
  treeSize: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  const computed = rootFromInclusionProof(hash, index, treeSize, proof);
  return computed !== undefined && equalBytes(computed, root);
}

/** A batch of ledger records under one root: the root and each record's proof, as stored (see {@link anchorBatch}). */
export interface AnchorBatch {
  /** the tree head, "0x" + 64 hex */
  root: string;
  /** per record, in order: its inclusion proof as JSON, `["0x<32 bytes>", ...]` (siblings from the leaf up) */
  proofs: string[];
}

/**
 * The Merkle tree of a batch of ledger records (RFC 9162 §2.1 over keccak-256): each leaf is the canonical
 * JSON of a stored record payload (exactly the bytes the ledger hashed). Pure and synchronous, so it can run
 * in a worker thread (services/consensus-worker/src/anchor-thread.ts): about 0.1 s of CPU per 1,024 records.
 * @throws RangeError on an empty batch
 */
export function anchorBatch(payloads: readonly unknown[]): AnchorBatch {
  if (payloads.length === 0) throw new RangeError("an anchor batch needs at least one record");
  const encoder = new TextEncoder();
  const tree = buildFromLeafHashes(payloads.map((p) => leafHash(encoder.encode(canonicalJson(p)))));
  return { root: toHex(tree.root), proofs: payloads.map((_, i) => JSON.stringify(proofFromTree(tree, i).map(toHex))) };
}
