/**
 * The layout rules of docs/architecture.md that a reviewer would otherwise have to remember:
 * - SQL lives in one store: no raw statement, statement helper, Prisma model call or pg client outside
 *   packages/store in the product's code (services, packages, scripts). Tests may inspect rows; the
 *   benchmarks' floors are raw SQL on purpose (they measure what the machine does without our code).
 * - Packages never read `process.env`: env is parsed once, at a service's edge, by the runtime.
 * Each rule is checked by the same scanner a second time on a sample that breaks it, so the test fails when
 * the scanner does.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(__dirname, "..");

/** Every .ts/.tsx file under `dir` (recursively), skipping node_modules, generated code and tests. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "generated" || name === "test" || name === "dist") continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sources(full));
    else if (/\.tsx?$/.test(name)) out.push(full);
  }
  return out;
}

/** The product's code: services/*, packages/* and scripts/, minus packages/store. */
function productFiles(): string[] {
  const dirs = [
    ...readdirSync(path.join(ROOT, "services")).map((d) => path.join(ROOT, "services", d)),
    ...readdirSync(path.join(ROOT, "packages"))
      .filter((d) => d !== "store")
      .map((d) => path.join(ROOT, "packages", d)),
    path.join(ROOT, "scripts"),
  ];
  return dirs.flatMap((d) => (statSync(d).isDirectory() ? sources(d) : []));
}

/** Code lines (comments and docstrings left out), with their numbers. */
function codeLines(text: string): { n: number; line: string }[] {
  return text
    .split("\n")
    .map((line, i) => ({ n: i + 1, line }))
    .filter(({ line }) => !/^\s*(\/\/|\*|\/\*\*)/.test(line));
}

const SQL_RULES: { name: string; re: RegExp }[] = [
  { name: "a raw Prisma statement", re: /\$(queryRaw|executeRaw|queryRawUnsafe|executeRawUnsafe|transaction)\b/ },
  { name: "a statement helper of the store", re: /\b(queryRows|transactionRows|withTransaction)\s*[(<]/ },
  { name: "a Prisma model call", re: /\bprisma\.[a-z][A-Za-z]*\.(find|create|update|upsert|delete|count|groupBy|aggregate)\w*\(/ },
  { name: "SQL built with Prisma.sql", re: /\bPrisma\.(sql|raw|join)\b/ },
  { name: "a pg client", re: /from\s+"pg"|require\("pg"\)/ },
  { name: "an SQL statement in a string", re: /["'`]\s*(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b/ },
];

/** Violations of `rules` in `text` as `file:line rule`. */
function violations(file: string, text: string, rules: { name: string; re: RegExp }[]): string[] {
  return codeLines(text).flatMap(({ n, line }) => rules.filter((r) => r.re.test(line)).map((r) => `${file}:${n} ${r.name}`));
}

describe("SQL lives in packages/store only", () => {
  it("no service, package (but the store) or script runs SQL of its own", () => {
    const files = productFiles();
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((f) => violations(path.relative(ROOT, f), readFileSync(f, "utf8"), SQL_RULES));
    expect(found).toEqual([]);
  });

  it("the scanner catches each kind of statement (so the check above can fail)", () => {
    const samples = [
      "const rows = await prisma.$queryRaw`SELECT 1`;",
      "await queryRows(pool, sql);",
      "await deps.prisma.task.findMany({ where: {} });",
      "const q = Prisma.sql`SELECT 1`;",
      'import { Pool } from "pg";',
      'await client.query("UPDATE tasks SET status = $1 WHERE id = $2", [s, id]);',
    ];
    for (const sample of samples) expect(violations("sample.ts", sample, SQL_RULES)).toHaveLength(1);
    expect(violations("sample.ts", "// a comment: SELECT * FROM tasks", SQL_RULES)).toEqual([]);
  });
});

describe("env is parsed at the edge", () => {
  // reading a variable; handing the whole environment on to a child process (the Prisma CLI) is not reading it
  const ENV_RULE = [{ name: "process.env read in a package", re: /\bprocess\.env(\.|\[)/ }];

  it("no package reads process.env (entry points, main.ts, hand it to the runtime, which parses it once)", () => {
    const files = readdirSync(path.join(ROOT, "packages"))
      .flatMap((d) => sources(path.join(ROOT, "packages", d)))
      .filter((f) => path.basename(f) !== "main.ts");
    const found = files.flatMap((f) => violations(path.relative(ROOT, f), readFileSync(f, "utf8"), ENV_RULE));
    expect(found).toEqual([]);
    expect(violations("sample.ts", "const url = process.env.DATABASE_URL;", ENV_RULE)).toHaveLength(1);
  });
});
