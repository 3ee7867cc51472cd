/** Jest: TypeScript via SWC; real Postgres and Redis, one database and key prefix per run (test/global-setup.ts). */
module.exports = {
  testEnvironment: "node",
  transform: {
    "^.+\\.ts$": ["@swc/jest", { jsc: { target: "es2022", parser: { syntax: "typescript" } }, module: { type: "commonjs" } }],
  },
  testMatch: ["<rootDir>/services/*/test/**/*.test.ts", "<rootDir>/packages/*/test/**/*.test.ts", "<rootDir>/test/**/*.test.ts"],
  globalSetup: "<rootDir>/test/global-setup.ts",
  globalTeardown: "<rootDir>/test/global-teardown.ts",
  // TEST_TIME_SCALE (test/env.ts) raises every deadline of a loaded machine at once
  testTimeout: 60000 * Math.max(1, Number(process.env.TEST_TIME_SCALE) || 1),
  maxWorkers: 2,
  // Every test file in a fresh worker process (any worker above this after a file is replaced): a BullMQ
  // worker left behind by one file (its connection's init failed with a non-connection error, on which
  // BullMQ 6.7 retries its fetch without delay) otherwise spins in microtasks and starves every later
  // file of that jest worker (seen twice: the suite hung on its last file).
  workerIdleMemoryLimit: "64MB",
  reporters: ["default", "<rootDir>/test/summary-reporter.js"],
};
