import { rmSync } from "node:fs";
import path from "node:path";
import { deleteKeysWithPrefix } from "@labelgate/queue";
import { dropDatabase, withDatabase } from "@labelgate/store";
import { Redis } from "ioredis";
import { REDIS_URL, runId, runPrefix, testDatabaseUrl } from "./env";
import { leftoverFolders, leftoverProcesses } from "./leftovers";

/** Drops this run's database and deletes its Redis keys (set KEEP_TEST_DB=1 to keep them for debugging). */
export default async function globalTeardown(): Promise<void> {
  if (process.env.KEEP_TEST_DB === "1") return;
  await dropDatabase(testDatabaseUrl());
  // isolated databases of single systems (test/system.ts) that a failed test left behind
  const { Client } = await import("pg");
  const client = new Client({ connectionString: withDatabase(testDatabaseUrl(), "postgres") });
  await client.connect();
  try {
    const left = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [`lgtest_${runId()}_%`]);
    for (const row of left.rows) await dropDatabase(withDatabase(testDatabaseUrl(), row.datname));
  } finally {
    await client.end();
  }
  await deleteKeysWithPrefix(REDIS_URL, runPrefix());
  await checkLeftovers();
}

/**
 * Fails the run when it left a process, a folder or a Redis key behind (test/leftovers.ts), after removing
 * them (so the next run starts clean). Processes get 5 s to exit (a SIGKILLed one is reaped at once).
 */
async function checkLeftovers(): Promise<void> {
  const run = runId();
  const deadline = Date.now() + 5000;
  let processes = leftoverProcesses(run);
  while (processes.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    processes = leftoverProcesses(run);
  }
  for (const p of processes) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  const tmp = process.env.LABELGATE_TEST_TMPDIR;
  const folders = tmp ? leftoverFolders(tmp) : [];
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const [, keys] = await redis.scan("0", "MATCH", `${runPrefix()}:*`, "COUNT", 1000).finally(() => redis.disconnect());
  const problems = [
    ...processes.map((p) => `process ${p.pid}: ${p.cmdline}`),
    ...folders.map((f) => `folder ${path.join(tmp as string, f)}`),
    ...keys.slice(0, 10).map((k) => `Redis key ${k}`),
  ];
  if (problems.length > 0) throw new Error(`the test run left ${problems.length} things behind (now removed):\n${problems.join("\n")}`);
}
