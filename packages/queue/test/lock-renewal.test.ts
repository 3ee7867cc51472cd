/**
 * BullMQ's "could not renew lock for job <id>" (packages/queue/src/engine.ts `isRenewalOfFinishedJob`): a renewal
 * that misses a job already done is not an error (on the Postgres backend the job's completion can land before
 * the renewal query that was in flight), while a lock lost under a handler that still runs is one, reported
 * through `onFailed`. The second is shown on a Redis of this test's own: the test deletes a running job's lock,
 * and the next renewal reports it.
 */
import { eventually } from "../../../test/system";
import { type HandlersFor, isRenewalOfFinishedJob, QueueClient, type QueueKey, startWorkers } from "../src";
import { ownRedis } from "./own-redis";

describe("isRenewalOfFinishedJob", () => {
  const running = new Set(["event-evt_running"]);
  const isRunning = (id: string) => running.has(id);

  it("is true for the renewal error of a job no longer running here", () => {
    expect(isRenewalOfFinishedJob(new Error("could not renew lock for job event-evt_done"), isRunning)).toBe(true);
  });

  it("is false for a job whose handler still runs: its lock is really lost", () => {
    expect(isRenewalOfFinishedJob(new Error("could not renew lock for job event-evt_running"), isRunning)).toBe(false);
  });

  it("is false for every other error, a lost lock found at completion included", () => {
    for (const message of [
      "Missing lock for job event-evt_done. moveToFinished",
      "Connection is closed.",
      "could not renew lock",
      "prefix could not renew lock for job event-evt_done",
    ])
      expect(isRenewalOfFinishedJob(new Error(message), isRunning)).toBe(false);
  });
});

describe("a lock lost under a running handler", () => {
  const own = ownRedis();

  it("is reported through onFailed by the next renewal", async () => {
    const prefix = "lock-renewal";
    const errors: { queue: QueueKey; message: string }[] = [];
    let started = false;
    let release = (): void => undefined;
    const handlers: HandlersFor<"webhook-worker"> = {
      routeEvent: () =>
        new Promise<void>((resolve) => {
          started = true;
          release = resolve;
        }),
      webhookDelivery: async () => undefined,
    };
    // a lock of 1 s, renewed every 250 ms
    const running = startWorkers({ kind: "redis", url: own.redis.url, prefix }, handlers, {
      lockDurationMs: 1000,
      onFailed: (queue, _job, err) => errors.push({ queue, message: err.message }),
    });
    const queue = new QueueClient({ kind: "redis", url: own.redis.url, prefix }, 5000);
    try {
      await queue.enqueue("routeEvent", { eventId: "evt_lost" });
      await eventually(async () => (started ? true : undefined), 10_000, "the handler to start");
      const lockKey = `${prefix}:task-settled:event-evt_lost:lock`;
      await eventually(async () => ((await own.admin.exists(lockKey)) === 1 ? true : undefined), 5_000, "the job's lock");
      await own.admin.del(lockKey);
      const reported = await eventually(
        async () => errors.find((e) => e.message === "could not renew lock for job event-evt_lost"),
        5_000,
        "the lost lock to be reported",
      );
      expect(reported?.queue).toBe("routeEvent");
    } finally {
      release();
      await queue.close();
      await running.close();
    }
  });
});
