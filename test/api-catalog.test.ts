/**
 * The route catalog (packages/api/src/operations.ts) is the one place a route is written: every operation's
 * path literal appears in that file and in no other source file of the product (packages, services,
 * scripts, comments aside; tests and benchmarks are callers of the wire, not its definition; the clients,
 * the Python one included, are held to it, parts of paths too, by test/clients-catalog.test.ts), and the
 * checked-in docs/api.md is what the catalog renders (`pnpm docs:api`).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { renderApiMarkdown } from "@labelgate/api/markdown";
import { pathOf, ROUTES } from "@labelgate/api/routes";

const ROOT = path.join(__dirname, "..");
const CATALOG = "packages/api/src/operations.ts";
const SOURCE_ROOTS = ["packages", "services", "scripts"];
const SKIP_DIRS = new Set(["node_modules", "test", "tests", "dist", "bench", "fixtures"]);
const SOURCE_FILE = /\.(ts|tsx|mts|cts|js|mjs)$/;

/** Every product source file under SOURCE_ROOTS, relative to the repository root. */
function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(path.join(ROOT, dir))) {
    const rel = path.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) {
      if (!SKIP_DIRS.has(name)) sourceFiles(rel, out);
    } else if (SOURCE_FILE.test(name) && !/\.test\.\w+$/.test(name)) {
      out.push(rel);
    }
  }
  return out;
}

/** A source's code without its comments (block comments, and lines that are a `//` comment). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

/** The files holding `literal` as a whole string literal ("…", '…' or `…`) in their code. */
function filesWithLiteral(files: Map<string, string>, literal: string): string[] {
  const quoted = ['"', "'", "`"].map((q) => `${q}${literal}${q}`);
  return [...files].filter(([, text]) => quoted.some((q) => text.includes(q))).map(([file]) => file);
}

describe("the route catalog", () => {
  const files = new Map(SOURCE_ROOTS.flatMap((root) => sourceFiles(root)).map((f) => [f, code(readFileSync(path.join(ROOT, f), "utf8"))]));

  it("scans the product's sources, the catalog among them", () => {
    expect(files.size).toBeGreaterThan(100);
    expect(files.has(CATALOG)).toBe(true);
  });

  it.each(ROUTES.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r.path] as const))(
    "%s: its path literal is written in the catalog only",
    (_name, routePath) => {
      expect(filesWithLiteral(files, routePath)).toEqual([CATALOG]);
      // nor as an express pattern (`/v1/tasks/:id`)
      const express = routePath.replace(/\{(\w+)\}/g, ":$1");
      if (express !== routePath) expect(filesWithLiteral(files, express)).toEqual([]);
    },
  );

  it("the literal check finds a planted copy", () => {
    const planted = new Map(files);
    planted.set("services/gateway/src/planted.ts", 'router.get("/v1/tasks/{id}", handler);');
    expect(filesWithLiteral(planted, "/v1/tasks/{id}").sort()).toEqual([CATALOG, "services/gateway/src/planted.ts"]);
  });

  it("pathOf fills and encodes path parameters", () => {
    expect(pathOf("redeliverWebhookDelivery", { id: "whk_1", deliveryId: "dlv/2" })).toBe(
      "/v1/webhooks/whk_1/deliveries/dlv%2F2/redeliver",
    );
    expect(pathOf("listBatches", {})).toBe("/v1/batches");
  });

  it("docs/api.md is what the catalog renders (run `pnpm docs:api` after changing the catalog)", () => {
    const checkedIn = readFileSync(path.join(ROOT, "docs", "api.md"), "utf8");
    expect(checkedIn === renderApiMarkdown()).toBe(true);
  });

  it("docs/api.md lists every operation", () => {
    const rendered = renderApiMarkdown();
    for (const r of ROUTES) expect(rendered).toContain(`### ${r.method.toUpperCase()} ${r.path}\n`);
  });
});
