import { type Anvil, startAnvil } from "@labelgate/chain/node";
import { verifySettlement } from "@labelgate/sdk";
import { verifyLedger } from "@labelgate/store";
import { privateKeyToAccount } from "viem/accounts";
import { fundedKey, rpc } from "../../../packages/chain/test/helpers";
import { type CliRun, runCli } from "../../../packages/cli/test/run-cli";
import { independentVerdict } from "../../../packages/sdk/test/independent-verifier";
import * as harness from "../../../test/system";
import { json, newSecret, receiver } from "../../../test/webhooks";
import { captureLogs } from "../../manifest-worker/test/helpers";

/** `labelgate <args>` as a real process against the system (RPC URL from EVM_RPC_URL). */
function cli(args: string[], apiKey: string): Promise<CliRun> {
  return runCli(args, { LABELGATE_API_KEY: apiKey, LABELGATE_URL: s.baseUrl, EVM_RPC_URL: anvil.rpcUrl });
}

let anvil: Anvil;
let s: harness.System;
let evmEnv: Record<string, string>;
const logs = captureLogs();

beforeAll(async () => {
  anvil = await startAnvil();
  evmEnv = {
    LEDGER: "evm",
    EVM_RPC_URL: anvil.rpcUrl,
    EVM_PRIVATE_KEY: await fundedKey(anvil.rpcUrl),
    ANCHOR_INTERVAL_MS: "200",
  };
  s = await harness.startSystem({ env: evmEnv, logger: logs.logger });
});

afterAll(async () => {
  await s?.close();
  await anvil?.stop();
});

/** The anchor holding task `taskId`'s ledger record when it is in `state` (and sent at least once, for `sent`). */
async function anchorOfTask(taskId: string, state: "open" | "sent") {
  const entry = await s.db.prisma.ledgerEntry.findUnique({ where: { taskId_revision: { taskId, revision: 1 } } });
  if (!entry?.anchorId) return undefined;
  const a = await s.db.prisma.anchor.findUnique({ where: { id: entry.anchorId } });
  return a?.state === state && (state === "open" || a.sends > 0) ? a : undefined;
}

/** A customer and five labelers named `<prefix>-<i>`. */
async function customerAndLabelers(prefix: string, quota = 100) {
  const customer = await harness.registerCustomer(s, quota);
  const labelers = await Promise.all(Array.from({ length: 5 }, (_, i) => harness.createLabeler(s, `${prefix}-${i}`)));
  return { customer, labelers };
}

/** A new task of `customerKey`, labeled until decided; its id. */
async function decidedTask(customerKey: string, labelers: { key: string }[]): Promise<string> {
  const id = await harness.createTask(s, customerKey);
  await decide(labelers, id);
  return id;
}

/** Runs `body` with anvil's automine off (blocks only by `evm_mine`), then turns it back on. */
async function withManualMining(body: () => Promise<void>): Promise<void> {
  await rpc(anvil.rpcUrl, "evm_setAutomine", [false]);
  try {
    await body();
  } finally {
    await rpc(anvil.rpcUrl, "evm_setAutomine", [true]);
  }
}

/** Mines a block, then expects task `taskId` settled by transaction `txHash` with a proof that verifies on chain. */
async function mineAndVerify(customerKey: string, taskId: string, txHash: string | null): Promise<void> {
  await rpc(anvil.rpcUrl, "evm_mine");
  const result = await harness.settledResult(s, customerKey, taskId);
  expect(result.settlement).toMatchObject({ ledger: "evm", ledger_txid: txHash });
  expect(await verifySettlement(result, { rpcUrl: anvil.rpcUrl })).toMatchObject({ ok: true });
}

/** Labels `taskId` "cat" with each labeler until its label decides it (labels_needed 0). */
async function decide(labelers: { key: string }[], taskId: string): Promise<void> {
  for (const l of labelers) {
    const res = await harness.label(s, l.key, taskId, "cat");
    expect(res.status).toBe(201);
    if ((res.body as { labels_needed?: number }).labels_needed === 0) return;
  }
  throw new Error(`task ${taskId} was not decided by ${labelers.length} labels`);
}

