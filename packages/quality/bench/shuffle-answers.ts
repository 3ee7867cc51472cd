/**
 * `pnpm exec tsx packages/quality/bench/shuffle-answers.ts <data set folder> <out folder> [--seed N]`
 *
 * Writes a copy of a crowd data set (answers.csv, gold.csv) whose answers to each item come in a random order
 * (Fisher-Yates with xoroshiro128+ seeded by N, default 1): each row of the file keeps its item, and the answers
 * of an item are dealt to that item's rows in a random order. Every answer is kept.
 * Why (docs/notes/quality.md section 0): `pnpm replay` and the uniform-overlap baseline take each item's answers
 * in the order of the file, as if it were the order they arrived in. A file sorted by worker id within each item
 * (web: 2,665 of 2,665 items) is not an arrival order: there "the first k answers" means "the k workers with the
 * lowest ids", and on web those are its heaviest and best workers. The shuffled copy asks what the service and a
 * fixed overlap are worth when answers arrive in an order that says nothing about the worker.
 * @throws Error on a missing argument or an unreadable folder
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";

function main(argv: readonly string[]): void {
  const positional = argv.filter((a, i) => !a.startsWith("--") && argv[i - 1] !== "--seed");
  const seedAt = argv.indexOf("--seed");
  const seed = seedAt >= 0 ? Number(argv[seedAt + 1]) : 1;
  const [from, to] = positional;
  if (from === undefined || to === undefined || !Number.isInteger(seed))
    throw new Error("usage: shuffle-answers.ts <data set folder> <out folder> [--seed N]");
  const lines = readFileSync(path.join(from, "answers.csv"), "utf8")
    .split(/\r?\n/)
    .filter((l) => l.length > 0);
  const [header, ...rows] = lines;
  if (header === undefined) throw new Error(`${from}/answers.csv is empty`);
  const itemOf = (row: string) => row.slice(0, row.indexOf(","));
  const byItem = new Map<string, string[]>();
  for (const row of rows) {
    const list = byItem.get(itemOf(row)) ?? [];
    list.push(row);
    byItem.set(itemOf(row), list);
  }
  const rng = xoroshiro128plus(seed);
  for (const list of byItem.values()) {
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(uniformFloat64(rng) * (i + 1));
      [list[i], list[j]] = [list[j] as string, list[i] as string];
    }
  }
  const next = new Map<string, number>();
  const out = [header];
  for (const row of rows) {
    const item = itemOf(row);
    const n = next.get(item) ?? 0;
    next.set(item, n + 1);
    out.push((byItem.get(item) as string[])[n] as string);
  }
  mkdirSync(to, { recursive: true });
  writeFileSync(path.join(to, "answers.csv"), `${out.join("\n")}\n`);
  if (existsSync(path.join(from, "gold.csv"))) copyFileSync(path.join(from, "gold.csv"), path.join(to, "gold.csv"));
  process.stderr.write(`${rows.length} answers of ${byItem.size} items, each item's answers shuffled (seed ${seed}) -> ${to}\n`);
}

main(process.argv.slice(2));
