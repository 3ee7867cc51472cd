import { dropDatabase } from "@labelgate/db";
import { Redis } from "ioredis";
import { REDIS_URL, runPrefix, testDatabaseUrl } from "./env";

/** Drops this run's database and deletes its Redis keys (set KEEP_TEST_DB=1 to keep them for debugging). */
export default async function globalTeardown(): Promise<void> {
  if (process.env.KEEP_TEST_DB === "1") return;
  await dropDatabase(testDatabaseUrl());
  const redis = new Redis(REDIS_URL);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${runPrefix()}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}
