/**
 * Readiness that tells the truth (issue 40 item 2, decision 0202), on `pnpm start`'s process
 * (scripts/standalone.ts, every role in one process):
 * - settling on a chain the test runs (EVM_RPC_URL): the chain killed, `/v1/health` and `/readyz` answer
 *   503 with `chain: unavailable` within 10 s; a task decided meanwhile says `waiting_for: chain_unavailable`;
 *   the anchorer's stall shows in `labelgate_anchoring_stalled_seconds` and a warn log. The chain back (same
 *   port and state), health is 200 again and the task settles: nothing lost.
 * - settling on its own local chain (anvil): anvil killed, it is restarted with backoff and a task decided
 *   after settles on it.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Anvil, startAnvil, waitForStateDump } from "@labelgate/chain/node";
import { dropDatabase } from "@labelgate/store";
import { fundedKey } from "../packages/chain/test/helpers";
import { apiOf, ops, type ServiceProcess, sample, startStandalone } from "./processes";
import { createLabeler, createTask, eventually, isolatedDatabaseUrl, label, registerCustomer, type System } from "./system";

const procs: ServiceProcess[] = [];
const chains: Anvil[] = [];
const dirs: string[] = [];
const databases: string[] = [];

afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill()));
  // a failed test leaves its standalone's local chain behind (SIGKILL reaches no child): stop it by its pid
  for (const p of procs) {
    for (const l of p.logs) {
      if (l.msg !== "local chain started" && l.msg !== "local chain restarted") continue;
      try {
        process.kill(Number(l.pid), "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  await Promise.all(chains.map((c) => c.stop(1000)));
  for (const db of databases) await dropDatabase(db).catch(() => undefined);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function standalone(env: Record<string, string>): Promise<{ proc: ServiceProcess; sys: System }> {
  const databaseUrl = await isolatedDatabaseUrl();
  databases.push(databaseUrl);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "lg-ready-"));
  dirs.push(dataDir);
  const proc = await startStandalone({
    databaseUrl,
    prefix: `ready${Date.now()}`,
    env: { DATA_DIR: dataDir, ANCHOR_INTERVAL_MS: "200", ...env },
  });
  procs.push(proc);
  // the helpers of test/system.ts need only `api`
  const sys = { api: apiOf(`http://127.0.0.1:${proc.port}`) } as unknown as System;
  return { proc, sys };
}

/**
 * Waits (bounded by `timeoutMs`) for the task to settle; a settlement that never comes fails with what the
 * task waits for and what the stack last logged at warn and above, to say why.
 */
async function settlement(proc: ServiceProcess, sys: System, key: string, taskId: string, timeoutMs: number, what: string) {
  let task: Record<string, unknown> = {};
  return eventually(
    async () => {
      task = await taskOf(sys, key, taskId);
      return task.status === "settled" ? task : undefined;
    },
    timeoutMs,
    what,
  ).catch((err: unknown) => {
    const warnings = proc.logs.filter((l) => Number(l.level) >= 40).slice(-15);
    throw new Error(
      `${String(err)}; task ${JSON.stringify({ status: task.status, waiting_for: task.waiting_for })}; last warnings ${JSON.stringify(warnings)}`,
    );
  });
}

async function taskOf(sys: System, key: string, taskId: string): Promise<Record<string, unknown>> {
  const res = await sys.api("GET", `/v1/tasks/${taskId}`, { token: key });
  expect(res.status).toBe(200);
  return res.body;
}

