/**
 * A worker whose fetch keeps failing without a wait (packages/queue/src/engine.ts `guardAgainstSpin`): BullMQ
 * retries a fetch that failed with an error it does not take for a connection error at once, so such a worker
 * spins, and with it the process (in `pnpm start`, after its embedded Postgres was killed: 4 GB and a process
 * that never stopped). Here two workers run on a Redis of this test's own whose user may no longer run scripts
 * (`ACL SETUSER ... -evalsha -eval`): every fetch fails at once with NOPERM. The guard reports each spin once,
 * pauses the worker, resumes it after 1 s (then 2 s), and the error count stays bounded; the workers still close.
 */
import { eventually } from "../../../test/system";
import { type HandlersFor, type QueueKey, SPIN_ERRORS, startWorkers } from "../src";
import { ownRedis } from "./own-redis";

const own = ownRedis();

it("a worker failing without a wait is paused and reported once per spin, not left spinning", async () => {
  // a user that may do anything but run BullMQ's scripts: the workers connect, and every fetch is refused
  await own.admin.call("ACL", "SETUSER", "spinner", "on", "nopass", "~*", "&*", "+@all", "-evalsha", "-eval", "-script");
  const errors: { queue: QueueKey; message: string; at: number }[] = [];
  const handlers: HandlersFor<"webhook-worker"> = { routeEvent: async () => undefined, webhookDelivery: async () => undefined };
  const url = own.redis.url.replace("redis://", "redis://spinner@");
  const running = startWorkers({ kind: "redis", url, prefix: "spin" }, handlers, {
    onFailed: (queue, _job, err) => errors.push({ queue, message: err.message, at: Date.now() }),
  });
  try {
    const spins = () => errors.filter((e) => /without waiting .*: paused for \d+ ms$/.test(e.message));
    await eventually(
      async () => (new Set(spins().map((e) => e.queue)).size === 2 ? true : undefined),
      15_000,
      "each worker's spin to be reported",
    );
    for (const e of spins())
      expect(e.message).toMatch(new RegExp(`failed ${SPIN_ERRORS} times within 1000 ms without waiting \\(last: .*NOPERM`));
    // paused, then resumed after 1 s: it spins again and is paused again, this time for 2 s; in between, the
    // worker reported fewer than SPIN_ERRORS errors (not the thousands of a spin)
    const [queue] = spins().map((e) => e.queue);
    const twice = await eventually(
      async () => {
        const own = spins().filter((e) => e.queue === queue);
        return own.length >= 2 ? own : undefined;
      },
      15_000,
      "a second spin after the resume",
    );
    const [first, second] = twice as [(typeof errors)[number], (typeof errors)[number]];
    expect(second.at - first.at).toBeGreaterThanOrEqual(1000);
    expect(first.message).toMatch(/paused for 1000 ms$/);
    expect(second.message).toMatch(/paused for 2000 ms$/);
    const between = errors.filter((e) => e.queue === queue && e.at > first.at && e.at < second.at);
    expect(between.length).toBeLessThan(SPIN_ERRORS);
  } finally {
    await running.close();
  }
});
