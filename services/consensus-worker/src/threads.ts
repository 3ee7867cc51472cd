/**
 * The worker-thread pools of this service (refit fits, anchor batch trees) keep their threads.
 *
 * A pool thread loads TypeScript through tsx, whose esbuild service is a child process of this process. When
 * the thread ends, that child's exit is never collected: it stays a zombie of this process for as long as the
 * process lives (no init reaps the child of a live parent). Pools whose threads retired after an idle minute
 * gained one zombie per busy minute after an idle one: 7 after 9 minutes of `pnpm start` (issue 28 item 9;
 * test/threads.test.ts shows it). So a pool starts its threads on first use and never retires them: at most
 * `maxThreads` threads and esbuild children per pool, all live.
 */

/**
 * Piscina options of a pool of at most `maxThreads` threads running `filename` (a .cjs entry), started on first
 * use and never retired (`idleTimeout: Infinity`, which piscina reads as "never").
 */
export function keptThreads(
  filename: string,
  maxThreads: number,
): { filename: string; minThreads: number; maxThreads: number; idleTimeout: number } {
  return { filename, minThreads: 0, maxThreads, idleTimeout: Number.POSITIVE_INFINITY };
}
