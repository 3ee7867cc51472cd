/**
 * The layout rules of docs/architecture.md that a reviewer would otherwise have to remember:
 * - SQL lives in one store: no raw statement, statement helper, Prisma model call or pg client outside
 *   packages/store in the product's code (services, packages, scripts). Tests may inspect rows; the
 *   benchmarks' floors are raw SQL on purpose (they measure what the machine does without our code).
 * - Packages never read `process.env`: env is parsed once, at a service's edge, by the runtime.
 * - Package boundaries (test/boundaries.ts): no deep import of another package's src/, no import that climbs
 *   out of its package, packages declared when used (workspace ones also used when declared), no import cycle.
 * Each rule is checked by the same scanner a second time on a sample that breaks it, so the test fails when
 * the scanner does.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { checkBoundaries, readTree, type Tree, type Workspace } from "./boundaries";

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

describe("package boundaries (test/boundaries.ts)", () => {
  it("the repository keeps them: no deep import, no import out of its package, dependencies as declared, no cycle", () => {
    const tree = readTree(ROOT);
    expect(tree.files.size).toBeGreaterThan(200);
    expect(tree.workspaces.length).toBeGreaterThan(15);
    expect(checkBoundaries(tree)).toEqual([]);
  });

  /** A small tree: the root, @labelgate/a (exports "." and "./extra") and @labelgate/b, b depending on a. */
  function sample(files: Record<string, string>, declared: { a?: string[]; b?: string[] } = {}): Tree {
    return {
      workspaces: [
        { dir: "", name: "labelgate", declared: [] },
        { dir: "packages/a", name: "@labelgate/a", declared: declared.a ?? [], exports: [".", "./extra"] },
        { dir: "packages/b", name: "@labelgate/b", declared: declared.b ?? ["@labelgate/a"] },
      ],
      files: new Map(
        Object.entries({
          "packages/a/src/index.ts": "export const a = 1;",
          "packages/a/src/extra.ts": "export const extra = 2;",
          "packages/b/src/index.ts": 'import { a } from "@labelgate/a";\nexport const b = a;',
          ...files,
        }),
      ),
    };
  }

  it("the sample without a planted violation is clean", () => {
    expect(checkBoundaries(sample({}))).toEqual([]);
    // a subpath the package exports, a test helper of the shared harness, a string that only looks like an import
    const fine = sample({
      "packages/b/src/extra.ts": 'import { extra } from "@labelgate/a/extra";\nconst s = "import x from \'../../../a/src/index\'";',
      "packages/b/test/b.test.ts": 'import { harness } from "../../../test/system";\nimport { b } from "../src/index";',
      "test/system.ts": "export const harness = 1;",
    });
    expect(checkBoundaries(fine)).toEqual([]);
  });

  it("catches a deep import of another package's src/, by name or by path", () => {
    expect(checkBoundaries(sample({ "packages/b/src/deep.ts": 'import { extra } from "@labelgate/a/src/extra";' }))).toEqual([
      "packages/b/src/deep.ts: deep import: @labelgate/a/src/extra is not an export of @labelgate/a",
    ]);
    expect(checkBoundaries(sample({ "packages/b/src/deep.ts": 'export { extra } from "../../a/src/extra";' }))).toEqual([
      "packages/b/src/deep.ts: deep import: ../../a/src/extra is in @labelgate/a's src/",
    ]);
    expect(checkBoundaries(sample({ "test/deep.test.ts": 'import("../packages/a/src/extra");' }))).toEqual([
      "test/deep.test.ts: deep import: ../packages/a/src/extra is in @labelgate/a's src/",
    ]);
  });

  it("catches an import that climbs out of its package", () => {
    expect(
      checkBoundaries(sample({ "packages/b/src/out.ts": 'import { helper } from "../../../scripts/lib";', "scripts/lib.ts": "" })),
    ).toEqual(["packages/b/src/out.ts: climbs out: ../../../scripts/lib is in the root"]);
    expect(checkBoundaries(sample({ "packages/a/src/out.ts": 'const data = require("../../../../elsewhere.json");' }))).toEqual([
      "packages/a/src/out.ts: climbs out: ../../../../elsewhere.json leaves the repository",
    ]);
    // test code may use the shared harness, product code may not
    expect(checkBoundaries(sample({ "packages/b/src/out.ts": 'import "../../../test/system";', "test/system.ts": "" }))).toEqual([
      "packages/b/src/out.ts: climbs out: ../../../test/system is in the root",
    ]);
  });

  it("catches a package from the registry used but not declared", () => {
    const used = { "packages/a/src/zod.ts": 'import { z } from "zod";\nimport { readFile } from "node:fs/promises";\nimport "fs";' };
    expect(checkBoundaries(sample(used))).toEqual(["packages/a/src/zod.ts: undeclared: zod is not a dependency of @labelgate/a"]);
    const declared = sample(used);
    (declared.workspaces[1] as Workspace).external = ["zod"];
    expect(checkBoundaries(declared)).toEqual([]);
    expect(checkBoundaries(sample({ "packages/a/src/s3.ts": 'export * from "@aws-sdk/client-s3/dist";' }))).toEqual([
      "packages/a/src/s3.ts: undeclared: @aws-sdk/client-s3 is not a dependency of @labelgate/a",
    ]);
  });

  it("catches a workspace dependency used but not declared, and one declared but not used", () => {
    expect(checkBoundaries(sample({}, { b: [] }))).toEqual([
      "packages/b/src/index.ts: undeclared: @labelgate/a is not a dependency of @labelgate/b",
    ]);
    expect(checkBoundaries(sample({}, { a: ["@labelgate/b"], b: ["@labelgate/a"] }))).toEqual([
      "packages/a/package.json: unused: @labelgate/b is declared by @labelgate/a and never imported",
    ]);
  });

  it("catches an import cycle between files and between packages", () => {
    const files = {
      "packages/a/src/x.ts": 'import { y } from "./y";\nexport const x = 1;',
      "packages/a/src/y.ts": 'import type { x } from "./x.js";\nexport const y = 2;',
    };
    expect(checkBoundaries(sample(files))).toEqual(["packages/a/src/x.ts: cycle: packages/a/src/x.ts -> packages/a/src/y.ts"]);
    const loop = sample({ "packages/a/src/loop.ts": 'import { b } from "@labelgate/b";' }, { a: ["@labelgate/b"] });
    expect(checkBoundaries(loop)).toEqual(["@labelgate/a: cycle: packages @labelgate/a -> @labelgate/b"]);
  });
});
