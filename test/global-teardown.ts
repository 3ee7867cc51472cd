import { deleteKeysWithPrefix } from "@labelgate/queue";
import { dropDatabase, withDatabase } from "@labelgate/store";
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
  await deleteKeysWithPrefix(REDIS_URL, runPrefix());
}
