/**
 * verifySettlement against a real anvil started here and a batch anchored here (sample records, the root
 * anchored by the anchor client): every leaf of a valid batch verifies; each tampering fails with its own
 * reason; and an independent verifier (raw JSON-RPC + @noble/hashes keccak, test/independent-verifier.ts)
 * reaches the same verdict on every case.
 */
import { type AnchorClient, type Anvil, createAnchorClient, startAnvil } from "@labelgate/chain/node";
import { verifySettlement } from "@labelgate/sdk";
import { verifySettlement as verifyFromSubpath } from "@labelgate/sdk/verify";
import { createWalletClient, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type AnchoredBatch, anchorBatch, fundedKey, LOCAL_SETTLEMENT, rpc, sampleRecords } from "../../chain/test/helpers";
import { independentVerdict } from "./independent-verifier";

let anvil: Anvil;
let client: AnchorClient;
let batch: AnchoredBatch;

beforeAll(async () => {
  anvil = await startAnvil();
  client = await createAnchorClient({ rpcUrl: anvil.rpcUrl, privateKey: await fundedKey(anvil.rpcUrl) });
  await client.deploy();
  batch = await anchorBatch(client, sampleRecords(13, 100));
});
afterAll(async () => {
  await anvil?.stop();
});

type Result = AnchoredBatch["results"][number];
const clone = (r: Result): Result => JSON.parse(JSON.stringify(r)) as Result;
/** `hex` with the byte at `at` xor 0x01 */
const flipHex = (hex: string, at = 1): Hex => {
  const i = 2 + 2 * at;
  const byte = (Number.parseInt(hex.slice(i, i + 2), 16) ^ 1).toString(16).padStart(2, "0");
  return `${hex.slice(0, i)}${byte}${hex.slice(i + 2)}` as Hex;
};
const flipChar = (s: string) => `${String.fromCharCode(s.charCodeAt(0) ^ 1)}${s.slice(1)}`;

/** Both verifiers; asserts they agree and returns verifySettlement's verdict. */
async function verdict(result: unknown, confirmations = 1) {
  const v = await verifySettlement(result, { rpcUrl: anvil.rpcUrl, confirmations });
  const independent = await independentVerdict(result as Record<string, unknown>, anvil.rpcUrl, confirmations);
  expect(independent).toEqual(v.ok ? { ok: true } : { ok: false, reason: v.reason });
  return v;
}

/** Verifies a copy of `batch.results[i]` changed by `tamper` and expects it to fail with `reason`. */
async function expectTamperedFails(i: number, reason: string, tamper: (r: Result) => void) {
  const r = clone(batch.results[i] as Result);
  tamper(r);
  expect(await verdict(r)).toMatchObject({ ok: false, reason });
}

