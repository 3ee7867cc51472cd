/**
 * The anchor client (Node side, on viem): deploys the anchor contract, signs and sends
 * `anchor(root, firstSequence, lastSequence)` with an explicit nonce, reads receipts, counts confirmations,
 * tells a mined anchor from a pending, dropped, reverted or reorged-out one, and decodes `Anchored` events.
 * The signing key is handed to viem's `privateKeyToAccount` only: it is neither kept on the client nor
 * logged, and no error message includes it.
 * viem: https://viem.sh/docs/clients/wallet (local accounts sign in-process; `eth_sendRawTransaction`).
 */
import {
  type Account,
  type Address,
  BlockNotFoundError,
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  type Hex,
  http,
  isAddress,
  keccak256,
  type PublicClient,
  TransactionNotFoundError,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
  type Transport,
  type WalletClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import artifact from "../contracts/Anchor.json";
import { ANCHOR_ABI } from "./anchor-abi";
import { type AnchoredEvent, anchoredEvents } from "./events";

export interface AnchorClientOptions {
  /** JSON-RPC endpoint (http) */
  rpcUrl: string;
  /** signing key, `0x` + 64 hex digits; passed to `privateKeyToAccount` only */
  privateKey: string;
  /** the anchor contract; unset: call {@link AnchorClient.deploy} first */
  contract?: string;
  /** receipt polling interval (ms); default 100 */
  pollingIntervalMs?: number;
  /** per-request timeout (ms); default 10,000 */
  timeoutMs?: number;
}

/** What an anchor transaction's parameters are. `nonce` is explicit: the caller (the anchorer) owns nonces. */
export interface AnchorRequest {
  root: Hex;
  firstSequence: bigint | number;
  lastSequence: bigint | number;
  nonce: number;
  /** gas limit; default: estimated (estimation fails for a call that would revert) */
  gas?: bigint;
  /** EIP-1559 fees (wei); default: the node's suggestion. A replacement of a pending nonce needs both >= 110% of the old ones. */
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
}

/** A signed anchor transaction, not yet sent: its hash is known before broadcast (store it first, then send). */
export interface SignedAnchor {
  txid: Hex;
  serialized: Hex;
  nonce: number;
}

/** Where a block of a receipt was seen: to tell later whether that block is still canonical. */
export interface SeenBlock {
  blockNumber: bigint;
  blockHash: Hex;
}

/**
 * The state of an anchor transaction:
 * - `pending`: in the node's pool, not mined;
 * - `dropped`: neither in the pool nor mined (e.g. evicted, or its nonce was taken by another transaction);
 * - `reorged`: it was mined in `seen` (or its receipt's block), which is no longer on the canonical chain,
 *   and it is not mined on the canonical chain now (`inPool`: back in the pool);
 * - `reverted`: mined, status reverted;
 * - `mined`: mined on the canonical chain with `confirmations` (1 = in the latest block).
 */
export type AnchorTxStatus =
  | { state: "pending" }
  | { state: "dropped" }
  | { state: "reorged"; blockHash: Hex; blockNumber: bigint; inPool: boolean }
  | { state: "reverted"; receipt: TransactionReceipt; confirmations: number }
  | { state: "mined"; receipt: TransactionReceipt; confirmations: number; events: AnchoredEvent[] };

/** The anchor contract's deployment bytecode (from the committed artifact `packages/chain/contracts/Anchor.json`). */
export const ANCHOR_BYTECODE = artifact.bytecode as Hex;

/**
 * A client of one chain and one signer. Make it with {@link createAnchorClient} (reads the chain id).
 * Methods throw viem's errors on RPC failures (the anchorer retries them).
 */
export class AnchorClient {
  /** the signer's address (the contract's owner when this client deployed it) */
  readonly address: Address;
  contract: Address | undefined;

  constructor(
    readonly chainId: number,
    readonly publicClient: PublicClient<Transport, Chain>,
    private readonly wallet: WalletClient<Transport, Chain, Account>,
    contract: Address | undefined,
  ) {
    this.address = wallet.account.address;
    this.contract = contract;
  }

  /**
   * Deploys the anchor contract (owner: this signer), waits for its receipt and uses it from then on.
   * @throws Error when the deployment reverted or has no contract address.
   */
  async deploy(options: { timeoutMs?: number } = {}): Promise<{ contract: Address; txid: Hex; blockNumber: bigint; gasUsed: bigint }> {
    const txid = await this.wallet.deployContract({ abi: ANCHOR_ABI, bytecode: ANCHOR_BYTECODE });
    const receipt = await this.publicClient.waitForTransactionReceipt({ hash: txid, timeout: options.timeoutMs ?? 60_000 });
    if (receipt.status !== "success" || !receipt.contractAddress)
      throw new Error(`anchor contract deployment ${txid} failed (${receipt.status})`);
    this.contract = receipt.contractAddress;
    return { contract: receipt.contractAddress, txid, blockNumber: receipt.blockNumber, gasUsed: receipt.gasUsed };
  }

  private requireContract(): Address {
    if (!this.contract) throw new Error("no anchor contract: configure its address or deploy() first");
    return this.contract;
  }

  /** The signer's transaction count at `blockTag` ("latest": mined; "pending": with the pool's). */
  nonce(blockTag: "latest" | "pending" = "latest"): Promise<number> {
    return this.publicClient.getTransactionCount({ address: this.address, blockTag });
  }

  /** Latest block number. */
  blockNumber(): Promise<bigint> {
    return this.publicClient.getBlockNumber({ cacheTime: 0 });
  }

  /**
   * Signs `anchor(root, firstSequence, lastSequence)` with the given nonce; fees and gas filled by the node
   * unless given. Nothing is sent.
   * @throws viem's estimation error when the call would revert and no `gas` is given.
   */
  async signAnchor(request: AnchorRequest): Promise<SignedAnchor> {
    const call = {
      abi: ANCHOR_ABI,
      functionName: "anchor",
      args: [request.root, BigInt(request.firstSequence), BigInt(request.lastSequence)],
    } as const;
    const data = encodeFunctionData(call);
    // estimated with the ABI so a revert is reported by its error name (NotOwner, InvalidRange)
    const gas =
      request.gas ??
      (await this.publicClient.estimateContractGas({ ...call, address: this.requireContract(), account: this.wallet.account }));
    const fees =
      request.maxFeePerGas !== undefined && request.maxPriorityFeePerGas !== undefined
        ? { maxFeePerGas: request.maxFeePerGas, maxPriorityFeePerGas: request.maxPriorityFeePerGas }
        : {};
    const prepared = await this.wallet.prepareTransactionRequest({
      to: this.requireContract(),
      data,
      nonce: request.nonce,
      type: "eip1559",
      gas,
      ...fees,
    });
    const serialized = await this.wallet.signTransaction(prepared);
    return { txid: keccak256(serialized), serialized, nonce: request.nonce };
  }

  /** Sends a signed transaction (`eth_sendRawTransaction`); resolves with its hash. */
  broadcast(serialized: Hex): Promise<Hex> {
    return this.wallet.sendRawTransaction({ serializedTransaction: serialized });
  }

  /** {@link signAnchor} then {@link broadcast}; resolves with the transaction hash. */
  async sendAnchor(request: AnchorRequest): Promise<Hex> {
    const signed = await this.signAnchor(request);
    return this.broadcast(signed.serialized);
  }

  /** The receipt of `txid`, or `undefined` while it is not mined (on the node's canonical chain). */
  async receipt(txid: Hex): Promise<TransactionReceipt | undefined> {
    try {
      return await this.publicClient.getTransactionReceipt({ hash: txid });
    } catch (err) {
      if (err instanceof TransactionReceiptNotFoundError) return undefined;
      throw err;
    }
  }

  /** Waits for the receipt of `txid` (polling). @throws viem's WaitForTransactionReceiptTimeoutError after `timeoutMs` (default 60,000). */
  waitForReceipt(txid: Hex, timeoutMs = 60_000): Promise<TransactionReceipt> {
    return this.publicClient.waitForTransactionReceipt({ hash: txid, timeout: timeoutMs });
  }

  /** Whether the block `seen.blockNumber` of the canonical chain is `seen.blockHash`. */
  async isCanonical(seen: SeenBlock): Promise<boolean> {
    try {
      const block = await this.publicClient.getBlock({ blockNumber: seen.blockNumber });
      return block.hash?.toLowerCase() === seen.blockHash.toLowerCase();
    } catch (err) {
      if (err instanceof BlockNotFoundError) return false; // the chain is now shorter than that block
      throw err;
    }
  }

  /** Whether the node knows `txid` unmined (in its pool). */
  private async inPool(txid: Hex): Promise<boolean> {
    try {
      const tx = await this.publicClient.getTransaction({ hash: txid });
      return tx.blockHash === null;
    } catch (err) {
      if (err instanceof TransactionNotFoundError) return false;
      throw err;
    }
  }

  /**
   * The state of anchor transaction `txid` (see {@link AnchorTxStatus}). `seen`: the block its receipt was
   * last seen in, if any (stored by the caller), to report a reorg even when the node no longer has a receipt.
   */
  async status(txid: Hex, seen?: SeenBlock): Promise<AnchorTxStatus> {
    const receipt = await this.receipt(txid);
    if (receipt && (await this.isCanonical(receipt))) {
      const confirmations = Number((await this.blockNumber()) - receipt.blockNumber + 1n);
      if (receipt.status === "reverted") return { state: "reverted", receipt, confirmations };
      return { state: "mined", receipt, confirmations, events: anchoredEvents(receipt, this.contract) };
    }
    const inPool = await this.inPool(txid);
    const gone = receipt ?? seen;
    if (gone && !(await this.isCanonical(gone))) {
      return { state: "reorged", blockHash: gone.blockHash, blockNumber: gone.blockNumber, inPool };
    }
    return inPool ? { state: "pending" } : { state: "dropped" };
  }
}

/**
 * Makes an {@link AnchorClient} for `options.rpcUrl` (reads the chain id once).
 * @throws TypeError on a malformed key or contract address (the key itself is never in the message).
 */
export async function createAnchorClient(options: AnchorClientOptions): Promise<AnchorClient> {
  if (!/^0x[0-9a-fA-F]{64}$/.test(options.privateKey)) throw new TypeError("the private key must be 0x followed by 64 hex digits");
  if (options.contract !== undefined && !isAddress(options.contract, { strict: false })) {
    throw new TypeError(`anchor contract address ${options.contract} is not an address`);
  }
  const transport = http(options.rpcUrl, { timeout: options.timeoutMs ?? 10_000, retryCount: 0 });
  const probe = createPublicClient({ transport });
  const chainId = await probe.getChainId();
  const chain = defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [options.rpcUrl] } },
  });
  const pollingInterval = options.pollingIntervalMs ?? 100;
  const publicClient = createPublicClient({ chain, transport, pollingInterval, cacheTime: 0 });
  const wallet = createWalletClient({
    chain,
    transport,
    pollingInterval,
    account: privateKeyToAccount(options.privateKey as Hex),
  });
  return new AnchorClient(chainId, publicClient, wallet, options.contract as Address | undefined);
}
