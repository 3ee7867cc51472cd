/**
 * The package boundaries of the monorepo as a pure checker (no I/O but `readTree`), so the architecture test
 * can run it on the real tree and on planted violations (test/architecture.test.ts). The rules:
 * - **deep import**: an import of another workspace's files by path (`@labelgate/x/src/...`, a subpath that
 *   is not in x's `exports`, or a relative path into another workspace's `src/`);
 * - **climbs out**: a relative import that leaves its workspace (the root workspace is every file outside
 *   `packages/*` and `services/*`). Test code (a file under a `test/` folder) may import the shared test
 *   harness: a helper file (not a `*.test.ts`) under a `test/` folder of any workspace;
 * - **undeclared**: a package (workspace or from the registry) imported by a workspace that does not list it
 *   in its dependencies, devDependencies or peerDependencies (pnpm's root `node_modules` would otherwise
 *   hide it: a package's files resolve what the root declares);
 * - **unused**: a `@labelgate/*` package listed in a workspace's dependencies or devDependencies that none of
 *   its files imports;
 * - **cycle**: files of one workspace that import each other in a loop (relative imports, type-only ones
 *   included: a loop of types is a loop of meaning), or workspaces that do (through `@labelgate/*` imports);
 * - **direction** (when the tree carries `directions`, the architecture test's table): a `@labelgate/*` import
 *   the table does not allow: product code (a workspace's files outside `test/` and `bench/` folders) may
 *   import what `product` lists for its workspace, its tests and benches that and what `dev` adds. The root workspace (the shared
 *   harness, benches, scripts) may import every package.
 * Imports are read with TypeScript's own `preProcessFile` (static imports and re-exports, `import()`,
 * `require()`), so a string or a comment that looks like an import is not one.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { isBuiltin } from "node:module";
import path from "node:path";
import ts from "typescript";

/** One workspace: its folder relative to the repository ("" for the root), name and manifest's fields. */
export interface Workspace {
  dir: string;
  name: string;
  /** workspace packages (`@labelgate/*`) listed in dependencies or devDependencies */
  declared: string[];
  /** other packages listed in dependencies, devDependencies or peerDependencies (default: none) */
  external?: string[];
  /** subpaths of `exports` ("." and "./x"), or undefined when the manifest has none (only "." then) */
  exports?: string[];
}

/** Which `@labelgate/*` packages each workspace may import (by name), in its product code and in the rest. */
export interface Directions {
  product: Readonly<Record<string, readonly string[]>>;
  dev: Readonly<Record<string, readonly string[]>>;
}

/** The input of the checker: the workspaces, the source files (path relative to the root → text), the allowed directions. */
export interface Tree {
  workspaces: Workspace[];
  files: Map<string, string>;
  directions?: Directions;
}

/** Why `own` may not import `target` from `file` under `directions`, or undefined when it may. */
function directionViolation(directions: Directions, own: Workspace, file: string, target: string): string | undefined {
  if (own.dir === "") return undefined;
  const product = directions.product[own.name];
  if (!product) return `${own.name} is not in the dependency table`;
  if (product.includes(target)) return undefined;
  const isProduct = !isTestCode(file) && !file.split("/").includes("bench");
  if (!isProduct && directions.dev[own.name]?.includes(target)) return undefined;
  return `${own.name} may not import ${target}${isProduct ? "" : " (not even in tests or benches)"}`;
}

const SCOPE = "@labelgate/";
const EXTENSIONS = [".ts", ".tsx", ".mts", ".js", ".mjs", ".json"];
const SKIP = new Set(["node_modules", "generated", "dist", ".data", ".git", "coverage"]);

/** The workspace of a file: the longest workspace folder that contains it (the root otherwise). */
export function workspaceOf(file: string, workspaces: readonly Workspace[]): Workspace {
  let best: Workspace | undefined;
  for (const w of workspaces) {
    if (w.dir === "" || file === w.dir || file.startsWith(`${w.dir}/`)) {
      if (!best || w.dir.length > best.dir.length) best = w;
    }
  }
  if (!best) throw new Error(`no workspace holds ${file} (the tree needs a root workspace, dir "")`);
  return best;
}

/** Module specifiers a file imports (static, re-exports, dynamic `import()` and `require()`). */
export function importsOf(file: string, text: string): string[] {
  if (!/\.(m?ts|tsx)$/.test(file)) return [];
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** The file a relative specifier names, when it is in the tree (extensionless, `.js` for `.ts`, or a folder's index). */
function resolveRelative(from: string, spec: string, files: ReadonlyMap<string, string>): string {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  const candidates = [base, ...EXTENSIONS.map((e) => base + e), base.replace(/\.js$/, ".ts"), `${base}/index.ts`];
  return candidates.find((c) => files.has(c)) ?? base;
}

const isTestCode = (file: string) => file.split("/").includes("test");
const isTestHelper = (file: string) => isTestCode(file) && !/\.test\.tsx?$/.test(file);

/** Strongly connected components of size > 1 (or with a self-loop) of a directed graph (Tarjan). */
function cycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || graph.get(v)?.has(v)) out.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return out;
}

