/**
 * The anchorer (LEDGER=evm, contract §settlement): batches appended ledger records under a Merkle root,
 * anchors the root on an EVM chain with `anchor(root, first, last)` and, once the transaction has
 * EVM_CONFIRMATIONS, settles the batch's tasks and enqueues their `task.settled` events.
 *
 * - One leader at a time: a Postgres session advisory lock on a dedicated connection (store
 *   `anchors.leaderLock`); every other consensus worker stands by and takes over when the leader's
 *   session ends.
 * - Every step is a row first (packages/store/src/anchors.ts): the batch is stored before a transaction is
 *   signed, and the signed transaction (hash, raw bytes, nonce) before it is broadcast. Each tick resumes
 *   from the rows, so a crash anywhere resumes the same anchor: a `sent` anchor is checked by its receipt;
 *   pending → wait; dropped or reorged out → the same raw transaction broadcast again when its nonce is
 *   still free (same hash), else re-signed with the next nonce; reverted → re-signed. One anchor is in
 *   flight at a time and a record belongs to one anchor, so no record is anchored twice. While it waits
 *   for its receipt, the next due batch is closed ahead (stored, not signed), ready to send once it confirms.
 * - Reorgs: when the chain head changed, confirmed anchors in the last ANCHOR_REORG_DEPTH blocks are
 *   checked; one whose block left the canonical chain is reopened (`sent`) and goes through the same path.
 * - RPC failures are logged and retried at the next tick; the signing key stays inside viem's account.
 */
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { AnchorBatch } from "@labelgate/chain";
import type { AnchorClient, AnchorTxStatus } from "@labelgate/chain/node";
import { createAnchorClient } from "@labelgate/chain/node";
import type { Logger } from "@labelgate/core";
import type { Metrics } from "@labelgate/metrics";
import type { FollowUpNudge } from "@labelgate/queue";
import type { Anchor, LeaderLock, Store } from "@labelgate/store";
import Piscina from "piscina";
import type { Hex } from "viem";
import { keptThreads } from "./threads";

/** Failing ticks for this long make the anchorer log "anchoring stalled" (once per outage), ms. */
const STALLED_AFTER_MS = 10_000;

export interface AnchorerOptions {
  store: Store;
  /** the process's follow-up relay, nudged after a commit that wrote follow-up rows (docs/decisions/0300) */
  relay?: FollowUpNudge;
  logger: Logger;
  metrics?: Pick<
    Metrics,
    | "anchorsSent"
    | "anchorsConfirmed"
    | "anchorsReorged"
    | "anchorLeaves"
    | "anchorGas"
    | "settlementLag"
    | "anchorerLeader"
    | "tasksSettled"
    | "anchoringStalled"
  >;
  /** JSON-RPC endpoint */
  rpcUrl: string;
  /** the signing key (handed to viem only) */
  privateKey: string;
  /** ANCHOR_CONTRACT_ADDRESS; unset: the stored one, else deployed by the first leader */
  contract?: string;
  /** EVM_CONFIRMATIONS */
  confirmations: number;
  /** ANCHOR_INTERVAL_MS */
  intervalMs: number;
  /** ANCHOR_MAX_LEAVES */
  maxLeaves: number;
  /** ANCHOR_REORG_DEPTH */
  reorgDepth: number;
  /** WEBHOOK_RETRY_MAX: attempts of a delivery sent again after its anchor was re-signed */
  webhookRetryMax: number;
  /** time between ticks, ms (default: a tenth of the interval, between 20 and 250) */
  tickMs?: number;
  /** a `pending` transaction is broadcast again after this long, ms (default 10,000) */
  rebroadcastMs?: number;
}

