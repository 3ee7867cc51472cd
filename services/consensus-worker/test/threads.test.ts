/**
 * Issue 28 item 9: a pool thread that ends leaves its esbuild child (tsx's TypeScript loader) a zombie of this
 * process; the service's pools (threads.ts `keptThreads`) keep their threads, so fits spaced past an idle
 * timeout leave none. Zombies are read from /proc: children of this process in state Z.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { FitInput } from "@labelgate/quality";
import { Piscina } from "piscina";
import { scaled } from "../../../test/env";
import { eventually } from "../../../test/system";
import { keptThreads } from "../src/threads";

const FIT_THREAD = path.join(__dirname, "../src/fit-thread.cjs");
const EMPTY_FIT: FitInput = { k: 2, labels: [], gold: [], previous: null } as unknown as FitInput;

/** Pids of this process's children that are zombies (state Z in /proc/<pid>/stat). */
function zombieChildren(): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // the process ended while we read
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ")"
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (state === "Z" && Number(ppid) === process.pid) out.push(Number(entry));
  }
  return out;
}

describe("worker-thread pools of the consensus worker", () => {
  it(
    "a thread that retires leaves a zombie: the mechanism the kept threads avoid",
    async () => {
      const before = zombieChildren().length;
      const pool = new Piscina({ filename: FIT_THREAD, minThreads: 0, maxThreads: 1, idleTimeout: 100 });
      try {
        await pool.run(EMPTY_FIT).catch(() => undefined);
        await eventually(async () => (zombieChildren().length > before ? true : undefined), 20_000, "a zombie after the thread retired");
      } finally {
        await pool.destroy();
      }
    },
    scaled(60_000),
  );

  it(
    "keptThreads: fits spaced past that idle time run on the same thread and leave no zombie",
    async () => {
      const pool = new Piscina(keptThreads(FIT_THREAD, 1));
      try {
        await pool.run(EMPTY_FIT).catch(() => undefined);
        const thread = pool.threads[0]?.threadId;
        expect(thread).toBeDefined();
        const before = zombieChildren().length;
        for (let i = 0; i < 3; i++) {
          // time passing is what is tested: longer than the 100 ms after which the first test's thread retired
          await new Promise((resolve) => setTimeout(resolve, 500));
          await pool.run(EMPTY_FIT).catch(() => undefined);
        }
        expect(pool.threads.map((t) => t.threadId)).toEqual([thread]);
        expect(zombieChildren().length).toBe(before);
      } finally {
        await pool.destroy();
      }
    },
    scaled(60_000),
  );
});