it("a dead chain: health and readiness 503 naming it, a settling task says it waits for it; back, nothing is lost", async () => {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), "lg-ready-chain-"));
  dirs.push(stateDir);
  const chain = await startAnvil({ stateDir });
  chains.push(chain);
  const { proc, sys } = await standalone({ EVM_RPC_URL: chain.rpcUrl, EVM_PRIVATE_KEY: await fundedKey(chain.rpcUrl), LEDGER: "evm" });

  const healthy = await sys.api("GET", "/v1/health");
  expect({ status: healthy.status, body: healthy.body }).toEqual({
    status: 200,
    body: { ok: true, service: "labelgate-gateway", checks: { database: "ok", queue: "ok", chain: "ok", workers: "ok" } },
  });
  const customer = await registerCustomer(sys);
  const labeler = await createLabeler(sys, "ready-chain");
  const before = await createTask(sys, customer.key, { consensus_threshold: 1 });
  expect((await label(sys, labeler.key, before, "cat")).status).toBe(201);
  await settlement(proc, sys, customer.key, before, 60_000, "a settlement");
  expect((await taskOf(sys, customer.key, before)).waiting_for).toBeNull();
  // the chain is killed once its state file holds what it has mined (the anchor contract, the funds, the
  // first anchor): two dumps, since a dump that ends now may have begun before the last block
  const statePath = chain.statePath as string;
  await waitForStateDump(statePath, Date.now(), 30_000);
  await waitForStateDump(statePath, statSync(statePath).mtimeMs, 30_000);

  const killedAt = Date.now();
  chain.process.kill("SIGKILL");
  await chain.stop();
  const down = await eventually(
    async () => {
      const res = await sys.api("GET", "/v1/health");
      return res.status === 503 ? res : undefined;
    },
    10_000,
    "health to answer 503",
  );
  expect(Date.now() - killedAt).toBeLessThan(10_000);
  expect(down.body).toMatchObject({ ok: false, checks: { database: "ok", queue: "ok", chain: "unavailable" } });
  expect(down.headers.get("retry-after")).toBe("5");
  const ready = await ops(proc, "/readyz");
  expect({ status: ready.status, chain: JSON.parse(ready.text).checks.chain }).toEqual({ status: 503, chain: "unavailable" });

  // a task decided while the chain is down: settling, and it says why
  const during = await createTask(sys, customer.key, { consensus_threshold: 1 });
  expect((await label(sys, labeler.key, during, "dog")).status).toBe(201);
  const waiting = await eventually(
    async () => {
      const t = await taskOf(sys, customer.key, during);
      return t.status === "settling" ? t : undefined;
    },
    30_000,
    "the task to be settling",
  );
  expect(waiting.waiting_for).toMatchObject({ reason: "chain_unavailable" });
  expect(Date.parse((waiting.waiting_for as { since: string }).since)).toBeGreaterThanOrEqual(killedAt - 1000);
  // the anchorer's stall: the gauge grows, and a warn log once it lasts 10 s
  await eventually(
    async () => ((sample((await ops(proc, "/metrics")).text, "labelgate_anchoring_stalled_seconds") ?? 0) > 0 ? true : undefined),
    30_000,
    "labelgate_anchoring_stalled_seconds > 0",
  );
  expect(sample((await ops(proc, "/metrics")).text, "labelgate_chain_available")).toBe(0);
  await eventually(async () => proc.logs.find((l) => String(l.msg).startsWith("anchoring stalled")), 40_000, "the stall's warn log");

  // the chain back on its port and state: healthy again, and the waiting task settles
  chains.push(await startAnvil({ port: chain.port, stateDir }));
  await eventually(async () => ((await sys.api("GET", "/v1/health")).status === 200 ? true : undefined), 30_000, "health 200 again");
  const settled = await settlement(proc, sys, customer.key, during, 90_000, "the waiting task to settle");
  expect(settled).toMatchObject({ consensus_label: "dog", waiting_for: null });
  expect(proc.logs.find((l) => l.msg === "anchoring resumed")).toBeDefined();
  proc.signal("SIGTERM");
  expect((await proc.exited).code).toBe(0);
}, 400_000);

it("pnpm start's own chain dies: it is restarted with backoff, and settlement goes on", async () => {
  const { proc, sys } = await standalone({});
  // killed once its state file holds the anchor contract and the funds (decision 0201), as early as that
  await eventually(async () => proc.logs.find((l) => l.msg === "local chain state saved"), 60_000, "the local chain state saved");
  const first = Number(proc.logs.find((l) => l.msg === "local chain started")?.pid);
  expect(first).toBeGreaterThan(0);
  process.kill(first, "SIGKILL");
  const restarted = await eventually(async () => proc.logs.find((l) => l.msg === "local chain restarted"), 60_000, "anvil restarted");
  expect(Number(restarted.pid)).not.toBe(first);
  expect(proc.logs.find((l) => l.msg === "local chain (anvil) exited: restarting it")).toMatchObject({ signal: "SIGKILL" });

  const customer = await registerCustomer(sys);
  const labeler = await createLabeler(sys, "ready-restart");
  const taskId = await createTask(sys, customer.key, { consensus_threshold: 1 });
  expect((await label(sys, labeler.key, taskId, "bird")).status).toBe(201);
  await settlement(proc, sys, customer.key, taskId, 90_000, "a settlement");
  // health follows within its probe's period (2 s): the chain check of a probe made while the chain was down
  // may still stand when the task settles
  let health = await sys.api("GET", "/v1/health");
  await eventually(
    async () => {
      health = await sys.api("GET", "/v1/health");
      return health.status === 200 ? true : undefined;
    },
    30_000,
    "health 200 after the restart",
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}: last answer ${health.status} ${JSON.stringify(health.body)}`);
  });
  // a requested stop stops the restarted chain too
  proc.signal("SIGTERM");
  expect((await proc.exited).code).toBe(0);
  const restartedPid = Number(restarted.pid);
  expect(() => process.kill(restartedPid, 0)).toThrow();
}, 400_000);
