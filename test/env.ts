/**
 * Test environment: the machine's Postgres and Redis (TEST_PG_URL, TEST_REDIS_URL override), with a
 * database and a Redis key prefix unique to this run, so concurrent runs never share state.
 */
export const SERVER_PG_URL = process.env.TEST_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export function runId(): string {
  const id = process.env.LABELGATE_TEST_RUN;
  if (!id) throw new Error("LABELGATE_TEST_RUN is not set: run the tests with jest (global setup)");
  return id;
}

export function testDatabaseUrl(): string {
  const url = process.env.LABELGATE_TEST_DATABASE_URL;
  if (!url) throw new Error("LABELGATE_TEST_DATABASE_URL is not set: run the tests with jest (global setup)");
  return url;
}

/** The run's migrated template database (copied, never connected to): `lgtest_<run>_template`. */
export function templateDatabase(run: string = runId()): string {
  return `lgtest_${run}_template`;
}

/** Redis key prefix of this run (every queue of every test file lives under it). */
export function runPrefix(): string {
  return `lgtest:${runId()}`;
}

/**
 * TEST_TIME_SCALE (default 1, at least 1): every deadline of the tests is multiplied by it (`eventually`,
 * process start deadlines, jest's test and hook timeouts), so a loaded machine (CI beside other work) raises
 * one setting instead of each deadline. `.ci/run` sets 3 when CI=true.
 */
export function timeScale(): number {
  const value = Number(process.env.TEST_TIME_SCALE ?? "1");
  return Number.isFinite(value) && value >= 1 ? value : 1;
}

/** `ms` times TEST_TIME_SCALE: a test's deadline. */
export function scaled(ms: number): number {
  return Math.round(ms * timeScale());
}
