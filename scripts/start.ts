/**
 * `pnpm start`'s process: a relay in front of the standalone stack (scripts/standalone.ts), so that one
 * clean stop follows however the stop is asked for (decision 0201).
 *
 * pnpm 12 runs a script in a process group of its own, relays SIGINT, SIGTERM and SIGHUP to that group and
 * waits for it; when pnpm itself dies (SIGKILL, a killed supervisor) a helper of pnpm sends SIGKILL to the
 * group at once. So the stack cannot live in that group: this relay does, and the stack runs as its child
 * in a process group of its own (detached), with a pipe on its stdin as a lifeline.
 * - SIGINT, SIGTERM, SIGHUP reaching the relay (pnpm's relay, the group, the relay's pid, a closed
 *   terminal) are sent on to the stack once; the same signal again within a second is the same request
 *   (a group signal and pnpm's relay of it); a later one is passed on (a second Ctrl-C forces the exit).
 * - The relay's death, even by SIGKILL, ends the lifeline: the stack shuts down as on SIGTERM.
 * - The relay exits with the stack's exit code (0 after a requested stop).
 * The stack writes to the relay's stdout and stderr directly (inherited), so its last lines ("shutdown
 * complete") are written even when the relay is gone.
 */
import { spawn } from "node:child_process";
import path from "node:path";

/** The same signal again within this many ms is a repeat of one request, not a second one. */
const REPEAT_MS = 1000;

const stack = spawn(process.execPath, [...process.execArgv, path.join(__dirname, "standalone.ts"), ...process.argv.slice(2)], {
  stdio: ["pipe", "inherit", "inherit"],
  detached: true,
  env: { ...process.env, LABELGATE_LIFELINE: "stdin" },
});

const last = new Map<NodeJS.Signals, number>();
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    const now = Date.now();
    if (now - (last.get(signal) ?? Number.NEGATIVE_INFINITY) < REPEAT_MS) return;
    last.set(signal, now);
    if (stack.exitCode === null && stack.signalCode === null) stack.kill(signal);
  });
}

stack.on("error", (err) => {
  console.error(`could not start scripts/standalone.ts: ${err.message}`);
  process.exit(1);
});
stack.on("exit", (code, signal) => {
  process.exit(code ?? 128 + (signal === "SIGKILL" ? 9 : signal === "SIGINT" ? 2 : 15));
});
