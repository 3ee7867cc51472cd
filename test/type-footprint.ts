/**
 * What adding a task type costs outside its own folders (docs/architecture.md "Adding a task type"): the
 * product files (services/*, packages/*, scripts/; tests, benches and comments left out) that name a type,
 * i.e. hold a string literal (a value, a literal type) or an identifier (a registry's key) that is its name,
 * or an import path with its name as a segment (`./free_text`, `../types/free_text/View`), read with
 * TypeScript's parser. Prose that mentions a type (a schema's description, a CLI help text) is not counted:
 * a new type need not touch it. A type's own folders are not counted:
 * packages/api/src/task-types/<type>/, packages/quality/src/types/<type>/, packages/web/app/types/<type>/.
 * A file that names every type is a registry (a new type adds one line there); a file that names only some
 * types branches on them. `pnpm exec tsx test/type-footprint.ts` prints both lists.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { TASK_TYPE_NAMES } from "@labelgate/api";
import ts from "typescript";

const ROOT = path.resolve(__dirname, "..");

/** The folders a task type's module lives in (relative to the repository, with a trailing slash). */
export function typeFolders(type: string): string[] {
  return [`packages/api/src/task-types/${type}/`, `packages/quality/src/types/${type}/`, `packages/web/app/types/${type}/`];
}

/** Every .ts/.tsx product file (relative paths), skipping node_modules, generated code, dist, tests and benches. */
export function productSources(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      if (["node_modules", "generated", "dist", "test", "bench"].includes(name)) return [];
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) return walk(full);
      return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [path.relative(ROOT, full)] : [];
    });
  const roots = ["services", "packages"].flatMap((top) => readdirSync(path.join(ROOT, top)).map((d) => path.join(ROOT, top, d)));
  return [...roots, path.join(ROOT, "scripts")]
    .filter((d) => statSync(d).isDirectory())
    .flatMap(walk)
    .sort();
}

/** The string literals and identifiers of a file's code (comments are not nodes, so they are left out). */
function codeWords(file: string): Set<string> {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  const source = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    false,
    file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const words = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isIdentifier(node) || ts.isTemplateLiteralToken(node) || ts.isJsxText(node))
      words.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return words;
}

/** Per file, its code words, read once. */
export function readCodeWords(files: readonly string[]): Map<string, Set<string>> {
  return new Map(files.map((f) => [f, codeWords(f)]));
}

/** Whether a code word names `type`: it is the name, or a path (no white space) with the name as a segment. */
function names(word: string, type: string): boolean {
  return word === type || (!/\s/.test(word) && word.split("/").includes(type));
}

/** The product files outside `type`'s folders whose code names it (`words`: readCodeWords of the product). */
export function filesNaming(type: string, words: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const own = typeFolders(type);
  return [...words]
    .filter(([file]) => !own.some((folder) => file.startsWith(folder)))
    .filter(([, ws]) => [...ws].some((w) => names(w, type)))
    .map(([file]) => file);
}

/** The footprint of the types: the files naming each, those naming all (registries) and those naming some. */
export function footprint(types: readonly string[]): { byType: Record<string, string[]>; registries: string[]; branches: string[] } {
  const words = readCodeWords(productSources());
  const byType = Object.fromEntries(types.map((t) => [t, filesNaming(t, words)]));
  const all = new Set(Object.values(byType).flat());
  const registries = [...all].filter((f) => types.every((t) => byType[t]?.includes(f))).sort();
  const branches = [...all].filter((f) => !registries.includes(f)).sort();
  return { byType, registries, branches };
}

if (require.main === module) {
  // the wire registry's names, unless others are given
  const names = process.argv.length > 2 ? process.argv.slice(2) : [...TASK_TYPE_NAMES];
  const f = footprint(names);
  console.log(`types: ${names.join(", ")}`);
  console.log(`\nregistries (name every type; a new type adds a line): ${f.registries.length}`);
  for (const r of f.registries) console.log(`  ${r}`);
  console.log(`\nbranches (name some types): ${f.branches.length}`);
  for (const b of f.branches) console.log(`  ${b}: ${names.filter((t) => f.byType[t]?.includes(b)).join(", ")}`);
}
