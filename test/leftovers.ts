/**
 * What a test run may leave behind (issue 28 item 9), checked by the global teardown after its cleanup:
 * - processes: every process a test starts inherits LABELGATE_TEST_RUN=<run> (services, standalone, the
 *   embedded Postgres' helper, anvil...); none may outlive the run, except jest's own processes;
 * - folders: the run's TMPDIR (`<tmp>/lgtest-<run>`, set by the global setup, so every `os.tmpdir()` of the
 *   tests and their children is under it) must be empty;
 * - Redis keys: none under the run's prefix once deleted (checked by the teardown).
 * Linux only (reads /proc); elsewhere no process is reported.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** The run's temporary folder (TMPDIR of the tests). */
export function runTmpDir(run: string, base = os.tmpdir()): string {
  return path.join(base, `lgtest-${run}`);
}

export interface LeftoverProcess {
  pid: number;
  cmdline: string;
}

/** Processes with LABELGATE_TEST_RUN=`run` in their environment, other than this one and jest's processes. */
export function leftoverProcesses(run: string): LeftoverProcess[] {
  if (!existsSync("/proc")) return [];
  const mark = `LABELGATE_TEST_RUN=${run}`;
  const found: LeftoverProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let environ: string;
    let cmdline: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, "utf8");
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    } catch {
      continue; // gone, or not ours to read
    }
    if (!environ.split("\0").includes(mark)) continue;
    if (/\bjest\b/.test(cmdline) || cmdline === "") continue; // jest's workers (ending now), zombies
    found.push({ pid, cmdline: cmdline.slice(0, 200) });
  }
  return found;
}

/** Entries left in the run's temporary folder (tsx's compile cache, `tsx-<uid>`, aside). */
export function leftoverFolders(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((name) => !/^tsx-\d+$/.test(name)) : [];
}
