/**
 * The CLI as a real process, for tests: `node packages/cli/bin/labelgate.cjs <args>` from the repository
 * root with only PATH and `env` in its environment (no variable of the test process leaks in).
 */
import { execFile } from "node:child_process";
import path from "node:path";

const BIN = path.resolve(__dirname, "../bin/labelgate.cjs");
const ROOT = path.resolve(__dirname, "../../..");

/** What a CLI run printed and its exit code. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with `args` and `env`; resolves with its exit code and output (never rejects on a non-zero exit; 60 s bound). */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? "", ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}
