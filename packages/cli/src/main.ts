/**
 * Entry point of the `labelgate` CLI (bin/labelgate.cjs, `pnpm labelgate`): reads LABELGATE_API_KEY, LABELGATE_LABELER_KEY,
 * LABELGATE_URL and LABELGATE_RPC_URL (else EVM_RPC_URL) (the only place the environment is read), runs the command, exits with its code.
 */
import { run } from "./program";

run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  apiKey: process.env.LABELGATE_API_KEY || undefined,
  labelerKey: process.env.LABELGATE_LABELER_KEY || undefined,
  url: process.env.LABELGATE_URL || undefined,
  rpcUrl: process.env.LABELGATE_RPC_URL || process.env.EVM_RPC_URL || undefined,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`labelgate: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
