/**
 * The layout rules of docs/architecture.md that a reviewer would otherwise have to remember:
 * - SQL lives in one store: no raw statement, statement helper, Prisma model call or pg client outside
 *   packages/store in the product's code (services, packages, scripts). Tests may inspect rows; the
 *   benchmarks' floors are raw SQL on purpose (they measure what the machine does without our code).
 * - Packages never read `process.env`: env is parsed once, at a service's edge, by the runtime.
 * - Package boundaries (test/boundaries.ts): no deep import of another package's src/, no import that climbs
 *   out of its package, packages declared when used (workspace ones also used when declared), no import cycle.
 * - Package directions: which package may import which (`DIRECTIONS`, a layering: `LAYERS`); a product
 *   import only goes down a layer, and one the table does not list fails, whatever package.json declares.
 * - Adding a task type touches only the registries outside the type's folders (test/type-footprint.ts).
 * Each rule is checked by the same scanner a second time on a sample that breaks it, so the test fails when
 * the scanner does.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { TASK_TYPE_NAMES } from "@labelgate/api";
import { checkBoundaries, type Directions, readTree, type Tree, type Workspace } from "./boundaries";
import { filesNaming, footprint } from "./type-footprint";

const ROOT = path.resolve(__dirname, "..");

/**
 * The layers of the workspace, bottom first: a package's product code imports only packages of lower layers.
 * 1. foundations, importing no other package: the wire contract (api), canonical JSON, core, config,
 *    metrics, the queue catalog;
 * 2. libraries over them: the chain client, object storage, the quality model (reads the wire's task types
 *    and bounds: decision 0240), the webhook verifier;
 * 3. the store (every SQL statement) and the SDK (the HTTP client);
 * 4. what is built on those: the runtime (the one wiring of a process), the replay library, the CLI, the web apps;
 * 5. the services.
 * The root workspace (the shared test harness, benches, scripts) may import any package.
 */
const LAYERS: readonly (readonly string[])[] = [
  ["api", "canonical-json", "config", "core", "metrics", "queue"],
  ["chain", "quality", "storage", "webhook-verify"],
  ["sdk", "store"],
  ["cli", "replay", "runtime", "web"],
  ["consensus-worker", "gateway", "manifest-worker", "webhook-worker"],
];

const ns = (names: readonly string[]) => names.map((n) => `@labelgate/${n}`);

/**
 * Which package may import which (short names): `product` for its product code, `dev` for what its tests
 * and benches may import besides. A new package, or a new edge, is a new line here.
 */
const DIRECTIONS: Directions = {
  product: Object.fromEntries(
    Object.entries({
      api: [],
      "canonical-json": [],
      config: [],
      core: [],
      metrics: [],
      queue: [],
      chain: ["canonical-json"],
      quality: ["api", "canonical-json"],
      storage: ["core"],
      "webhook-verify": [],
      sdk: ["api", "chain", "webhook-verify"],
      store: ["api", "canonical-json", "chain", "core", "quality", "queue"],
      cli: ["sdk"],
      replay: ["sdk"],
      runtime: ["config", "core", "metrics", "queue", "store"],
      web: ["sdk"],
      "consensus-worker": ["chain", "config", "core", "metrics", "quality", "queue", "runtime", "store"],
      gateway: ["api", "config", "core", "metrics", "quality", "queue", "runtime", "storage", "store"],
      "manifest-worker": ["api", "core", "quality", "queue", "runtime", "storage", "store"],
      "webhook-worker": ["core", "metrics", "queue", "runtime", "store"],
    }).map(([name, deps]) => [`@labelgate/${name}`, ns(deps)]),
  ),
  dev: Object.fromEntries(
    Object.entries({
      // the CLI's tests anchor on a chain; the verifier's tests sign with the wire's event shapes
      cli: ["chain"],
      "webhook-verify": ["api"],
      // the quality simulator scores with the replay's own rules (gold picking, ECE)
      quality: ["replay"],
      // the consensus worker's tests drive a gateway through the SDK and check ledger bytes
      "consensus-worker": ["canonical-json", "sdk"],
      // the gateway's tests run a consensus worker beside it, and the replay through it
      gateway: ["replay"],
    }).map(([name, deps]) => [`@labelgate/${name}`, ns(deps)]),
  ),
};

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

