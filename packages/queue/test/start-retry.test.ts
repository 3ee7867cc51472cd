/**
 * Queue calls while a process starts (issue 28 item 7), on a real Redis of this test's own (redis-server on a
 * free port: `CLIENT PAUSE` must not slow the machine's Redis that other runs share). While the server is
 * paused for 2.5 s, longer than the 1 s timeout the test systems use:
 * - `schedule` (the consensus worker's start) retries with backoff and succeeds once the pause ends; it
 *   failed with "schedule timed out after 1000 ms" before;
 * - `enqueue` (a request's call) still fails fast, within about the timeout;
 * - a backend that stays away fails the start once the start bound has passed.
 */
import { QueueClient, QueueUnavailableError } from "../src";
import { ownRedis } from "./own-redis";

const TIMEOUT_MS = 1000;
const PAUSE_MS = 2500;

const own = ownRedis();

/** A client whose connection is ready (a first `counts` answered). */
async function readyClient(startRetryMs?: number): Promise<QueueClient> {
  const queue = new QueueClient({ kind: "redis", url: own.redis.url, prefix: "start-retry" }, TIMEOUT_MS, startRetryMs);
  await queue.counts("reconcile");
  return queue;
}

it("a schedule made while Redis is paused waits for it; an enqueue fails fast", async () => {
  const queue = await readyClient();
  try {
    await own.admin.call("CLIENT", "PAUSE", String(PAUSE_MS), "WRITE");
    const t0 = Date.now();
    await queue.schedule("reconcile", 60_000, {});
    const scheduledMs = Date.now() - t0;
    expect(scheduledMs).toBeGreaterThanOrEqual(PAUSE_MS - 200);
    expect((await own.admin.keys("start-retry:*")).length).toBeGreaterThan(0);

    await own.admin.call("CLIENT", "PAUSE", String(PAUSE_MS), "WRITE");
    const t1 = Date.now();
    await expect(queue.enqueue("reconcile", {})).rejects.toThrow(QueueUnavailableError);
    expect(Date.now() - t1).toBeLessThan(TIMEOUT_MS + 500);
  } finally {
    await own.admin.call("CLIENT", "UNPAUSE");
    await queue.close();
  }
});

it("a schedule fails once the start bound has passed", async () => {
  const queue = await readyClient(1500);
  try {
    await own.admin.call("CLIENT", "PAUSE", "5000", "WRITE");
    const t0 = Date.now();
    await expect(queue.schedule("reconcile", 60_000, {})).rejects.toThrow(/schedule timed out after 1000 ms/);
    expect(Date.now() - t0).toBeLessThan(1500 + TIMEOUT_MS + 500);
  } finally {
    await own.admin.call("CLIENT", "UNPAUSE");
    await queue.close();
  }
});
