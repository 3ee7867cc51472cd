/**
 * The RFC 9162 §2.1 Merkle tree over keccak-256: roots of small trees against the RFC's definition written
 * out by hand, the tree shape and every proof of trees of 1..64 leaves against a direct transcription of
 * the RFC's recursive MTH and PATH, and tampering (a flipped byte, wrong index, wrong size, proof too long or
 * short) always failing.
 */

import {
  anchorBatch,
  buildMerkleTree,
  canonicalJson,
  inclusionProof,
  leafHash,
  merkleRoot,
  nodeHash,
  proofFromTree,
  rootFromInclusionProof,
  verifyInclusion,
} from "@labelgate/chain";
import { keccak_256 } from "@noble/hashes/sha3";
import { utf8ToBytes } from "@noble/hashes/utils";

const H = (...parts: Uint8Array[]) => {
  const h = keccak_256.create();
  for (const p of parts) h.update(p);
  return h.digest();
};
const b = (...bytes: number[]) => new Uint8Array(bytes);
const leaves = (n: number) => Array.from({ length: n }, (_, i) => utf8ToBytes(`leaf-${i}`));

/** RFC 9162 §2.1.1 MTH, recursive, as written in the RFC. */
function mth(d: Uint8Array[]): Uint8Array {
  if (d.length === 0) return H();
  if (d.length === 1) return H(b(0), d[0] as Uint8Array);
  let k = 1;
  while (k * 2 < d.length) k *= 2;
  return H(b(1), mth(d.slice(0, k)), mth(d.slice(k)));
}

/** RFC 9162 §2.1.3.1 PATH(m, D[n]), recursive, as written in the RFC. */
function path(m: number, d: Uint8Array[]): Uint8Array[] {
  if (d.length <= 1) return [];
  let k = 1;
  while (k * 2 < d.length) k *= 2;
  return m < k ? [...path(m, d.slice(0, k)), mth(d.slice(k))] : [...path(m - k, d.slice(k)), mth(d.slice(0, k))];
}

const hex = (x: Uint8Array) => Buffer.from(x).toString("hex");

/** Whether leaf m's RFC 9162 §2.1.3.2 fold takes the same left/right steps in trees of sizes a and b. */
function samePathShape(m: number, a: number, b: number): boolean {
  const steps = (size: number) => {
    const out: string[] = [];
    let fn = m;
    let sn = size - 1;
    while (sn > 0) {
      if (fn % 2 === 1 || fn === sn) {
        out.push("L");
        if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn >> 1, sn >> 1];
      } else out.push("R");
      [fn, sn] = [fn >> 1, sn >> 1];
    }
    return out.join("");
  };
  return steps(a) === steps(b);
}

