/**
 * Chaos, on-chain settlement (LEDGER=evm, contract §settlement): each scenario runs its own cluster
 * (test/chaos/harness.ts) on its own anvil, under a load of real crowd labels:
 *  - the chain stopped for 10 s during the labeling (then started again on the same port and state);
 *  - an anchor transaction dropped from the pool (automine off, `anvil_dropTransaction`);
 *  - a reorg of a confirmed anchor's block (`anvil_reorg`);
 *  - the consensus worker killed with `kill -9` between an anchor's send and its confirmation (blocks every
 *    2 s, so the transaction waits in the pool).
 * After each: the invariant of test/chaos/invariant.ts (every task settled exactly once, every event
 * delivered, no label lost), every anchor confirmed and every record in exactly one, and every result's
 * proof verified with verifySettlement and with the independent raw JSON-RPC verifier.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Anvil, type AnvilOptions, startAnvil } from "@labelgate/chain/node";
import { verifySettlement } from "@labelgate/sdk";
import { createDb } from "@labelgate/store";
import { fundedKey, rpc } from "../../packages/chain/test/helpers";
import { independentVerdict } from "../../packages/sdk/test/independent-verifier";
import { eventually } from "../system";
import { type Cluster, explainFailure, freePort, type Receiver, startCluster, startReceiver } from "./harness";
import { checkInvariant, type InvariantCounts } from "./invariant";
import { type Customer, customerWithWebhook, dogItems, faultDuring, Load } from "./load";

jest.setTimeout(240_000);

const ITEMS = 60;
const results: Record<string, unknown> = {};

interface ChainCluster {
  anvil: Anvil;
  cluster: Cluster;
  healthy: Receiver;
  db: ReturnType<typeof createDb>;
  stateDir: string;
  port: number;
  close(): Promise<void>;
}

let current: ChainCluster | undefined;

/** anvil (own port and state directory), a funded key, and a cluster settling on it. */
async function chainCluster(anvilOptions: AnvilOptions = {}): Promise<ChainCluster> {
  const stateDir = mkdtempSync(path.join(tmpdir(), "lgchaos-anvil-"));
  const port = await freePort();
  // every part is stopped and the folder removed whatever failed before (issue 28 item 9: a failed start or
  // close left anvil running with its state folder)
  const parts: { anvil?: Anvil; close: (() => Promise<void>)[] } = { close: [] };
  const closeAll = async () => {
    const failures: unknown[] = [];
    for (const close of parts.close.reverse()) await close().catch((err: unknown) => failures.push(err));
    await parts.anvil?.stop().catch((err: unknown) => failures.push(err));
    rmSync(stateDir, { recursive: true, force: true });
    if (failures.length > 0) throw failures[0];
  };
  try {
    parts.anvil = await startAnvil({ ...anvilOptions, port, stateDir });
    const key = await fundedKey(parts.anvil.rpcUrl);
    const cluster = await startCluster({
      LEDGER: "evm",
      EVM_RPC_URL: parts.anvil.rpcUrl,
      EVM_PRIVATE_KEY: key,
      ANCHOR_INTERVAL_MS: "500",
    });
    parts.close.push(() => cluster.close());
    const healthy = await startReceiver("healthy");
    parts.close.push(() => healthy.close());
    const db = createDb({ url: cluster.pg.databaseUrl, poolMax: 2 });
    parts.close.push(() => db.close());
    const cc: ChainCluster = {
      get anvil() {
        return parts.anvil as Anvil;
      },
      set anvil(a: Anvil) {
        parts.anvil = a;
      },
      cluster,
      healthy,
      db,
      stateDir,
      port,
      close: closeAll,
    };
    current = cc;
    return cc;
  } catch (err) {
    await closeAll().catch(() => undefined);
    throw err;
  }
}

afterEach(async () => {
  await current?.close();
  current = undefined;
});

afterAll(() => {
  for (const [name, figures] of Object.entries(results)) console.log(`chaos ${name}: ${JSON.stringify(figures)}`);
});

