/**
 * The anchor client and anvil launcher against a real anvil started here: deploy, anchor with an explicit
 * nonce, the Anchored event decoded, onlyOwner and the range check enforced on chain, a dropped transaction
 * (anvil_dropTransaction) and a reorged-out one (anvil_reorg) detected, the state file of a stopped chain
 * loaded again, and the gas of an anchor of 1,024 leaves measured (target <= 50 gas per leaf).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Anvil, anchoredEvents, buildMerkleTree, createAnchorClient, leafBytes, startAnvil, toHex } from "@labelgate/chain/node";
import { type Hex, keccak256, toBytes } from "viem";
import { anchorBatch, fundedKey, rpc, sampleRecords } from "./helpers";

let anvil: Anvil;

beforeAll(async () => {
  anvil = await startAnvil();
});
afterAll(async () => {
  await anvil?.stop();
});

const root = (label: string): Hex => keccak256(toBytes(label));

/** Polls `check` every 50 ms until it returns true or `ms` pass. */
async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met before the deadline");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("anchor client on anvil", () => {
  it("deploys, anchors a 1,024-leaf batch with an explicit nonce, decodes Anchored; gas per leaf <= 50", async () => {
    const client = await createAnchorClient({ rpcUrl: anvil.rpcUrl, privateKey: await fundedKey(anvil.rpcUrl) });
    expect(client.chainId).toBe(31337);
    const deployed = await client.deploy();
    expect(client.contract).toBe(deployed.contract);
    const owner = await client.publicClient.readContract({
      address: deployed.contract,
      abi: (await import("@labelgate/chain")).ANCHOR_ABI,
      functionName: "owner",
    });
    expect(owner).toBe(client.address);

    const batch = await anchorBatch(client, sampleRecords(1024, 1));
    expect(batch.receipt.status).toBe("success");
    const status = await client.status(batch.txid);
    expect(status.state).toBe("mined");
    if (status.state !== "mined") return;
    expect(status.confirmations).toBe(1);
    expect(status.events).toEqual([
      { contract: deployed.contract, root: toHex(batch.tree.root), firstSequence: 1n, lastSequence: 1024n, logIndex: 0 },
    ]);
    expect(anchoredEvents(batch.receipt, "0x0000000000000000000000000000000000000001")).toEqual([]);
    await rpc(anvil.rpcUrl, "evm_mine");
    const later = await client.status(batch.txid);
    expect(later.state === "mined" && later.confirmations).toBe(2);

    const gas = Number(batch.receipt.gasUsed);
    process.stdout.write(
      `anchor gas: ${gas} per anchor, ${(gas / 1024).toFixed(1)} per leaf at 1,024 leaves; deployment ${deployed.gasUsed}\n`,
    );
    expect(gas / 1024).toBeLessThanOrEqual(50);
  });

  it("signs before sending: the hash is known first and is the one the node reports", async () => {
    const client = await createAnchorClient({ rpcUrl: anvil.rpcUrl, privateKey: await fundedKey(anvil.rpcUrl) });
    await client.deploy();
    const nonce = await client.nonce();
    const signed = await client.signAnchor({ root: root("signed"), firstSequence: 5, lastSequence: 9, nonce });
    expect(await client.receipt(signed.txid)).toBeUndefined();
    expect((await client.status(signed.txid)).state).toBe("dropped");
    expect(await client.broadcast(signed.serialized)).toBe(signed.txid);
    expect((await client.waitForReceipt(signed.txid)).status).toBe("success");
    expect(await client.nonce()).toBe(nonce + 1);
  });

  it("enforces onlyOwner and first <= last on chain; a mined revert is reported as reverted", async () => {
    const owner = await createAnchorClient({ rpcUrl: anvil.rpcUrl, privateKey: await fundedKey(anvil.rpcUrl) });
    const { contract } = await owner.deploy();
    const stranger = await createAnchorClient({ rpcUrl: anvil.rpcUrl, privateKey: await fundedKey(anvil.rpcUrl), contract });
    // estimation refuses a call that would revert
    await expect(stranger.sendAnchor({ root: root("x"), firstSequence: 1, lastSequence: 2, nonce: 0 })).rejects.toThrow(/NotOwner/);
    await expect(owner.sendAnchor({ root: root("x"), firstSequence: 3, lastSequence: 2, nonce: await owner.nonce() })).rejects.toThrow(
      /InvalidRange/,
    );
    // with a fixed gas limit the transaction is mined, reverted
    const txid = await stranger.sendAnchor({ root: root("x"), firstSequence: 1, lastSequence: 2, nonce: 0, gas: 100_000n });
    const receipt = await stranger.waitForReceipt(txid);
    expect(receipt.status).toBe("reverted");
    expect(anchoredEvents(receipt)).toEqual([]);
    expect((await stranger.status(txid)).state).toBe("reverted");
    const txid2 = await owner.sendAnchor({ root: root("y"), firstSequence: 3, lastSequence: 2, nonce: await owner.nonce(), gas: 100_000n });
    expect((await owner.waitForReceipt(txid2)).status).toBe("reverted");
    // first == last is a batch of one
    const txid3 = await owner.sendAnchor({ root: root("z"), firstSequence: 4, lastSequence: 4, nonce: await owner.nonce() });
    expect((await owner.waitForReceipt(txid3)).status).toBe("success");
  });

  it("detects a transaction dropped from the pool (anvil_dropTransaction)", async () => {
    const client = await createAnchorClient({ rpcUrl: anvil.rpcUrl, privateKey: await fundedKey(anvil.rpcUrl) });
    await client.deploy();
    await rpc(anvil.rpcUrl, "evm_setAutomine", [false]);
    try {
      const nonce = await client.nonce();
      const txid = await client.sendAnchor({ root: root("dropped"), firstSequence: 1, lastSequence: 1, nonce, gas: 60_000n });
      expect((await client.status(txid)).state).toBe("pending");
      await rpc(anvil.rpcUrl, "anvil_dropTransaction", [txid]);
      expect((await client.status(txid)).state).toBe("dropped");
      await rpc(anvil.rpcUrl, "evm_mine");
      expect((await client.status(txid)).state).toBe("dropped");
      // the anchorer re-sends the same root with the nonce that is free again
      expect(await client.nonce("pending")).toBe(nonce);
      const again = await client.sendAnchor({ root: root("dropped"), firstSequence: 1, lastSequence: 1, nonce, gas: 60_000n });
      await rpc(anvil.rpcUrl, "evm_mine");
      await until(async () => (await client.status(again)).state === "mined");
    } finally {
      await rpc(anvil.rpcUrl, "evm_setAutomine", [true]);
    }
  });

  it("detects an anchor reorged out of the chain (anvil_reorg) from the block it was seen in", async () => {
    const client = await createAnchorClient({ rpcUrl: anvil.rpcUrl, privateKey: await fundedKey(anvil.rpcUrl) });
    await client.deploy();
    const nonce = await client.nonce();
    const txid = await client.sendAnchor({ root: root("reorged"), firstSequence: 1, lastSequence: 8, nonce });
    const receipt = await client.waitForReceipt(txid);
    await rpc(anvil.rpcUrl, "evm_mine");
    const seen = { blockNumber: receipt.blockNumber, blockHash: receipt.blockHash };
    const before = await client.status(txid, seen);
    expect(before.state === "mined" && before.confirmations).toBe(2);

    await rpc(anvil.rpcUrl, "anvil_reorg", [2, []]);
    expect(await client.isCanonical(seen)).toBe(false);
    const after = await client.status(txid, seen);
    expect(after).toMatchObject({ state: "reorged", blockHash: receipt.blockHash, blockNumber: receipt.blockNumber, inPool: false });
    // anvil forgets a reorged-out transaction (no receipt, not in the pool): without the seen block it looks dropped
    expect(await client.receipt(txid)).toBeUndefined();
    expect((await client.status(txid)).state).toBe("dropped");
    // re-sent with the nonce the reorg freed, the anchor is mined again
    expect(await client.nonce()).toBe(nonce);
    const again = await client.sendAnchor({ root: root("reorged"), firstSequence: 1, lastSequence: 8, nonce });
    const receipt2 = await client.waitForReceipt(again);
    expect(receipt2.status).toBe("success");
    expect(anchoredEvents(receipt2, client.contract)[0]?.root).toBe(root("reorged"));
  });

  it("keeps the chain in a state file under stateDir across a stop and a start", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "lg-anvil-"));
    try {
      const first = await startAnvil({ stateDir: dir });
      const key = await fundedKey(first.rpcUrl);
      const client = await createAnchorClient({ rpcUrl: first.rpcUrl, privateKey: key });
      const { contract } = await client.deploy();
      const tree = buildMerkleTree(sampleRecords(3).map(leafBytes));
      const txid = await client.sendAnchor({ root: toHex(tree.root), firstSequence: 1, lastSequence: 3, nonce: await client.nonce() });
      await client.waitForReceipt(txid);
      await first.stop();
      const second = await startAnvil({ stateDir: dir });
      try {
        const again = await createAnchorClient({ rpcUrl: second.rpcUrl, privateKey: key, contract });
        expect(await again.publicClient.getCode({ address: contract })).toMatch(/^0x[0-9a-f]{10,}$/);
        expect(await again.nonce()).toBe(2);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a malformed key without echoing it", async () => {
    const bad = `0x${"zz".repeat(32)}`;
    await expect(createAnchorClient({ rpcUrl: anvil.rpcUrl, privateKey: bad })).rejects.toThrow(/64 hex digits/);
    await createAnchorClient({ rpcUrl: anvil.rpcUrl, privateKey: bad }).catch((err: Error) => expect(err.message).not.toContain(bad));
  });
});