describe("RFC 9162 Merkle tree over keccak-256", () => {
  it("hashes leaves and nodes with domain separation", () => {
    const d = utf8ToBytes("record");
    expect(hex(leafHash(d))).toBe(hex(H(b(0), d)));
    const l = leafHash(utf8ToBytes("l"));
    const r = leafHash(utf8ToBytes("r"));
    expect(hex(nodeHash(l, r))).toBe(hex(H(b(1), l, r)));
    // without the prefix the hash would differ: a leaf cannot pose as a node
    expect(hex(leafHash(d))).not.toBe(hex(H(d)));
  });

  it("root of 0, 1, 2 and 7 leaves", () => {
    expect(hex(merkleRoot([]))).toBe(hex(H()));
    const [d0, d1, d2, d3, d4, d5, d6] = leaves(7) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array];
    expect(hex(merkleRoot([d0]))).toBe(hex(H(b(0), d0)));
    const l = (d: Uint8Array) => H(b(0), d);
    const n = (x: Uint8Array, y: Uint8Array) => H(b(1), x, y);
    expect(hex(merkleRoot([d0, d1]))).toBe(hex(n(l(d0), l(d1))));
    // 7 leaves: k = 4 -> [0..3] | [4..6]; [4..6]: k = 2 -> [4,5] | [6]
    const left = n(n(l(d0), l(d1)), n(l(d2), l(d3)));
    const right = n(n(l(d4), l(d5)), l(d6));
    expect(hex(merkleRoot([d0, d1, d2, d3, d4, d5, d6]))).toBe(hex(n(left, right)));
  });

  it("matches the RFC's MTH and PATH for every tree of 1..64 leaves, and every proof verifies", () => {
    for (let size = 1; size <= 64; size++) {
      const d = leaves(size);
      const tree = buildMerkleTree(d);
      expect(hex(tree.root)).toBe(hex(mth(d)));
      for (let m = 0; m < size; m++) {
        const proof = proofFromTree(tree, m);
        expect(proof.map(hex)).toEqual(path(m, d).map(hex));
        expect(verifyInclusion(leafHash(d[m] as Uint8Array), m, size, proof, tree.root)).toBe(true);
      }
    }
  });

  it("rejects a flipped byte, a wrong index or size, and a proof too long or too short", () => {
    for (const size of [1, 2, 3, 5, 7, 8, 13, 33, 64]) {
      const d = leaves(size);
      const tree = buildMerkleTree(d);
      for (let m = 0; m < size; m++) {
        const h = leafHash(d[m] as Uint8Array);
        const proof = proofFromTree(tree, m);
        const flippedLeaf = h.slice();
        flippedLeaf[m % 32] = (flippedLeaf[m % 32] as number) ^ 0x01;
        expect(verifyInclusion(flippedLeaf, m, size, proof, tree.root)).toBe(false);
        const flippedRoot = tree.root.slice();
        flippedRoot[31] = (flippedRoot[31] as number) ^ 0x80;
        expect(verifyInclusion(h, m, size, proof, flippedRoot)).toBe(false);
        proof.forEach((p, i) => {
          const bad = proof.map((q) => q.slice());
          (bad[i] as Uint8Array)[0] = (p[0] as number) ^ 0xff;
          expect(verifyInclusion(h, m, size, bad, tree.root)).toBe(false);
        });
        for (let other = 0; other < size; other++) {
          if (other !== m) expect(verifyInclusion(h, other, size, proof, tree.root)).toBe(false);
        }
        // a wrong size changes the fold unless both sizes give the leaf the same path shape (e.g. leaf 0 of
        // 5 or 6 leaves): sizes are bound by the anchored sequence range, not by the proof (see merkle.ts)
        if ((size & (size - 1)) === 0) expect(verifyInclusion(h, m, size + 1, proof, tree.root)).toBe(false);
        if (size > 1) expect(verifyInclusion(h, m, size - 1, proof, tree.root)).toBe(m < size - 1 && samePathShape(m, size, size - 1));
        expect(verifyInclusion(h, size, size, proof, tree.root)).toBe(false);
        expect(verifyInclusion(h, -1, size, proof, tree.root)).toBe(false);
        expect(verifyInclusion(h, m, size, [...proof, tree.root], tree.root)).toBe(false);
        if (proof.length > 0) expect(verifyInclusion(h, m, size, proof.slice(0, -1), tree.root)).toBe(false);
      }
    }
  });

  it("inclusionProof builds the tree itself; out-of-range indices throw", () => {
    const d = leaves(10);
    expect(inclusionProof(d, 9).map(hex)).toEqual(path(9, d).map(hex));
    expect(() => inclusionProof(d, 10)).toThrow(RangeError);
    expect(() => inclusionProof([], 0)).toThrow(RangeError);
    expect(rootFromInclusionProof(leafHash(d[0] as Uint8Array), 0, 10, [])).toBeUndefined();
  });

  it("anchorBatch: leaves are the canonical JSON of the records; every stored proof verifies against the root", () => {
    const records = Array.from({ length: 11 }, (_, i) => ({ task_id: `tsk_${i}`, sequence: i + 1, posterior: { dog: 0.1, cat: 0.9 } }));
    const bytes = records.map((r) => utf8ToBytes(canonicalJson(r)));
    const batch = anchorBatch(records);
    expect(batch.root).toBe(`0x${hex(merkleRoot(bytes))}`);
    expect(batch.proofs).toHaveLength(11);
    batch.proofs.forEach((json, i) => {
      const proof = (JSON.parse(json) as string[]).map((h) => Uint8Array.from(Buffer.from(h.slice(2), "hex")));
      expect(verifyInclusion(leafHash(bytes[i] as Uint8Array), i, 11, proof, merkleRoot(bytes))).toBe(true);
    });
    expect(() => anchorBatch([])).toThrow(RangeError);
  });
});