/** The anchor checks and every result's proof, after the invariant held. */
async function checkAnchors(cc: ChainCluster, customer: Customer, ids: string[]) {
  const anchors = await cc.db.prisma.anchor.findMany({ orderBy: { firstSeq: "asc" } });
  const unconfirmed = anchors.filter((a) => a.state !== "confirmed");
  expect(unconfirmed.map((a) => String(a.id))).toEqual([]);
  // consecutive, disjoint ranges covering every record once
  let next = 1n;
  for (const a of anchors) {
    expect(a.firstSeq).toBe(next);
    next = a.lastSeq + 1n;
  }
  const records = await cc.db.prisma.ledgerEntry.count();
  expect(Number(next - 1n)).toBe(records);
  expect(await cc.db.prisma.ledgerEntry.count({ where: { anchorId: null } })).toBe(0);

  let verified = 0;
  for (const id of ids) {
    const result = (await customer.client.tasks.result(id)) as unknown as Record<string, unknown>;
    const verdict = await verifySettlement(result, { rpcUrl: cc.anvil.rpcUrl });
    expect({ id, verdict }).toMatchObject({ id, verdict: { ok: true } });
    expect({ id, independent: await independentVerdict(result, cc.anvil.rpcUrl) }).toEqual({ id, independent: { ok: true } });
    verified++;
  }
  return {
    anchors: anchors.length,
    sends: anchors.reduce((n, a) => n + a.sends, 0),
    resigned: anchors.filter((a) => a.txHashes.length > 1).length,
    proofsVerified: verified,
  };
}

/** Runs the load with `fault` after `atLabels` labels, then the invariant and the anchor checks. */
async function scenario(
  name: string,
  cc: ChainCluster,
  atLabels: number,
  fault: (cc: ChainCluster) => Promise<Record<string, unknown> | undefined>,
): Promise<InvariantCounts> {
  return explainFailure(cc.cluster, async () => {
    const load = new Load(cc.cluster.baseUrl);
    const { items, options } = dogItems(ITEMS, 0);
    const customer = await customerWithWebhook(load, cc.healthy, 10_000);
    const run = load.run(customer, items, options);
    const faultFigures = await faultDuring(load, run, atLabels, () => fault(cc));
    const counts = await checkInvariant({ databaseUrl: cc.cluster.pg.databaseUrl, customer, record: load.record, healthy: cc.healthy });
    expect(counts.tasksSettled).toBe(ITEMS);
    const anchors = await checkAnchors(cc, customer, [...load.record.acceptedTasks]);
    results[name] = { ...counts, ...anchors, ...faultFigures };
    return counts;
  });
}

/** The anchor in flight (state sent) once one is, polled with a deadline. */
async function sentAnchor(cc: ChainCluster, timeoutMs = 30_000) {
  return eventually(
    async () =>
      (await cc.db.prisma.anchor.findFirst({ where: { state: "sent", sends: { gte: 1 } }, orderBy: { firstSeq: "asc" } })) ?? undefined,
    timeoutMs,
    "an anchor sent and not confirmed",
  );
}

