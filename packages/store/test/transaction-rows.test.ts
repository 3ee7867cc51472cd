/**
 * `transactionRows` and `withTransaction`: parameters inlined as literals come back from Postgres exactly as sent
 * (quotes, backslashes, `$n` look-alikes, unicode, arrays), a NUL is refused before any SQL is sent, and
 * the statements of one call are one transaction (a failing statement keeps nothing of the others).
 * `quoteLiteral` gives the very text of pg's `escapeLiteral`.
 */

import { escapeLiteral } from "pg";
import { runId, testDatabaseUrl } from "../../../test/env";
import { createDb, type Db } from "../src/database";
import { Prisma } from "../src/generated/client";
import { quoteLiteral, transactionRows, withTransaction } from "../src/sql";

let db: Db;
const table = `inline_${runId().replace(/[^a-z0-9]/gi, "")}`;

beforeAll(async () => {
  db = createDb({ url: testDatabaseUrl(), poolMax: 2 });
  await db.pool.query(`CREATE TABLE ${table} (id text PRIMARY KEY, n int)`);
});
afterAll(async () => {
  await db.pool.query(`DROP TABLE IF EXISTS ${table}`);
  await db.close();
});

const TRICKY = [
  "plain",
  "it's",
  "''; DROP TABLE customers; --",
  "back\\slash\\' and quote",
  "E'\\x41'",
  "$1 $2 $$ $tag$ body $tag$",
  "🐱 猫 ﷽ \u202e rtl",
  "line\nbreak\ttab\r",
  "",
];

it("quoteLiteral writes the literal pg's escapeLiteral writes, for tricky and long strings", () => {
  const long = `${"word's \\ ".repeat(4000)}${"ä".repeat(3000)}`;
  for (const value of [...TRICKY, long, "'", "\\", "''\\\\''"]) expect(quoteLiteral(value)).toBe(escapeLiteral(value));
});

it("inlined strings, numbers, booleans, null and arrays come back unchanged", async () => {
  for (const value of TRICKY) {
    const [rows] = await transactionRows<[{ v: string; same: boolean }]>(db.pool, [
      Prisma.sql`SELECT ${value}::text AS v, ${value}::text = ${value}::text AS same`,
    ]);
    expect(rows).toEqual([{ v: value, same: true }]);
  }
  const [rows] = await transactionRows<[{ a: string[]; n: number; b: boolean; z: null; e: string[]; big: string }]>(db.pool, [
    Prisma.sql`SELECT ${TRICKY}::text[] AS a, ${42}::int AS n, ${true}::boolean AS b, ${null}::text AS z, ${[]}::text[] AS e,
      ${7810529264968132466n}::bigint AS big`,
  ]);
  // int8 comes back as a string (pg's parser), exactly
  expect(rows).toEqual([{ a: TRICKY, n: 42, b: true, z: null, e: [], big: "7810529264968132466" }]);
});

it("arrays take the parameter's type: all-NULL int[], timestamptz[] from strings, and strings that look like array syntax", async () => {
  const odd = ["NULL", "null", "{a,b}", 'say "hi"', "back\\slash", " spaced ", "", "a,b", "🐱"];
  const [rows] = await transactionRows<
    [{ none: (number | null)[]; some: (number | null)[]; at: Date[]; f: number[]; b: (boolean | null)[]; s: (string | null)[] }]
  >(db.pool, [
    Prisma.sql`SELECT ${[null, null]}::int[] AS none, ${[null, 200]}::int[] AS some, ${["2026-11-22T05:00:00.000Z"]}::timestamptz[] AS at,
        ${[1, 2.5, 1732000000000.5]}::float8[] AS f, ${[true, null, false]}::boolean[] AS b, ${[...odd, null]}::text[] AS s`,
  ]);
  expect(rows).toEqual([
    {
      none: [null, null],
      some: [null, 200],
      at: [new Date("2026-11-22T05:00:00.000Z")],
      f: [1, 2.5, 1732000000000.5],
      b: [true, null, false],
      s: [...odd, null],
    },
  ]);
  // the same statement again runs as EXECUTE of the statement prepared above, with other values
  const [again] = await transactionRows<[{ none: (number | null)[] }]>(db.pool, [
    Prisma.sql`SELECT ${[null, null]}::int[] AS none, ${[null, 200]}::int[] AS some, ${["2026-11-22T05:00:00.000Z"]}::timestamptz[] AS at,
        ${[1, 2.5, 1732000000000.5]}::float8[] AS f, ${[true, null, false]}::boolean[] AS b, ${[...odd, null]}::text[] AS s`,
  ]);
  expect(again[0]?.none).toEqual([null, null]);
  await expect(transactionRows(db.pool, [Prisma.sql`SELECT ${["a\0b"]}::text[]`])).rejects.toThrow(/NUL/);
  await expect(transactionRows(db.pool, [Prisma.sql`SELECT ${[[1]]}::int[]`])).rejects.toThrow(/array element of type object/);
});

