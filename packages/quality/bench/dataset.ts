/**
 * Crowd datasets for the quality benches: a folder with answers.csv (`item,worker,label`) and optionally gold.csv
 * (`item,label`), the layout of data/crowd/* and of `pnpm replay`. Labels become option indexes of the
 * dataset's distinct labels, sorted numerically when all are numeric (the replay's rule).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/** A dataset with labels as option indexes. */
export interface Dataset {
  name: string;
  /** option names, in option-index order */
  options: string[];
  /** items in order of first appearance; each with its answers in recorded order, a worker's repeats dropped */
  items: DatasetItem[];
  /** rows of answers.csv (repeats included): the denominator of label_share */
  answerRows: number;
}

export interface DatasetItem {
  id: string;
  answers: { worker: string; option: number }[];
  /** gold option index (-1 when the gold label is none of the options: always wrong), or undefined without gold */
  gold: number | undefined;
}

function readCsv(file: string, header: readonly string[]): string[][] {
  const lines = readFileSync(file, "utf8")
    .replace(/^\uFEFF/, "")
    .split(/\r?\n/);
  const rows = lines.map((l) => l.trim()).filter((l) => l !== "");
  const head = (rows[0] ?? "").split(",").map((c) => c.trim().toLowerCase());
  if (head.join(",") !== header.join(",")) throw new Error(`${file}: expected header ${header.join(",")}, got ${rows[0] ?? ""}`);
  return rows.slice(1).map((r, i) => {
    const cells = r.split(",").map((c) => c.trim());
    if (cells.length !== header.length || cells.some((c) => c === "")) throw new Error(`${file}: bad row ${i + 1}: ${r}`);
    return cells;
  });
}

/** Sorted distinct labels: numerically when every value is a number, else lexicographically. */
export function sortLabels(values: Iterable<string>): string[] {
  const list = [...new Set(values)];
  const numeric = list.every((v) => v.trim() !== "" && Number.isFinite(Number(v)));
  return numeric ? list.sort((a, b) => Number(a) - Number(b) || (a < b ? -1 : a > b ? 1 : 0)) : list.sort();
}

/** Builds a dataset from answer rows and a gold map (labels as strings). */
export function buildDataset(
  name: string,
  rows: readonly { item: string; worker: string; label: string }[],
  gold: ReadonlyMap<string, string>,
): Dataset {
  const options = sortLabels(rows.map((r) => r.label));
  const index = new Map(options.map((o, i) => [o, i]));
  const items = new Map<string, DatasetItem>();
  const seen = new Set<string>();
  for (const r of rows) {
    let item = items.get(r.item);
    if (!item) {
      const g = gold.get(r.item);
      item = { id: r.item, answers: [], gold: g === undefined ? undefined : (index.get(g) ?? -1) };
      items.set(r.item, item);
    }
    const key = `${r.item}\u0000${r.worker}`;
    if (seen.has(key)) continue;
    seen.add(key);
    item.answers.push({ worker: r.worker, option: index.get(r.label) as number });
  }
  return { name, options, items: [...items.values()], answerRows: rows.length };
}

/** Reads a dataset folder. */
export function loadDataset(dir: string): Dataset {
  const abs = path.resolve(dir);
  const rows = readCsv(path.join(abs, "answers.csv"), ["item", "worker", "label"]).map(([item, worker, label]) => ({
    item: item as string,
    worker: worker as string,
    label: label as string,
  }));
  const gold = new Map<string, string>();
  const goldFile = path.join(abs, "gold.csv");
  if (existsSync(goldFile)) for (const [item, label] of readCsv(goldFile, ["item", "label"])) gold.set(item as string, label as string);
  return buildDataset(path.basename(abs), rows, gold);
}