describe("verifySettlement", () => {
  it("verifies every leaf of an anchored batch, with the chain's figures", async () => {
    for (const [i, result] of batch.results.entries()) {
      const v = await verdict(result);
      expect(v).toMatchObject({
        ok: true,
        ledger_txid: batch.txid,
        chain_id: 31337,
        block_number: Number(batch.receipt.blockNumber),
        contract: client.contract,
        leaf_index: i,
        tree_size: 13,
        sequence: 100 + i,
        first_sequence: 100,
        last_sequence: 112,
      });
    }
    expect((await verifyFromSubpath(batch.results[0], { rpcUrl: anvil.rpcUrl })).ok).toBe(true);
  });

  it("fails a changed consensus_label, confidence or posterior with leaf_mismatch", async () => {
    await expectTamperedFails(3, "leaf_mismatch", (r) => {
      r.consensus_label = flipChar(r.consensus_label as string);
    });
    await expectTamperedFails(3, "leaf_mismatch", (r) => {
      r.confidence = (r.confidence as number) + 0.0001;
    });
    await expectTamperedFails(3, "leaf_mismatch", (r) => {
      (r.posterior as Record<string, number>).cat = 0.5;
    });
    await expectTamperedFails(3, "leaf_mismatch", (r) => {
      r.settlement.prev_hash = flipHex(`0x${r.settlement.prev_hash}`).slice(2);
    });
  });

  it("fails a changed proof, root, leaf index or tree size with proof_invalid", async () => {
    await expectTamperedFails(5, "proof_invalid", (r) => {
      r.settlement.proof[1] = flipHex(r.settlement.proof[1] as string, 31);
    });
    await expectTamperedFails(5, "proof_invalid", (r) => {
      r.settlement.merkle_root = flipHex(r.settlement.merkle_root, 0);
    });
    await expectTamperedFails(5, "proof_invalid", (r) => {
      r.settlement.leaf_index = 4;
    });
    await expectTamperedFails(12, "proof_invalid", (r) => {
      r.settlement.tree_size = 16;
    });
  });

  it("fails a changed txid with tx_not_found, another chain id with wrong_chain, another block with block_mismatch", async () => {
    await expectTamperedFails(0, "tx_not_found", (r) => {
      r.settlement.ledger_txid = flipHex(r.settlement.ledger_txid, 31);
    });
    await expectTamperedFails(0, "wrong_chain", (r) => {
      r.settlement.chain_id = 1;
    });
    await expectTamperedFails(0, "block_mismatch", (r) => {
      r.settlement.block_number += 1;
    });
  });

  it("fails a self-consistent forged tree with root_mismatch", async () => {
    // a record changed and a tree rebuilt around it: leaf and proof agree, the chain anchored another root
    const { buildMerkleTree, evmSettlement, leafBytes } = await import("@labelgate/chain");
    const forged = batch.records.map((r) => ({ ...r }));
    (forged[2] as (typeof forged)[number]).consensus_label = "forged";
    const tree = buildMerkleTree(forged.map(leafBytes));
    const real = batch.results[2] as Result;
    const settlement = evmSettlement(forged[2] as (typeof forged)[number], tree, 2, {
      txid: real.settlement.ledger_txid,
      chainId: real.settlement.chain_id,
      blockNumber: real.settlement.block_number,
      contract: real.settlement.contract,
    });
    expect(await verdict({ ...real, consensus_label: "forged", settlement })).toMatchObject({ ok: false, reason: "root_mismatch" });
  });

  it("fails a reverted anchor, a transaction to another contract, and a transaction without Anchored", async () => {
    // reverted: a stranger's anchor of the right contract, mined with a fixed gas limit
    const stranger = await createAnchorClient({
      rpcUrl: anvil.rpcUrl,
      privateKey: await fundedKey(anvil.rpcUrl),
      contract: client.contract,
    });
    const reverted = await stranger.sendAnchor({
      root: batch.results[0]?.settlement.merkle_root as Hex,
      firstSequence: 100,
      lastSequence: 112,
      nonce: 0,
      gas: 100_000n,
    });
    await stranger.waitForReceipt(reverted);
    await expectTamperedFails(0, "tx_reverted", (r) => {
      r.settlement.ledger_txid = reverted;
    });
    // another deployment of the contract claimed as the one anchored to
    const other = await createAnchorClient({ rpcUrl: anvil.rpcUrl, privateKey: await fundedKey(anvil.rpcUrl) });
    const otherContract = (await other.deploy()).contract;
    await expectTamperedFails(0, "wrong_contract", (r) => {
      r.settlement.contract = otherContract;
    });
    // a plain transfer to an account named as "contract": right address, no Anchored event
    const key = await fundedKey(anvil.rpcUrl);
    const wallet = createWalletClient({ account: privateKeyToAccount(key), transport: http(anvil.rpcUrl) });
    const to = privateKeyToAccount(await fundedKey(anvil.rpcUrl)).address;
    const transfer = await wallet.sendTransaction({ to, value: 1n, chain: null });
    const receipt = await client.waitForReceipt(transfer);
    await expectTamperedFails(0, "no_anchored_event", (r) => {
      r.settlement.ledger_txid = transfer;
      r.settlement.contract = to;
      r.settlement.block_number = Number(receipt.blockNumber);
    });
  });

  it("fails a leaf outside the anchored sequence range with sequence_out_of_range", async () => {
    const misranged = await anchorBatch(client, sampleRecords(4, 200), { first: 300, last: 303 });
    expect(await verdict(misranged.results[1])).toMatchObject({ ok: false, reason: "sequence_out_of_range" });
    // in range, but the tree claims more leaves than the range holds
    const narrow = await anchorBatch(client, sampleRecords(4, 400), { first: 400, last: 402 });
    expect(await verdict(narrow.results[0])).toMatchObject({ ok: false, reason: "sequence_out_of_range" });
    // in range, but its leaf index is past its place in the range (leaf 1 claims sequence 600 of 600..603)
    const records = sampleRecords(4, 600).map((r, i) => (i === 1 ? { ...r, sequence: 600 } : r));
    const shifted = await anchorBatch(client, records, { first: 600, last: 603 });
    expect(await verdict(shifted.results[0])).toMatchObject({ ok: true });
    expect(await verdict(shifted.results[1])).toMatchObject({ ok: false, reason: "sequence_out_of_range" });
  });

  it("counts confirmations: insufficient until enough blocks are mined", async () => {
    const fresh = await anchorBatch(client, sampleRecords(2, 500));
    const v = await verdict(fresh.results[0], 3);
    expect(v).toMatchObject({ ok: false, reason: "insufficient_confirmations", confirmations: 1, required: 3 });
    await rpc(anvil.rpcUrl, "anvil_mine", ["0x2"]);
    expect(await verdict(fresh.results[0], 3)).toMatchObject({ ok: true, confirmations: 3 });
  });

  it("fails a local settlement with not_anchored, a malformed one with malformed_result, a dead RPC with rpc_error", async () => {
    const { settlement: _, ...fields } = batch.results[0] as Result;
    expect(await verdict({ ...fields, settlement: LOCAL_SETTLEMENT })).toMatchObject({ ok: false, reason: "not_anchored" });
    const { posterior: __, ...noPosterior } = batch.results[0] as Result;
    expect(await verdict(noPosterior)).toMatchObject({ ok: false, reason: "malformed_result" });
    const badProof = clone(batch.results[0] as Result);
    (badProof.settlement.proof as string[])[0] = "0x12";
    expect(await verifySettlement(badProof, { rpcUrl: anvil.rpcUrl })).toMatchObject({ ok: false, reason: "malformed_result" });
    expect(await verifySettlement(null, { rpcUrl: anvil.rpcUrl })).toMatchObject({ ok: false, reason: "malformed_result" });
    const dead = await verifySettlement(batch.results[0], { rpcUrl: "http://127.0.0.1:1", timeoutMs: 2000 });
    expect(dead).toMatchObject({ ok: false, reason: "rpc_error" });
  });

  it("uses the fetch it is given for every RPC call", async () => {
    const methods: string[] = [];
    const counting: typeof fetch = (input, init) => {
      methods.push((JSON.parse(String(init?.body)) as { method: string }).method);
      return fetch(input, init);
    };
    expect((await verifySettlement(batch.results[0], { rpcUrl: anvil.rpcUrl, fetch: counting })).ok).toBe(true);
    expect(methods).toEqual(["eth_chainId", "eth_getTransactionReceipt", "eth_blockNumber"]);
  });
});
