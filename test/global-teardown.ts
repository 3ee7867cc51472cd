import { dropDatabase, withDatabase } from "@labelgate/db";
import { Redis } from "ioredis";
import { REDIS_URL, runId, runPrefix, testDatabaseUrl } from "./env";

/** Drops this run's database and deletes its Redis keys (set KEEP_TEST_DB=1 to keep them for debugging). */
export default async function globalTeardown(): Promise<void> {
  if (process.env.KEEP_TEST_DB === "1") return;
  await dropDatabase(testDatabaseUrl());
  // isolated databases of single systems (test/system.ts) that a failed test left behind
  const { Client } = await import("pg");
  const client = new Client({ connectionString: withDatabase(testDatabaseUrl(), "postgres") });
  await client.connect();
  try {
    const left = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [`lgtest_${runId()}_%`]);
    for (const row of left.rows) await dropDatabase(withDatabase(testDatabaseUrl(), row.datname));
  } finally {
    await client.end();
  }
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