/** The anchorer of one consensus-worker process. `start()` runs its ticks; `stop()` ends them and the lock. */
export class Anchorer {
  private readonly lock: LeaderLock;
  private client: AnchorClient | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastHead: Hex | undefined;
  private lastBroadcast = new Map<bigint, number>();
  /** durations of each step of an anchor (ms), logged with its confirmation */
  private readonly steps = new Map<bigint, Record<string, number>>();
  private step(anchorId: bigint, name: string, since: number): void {
    const entry = this.steps.get(anchorId) ?? {};
    entry[name] = Math.round((entry[name] ?? 0) + performance.now() - since);
    this.steps.set(anchorId, entry);
  }
  private readonly tickMs: number;
  /** one worker thread building batch trees (anchor-thread.ts), started on the first close and kept (threads.ts) */
  private readonly trees = new Piscina<unknown[], AnchorBatch>(keptThreads(path.join(__dirname, "anchor-thread.cjs"), 1));

  constructor(private readonly o: AnchorerOptions) {
    this.lock = o.store.anchors.leaderLock();
    this.tickMs = o.tickMs ?? Math.min(250, Math.max(20, Math.floor(o.intervalMs / 10)));
  }

  /** Starts ticking (the first tick at once). */
  start(): void {
    // consecutive failed ticks: the next waits longer (up to 2 s), and one failure in 20 is logged
    let failures = 0;
    let progressed = false;
    // since when ticks fail (the chain or the database does not answer), and whether "stalled" was logged
    let failingSince: number | undefined;
    let stalledLogged = false;
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick()
        .then(
          (moved) => {
            if (failures > 0) this.o.logger.info({ failures }, "anchorer recovered");
            if (stalledLogged) this.o.logger.info({ stalled_ms: Date.now() - (failingSince ?? Date.now()) }, "anchoring resumed");
            failures = 0;
            failingSince = undefined;
            stalledLogged = false;
            this.o.metrics?.anchoringStalled.set(0);
            progressed = moved;
          },
          (err: unknown) => {
            if (failures % 20 === 0) this.o.logger.warn({ err: describe(err), failures: failures + 1 }, "anchorer tick failed (retrying)");
            failures++;
            const now = Date.now();
            failingSince ??= now;
            this.o.metrics?.anchoringStalled.set((now - failingSince) / 1000);
            if (!stalledLogged && now - failingSince >= STALLED_AFTER_MS) {
              stalledLogged = true;
              this.o.logger.warn(
                { err: describe(err), since: new Date(failingSince).toISOString(), failures },
                "anchoring stalled: settled tasks wait until the chain answers again (readiness 503, waiting_for chain_unavailable)",
              );
            }
          },
        )
        .finally(() => {
          // a tick that moved an anchor on is followed at once (the next step is often ready: mined, or a full batch)
          const base = progressed ? 0 : this.lock.held ? this.tickMs : Math.max(this.tickMs, 500);
          if (!this.stopped)
            this.timer = setTimeout(loop, failures === 0 ? base : Math.min(2000, Math.max(base, 50) * 2 ** Math.min(failures, 5)));
        });
    };
    loop();
  }

  /** Stops ticking, waits for the tick in flight, releases the leadership. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await this.trees.destroy();
    await this.lock.release();
    this.o.metrics?.anchorerLeader.set(0);
  }

  /** Whether this process led at its last tick. */
  get leader(): boolean {
    return this.lock.held;
  }

  /**
   * One step: take or confirm the leadership; as leader, check reorgs, then advance the anchor in flight or
   * close a due batch. @returns whether an anchor moved on (closed, sent, confirmed) @throws RPC or database
   * errors (the loop logs them and ticks again)
   */
  async tick(): Promise<boolean> {
    const wasLeader = this.lock.held;
    const leader = await this.lock.tryAcquire();
    this.o.metrics?.anchorerLeader.set(leader ? 1 : 0);
    if (leader !== wasLeader) this.o.logger.info({ leader }, leader ? "anchorer: leading" : "anchorer: standing by");
    if (!leader) return false;
    const client = await this.connect();
    await this.checkReorgs(client);
    const [anchor, ahead] = await this.o.store.anchors.unconfirmed(2);
    if (!anchor) {
      const closed = await this.closeDue(client);
      return closed ? this.advance(client, closed) : false;
    }
    if (ahead || anchor.state !== "sent") return this.advance(client, anchor);
    // close-ahead: while the anchor in flight waits for its receipt and confirmations (and is confirmed), the
    // next due batch is closed (tree built, proofs stored) so that it is signed as soon as this one confirms.
    // Not while it is being signed: the close's hashing would hold the signature back. It is only closed,
    // never sent: one transaction is in flight at a time, so nonces stay in order.
    const [moved, closed] = await Promise.allSettled([this.advance(client, anchor), this.closeDue(client)]);
    if (moved.status === "rejected" || closed.status === "rejected") {
      const reasons = [moved, closed].flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
      throw reasons.length === 1 ? reasons[0] : new AggregateError(reasons, `anchorer: ${reasons.map(describe).join("; ")}`);
    }
    return moved.value || closed.value !== undefined;
  }

  /** Closes the next batch when it is due (ANCHOR_MAX_LEAVES records waiting, or the oldest ANCHOR_INTERVAL_MS old). */
  private async closeDue(client: AnchorClient): Promise<Anchor | undefined> {
    const backlog = await this.o.store.anchors.backlog();
    if (backlog.count === 0 || !backlog.oldestAt) return undefined;
    const due = backlog.count >= this.o.maxLeaves || Date.now() - backlog.oldestAt.getTime() >= this.o.intervalMs;
    if (!due) return undefined;
    const closing = performance.now();
    const anchor = await this.o.store.anchors.close({
      maxLeaves: this.o.maxLeaves,
      chainId: client.chainId,
      contract: client.contract as string,
      build: (payloads) => this.trees.run(payloads),
    });
    if (!anchor) return undefined;
    this.step(anchor.id, "close_ms", closing);
    this.o.metrics?.anchorLeaves.observe(anchor.treeSize);
    this.o.logger.debug({ anchor: String(anchor.id), first: String(anchor.firstSeq), last: String(anchor.lastSeq) }, "anchor batch closed");
    return anchor;
  }

  /** The anchor client, with the contract configured, stored or (first leader) deployed. */
  private async connect(): Promise<AnchorClient> {
    if (this.client) return this.client;
    const client = await createAnchorClient({
      rpcUrl: this.o.rpcUrl,
      privateKey: this.o.privateKey,
      contract: this.o.contract,
      timeoutMs: 5000,
    });
    if (!client.contract) {
      const stored = await this.o.store.anchors.contractOf(client.chainId);
      if (stored) {
        client.contract = stored as Hex;
      } else {
        const deployed = await client.deploy();
        client.contract = (await this.o.store.anchors.saveContract(client.chainId, deployed.contract, deployed.txid)) as Hex;
        this.o.logger.info({ contract: client.contract, chain_id: client.chainId, tx: deployed.txid }, "anchor contract deployed");
      }
    }
    const code = await client.publicClient.getCode({ address: client.contract as Hex });
    if (!code || code === "0x") {
      throw noContract(client);
    }
    this.o.logger.info({ contract: client.contract, chain_id: client.chainId, signer: client.address }, "anchorer connected");
    this.client = client;
    return client;
  }

  /** Reopens confirmed anchors of the recent blocks whose block is no longer canonical. */
  private async checkReorgs(client: AnchorClient): Promise<void> {
    if (this.o.reorgDepth === 0) return;
    const head = await client.publicClient.getBlock({ blockTag: "latest" });
    if (head.hash === this.lastHead) return;
    const recent = await this.o.store.anchors.confirmedSince(head.number - BigInt(this.o.reorgDepth));
    let contractChecked = false;
    for (const anchor of recent) {
      if (!anchor.blockNumber || !anchor.blockHash) continue;
      const seen = { blockNumber: anchor.blockNumber, blockHash: anchor.blockHash as Hex };
      if (await client.isCanonical(seen)) continue;
      // a chain reset (back to a state without the contract) is no reorg: sending again cannot help, say so
      if (!contractChecked) {
        contractChecked = true;
        const code = await client.publicClient.getCode({ address: client.contract as Hex });
        if (!code || code === "0x") {
          this.client = undefined;
          throw noContract(client);
        }
      }
      const status = await client.status(anchor.txHash as Hex, seen);
      if (status.state === "mined" && status.receipt.status === "success") {
        // mined again in another block: record where it is now (confirm settles nothing twice)
        await this.o.store.anchors.confirm(anchor.id, this.minedOf(anchor, status));
        continue;
      }
      if (await this.o.store.anchors.reopen(anchor.id)) {
        this.o.metrics?.anchorsReorged.inc();
        this.o.logger.warn(
          { anchor: String(anchor.id), tx: anchor.txHash, block: String(anchor.blockNumber) },
          "anchor reorged out: sending again",
        );
      }
    }
    this.lastHead = head.hash ?? undefined;
  }

  private minedOf(anchor: Anchor, status: Extract<AnchorTxStatus, { state: "mined" }>) {
    return {
      txHash: (anchor.txHash ?? status.receipt.transactionHash) as Hex,
      blockNumber: status.receipt.blockNumber,
      blockHash: status.receipt.blockHash,
      gasUsed: status.receipt.gasUsed,
    };
  }

  /** Moves the anchor in flight one step (see the module comment). @returns whether it was sent first or confirmed */
  private async advance(client: AnchorClient, anchor: Anchor): Promise<boolean> {
    if (anchor.state === "open" || !anchor.txHash || !anchor.rawTx || anchor.nonce === null) {
      await this.sign(client, anchor, "first");
      return true;
    }
    // an earlier transaction of this batch (before a re-sign) that got mined after all confirms it: the
    // batch is anchored by whichever of its transactions the chain holds, never signed again past it
    for (const earlier of anchor.txHashes.filter((h) => h !== anchor.txHash)) {
      const before = await client.status(earlier as Hex);
      if (before.state === "mined" && before.events.some((e) => e.root.toLowerCase() === anchor.merkleRoot.toLowerCase())) {
        if (before.confirmations < this.o.confirmations) return false;
        await this.confirm(anchor, { ...this.minedOf(anchor, before), txHash: earlier as Hex });
        return true;
      }
    }
    const txHash = anchor.txHash as Hex;
    const status = await client.status(txHash);
    switch (status.state) {
      case "mined": {
        const ours = status.events.some((e) => e.root.toLowerCase() === anchor.merkleRoot.toLowerCase());
        if (!ours) {
          // a chain reset to a state without the contract mines a call to it as a plain transfer: say so (the
          // tick fails on every try, so anchoring shows as stalled) rather than sign again forever
          const code = await client.publicClient.getCode({ address: client.contract as Hex });
          if (!code || code === "0x") {
            this.client = undefined;
            throw noContract(client);
          }
          this.o.logger.warn(
            { anchor: String(anchor.id), tx: txHash },
            "anchor transaction mined without its Anchored event: signing again",
          );
          await this.sign(client, anchor, "resign");
          return false;
        }
        if (status.confirmations < this.o.confirmations) return false;
        await this.confirm(anchor, this.minedOf(anchor, status));
        return true;
      }
      case "reverted":
        this.o.logger.warn({ anchor: String(anchor.id), tx: txHash }, "anchor transaction reverted: signing again");
        await this.sign(client, anchor, "resign");
        return false;
      case "pending": {
        const last = this.lastBroadcast.get(anchor.id) ?? 0;
        if (Date.now() - last >= (this.o.rebroadcastMs ?? 10_000)) await this.rebroadcast(client, anchor);
        return false;
      }
      case "dropped":
      case "reorged": {
        if (status.state === "reorged" && status.inPool) return false;
        // the same transaction while its nonce is free (same hash); else a new one with the next nonce
        const mined = await client.nonce("latest");
        if (mined <= anchor.nonce) {
          await this.rebroadcast(client, anchor);
          return false;
        }
        // its nonce is used: read the transaction once more (it may have been mined since the first read)
        const again = await client.status(txHash);
        if (again.state === "dropped" || (again.state === "reorged" && !again.inPool)) await this.sign(client, anchor, "resign");
        return false;
      }
    }
  }

  /** Signs `anchor(root, first, last)` with the next nonce, stores it, then broadcasts it. */
  private async sign(client: AnchorClient, anchor: Anchor, kind: "first" | "resign"): Promise<void> {
    const signing = performance.now();
    const nonce = await client.nonce("pending");
    const signed = await client.signAnchor({
      root: anchor.merkleRoot as Hex,
      firstSequence: anchor.firstSeq,
      lastSequence: anchor.lastSeq,
      nonce,
    });
    await this.o.store.anchors.signed(anchor.id, { txHash: signed.txid, rawTx: signed.serialized, nonce });
    this.o.logger.info(
      { anchor: String(anchor.id), tx: signed.txid, nonce, leaves: anchor.treeSize, kind },
      kind === "first" ? "anchor sent" : "anchor re-signed and sent",
    );
    await this.send(client, anchor.id, signed.serialized, kind);
    this.step(anchor.id, "send_ms", signing);
  }

  /** Broadcasts the stored transaction again (same hash). */
  private async rebroadcast(client: AnchorClient, anchor: Anchor): Promise<void> {
    this.o.logger.info({ anchor: String(anchor.id), tx: anchor.txHash, nonce: anchor.nonce }, "anchor transaction broadcast again");
    await this.send(client, anchor.id, anchor.rawTx as Hex, "resend");
  }

  private async send(client: AnchorClient, anchorId: bigint, raw: Hex, kind: "first" | "resend" | "resign"): Promise<void> {
    this.lastBroadcast.set(anchorId, Date.now());
    try {
      await client.broadcast(raw);
    } catch (err) {
      // "already known" and the like: the next tick reads the transaction's state and decides again
      this.o.logger.warn({ err: describe(err), anchor: String(anchorId), kind }, "anchor broadcast refused");
      return;
    }
    await this.o.store.anchors.broadcast(anchorId);
    this.o.metrics?.anchorsSent.inc({ kind });
  }

  /** Confirms the anchor: its tasks settled and their events enqueued (the reconciliation catches a failed enqueue). */
  private async confirm(anchor: Anchor, mined: { txHash: Hex; blockNumber: bigint; blockHash: Hex; gasUsed: bigint }): Promise<void> {
    const confirming = performance.now();
    // a redelivery re-runs the delivery's schedule with every attempt
    const result = await this.o.store.anchors.confirm(anchor.id, mined, { redeliveryAttempts: this.o.webhookRetryMax });
    this.step(anchor.id, "confirm_ms", confirming);
    const steps = this.steps.get(anchor.id);
    this.steps.delete(anchor.id);
    this.lastBroadcast.delete(anchor.id);
    const now = Date.now();
    this.o.metrics?.anchorsConfirmed.inc();
    this.o.metrics?.anchorGas.observe(Number(mined.gasUsed));
    for (const s of result.settled) {
      this.o.metrics?.tasksSettled.inc();
      this.o.metrics?.settlementLag.observe(Math.max(0, (now - s.recordedAt.getTime()) / 1000));
    }
    this.o.logger.info(
      {
        anchor: String(anchor.id),
        tx: mined.txHash,
        block: String(mined.blockNumber),
        leaves: anchor.treeSize,
        settled: result.settled.length,
        gas: String(mined.gasUsed),
        ...steps,
      },
      "anchor confirmed",
    );
    if (result.retargeted > 0) {
      this.o.logger.warn(
        { anchor: String(anchor.id), tx: mined.txHash, tasks: result.retargeted, redeliveries: result.redeliveries.length },
        "settled tasks moved to the re-signed anchor transaction: their task.settled deliveries are sent again",
      );
    }
    // the events, the deliveries sent again with the new txid, the exports: follow_up rows of the confirmation
    this.o.relay?.nudge();
  }
}

/** The error of a contract address without code: the chain was reset, or the address is wrong. */
function noContract(client: AnchorClient): Error {
  return new Error(
    `anchor contract ${client.contract} has no code on chain ${client.chainId} (a reset chain? set ANCHOR_CONTRACT_ADDRESS)`,
  );
}

/** An error as logged: its message only (viem's errors carry request bodies; never a key, but keep logs short). */
function describe(err: unknown): string {
  if (err instanceof Error) return (err as Error & { shortMessage?: string }).shortMessage ?? err.message.split("\n")[0] ?? err.name;
  return String(err);
}