/**
 * Follow-ups as rows (docs/decisions/0300): queue work is a `follow_up` row written with the change that causes
 * it, and one relay (packages/queue relay.ts) moves the rows to BullMQ. Outside the queue package (its engine
 * and the relay), nothing enqueues: the reconciliation too writes rows that requeue the lost work it finds.
 */
const ENQUEUE_RULES: { name: string; re: RegExp }[] = [
  { name: "an enqueue", re: /\w*queue\w*\s*\.\s*(enqueue|enqueueMany|requeue)\s*[(<]/i },
  { name: "a BullMQ add", re: /\.addBulk\s*\(|new\s+Queue\s*\(/ },
];

describe("one relay enqueues", () => {
  it("no service or package but the queue package enqueues: 0 call sites outside the relay", () => {
    const files = productFiles().filter((f) => !path.relative(ROOT, f).startsWith("packages/queue/"));
    const found = files.flatMap((f) => violations(path.relative(ROOT, f), readFileSync(f, "utf8"), ENQUEUE_RULES));
    expect(found).toEqual([]);
  });

  it("the scanner catches each kind of enqueue (so the check above can fail)", () => {
    for (const sample of [
      'await deps.queue.enqueue("modelRefit", payload);',
      "await queue.enqueueMany(key, payloads, {});",
      'await this.o.queue.requeue("consensus", payload);',
    ])
      expect(violations("sample.ts", sample, ENQUEUE_RULES)).toHaveLength(1);
    // a stream's controller is no queue
    expect(violations("sample.ts", "controller.enqueue(chunk);", ENQUEUE_RULES)).toEqual([]);
    expect(violations("sample.ts", "// enqueues its follow-ups", ENQUEUE_RULES)).toEqual([]);
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

describe("package directions (DIRECTIONS)", () => {
  const tree = readTree(ROOT);
  const layerOf = new Map(LAYERS.flatMap((names, i) => ns(names).map((n): [string, number] => [n, i])));

  it("the repository imports only what the table allows", () => {
    expect(checkBoundaries({ ...tree, directions: DIRECTIONS })).toEqual([]);
  });

  it("the table is a layering: every package in one layer, every product edge one that goes down", () => {
    const names = tree.workspaces.filter((w) => w.dir !== "").map((w) => w.name);
    expect([...layerOf.keys()].sort()).toEqual([...names].sort());
    expect(Object.keys(DIRECTIONS.product).sort()).toEqual([...names].sort());
    const upward = Object.entries(DIRECTIONS.product).flatMap(([from, deps]) =>
      deps.filter((to) => (layerOf.get(to) ?? Number.POSITIVE_INFINITY) >= (layerOf.get(from) as number)).map((to) => `${from} -> ${to}`),
    );
    expect(upward).toEqual([]);
  });

  /** The real tree with one file planted in `file` importing `target`, declared so that only the direction can fail. */
  function planted(file: string, target: string): string[] {
    const workspaces = tree.workspaces.map((w) =>
      file.startsWith(`${w.dir}/`) && w.dir !== "" ? { ...w, declared: [...w.declared, target] } : w,
    );
    const files = new Map(tree.files).set(file, `import { x } from "${target}";\nexport const planted = x;`);
    return checkBoundaries({ workspaces, files, directions: DIRECTIONS }).filter((v) => v.startsWith(`${file}: `));
  }

  it("fails a planted import in each wrong direction", () => {
    // up a layer: a foundation importing a library
    expect(planted("packages/core/src/planted.ts", "@labelgate/chain")).toEqual([
      "packages/core/src/planted.ts: direction: @labelgate/core may not import @labelgate/chain",
    ]);
    // sideways into a client: the store importing the webhook verifier
    expect(planted("packages/store/src/planted.ts", "@labelgate/webhook-verify")).toEqual([
      "packages/store/src/planted.ts: direction: @labelgate/store may not import @labelgate/webhook-verify",
    ]);
    // a package importing a service (also a cycle: the gateway imports the store)
    expect(planted("packages/store/src/planted.ts", "@labelgate/gateway")).toEqual([
      "packages/store/src/planted.ts: direction: @labelgate/store may not import @labelgate/gateway",
    ]);
    // the wire importing the model: the direction decision 0240 keeps one-way
    expect(planted("packages/api/src/planted.ts", "@labelgate/quality")).toEqual([
      "packages/api/src/planted.ts: direction: @labelgate/api may not import @labelgate/quality",
    ]);
    // a service importing another service
    expect(planted("services/webhook-worker/src/planted.ts", "@labelgate/gateway")).toEqual([
      "services/webhook-worker/src/planted.ts: direction: @labelgate/webhook-worker may not import @labelgate/gateway",
    ]);
  });

  it("lets tests and benches import what `dev` adds, and product code not", () => {
    expect(planted("packages/quality/bench/planted.ts", "@labelgate/replay")).toEqual([]);
    expect(planted("packages/quality/src/planted.ts", "@labelgate/replay")).toEqual([
      "packages/quality/src/planted.ts: direction: @labelgate/quality may not import @labelgate/replay",
    ]);
    expect(planted("packages/quality/test/planted.ts", "@labelgate/store")).toEqual([
      "packages/quality/test/planted.ts: direction: @labelgate/quality may not import @labelgate/store (not even in tests or benches)",
    ]);
  });

  it("fails a package the table does not know", () => {
    const workspaces = [...tree.workspaces, { dir: "packages/newcomer", name: "@labelgate/newcomer", declared: ["@labelgate/core"] }];
    const files = new Map(tree.files).set(
      "packages/newcomer/src/index.ts",
      'import { newId } from "@labelgate/core";\nexport const id = newId;',
    );
    expect(checkBoundaries({ workspaces, files, directions: DIRECTIONS })).toEqual([
      "packages/newcomer/src/index.ts: direction: @labelgate/newcomer is not in the dependency table",
    ]);
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

describe("adding a task type (docs/architecture.md, test/type-footprint.ts)", () => {
  /** The files a new type adds a line to: each names every type (its import, its key). */
  const REGISTRIES = [
    "packages/api/src/task-types/registry.ts",
    "packages/quality/src/types/registry.ts",
    "packages/web/app/types/registry.ts",
  ];
  /**
   * The files that name some types outside their folders, and why: none is a step of adding a type. A file
   * may leave this list (then drop its line); none may join it without a reason here.
   */
  const KNOWN_BRANCHES: Record<string, string> = {
    // single choice as the default against the reserved types (the fit input's kind, a rejection that reopens)
    "packages/quality/src/task-kinds.ts": "single choice's fit input against the reserved types' (`kind`)",
    "packages/store/src/spaces.ts": "the same two kinds of fit input",
    "packages/store/src/reviews.ts": "a single-choice rejection excludes the option; a reserved type's needs the right answer",
    // public names of the first types, kept for the SDK's and quality's users
    "packages/quality/src/task-types.ts": "re-exports of the first three types' shapes (public names)",
    "packages/quality/src/index.ts": "re-exports of pairwise's ranking (public names)",
    "packages/sdk/src/task-types.ts": "a request type per type (public names)",
    // a type's own feature outside the registries
    "packages/web/app/label/queue.ts": "a bounding_box claim's item is an image (the label app's item preview)",
  };

  const found = footprint(TASK_TYPE_NAMES);

  it("names every type outside its folders only in the registries", () => {
    expect(found.registries).toEqual([...REGISTRIES].sort());
  });

  it("names some types only in the known places", () => {
    expect(found.branches.filter((f) => !(f in KNOWN_BRANCHES))).toEqual([]);
  });

  it("the scanner counts a name, a key and an import path, not prose or a type's own folder", () => {
    const words = new Map<string, Set<string>>([
      ["packages/x/src/reg.ts", new Set(["./free_text"])],
      ["packages/x/src/key.ts", new Set(["free_text"])],
      ["packages/x/src/view.ts", new Set(["../types/free_text/View"])],
      ["packages/x/src/prose.ts", new Set(["a free_text task's text"])],
      ["packages/x/src/other.ts", new Set(["free_text_b", "not_free_text"])],
      ["packages/api/src/task-types/free_text/index.ts", new Set(["free_text"])],
    ]);
    expect(filesNaming("free_text", words)).toEqual(["packages/x/src/reg.ts", "packages/x/src/key.ts", "packages/x/src/view.ts"]);
  });
});