describe("LEDGER=evm under chain faults", () => {
  it("the chain stopped for 10 s during the labeling: anchors resume, every task settles once", async () => {
    const cc = await chainCluster();
    await scenario("chain stopped 10 s", cc, 30, async (c) => {
      const stoppedAt = Date.now();
      await c.anvil.stop();
      // the deliberate outage, on a timer (the chain is down: nothing to poll)
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      c.anvil = await startAnvil({ port: c.port, stateDir: c.stateDir });
      return { chainOutageMs: Date.now() - stoppedAt };
    });
  });

  it("an anchor transaction dropped from the pool is broadcast again", async () => {
    const cc = await chainCluster();
    let dropped: bigint | undefined;
    await scenario("anchor tx dropped", cc, 20, async (c) => {
      await rpc(c.anvil.rpcUrl, "evm_setAutomine", [false]);
      const anchor = await sentAnchor(c);
      dropped = anchor.id;
      await rpc(c.anvil.rpcUrl, "anvil_dropTransaction", [anchor.txHash]);
      // no check that the pool lost it: the anchorer may see it gone and broadcast it again before this line runs
      // the anchorer sees it gone and sends it again; then blocks are mined again
      await eventually(
        async () => ((await c.db.prisma.anchor.findUnique({ where: { id: anchor.id } }))?.sends ?? 0) >= 2 || undefined,
        30_000,
        "the dropped anchor sent again",
      );
      await rpc(c.anvil.rpcUrl, "evm_setAutomine", [true]);
      await rpc(c.anvil.rpcUrl, "evm_mine");
      return { droppedAnchor: String(anchor.id) };
    });
    const anchor = await cc.db.prisma.anchor.findUniqueOrThrow({ where: { id: dropped as bigint } });
    expect(anchor.state).toBe("confirmed");
    expect(anchor.sends).toBeGreaterThanOrEqual(2);
  });

  it("a reorg of a confirmed anchor's block: the anchor is sent again and its proofs hold", async () => {
    const cc = await chainCluster();
    let reorged: { id: bigint; blockHash: string | null } | undefined;
    await scenario("anchor block reorged", cc, 30, async (c) => {
      const anchor = await eventually(
        async () => (await c.db.prisma.anchor.findFirst({ where: { state: "confirmed" }, orderBy: { firstSeq: "desc" } })) ?? undefined,
        30_000,
        "a confirmed anchor",
      );
      reorged = { id: anchor.id, blockHash: anchor.blockHash };
      // no block is mined between reading the head and the reorg (automine off): a block mined in between
      // would leave the anchor's block canonical and the anchor confirmed where it was
      await rpc(c.anvil.rpcUrl, "evm_setAutomine", [false]);
      const head = BigInt(await rpc<string>(c.anvil.rpcUrl, "eth_blockNumber"));
      const depth = Number(head - (anchor.blockNumber as bigint)) + 1;
      await rpc(c.anvil.rpcUrl, "anvil_reorg", [depth, []]);
      const atAnchorHeight = await rpc<{ hash: string }>(c.anvil.rpcUrl, "eth_getBlockByNumber", [
        `0x${(anchor.blockNumber as bigint).toString(16)}`,
        false,
      ]);
      expect(atAnchorHeight.hash).not.toBe(anchor.blockHash);
      // transactions sent while automine was off are mined now, then every new one at once again
      await rpc(c.anvil.rpcUrl, "evm_setAutomine", [true]);
      await rpc(c.anvil.rpcUrl, "evm_mine");
      await eventually(
        async () => {
          const now = await c.db.prisma.anchor.findUnique({ where: { id: anchor.id } });
          return now?.state === "confirmed" && now.blockHash !== anchor.blockHash ? true : undefined;
        },
        30_000,
        "the reorged anchor confirmed again",
      );
      return { reorgDepth: depth };
    });
    const anchor = await cc.db.prisma.anchor.findUniqueOrThrow({ where: { id: reorged?.id as bigint } });
    expect(anchor.blockHash).not.toBe(reorged?.blockHash);
    expect(anchor.sends).toBeGreaterThanOrEqual(2);
  });

  it("kill -9 of the consensus worker between an anchor's send and its confirmation", async () => {
    const cc = await chainCluster({ blockTime: 2 });
    let killed: bigint | undefined;
    await scenario("consensus worker kill -9 between send and confirm", cc, 20, async (c) => {
      const anchor = await sentAnchor(c);
      killed = anchor.id;
      await c.cluster.killAndRestart("consensus-worker", 1000);
      return { killedWithAnchor: String(anchor.id), txPendingAtKill: anchor.txHash };
    });
    const anchor = await cc.db.prisma.anchor.findUniqueOrThrow({ where: { id: killed as bigint } });
    expect(anchor.state).toBe("confirmed");
    // resumed from its row: the same transaction, never a second anchor of its records
    expect(anchor.txHashes).toHaveLength(1);
  });
});
