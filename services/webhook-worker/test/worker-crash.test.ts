/**
 * A webhook-worker replica killed mid-retry loses no event (DESIGN §1, §7): the worker runs as a real child
 * process (`tsx services/webhook-worker/src/main.ts`), is SIGKILLed after a failed first attempt while the retry
 * waits in the queue, and a new replica delivers the retry. The gateway and the consensus worker run in-process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";
import { consensusHandlers, DEFAULT_PRIOR } from "@labelgate/consensus-worker";
import { catalog, type RunningWorkers, startWorkers } from "@labelgate/queue";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { REDIS_URL } from "../../../test/env";
import {
  createLabeler,
  createTask,
  eventually,
  label,
  registerCustomer,
  type System,
  startSystem,
  TEST_ENCRYPTION_KEY,
} from "../../../test/system";

// --- a real local receiver ------------------------------------------------------------------------

type Reply = number | { status: number; headers?: Record<string, string> } | "hang" | "reset";

interface Received {
  /** 1-based index of the request at this receiver */
  n: number;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: string;
  at: number;
  /** still waiting for an answer on an open connection */
  open: boolean;
}

/** A node:http server on 127.0.0.1:0 answering each request with `reply(request)`. */
async function receiver(reply: (r: Received) => Reply | Promise<Reply> = () => 200) {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const r: Received = { n: received.length + 1, headers: req.headers, raw, body: raw.toString("utf8"), at: Date.now(), open: true };
      received.push(r);
      res.on("close", () => {
        r.open = false;
      });
      void Promise.resolve(reply(r)).then((action) => {
        if (action === "hang") return;
        if (action === "reset") {
          req.socket.resetAndDestroy();
          return;
        }
        const { status, headers } = typeof action === "number" ? { status: action, headers: {} } : action;
        res.writeHead(status, { "content-type": "text/plain", ...headers });
        res.end("ok");
      });
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    /** requests whose JSON body names `taskId` */
    forTask: (taskId: string) => received.filter((r) => json(r).task_id === taskId),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
type Receiver = Awaited<ReturnType<typeof receiver>>;

function json(r: Received): Record<string, unknown> {
  return JSON.parse(r.body) as Record<string, unknown>;
}

/** Our own verification: `sha256=<64 lowercase hex>` equal (constant time) to HMAC-SHA256(secret, raw bytes). */
function signedWith(raw: Buffer, header: string | string[] | undefined, secret: string): boolean {
  if (typeof header !== "string") return false;
  const hex = /^sha256=([0-9a-f]{64})$/.exec(header)?.[1];
  if (!hex) return false;
  return timingSafeEqual(Buffer.from(hex, "hex"), createHmac("sha256", Buffer.from(secret, "utf8")).update(raw).digest());
}

// --- API helpers ----------------------------------------------------------------------------------

interface AttemptView {
  attempt_id: string;
  attempt: number;
  manual: boolean;
  success: boolean;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
  started_at: string;
  finished_at: string;
}

interface DeliveryView {
  delivery_id: string;
  event_id: string;
  task_id: string;
  status: string;
  attempts: number;
  last_error: string | null;
  attempt_log: AttemptView[];
}

const newSecret = () => `whsec-${randomBytes(12).toString("hex")}`;

async function registerWebhook(s: System, key: string, url: string, secret: string): Promise<string> {
  const res = await s.api<{ webhook_id: string }>("POST", "/v1/webhooks", { token: key, body: { callback_url: url, secret } });
  expect(res.status).toBe(201);
  return res.body.webhook_id;
}

async function deliveriesOf(s: System, key: string, webhookId: string): Promise<{ total: number; items: DeliveryView[] }> {
  const res = await s.api<{ total: number; items: DeliveryView[] }>("GET", `/v1/webhooks/${webhookId}/deliveries?per_page=100`, {
    token: key,
  });
  expect(res.status).toBe(200);
  return res.body;
}

/** Waits until the delivery of `taskId` to `webhookId` has `status`, and returns it. */
async function deliveryReaching(s: System, key: string, webhookId: string, taskId: string, status: string): Promise<DeliveryView> {
  return eventually(
    async () => (await deliveriesOf(s, key, webhookId)).items.find((d) => d.task_id === taskId && d.status === status),
    20000,
    `delivery of ${taskId} to ${webhookId} to be ${status}`,
  );
}

async function taskView(s: System, key: string, taskId: string): Promise<Record<string, unknown>> {
  const res = await s.api("GET", `/v1/tasks/${taskId}`, { token: key });
  expect(res.status).toBe(200);
  return res.body;
}

async function webhookStatusReaching(s: System, key: string, taskId: string, status: string): Promise<void> {
  await eventually(
    async () => ((await taskView(s, key, taskId)).webhook_status === status ? true : undefined),
    20000,
    `webhook_status of ${taskId} to be ${status}`,
  );
}

/** Submits a threshold-1 task and labels it, so it settles at once. */
async function settleTask(s: System, customerKey: string, labelerKey: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const taskId = await createTask(s, customerKey, { consensus_threshold: 1, ...overrides });
  expect((await label(s, labelerKey, taskId, "cat")).status).toBe(201);
  return taskId;
}

const ROOT = path.resolve(__dirname, "../../..");

interface Replica {
  child: ChildProcess;
  output: string[];
  exited: Promise<NodeJS.Signals | number | null>;
}

/** Starts a webhook-worker replica as a child process in a process group of its own (tsx runs node as a child). */
function startReplica(s: System): Replica {
  const child = spawn(path.join(ROOT, "node_modules/.bin/tsx"), ["services/webhook-worker/src/main.ts"], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      DATABASE_URL: s.databaseUrl,
      REDIS_URL,
      QUEUE_PREFIX: s.prefix,
      ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      ALLOW_PRIVATE_URLS: "true",
      WEBHOOK_RETRY_MAX: "3",
      LOG_LEVEL: "silent",
    },
  });
  const output: string[] = [];
  child.stdout?.on("data", (c: Buffer) => output.push(c.toString()));
  child.stderr?.on("data", (c: Buffer) => output.push(c.toString()));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
  return { child, output, exited };
}

