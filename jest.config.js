/** Jest: TypeScript via SWC; real Postgres and Redis, one database and key prefix per run (test/global-setup.ts). */
module.exports = {
  testEnvironment: "node",
  transform: {
    "^.+\\.ts$": ["@swc/jest", { jsc: { target: "es2022", parser: { syntax: "typescript" } }, module: { type: "commonjs" } }],
  },
  testMatch: ["<rootDir>/services/*/test/**/*.test.ts", "<rootDir>/packages/*/test/**/*.test.ts", "<rootDir>/test/**/*.test.ts"],
  globalSetup: "<rootDir>/test/global-setup.ts",
  globalTeardown: "<rootDir>/test/global-teardown.ts",
  testTimeout: 60000,
  maxWorkers: 2,
  reporters: ["default", "<rootDir>/test/summary-reporter.js"],
};
