/**
 * Decoding the anchor contract's `Anchored` events from a receipt's logs, on viem (browser-safe; kept out
 * of the package's main entry so importing canonical JSON does not load viem). `@labelgate/chain/events`.
 */
import { type Address, type Hex, type Log, parseEventLogs } from "viem";
import { ANCHOR_ABI } from "./anchor-abi";

/** One `Anchored(root, firstSequence, lastSequence)` event of a receipt. */
export interface AnchoredEvent {
  /** the contract that emitted it */
  contract: Address;
  root: Hex;
  firstSequence: bigint;
  lastSequence: bigint;
  logIndex: number;
}

/**
 * The `Anchored` events among `receipt.logs`, of `contract` only when given (compared case-insensitively).
 * Logs of other events or malformed ones are skipped.
 */
export function anchoredEvents(receipt: { logs: readonly Log[] }, contract?: string): AnchoredEvent[] {
  const logs = parseEventLogs({ abi: ANCHOR_ABI, eventName: "Anchored", logs: receipt.logs as Log[], strict: true });
  return logs
    .filter((l) => contract === undefined || l.address.toLowerCase() === contract.toLowerCase())
    .map((l) => ({
      contract: l.address,
      root: l.args.root,
      firstSequence: l.args.firstSequence,
      lastSequence: l.args.lastSequence,
      logIndex: l.logIndex,
    }));
}
