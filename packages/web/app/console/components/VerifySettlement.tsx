/**
 * The "verify" button of a settled result (contract §settlement, §web-apps): runs the SDK's `verifySettlement` in the browser
 * against the chain's JSON-RPC URL, which the gateway publishes at `/console/config.json` (EVM_RPC_URL; its
 * origin is in the console's connect-src). It recomputes the leaf from the result, folds the Merkle proof to
 * the root, and reads the anchor transaction's receipt and `Anchored` event from the chain: nothing the
 * gateway says is trusted beyond the result itself. The verifier (viem) is loaded on the first click only.
 * A result on the local ledger (`ledger: "local"`) has nothing on chain: the button is not offered.
 */
import type { SettledResult } from "@labelgate/sdk/browser";
import type { SettlementVerification } from "@labelgate/sdk/verify";
import { Alert, Button, Group, Text } from "@mantine/core";
import { useMutation, useQuery } from "@tanstack/react-query";
import { Mono } from "./common";

/** `GET /console/config.json` of the gateway (services/gateway/src/web.ts `ConsoleConfig`). */
interface ConsoleConfig {
  evm_rpc_url: string | null;
}

async function fetchConsoleConfig(): Promise<ConsoleConfig> {
  const res = await fetch("/console/config.json", { headers: { accept: "application/json" } });
  if (!res.ok) throw new Error(`GET /console/config.json answered ${res.status}`);
  return (await res.json()) as ConsoleConfig;
}

/** Runs the full verification (proof and chain) of `result` against `rpcUrl`. Never throws for a bad proof. */
async function verify(result: SettledResult, rpcUrl: string): Promise<SettlementVerification> {
  const { verifySettlement } = await import("@labelgate/sdk/verify");
  return verifySettlement(result, { rpcUrl, confirmations: 1 });
}

export function VerifySettlement({ result, evm }: { result: SettledResult; evm: boolean }) {
  const config = useQuery({ queryKey: ["console-config"], queryFn: fetchConsoleConfig, staleTime: Number.POSITIVE_INFINITY, enabled: evm });
  const rpcUrl = config.data?.evm_rpc_url ?? null;
  const check = useMutation({ mutationFn: () => verify(result, rpcUrl as string) });

  if (!evm) {
    return (
      <Alert color="gray" mt="sm" data-testid="verify-local">
        Nothing on chain to verify: this settlement is on the gateway's local hash-chained ledger (<code>ledger: "local"</code>), and its
        transaction id is the record's hash. Proofs anyone can verify against a chain come with an EVM ledger.
      </Alert>
    );
  }
  return (
    <div>
      <Group mt="sm">
        <Button onClick={() => check.mutate()} loading={check.isPending} disabled={!rpcUrl} data-testid="verify-button">
          Verify on chain
        </Button>
        {rpcUrl ? (
          <Text size="sm" c="dimmed">
            against <Mono>{rpcUrl}</Mono>
          </Text>
        ) : (
          config.isSuccess && (
            <Text size="sm" c="dimmed">
              This gateway publishes no chain RPC URL (EVM_RPC_URL): verify with the SDK's <code>verifySettlement</code> against your own
              node.
            </Text>
          )
        )}
      </Group>
      {config.error && (
        <Text c="red" size="sm" role="alert">
          {config.error instanceof Error ? config.error.message : String(config.error)}
        </Text>
      )}
      {check.error && (
        <Alert color="red" mt="sm" title="Verification could not run" role="alert">
          {check.error instanceof Error ? check.error.message : String(check.error)}
        </Alert>
      )}
      {check.data &&
        (check.data.ok ? (
          <Alert color="green" mt="sm" title="Verified on chain" role="status" data-testid="verify-result">
            Leaf {check.data.leaf_index} of {check.data.tree_size} folds to root <Mono>{check.data.merkle_root}</Mono>, anchored by
            transaction <Mono>{check.data.ledger_txid}</Mono> in block {check.data.block_number} of chain {check.data.chain_id} (sequences{" "}
            {check.data.first_sequence}–{check.data.last_sequence}), {check.data.confirmations} confirmations.
          </Alert>
        ) : (
          <Alert color="red" mt="sm" title="Verification failed" role="alert" data-testid="verify-result">
            {check.data.reason}: {check.data.message}
          </Alert>
        ))}
    </div>
  );
}
