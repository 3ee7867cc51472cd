/**
 * The statement helpers every store module runs its SQL with (package-internal): one statement on the pool
 * (`queryRows`), a transaction of several statements in one round trip (`transactionRows`), and a
 * transaction with logic between its round trips (`withTransaction`). Statements are `Prisma.sql` values
 * (`$1..$n` parameters); in transactions they are PREPAREd once per connection and EXECUTEd with inlined
 * literals, so one simple-protocol message carries many statements.
 */
import { createHash } from "node:crypto";
import type { Pool, PoolClient, QueryResult } from "pg";
import type { Prisma } from "./generated/client";

/**
 * Runs a `Prisma.sql` statement on the pg pool (`$1..$n` parameters) and returns its rows as pg parses them:
 * int4 → number, int8 and numeric → string, timestamptz → Date, json/jsonb → parsed value.
 * @throws pg's DatabaseError (`code` = SQLSTATE, e.g. 23505) or a connection error
 */
export async function queryRows<T extends object>(pool: Pool, sql: Prisma.Sql): Promise<T[]> {
  const result = await pool.query<T>(sql.text, sql.values);
  return result.rows;
}

function finiteNumber(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`cannot inline the number ${value}`);
  return String(value);
}

/**
 * A string as a SQL literal, the same text as pg's `escapeLiteral` (quotes doubled; with a backslash, the
 * `E'...'` form and backslashes doubled), made by one native `replace`: `escapeLiteral` appends a character at
 * a time, one intermediate string per character, which for a free_text consensus of 35 kB was a third of the
 * gateway's allocations and most of its garbage collection (docs/decisions/0333). Exported for the test that
 * compares the two.
 */
export function quoteLiteral(value: string): string {
  return value.includes("\\") ? ` E'${value.replace(/['\\]/g, "$&$&")}'` : `'${value.replace(/'/g, "''")}'`;
}

function withoutNul(value: string): string {
  // a NUL would end the protocol's query string early; Postgres text cannot hold one anyway
  if (value.includes("\0")) throw new Error("cannot inline a string with a NUL character");
  return value;
}

/**
 * One element of an array's text form (`{a,"b c",NULL}`, Postgres "Array Value Input"): strings always
 * double-quoted with `"` and `\` escaped (so "NULL" stays a string), numbers and booleans bare, null as NULL.
 */
function arrayElement(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number") return finiteNumber(value);
  if (typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "string") return `"${withoutNul(value).replace(/[\\"]/g, "\\$&")}"`;
  throw new Error(`cannot inline an array element of type ${typeof value}`);
}

/**
 * A SQL literal of a statement parameter, for statements sent with their parameters inlined (`EXECUTE`
 * arguments): strings through `quoteLiteral` (a NUL refused), finite numbers, bigints, booleans,
 * null, and one-dimensional arrays of these as a quoted text form (`'{...}'`). A quoted literal has no type
 * of its own and takes the parameter's (int[], timestamptz[], ...); an `ARRAY[...]` constructor would be
 * text[] when its elements are all NULL, which Postgres refuses for an int[] parameter.
 * @throws Error on anything else
 */
