/**
 * The one runner of the generators (`pnpm gen:clients`, `pnpm gen:events`): writes each generated file from its
 * renderer, or with `--check` writes nothing and exits 1 when a file differs from what its renderer gives.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const ROOT = path.join(__dirname, "..");

/** A generated file (relative to the repository root) and its renderer. */
export type GeneratedFile = [file: string, render: () => string];

/** Writes (or with `--check` in argv, checks) `files`; `command` is named in a stale file's message. */
export function writeGenerated(files: GeneratedFile[], command: string): void {
  let stale = false;
  for (const [file, render] of files) {
    const target = path.join(ROOT, file);
    const rendered = render();
    if (process.argv.includes("--check")) {
      let current = "";
      try {
        current = readFileSync(target, "utf8");
      } catch {
        // a missing file is stale too
      }
      if (current !== rendered) {
        console.error(`${file} is stale: run ${command}`);
        stale = true;
      }
    } else {
      writeFileSync(target, rendered);
      console.log(`wrote ${file} (${rendered.split("\n").length - 1} lines)`);
    }
  }
  if (stale) process.exit(1);
}