describe("LEDGER=evm", () => {
  it("settles tasks once their anchor is confirmed, with proofs that verify against the chain", async () => {
    const customer = await harness.registerCustomer(s, 1000);
    const labelers = await Promise.all(Array.from({ length: 5 }, (_, i) => harness.createLabeler(s, `anchor-${i}`)));
    const standby = await harness.startConsensusWorkers(s, 4, evmEnv);
    try {
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push(await harness.createTask(s, customer.key));
      for (const id of ids) await decide(labelers, id);

      const results = await Promise.all(ids.map((id) => harness.settledResult(s, customer.key, id)));
      const txids = new Set<string>();
      for (const result of results) {
        const settlement = result.settlement as Record<string, unknown>;
        expect(settlement.ledger).toBe("evm");
        expect(settlement.chain_id).toBe(31337);
        txids.add(settlement.ledger_txid as string);
        const verdict = await verifySettlement(result, { rpcUrl: anvil.rpcUrl });
        expect(verdict).toMatchObject({ ok: true });
        expect(await independentVerdict(result, anvil.rpcUrl)).toEqual({ ok: true });

        const task = await s.db.prisma.task.findUniqueOrThrow({ where: { id: result.task_id as string } });
        expect(task.status).toBe("settled");
        expect(task.ledgerTxid).toBe(settlement.ledger_txid);
        const events = await s.db.prisma.event.findMany({ where: { taskId: task.id, type: "task.settled" } });
        expect(events).toHaveLength(1);
        expect(events[0]?.payload).toMatchObject({ ledger_txid: settlement.ledger_txid, settled_at: result.settled_at });
      }
      // one leader anchored: every anchor confirmed, every record in exactly one anchor
      const anchors = await s.db.prisma.anchor.findMany({ orderBy: { firstSeq: "asc" } });
      expect(anchors.every((a) => a.state === "confirmed")).toBe(true);
      expect(anchors.length).toBeLessThanOrEqual(ids.length);
      expect(new Set(anchors.map((a) => a.txHash)).size).toBe(anchors.length);
      for (const t of txids) expect(anchors.map((a) => a.txHash)).toContain(t);
      const entries = await s.db.prisma.ledgerEntry.findMany({ orderBy: { seq: "asc" } });
      expect(entries.every((e) => e.anchorId !== null)).toBe(true);
      expect(anchors.reduce((n, a) => n + a.treeSize, 0)).toBe(entries.length);
      expect((await verifyLedger(s.db.prisma)).ok).toBe(true);
      const contracts = await s.db.prisma.anchorContract.findMany();
      expect(contracts).toHaveLength(1);

      // the CLI on a real result: holds, exit 0
      const ran = await cli(["verify", ids[0] as string], customer.key);
      expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: "" });
      expect(JSON.parse(ran.stdout)).toMatchObject({ task_id: ids[0], ok: true });

      // one byte of the leaf changed: the verifiers refuse it with a reason
      const result = results[0] as Record<string, unknown> & { settlement: { leaf: string } };
      const leaf = result.settlement.leaf;
      const flipped = `${leaf.slice(0, -2)}${leaf.slice(-2) === "7d" ? "7e" : "7d"}`;
      const tampered = { ...result, settlement: { ...result.settlement, leaf: flipped } };
      expect(await verifySettlement(tampered, { rpcUrl: anvil.rpcUrl })).toMatchObject({ ok: false, reason: "leaf_mismatch" });
      expect((await independentVerdict(tampered, anvil.rpcUrl)).ok).toBe(false);
      const relabeled = { ...result, confidence: 0.5 };
      expect(await verifySettlement(relabeled, { rpcUrl: anvil.rpcUrl })).toMatchObject({ ok: false, reason: "leaf_mismatch" });

      // confirming an anchor again (a resumed anchorer) settles nothing twice and writes no event
      const first = anchors[0];
      if (!first?.txHash || !first.blockHash || first.blockNumber === null || first.gasUsed === null) throw new Error("no anchor");
      const again = await s.store.anchors.confirm(first.id, {
        txHash: first.txHash as `0x${string}`,
        blockNumber: first.blockNumber,
        blockHash: first.blockHash as `0x${string}`,
        gasUsed: first.gasUsed,
      });
      expect(again).toEqual({
        settled: [],
        completedJobIds: [],
        retargeted: 0,
        redeliveries: [],
        followUps: { routeEvent: [], webhookDelivery: [], manifestExport: [] },
      });
      expect(await s.db.prisma.event.count({ where: { taskId: { in: ids }, type: "task.settled" } })).toBe(ids.length);

      // the events go out (no webhook configured: recorded by the webhook worker)
      await harness.eventually(
        async () => ((await s.db.prisma.event.count({ where: { taskId: { in: ids }, recordedAt: null } })) === 0 ? true : undefined),
        15_000,
        "events recorded",
      );
    } finally {
      await standby.close();
    }
  });

  it("keeps a task settling, its result 202, until its anchor is mined and confirmed", async () => {
    const { customer, labelers } = await customerAndLabelers("pending");
    await withManualMining(async () => {
      const id = await decidedTask(customer.key, labelers);
      // the record is appended and its anchor sent, but no block is mined: the task waits, settling
      const anchor = await harness.eventually(() => anchorOfTask(id, "sent"), 15_000, "the task's anchor sent");
      const pending = await s.api("GET", `/v1/tasks/${id}/result`, { token: customer.key });
      expect(pending.status).toBe(202);
      expect(pending.body).toMatchObject({ status: "settling" });
      expect(await s.db.prisma.event.count({ where: { taskId: id } })).toBe(0);
      await mineAndVerify(customer.key, id, anchor.txHash);
    });
  });

  it("closes the next batch while one waits for its receipt, and sends it only after that one confirms", async () => {
    const { customer, labelers } = await customerAndLabelers("ahead");
    await withManualMining(async () => {
      const first = await decidedTask(customer.key, labelers);
      const sent = await harness.eventually(() => anchorOfTask(first, "sent"), 15_000, "the first anchor sent");
      const second = await decidedTask(customer.key, labelers);
      // closed ahead: its tree and proof stored, no transaction signed while the first one is pending
      const ahead = await harness.eventually(() => anchorOfTask(second, "open"), 15_000, "the second batch closed ahead");
      expect(ahead.id).not.toBe(sent.id);
      expect(ahead).toMatchObject({ txHash: null, nonce: null, sends: 0 });
      expect(await s.db.prisma.ledgerEntry.findUnique({ where: { taskId_revision: { taskId: second, revision: 1 } } })).toMatchObject({
        anchorId: ahead.id,
      });
      expect((await s.db.prisma.anchor.findUnique({ where: { id: sent.id } }))?.state).toBe("sent");

      await mineAndVerify(customer.key, first, sent.txHash);
      const next = await harness.eventually(() => anchorOfTask(second, "sent"), 15_000, "the second anchor sent");
      expect(next.nonce).toBe((sent.nonce ?? -2) + 1);
      await mineAndVerify(customer.key, second, next.txHash);
    });
  });

  it("re-signed after a reorg took its nonce: results and webhooks move to the new transaction", async () => {
    const { customer, labelers } = await customerAndLabelers("resign");
    const rx = await receiver();
    try {
      const hook = await s.api("POST", "/v1/webhooks", { token: customer.key, body: { callback_url: rx.url, secret: newSecret() } });
      expect(hook.status).toBe(201);
      const id = await decidedTask(customer.key, labelers);
      const first = await harness.settledResult(s, customer.key, id);
      const oldTx = (first.settlement as { ledger_txid: string }).ledger_txid;
      await harness.eventually(async () => (rx.forTask(id).length > 0 ? true : undefined), 15_000, "the first delivery");
      expect(json(rx.forTask(id)[0] as (typeof rx.received)[number]).ledger_txid).toBe(oldTx);

      // the anchor's block reorged out, and its nonce taken in the new chain by another transaction of the
      // same key: the anchor cannot be broadcast again as it was, so it is signed anew with the next nonce
      const anchor = await s.db.prisma.anchor.findFirstOrThrow({ where: { txHash: oldTx } });
      const account = privateKeyToAccount(evmEnv.EVM_PRIVATE_KEY as `0x${string}`);
      const taker = await account.signTransaction({
        chainId: 31337,
        to: account.address,
        value: 0n,
        gas: 21_000n,
        maxFeePerGas: 10_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
        nonce: anchor.nonce as number,
        type: "eip1559",
      });
      const head = BigInt(await rpc<string>(anvil.rpcUrl, "eth_blockNumber"));
      await rpc(anvil.rpcUrl, "anvil_reorg", [Number(head - (anchor.blockNumber as bigint)) + 1, [[taker, 0]]]);

      const moved = await harness.eventually(
        async () => {
          const a = await s.db.prisma.anchor.findUnique({ where: { id: anchor.id } });
          return a?.state === "confirmed" && a.txHash !== oldTx ? a : undefined;
        },
        30_000,
        "the anchor re-signed and confirmed again",
      );
      const result = await harness.settledResult(s, customer.key, id);
      expect(result.settlement).toMatchObject({ ledger_txid: moved.txHash });
      expect(await verifySettlement(result, { rpcUrl: anvil.rpcUrl })).toMatchObject({ ok: true });
      // the delivery is sent again, with the same event id and the transaction that holds the anchor now
      const again = await harness.eventually(
        async () => rx.forTask(id).find((r) => json(r).ledger_txid === moved.txHash),
        30_000,
        "the task.settled delivery with the new ledger_txid",
      );
      expect(again.headers["x-svc-event-id"]).toBe(rx.forTask(id)[0]?.headers["x-svc-event-id"]);
      const task = await harness.eventually(
        async () => {
          const t = await s.api<{ webhook_status: string; ledger_txid: string }>("GET", `/v1/tasks/${id}`, { token: customer.key });
          return t.body.webhook_status === "delivered" ? t.body : undefined;
        },
        15_000,
        "webhook_status delivered again",
      );
      expect(task.ledger_txid).toBe(moved.txHash);
    } finally {
      await rx.close();
    }
  });

  // last: it resets the chain under the others
  it("a chain reset under it (the contract gone): anchoring stops and says so, never signing again forever", async () => {
    const { customer, labelers } = await customerAndLabelers("reset");
    const before = await decidedTask(customer.key, labelers);
    await harness.settledResult(s, customer.key, before);
    // back to genesis: no contract; the signer funded again, so an anchor sent now would be mined (as a plain transfer)
    const since = logs.text().length;
    await rpc(anvil.rpcUrl, "anvil_reset", []);
    const signer = privateKeyToAccount(evmEnv.EVM_PRIVATE_KEY as `0x${string}`).address;
    await rpc(anvil.rpcUrl, "anvil_setBalance", [signer, "0x56bc75e2d63100000"]);
    const after = await decidedTask(customer.key, labelers);
    // every tick fails naming the contract; after 10 s of it, "anchoring stalled" with the same reason
    await harness.eventually(
      async () => {
        const stalled = logs
          .text()
          .slice(since)
          .split("\n")
          .find((l) => l.includes("anchoring stalled"));
        return stalled?.includes("has no code") ? true : undefined;
      },
      45_000,
      "the anchorer to say anchoring stalled on a contract without code",
    );
    expect(logs.text().slice(since)).toContain("has no code on chain 31337 (a reset chain? set ANCHOR_CONTRACT_ADDRESS)");
    // nothing was sent to the reset chain: not the confirmed anchor again, not the new one
    expect(logs.text().slice(since)).not.toMatch(/anchor transaction broadcast again|anchor sent|mined without its Anchored event/);
    const task = await s.api<{ status: string }>("GET", `/v1/tasks/${after}`, { token: customer.key });
    expect(task.body.status).toBe("settling");
  });
});
