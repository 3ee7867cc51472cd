/**
 * A redis-server of a test file's own (test/chaos/harness.ts `startRedis`, on a free port), started before its
 * tests and stopped after them, with an admin connection: for tests that pause it, change its users or delete
 * its keys, which must not touch the Redis other runs share.
 */
import { Redis } from "ioredis";
import { type ChaosRedis, startRedis } from "../../../test/chaos/harness";

/** Registers beforeAll / afterAll for the file; read `redis` and `admin` inside its tests. */
export function ownRedis(): { readonly redis: ChaosRedis; readonly admin: Redis } {
  const own = {} as { redis: ChaosRedis; admin: Redis };
  beforeAll(async () => {
    own.redis = await startRedis();
    own.admin = new Redis(own.redis.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    own.admin.disconnect();
    await own.redis.stop();
  });
  return own;
}
