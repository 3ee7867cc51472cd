/** @labelgate/cli: the `labelgate` command line (program.ts) and its task-file readers (input.ts). */
export * from "./input";
export { CliError, type CliIo, chunkKey, DEFAULT_URL, describeFailure, MAX_CHUNK, rankingTable, run } from "./program";