it("a NUL, a non-finite number or an object is refused before anything is sent", async () => {
  await expect(transactionRows(db.pool, [Prisma.sql`SELECT ${"a\0b"}::text`])).rejects.toThrow(/NUL/);
  await expect(transactionRows(db.pool, [Prisma.sql`SELECT ${Number.NaN}::int`])).rejects.toThrow(/number/);
  await expect(transactionRows(db.pool, [Prisma.sql`SELECT ${new Date()}::timestamptz`])).rejects.toThrow(/type object/);
});

it("the statements of one call are one transaction, each seeing the ones before it", async () => {
  const [inserted, seen] = await transactionRows<[{ id: string }, { n: number }]>(db.pool, [
    Prisma.sql`INSERT INTO ${Prisma.raw(table)} (id, n) VALUES (${"a"}, ${1}) RETURNING id`,
    Prisma.sql`SELECT count(*)::int AS n FROM ${Prisma.raw(table)} WHERE id = ${"a"}`,
  ]);
  expect(inserted).toEqual([{ id: "a" }]);
  expect(seen).toEqual([{ n: 1 }]);
  // the second statement fails (duplicate key): the first one's row is not kept either
  await expect(
    transactionRows(db.pool, [
      Prisma.sql`INSERT INTO ${Prisma.raw(table)} (id, n) VALUES (${"b"}, ${2})`,
      Prisma.sql`INSERT INTO ${Prisma.raw(table)} (id, n) VALUES (${"a"}, ${3})`,
    ]),
  ).rejects.toMatchObject({ code: "23505" });
  const { rows } = await db.pool.query(`SELECT id, n FROM ${table} ORDER BY id`);
  expect(rows).toEqual([{ id: "a", n: 1 }]);
  // and the connection is usable afterwards
  const [again] = await transactionRows<[{ one: number }]>(db.pool, [Prisma.sql`SELECT ${1}::int AS one`]);
  expect(again).toEqual([{ one: 1 }]);
});

it("withTransaction: logic between round trips, one transaction; a throw in between keeps nothing", async () => {
  const n = await withTransaction(db.pool, async (run) => {
    const [[row]] = await run<[{ n: number }]>([Prisma.sql`SELECT count(*)::int AS n FROM ${Prisma.raw(table)}`]);
    const next = (row?.n ?? 0) + 10;
    const [inserted] = await run<[{ n: number }]>(
      [Prisma.sql`INSERT INTO ${Prisma.raw(table)} (id, n) VALUES (${"w"}, ${next}) RETURNING n`],
      {
        commit: true,
      },
    );
    return inserted[0]?.n;
  });
  expect(n).toBe(11);
  await expect(
    withTransaction(db.pool, async (run) => {
      await run([Prisma.sql`INSERT INTO ${Prisma.raw(table)} (id, n) VALUES (${"x"}, ${1})`]);
      throw new Error("decided against it");
    }),
  ).rejects.toThrow("decided against it");
  const { rows } = await db.pool.query(`SELECT id FROM ${table} ORDER BY id`);
  expect(rows).toEqual([{ id: "a" }, { id: "w" }]);
});

it("each statement is prepared once per connection and then only executed", async () => {
  const one = createDb({ url: testDatabaseUrl(), poolMax: 1 });
  try {
    const marker = `marker_${runId().replace(/[^a-z0-9]/gi, "")}`;
    const statement = Prisma.sql`SELECT ${"x"}::text AS ${Prisma.raw(marker)}`;
    for (let i = 0; i < 3; i++)
      expect(await transactionRows<[Record<string, string>]>(one.pool, [statement])).toEqual([[{ [marker]: "x" }]]);
    // the pool's one connection holds exactly one prepared statement of that text, executed three times
    // (`statement` is the whole message that prepared it, so this count's own message is left out)
    const [[prepared]] = await transactionRows<[{ n: number }]>(one.pool, [
      Prisma.sql`SELECT count(*)::int AS n FROM pg_prepared_statements
        WHERE statement LIKE ${`%AS ${marker}%`} AND statement NOT LIKE '%pg_prepared_statements%'`,
    ]);
    expect(prepared).toEqual({ n: 1 });
  } finally {
    await one.close();
  }
});
