/**
 * `pnpm docs:api`: writes docs/api.md from the route catalog (@labelgate/api, markdown.ts).
 * `--check`: writes nothing, exits 1 when the file differs from what the catalog renders.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { renderApiMarkdown } from "@labelgate/api/markdown";

const target = path.join(__dirname, "..", "docs", "api.md");
const rendered = renderApiMarkdown();
if (process.argv.includes("--check")) {
  let current = "";
  try {
    current = readFileSync(target, "utf8");
  } catch {
    // a missing file is stale too
  }
  if (current !== rendered) {
    console.error("docs/api.md is stale: run pnpm docs:api");
    process.exit(1);
  }
} else {
  writeFileSync(target, rendered);
  console.log(`wrote ${path.relative(process.cwd(), target)} (${rendered.split("\n").length - 1} lines)`);
}