function literal(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number") return finiteNumber(value);
  if (typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (typeof value === "string") return quoteLiteral(withoutNul(value));
  if (Array.isArray(value)) return quoteLiteral(`{${value.map(arrayElement).join(",")}}`);
  throw new Error(`cannot inline a parameter of type ${typeof value}`);
}

/** The prepared statements (SQL-level PREPARE) of each pooled connection, by name. */
const preparedOf = new WeakMap<PoolClient, Set<string>>();

/**
 * The commands that run `sql` on `client` with a cached plan: `PREPARE lg_<hash> AS <text>` the first time
 * this connection sees the text, then `EXECUTE lg_<hash>(<literals>)`. Postgres plans a prepared statement
 * once (after five custom plans, a generic one when it is not costlier), where an inlined statement is
 * planned at every call: planning the claim and label statements cost more than running them.
 */
function executeCommands(client: PoolClient, sql: Prisma.Sql): string[] {
  const name = `lg_${createHash("sha1").update(sql.text).digest("hex").slice(0, 24)}`;
  let prepared = preparedOf.get(client);
  if (!prepared) {
    prepared = new Set();
    preparedOf.set(client, prepared);
  }
  const commands: string[] = [];
  if (!prepared.has(name)) {
    commands.push(`PREPARE ${name} AS ${sql.text}`);
    prepared.add(name);
  }
  commands.push(sql.values.length === 0 ? `EXECUTE ${name}` : `EXECUTE ${name}(${sql.values.map(literal).join(", ")})`);
  return commands;
}

/**
 * Sends `statements` (each PREPAREd once per connection, then EXECUTEd with its parameters as literals)
 * between `before` and `after` commands in ONE simple-protocol message; returns each statement's rows.
 */
async function sendMessage(client: PoolClient, statements: Prisma.Sql[], before: string[], after: string[]): Promise<object[][]> {
  const commands = [...before];
  const executes: number[] = [];
  for (const sql of statements) {
    commands.push(...executeCommands(client, sql));
    executes.push(commands.length - 1);
  }
  commands.push(...after);
  const result = (await client.query(commands.join(";\n"))) as unknown as QueryResult<object> | QueryResult<object>[];
  const results = Array.isArray(result) ? result : [result];
  return executes.map((i) => (results[i] as QueryResult<object>).rows);
}

/**
 * Runs `body` with a checked-out connection. A connection the server ends while checked out (a Postgres
 * restart: 57P01) emits 'error', which would kill the process without a listener (chaos suite); the
 * statement in flight fails on its own. The connection is discarded when that happened or when `body`
 * threw (what it had prepared is then unknown), else returned to the pool.
 */
async function withClient<R>(pool: Pool, body: (client: PoolClient) => Promise<R>): Promise<R> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => {
    broken = err;
  };
  client.on("error", onError);
  try {
    return await body(client);
  } catch (err) {
    broken ??= err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    client.removeListener("error", onError);
    client.release(broken);
  }
}

/**
 * Runs `statements` in order as ONE transaction in ONE round trip and returns each statement's rows (parsed
 * as in `queryRows`): the statements travel in one simple-protocol message, which Postgres runs as one
 * implicit transaction (all or nothing), each statement with a fresh snapshot under READ COMMITTED. Each is
 * prepared once per connection and executed with its parameters inlined as literals (`executeCommands`,
 * `literal`'s rules): one round trip instead of BEGIN + each statement + COMMIT, and no planning.
 * @throws pg's DatabaseError (nothing of the transaction is kept) or a connection error
 */
export async function transactionRows<T extends object[]>(
  pool: Pool,
  statements: { [K in keyof T]: Prisma.Sql },
): Promise<{ [K in keyof T]: T[K][] }> {
  return withClient(pool, async (client) => (await sendMessage(client, statements as Prisma.Sql[], [], [])) as { [K in keyof T]: T[K][] });
}

/** Runs statements of an open transaction; `commit: true` ends the transaction with this round trip. */
export type TransactionRun = <T extends object[]>(
  statements: { [K in keyof T]: Prisma.Sql },
  options?: { commit?: boolean },
) => Promise<{ [K in keyof T]: T[K][] }>;

/**
 * A transaction with application logic between its statements, on one pooled connection, in as few round
 * trips as possible: `body` gets `run`, which sends several statements in one message (prepared and
 * executed as in `transactionRows`); BEGIN travels with the first message and COMMIT with the one marked
 * `commit` (or on its own when `body` returns without it). When `body` or a statement throws, the
 * transaction is rolled back, the connection discarded and the error rethrown.
 * @throws what `body` throws, pg's DatabaseError or a connection error
 */
export async function withTransaction<R>(pool: Pool, body: (run: TransactionRun) => Promise<R>): Promise<R> {
  return withClient(pool, async (client) => {
    let begun = false;
    let committed = false;
    const run = (async (statements: Prisma.Sql[], options: { commit?: boolean } = {}) => {
      if (committed) throw new Error("transaction already committed");
      const before = begun ? [] : ["BEGIN"];
      begun = true;
      const rows = await sendMessage(client, statements, before, options.commit ? ["COMMIT"] : []);
      if (options.commit) committed = true;
      return rows;
    }) as TransactionRun;
    try {
      const value = await body(run);
      if (begun && !committed) await client.query("COMMIT");
      return value;
    } catch (err) {
      // the connection is discarded after this (withClient): a failed rollback needs no handling of its own
      if (begun && !committed) await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    }
  });
}