/** Every violation of the rules above in `tree`, one line each (`file: rule: detail`), sorted. */
export function checkBoundaries(tree: Tree): string[] {
  const found: string[] = [];
  const byName = new Map(tree.workspaces.map((w) => [w.name, w]));
  const used = new Map<string, Set<string>>(tree.workspaces.map((w) => [w.name, new Set()]));
  const fileGraph = new Map<string, Set<string>>();
  for (const [file, text] of tree.files) {
    const own = workspaceOf(file, tree.workspaces);
    const edges = new Set<string>();
    fileGraph.set(file, edges);
    for (const spec of importsOf(file, text)) {
      if (spec.startsWith(".")) {
        const target = resolveRelative(file, spec, tree.files);
        if (target.startsWith("../")) {
          found.push(`${file}: climbs out: ${spec} leaves the repository`);
          continue;
        }
        const other = workspaceOf(target, tree.workspaces);
        if (other === own) {
          if (tree.files.has(target)) edges.add(target);
          continue;
        }
        if (target.startsWith(`${other.dir}/src/`)) found.push(`${file}: deep import: ${spec} is in ${other.name}'s src/`);
        else if (!(isTestCode(file) && isTestHelper(target)))
          found.push(`${file}: climbs out: ${spec} is in ${other.dir === "" ? "the root" : other.name}`);
        continue;
      }
      if (!spec.startsWith(SCOPE)) {
        if (isBuiltin(spec)) continue;
        const name = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : (spec.split("/")[0] as string);
        if (!own.external?.includes(name)) found.push(`${file}: undeclared: ${name} is not a dependency of ${own.name}`);
        continue;
      }
      const [scope, bare, ...rest] = spec.split("/");
      const name = `${scope}/${bare}`;
      const target = byName.get(name);
      if (!target) {
        found.push(`${file}: undeclared: ${name} is not a workspace`);
        continue;
      }
      if (rest.length > 0) {
        const sub = `./${rest.join("/")}`;
        if (rest[0] === "src" || !(target.exports ?? ["."]).includes(sub)) {
          found.push(`${file}: deep import: ${spec} is not an export of ${name}`);
        }
      }
      if (target === own) continue;
      const wrongWay = tree.directions && directionViolation(tree.directions, own, file, name);
      if (wrongWay) found.push(`${file}: direction: ${wrongWay}`);
      used.get(own.name)?.add(name);
      if (!own.declared.includes(name)) found.push(`${file}: undeclared: ${name} is not a dependency of ${own.name}`);
    }
  }
  for (const w of tree.workspaces) {
    for (const d of w.declared) {
      if (!used.get(w.name)?.has(d)) found.push(`${w.dir || "."}/package.json: unused: ${d} is declared by ${w.name} and never imported`);
    }
  }
  for (const scc of cycles(fileGraph)) found.push(`${scc[0]}: cycle: ${scc.join(" -> ")}`);
  const packageGraph = new Map([...used].map(([name, deps]) => [name, new Set([...deps].filter((d) => byName.has(d)))]));
  for (const scc of cycles(packageGraph)) found.push(`${scc[0]}: cycle: packages ${scc.join(" -> ")}`);
  return found.sort();
}

/** Source files (.ts, .tsx, .mts) under `dir`, relative to `root`, skipping dependencies and generated code. */
function sourceFiles(root: string, dir: string, nested: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(root, dir))) {
    if (SKIP.has(name) || name.startsWith("dist.tmp-")) continue;
    const rel = dir ? `${dir}/${name}` : name;
    if (nested.has(rel)) continue;
    if (statSync(path.join(root, rel)).isDirectory()) out.push(...sourceFiles(root, rel, nested));
    else if (/\.(m?ts|tsx)$/.test(name) && !name.endsWith(".d.ts")) out.push(rel);
  }
  return out;
}

/** The workspaces (root, packages/*, services/*) and source files of the repository at `root`. */
export function readTree(root: string): Tree {
  const manifest = (dir: string): Workspace => {
    const pkg = JSON.parse(readFileSync(path.join(root, dir, "package.json"), "utf8")) as {
      name: string;
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
      exports?: string | Record<string, unknown>;
    };
    const listed = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies, ...pkg.peerDependencies });
    const declared = listed.filter((d) => d.startsWith(SCOPE));
    const external = listed.filter((d) => !d.startsWith(SCOPE));
    const exports = pkg.exports && typeof pkg.exports === "object" ? Object.keys(pkg.exports) : undefined;
    return { dir, name: pkg.name, declared, external, exports };
  };
  const dirs = ["packages", "services"].flatMap((group) =>
    readdirSync(path.join(root, group))
      .map((d) => `${group}/${d}`)
      .filter((d) => statSync(path.join(root, d, "package.json"), { throwIfNoEntry: false })?.isFile()),
  );
  const workspaces = [manifest(""), ...dirs.map(manifest)];
  // clients/* are other languages' clients, outside the pnpm workspace
  const rootFiles = sourceFiles(root, "", new Set(["packages", "services", "clients"]));
  const files = new Map<string, string>();
  for (const f of [...rootFiles, ...dirs.flatMap((d) => sourceFiles(root, d, new Set()))]) {
    files.set(f, readFileSync(path.join(root, f), "utf8"));
  }
  return { workspaces, files };
}