/** SIGKILL to the replica's whole process group (the tsx launcher and its node child), by its id. */
async function kill(replica: Replica): Promise<void> {
  if (replica.child.pid === undefined || replica.child.exitCode !== null || replica.child.signalCode !== null) return;
  try {
    process.kill(-replica.child.pid, "SIGKILL");
  } catch {
    // already gone
  }
  await replica.exited;
}

let sys: System;
let consensus: RunningWorkers;
let redis: Redis;
let deliveryQueue: Queue;
const replicas: Replica[] = [];
let r: Receiver;

beforeAll(async () => {
  // no in-process workers: consensus workers are started here, the webhook worker is the child process
  sys = await startSystem({ isolatedDatabase: true, workers: false });
  consensus = startWorkers(
    sys.backend,
    consensusHandlers({ prisma: sys.db.prisma, queue: sys.queue, logger: sys.logger, prior: DEFAULT_PRIOR, reconcileGraceMs: 1000 }),
    { concurrency: { consensus: 4, reconcile: 1 } },
  );
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  deliveryQueue = new Queue(catalog.webhookDelivery.name, { connection: redis, prefix: sys.prefix });
});
afterAll(async () => {
  for (const replica of replicas) await kill(replica);
  await r?.close();
  await consensus?.close();
  await deliveryQueue?.close();
  redis?.disconnect();
  await sys?.close();
});

it("a replica SIGKILLed between attempts loses nothing: a new replica sends the retry, exactly one success, attempts 1 and 2", async () => {
  r = await receiver((q) => (q.n === 1 ? 500 : 200));
  const first = startReplica(sys);
  replicas.push(first);

  const c = await registerCustomer(sys);
  const secret = newSecret();
  const webhookId = await registerWebhook(sys, c.key, r.url, secret);
  const labelerKey = (await createLabeler(sys)).key;
  const taskId = await settleTask(sys, c.key, labelerKey, { callback_url: r.url });

  // the first attempt fails and is logged; its retry waits (1 s) in the queue
  const pending = await eventually(
    async () => (await deliveriesOf(sys, c.key, webhookId)).items.find((d) => d.task_id === taskId && d.attempts === 1),
    30000,
    `the first attempt (replica output: ${first.output.join("")})`,
  );
  expect(pending.status).toBe("pending");
  const jobId = catalog.webhookDelivery.jobId({ deliveryId: pending.delivery_id });
  await eventually(
    async () => ((await (await deliveryQueue.getJob(jobId))?.getState()) === "delayed" ? true : undefined),
    10000,
    "the retry to wait",
  );

  await kill(first);
  expect(await first.exited).toBe("SIGKILL");
  expect(r.received).toHaveLength(1);

  const second = startReplica(sys);
  replicas.push(second);
  const delivered = await deliveryReaching(sys, c.key, webhookId, taskId, "delivered");
  await webhookStatusReaching(sys, c.key, taskId, "delivered");

  expect(delivered.attempts).toBe(2);
  expect(delivered.attempt_log.map((a) => [a.attempt, a.success, a.status_code])).toEqual([
    [2, true, 200],
    [1, false, 500],
  ]);
  expect(delivered.attempt_log.filter((a) => a.success)).toHaveLength(1);
  expect(r.received.map((q) => q.headers["x-svc-delivery-attempt"])).toEqual(["1", "2"]);
  for (const q of r.received) {
    expect(q.headers["x-svc-event-id"]).toBe(delivered.event_id);
    expect(signedWith(q.raw, q.headers["x-svc-signature"], secret)).toBe(true);
  }
  expect(await (await deliveryQueue.getJob(jobId))?.getState()).toBe("completed");
  expect(r.received.filter((q) => json(q).task_id === taskId)).toHaveLength(2);
});
