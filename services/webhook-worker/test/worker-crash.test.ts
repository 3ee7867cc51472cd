/**
 * A webhook-worker replica killed mid-retry loses no event (contract §shape, §events): the worker runs as a real child
 * process (`tsx services/webhook-worker/src/main.ts`), is SIGKILLed after a failed first attempt while the retry
 * waits in the queue, and a new replica delivers the retry. The gateway and the consensus worker run in-process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { catalog } from "@labelgate/queue";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { REDIS_URL } from "../../../test/env";
import {
  createLabeler,
  eventually,
  registerCustomer,
  type System,
  startConsensusWorkers,
  startSystem,
  TEST_ENCRYPTION_KEY,
} from "../../../test/system";
import {
  deliveriesOf,
  deliveryReaching,
  json,
  newSecret,
  type Receiver,
  receiver,
  registerWebhook,
  settleTask,
  signedWith,
  webhookStatusReaching,
} from "../../../test/webhooks";

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
      // an ephemeral ops port: test processes never contend for the default METRICS_PORT
      METRICS_PORT: "0",
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
let consensus: { close(): Promise<void> };
let redis: Redis;
let deliveryQueue: Queue;
const replicas: Replica[] = [];
let r: Receiver;

beforeAll(async () => {
  // no in-process workers: consensus workers are started here, the webhook worker is the child process
  sys = await startSystem({ workers: false });
  consensus = await startConsensusWorkers(sys, 4);
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
