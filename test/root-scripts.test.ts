/**
 * The bench scripts and scripts/ run from the repository root (`pnpm bench`, `pnpm start`, ...), so every
 * package they import must resolve from there: the root's own dependencies, not a service's. The typecheck does not see a
 * missing one (the root has `@types/express`); a fresh clone's `pnpm bench` did (floor-server.ts could
 * not load express).
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const root = path.join(__dirname, "..");

/** Bare package names of the `import ... from "x"` lines of a file (no node: builtins, no relative paths). */
function bareImports(file: string): string[] {
  const source = readFileSync(file, "utf8");
  const names = new Set<string>();
  for (const m of source.matchAll(/^import\s+(?!type\b)[^;]*?from\s+"([^".][^"]*)";/gms)) {
    const spec = m[1] as string;
    if (spec.startsWith("node:")) continue;
    const parts = spec.split("/");
    names.add(spec.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string));
  }
  return [...names];
}

describe("scripts run from the repository root", () => {
  const files = ["bench", "scripts"].flatMap((dir) =>
    readdirSync(path.join(root, dir))
      .filter((f) => f.endsWith(".ts"))
      .map((f) => `${dir}/${f}`),
  );

  it("are found", () => {
    expect(files).toEqual(
      expect.arrayContaining(["bench/all.ts", "bench/floor-server.ts", "bench/labels-floor.ts", "scripts/standalone.ts"]),
    );
  });

  it.each(files)("%s: every package it imports resolves from the repository root", (file) => {
    const requireFromFile = createRequire(path.join(root, file));
    const missing = bareImports(path.join(root, file)).filter((name) => {
      try {
        requireFromFile.resolve(name);
        return false;
      } catch {
        return true;
      }
    });
    expect(missing).toEqual([]);
  });
});
