/**
 * The chain's readiness probe (LEDGER=evm, decision 0202): `eth_blockNumber` on the chain's JSON-RPC every
 * `intervalMs`, each bounded by `timeoutMs`, in the background. A health request reads the last result and
 * never waits on the chain; a result older than three intervals plus the timeout counts as unavailable, so
 * a dead or hung chain reads `unavailable` within `intervalMs + timeoutMs` (4 s with the defaults).
 */

export interface ChainProbe {
  /** whether the last probe answered, and answered recently */
  available(): boolean;
  /** since when the chain has been unavailable (undefined while it answers) */
  unavailableSince(): Date | undefined;
  stop(): void;
}

export interface ChainProbeOptions {
  rpcUrl: string;
  /** default 2000 ms */
  intervalMs?: number;
  /** default 2000 ms */
  timeoutMs?: number;
  /** called when availability changes (and once with the first result) */
  onChange?: (available: boolean, err?: string) => void;
}

/** One JSON-RPC `eth_blockNumber`. @returns undefined when it answered, else why not */
async function probeOnce(rpcUrl: string, timeoutMs: number): Promise<string | undefined> {
  try {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await res.json()) as { result?: unknown };
    return res.ok && typeof body.result === "string" ? undefined : `HTTP ${res.status} without a block number`;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return cause ?? (err instanceof Error ? err.message : String(err));
  }
}

/** Starts probing `rpcUrl` at once and every `intervalMs` (an unref'd timer: it never holds the process). */
export function startChainProbe(options: ChainProbeOptions): ChainProbe {
  const intervalMs = options.intervalMs ?? 2000;
  const timeoutMs = options.timeoutMs ?? 2000;
  let lastOkAt: number | undefined;
  let downSince: number | undefined = Date.now();
  let known: boolean | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const staleMs = 3 * intervalMs + timeoutMs;
  const available = () => lastOkAt !== undefined && Date.now() - lastOkAt <= staleMs && downSince === undefined;
  const tick = async () => {
    const failure = await probeOnce(options.rpcUrl, timeoutMs);
    if (stopped) return;
    if (failure === undefined) {
      lastOkAt = Date.now();
      downSince = undefined;
    } else {
      downSince ??= Date.now();
    }
    const now = failure === undefined;
    if (now !== known) {
      known = now;
      options.onChange?.(now, failure);
    }
    timer = setTimeout(() => void tick(), intervalMs);
    timer.unref();
  };
  void tick();
  return {
    available,
    unavailableSince: () => (available() ? undefined : new Date(downSince ?? lastOkAt ?? Date.now())),
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
