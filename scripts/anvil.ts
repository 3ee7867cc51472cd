/**
 * A local EVM chain for Compose (`anvil` service): the anvil binary of the `@foundry-rs/anvil` package, on
 * ANVIL_HOST (default 127.0.0.1) : ANVIL_PORT (default 8545), its state under DATA_DIR/anvil (loaded at
 * start, dumped every second and at exit). Prints the RPC URL; stops anvil on SIGTERM/SIGINT. anvil's own
 * output (it lists its development keys) is not printed.
 */
import path from "node:path";
import { startAnvil } from "@labelgate/chain/node";
import { parseEnv, standaloneOnlyEnv } from "@labelgate/config";

async function main(): Promise<void> {
  // ANVIL_PORT and DATA_DIR as standalone parses them (one schema); ANVIL_HOST is this script's own
  const own = parseEnv(standaloneOnlyEnv, process.env);
  const host = process.env.ANVIL_HOST || "127.0.0.1";
  const anvil = await startAnvil({ port: own.ANVIL_PORT, host, stateDir: path.resolve(own.DATA_DIR, "anvil") });
  process.stdout.write(`anvil listening: http://${host}:${anvil.port} (chain state ${anvil.statePath})\n`);
  let stopping = false;
  const stop = () => {
    stopping = true;
    void anvil.stop().then(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  anvil.process.once("exit", (code) => {
    if (stopping) return;
    process.stderr.write(`anvil exited (${code})\n`);
    process.exit(1);
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
