import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync } from "node:fs";
import { copyDatabase, migrateDatabase, withDatabase } from "@labelgate/store";
import { ensureWebBuild } from "@labelgate/web";
import { SERVER_PG_URL, templateDatabase } from "./env";
import { runTmpDir } from "./leftovers";

/**
 * Creates and migrates this run's template database and copies it to the run's database; its name and the run id reach the workers via env. Builds the
 * web apps (packages/web) when the build is missing or older than its sources: the gateway serves them.
 */
export default async function globalSetup(): Promise<void> {
  ensureWebBuild((m) => process.stderr.write(`\n${m}\n`));
  const run = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  // one migrated template nobody connects to; the run's shared database and every system's own database are
  // copies of it (test/system.ts `isolatedDatabaseUrl`)
  await migrateDatabase(withDatabase(SERVER_PG_URL, templateDatabase(run)));
  const url = withDatabase(SERVER_PG_URL, `lgtest_${run}`);
  await copyDatabase(url, templateDatabase(run));
  process.env.LABELGATE_TEST_RUN = run;
  process.env.LABELGATE_TEST_DATABASE_URL = url;
  // every temporary folder of the run (tests and the processes they start) goes under one folder, which the
  // teardown checks is empty (test/leftovers.ts); readable by the embedded Postgres' `postgres` user
  const tmp = runTmpDir(run);
  mkdirSync(tmp, { recursive: true, mode: 0o755 });
  chmodSync(tmp, 0o755);
  process.env.LABELGATE_TEST_TMPDIR = tmp;
  process.env.TMPDIR = tmp;
}
