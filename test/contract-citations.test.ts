/**
 * The repository carries its own contract (issue 40, item 8). Code, tests and documents cite the rules
 * they implement as `contract §name`, where `name` is the anchor of a `##` section of docs/contract.md
 * (in Markdown, a link to `docs/contract.md#name`). This test reads every file git tracks and fails on:
 * - a citation of a document a clone does not have: the specification and design notes the project was
 *   built from, by number (`SPEC §7`, `DESIGN §12`, `DESIGN.md §5`), or a `../shared` path that leaves the
 *   repository (a relative path inside it, such as packages/web/app/shared, is fine);
 * - a `§name` or a `contract.md#name` link that names no section of docs/contract.md.
 * The migrations already applied are exempt from the first rule: a migration is never edited once a
 * database ran it (prisma records its checksum), so their comments keep the numbers; docs/contract.md's
 * "Former section numbers" maps them.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

/** the repository root */
const ROOT = path.resolve(__dirname, "..");

/** Applied migrations whose first comment cites the design notes by number (frozen: never add to it). */
const APPLIED_MIGRATIONS_WITH_NUMBERS = new Set([
  "prisma/migrations/20261124200000_label_quality/migration.sql",
  "prisma/migrations/20261125000000_anchors/migration.sql",
  "prisma/migrations/20261128000000_claim_idempotency/migration.sql",
  "prisma/migrations/20261128100000_delivery_auto_attempts/migration.sql",
  "prisma/migrations/20261129000000_task_types/migration.sql",
]);

/** A citation of the specification or the design notes by number, across a comment's line break too. */
const NUMBERED = /\b(?:SPEC|DESIGN)(?:\.md)?(?:[\s*/#-]|&nbsp;)*§?\s*\d+(?:\.\d+)*/g;
/** A path into a `shared` directory, relative (resolved against the file) or the machine's own. */
const SHARED = /(?:\.\.\/)+shared\b|\/work\/shared\b/g;
/** A cited section name, and a link to a section of the contract. */
const SECTION = /§([a-z][a-z0-9-]*)/g;
const LINK = /contract\.md#([a-z0-9-]+)/g;

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of docs/contract.md's `##` sections (the citable ones) and of all its headings (links). */
function contractSections(markdown: string): { sections: Set<string>; anchors: Set<string> } {
  const sections = new Set<string>();
  const anchors = new Set<string>();
  for (const m of markdown.matchAll(/^(#{1,6}) (.+)$/gm)) {
    const anchor = anchorOf(m[2] as string);
    anchors.add(anchor);
    if (m[1] === "##") sections.add(anchor);
  }
  return { sections, anchors };
}

/**
 * The problems of one file's text: numbered citations of the documents a clone lacks, `../shared` paths
 * that leave the repository, `§name`s and `contract.md#name` links that name no section.
 */
function citationProblems(
  file: string,
  text: string,
  contract: { sections: Set<string>; anchors: Set<string> },
  exemptNumbers = false,
): string[] {
  const problems: string[] = [];
  const line = (index: number) => text.slice(0, index).split("\n").length;
  if (!exemptNumbers) {
    for (const m of text.matchAll(NUMBERED)) problems.push(`${file}:${line(m.index)}: cites "${m[0].replace(/\s+/g, " ")}"`);
    for (const m of text.matchAll(SHARED)) {
      const target = m[0].startsWith("/") ? m[0] : path.resolve(ROOT, path.dirname(file), m[0]);
      if (path.relative(ROOT, target).startsWith("..") || m[0].startsWith("/")) {
        problems.push(`${file}:${line(m.index)}: points out of the repository: ${m[0]}`);
      }
    }
  }
  for (const m of text.matchAll(SECTION)) {
    if (!contract.sections.has(m[1] as string)) problems.push(`${file}:${line(m.index)}: §${m[1]} is no section of docs/contract.md`);
  }
  for (const m of text.matchAll(LINK)) {
    if (!contract.anchors.has(m[1] as string))
      problems.push(`${file}:${line(m.index)}: contract.md#${m[1]} is no heading of docs/contract.md`);
  }
  return problems;
}

const contractText = readFileSync(path.join(ROOT, "docs/contract.md"), "utf8");
const contract = contractSections(contractText);

describe("the repository carries its own contract", () => {
  it("cites no document a clone lacks, and every contract §name names a section of docs/contract.md", () => {
    const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
      .split("\0")
      .filter(Boolean);
    expect(files.length).toBeGreaterThan(500);
    const problems: string[] = [];
    let cited = 0;
    for (const file of files) {
      let buffer: Buffer;
      try {
        buffer = readFileSync(path.join(ROOT, file));
      } catch {
        continue; // deleted in the work tree, not yet in the index
      }
      if (buffer.subarray(0, 8000).includes(0)) continue; // binary
      if (file === "test/contract-citations.test.ts") continue; // this file: its samples are what it refuses
      const text = buffer.toString("utf8");
      cited += [...text.matchAll(/contract §[a-z]/g)].length;
      problems.push(...citationProblems(file, text, contract, APPLIED_MIGRATIONS_WITH_NUMBERS.has(file)));
    }
    expect(problems).toEqual([]);
    // the code does cite it (a check that found no citation at all would prove nothing)
    expect(cited).toBeGreaterThan(150);
  });

  it("has the sections the code cites, each named by its heading", () => {
    for (const name of ["errors", "wire", "labelers", "quality", "settlement", "events", "task-types"]) {
      expect({ name, section: contract.sections.has(name) }).toEqual({ name, section: true });
    }
    expect(anchorOf("Outbound calls")).toBe("outbound-calls");
    expect(anchorOf("Review, audits & more")).toBe("review-audits--more");
  });

  it("finds what it must refuse (the check itself)", () => {
    const sample = { sections: new Set(["errors"]), anchors: new Set(["errors"]) };
    const bad = [
      "// answers 400 (SPEC §7)",
      "/** the rule (docs/contract.md, DESIGN §12) */",
      " * a task of a reserved type (DESIGN\n * §12) shows a summary",
      "-- Label quality (../shared/DESIGN.md §10)",
      "see ../shared/spec for the rest",
      "as in contract §nowhere",
      "[the rule](docs/contract.md#nowhere)",
    ];
    for (const text of bad) expect({ text, found: citationProblems("README.md", text, sample).length > 0 }).toEqual({ text, found: true });
    const good = [
      "// answers 400 (contract §errors)",
      "[contract §errors](../docs/contract.md#errors)",
      'import { client } from "../shared/client";',
      "RFC 9162 §2.1.3.2 and RFC 8785 §3.2.3",
      "a DESIGN change",
    ];
    for (const text of good)
      expect({ text, found: citationProblems("packages/web/app/console/a.ts", text, sample) }).toEqual({ text, found: [] });
    // an applied migration keeps its numbers, not its right to cite sections that do not exist
    expect(citationProblems("m.sql", "-- (../shared/DESIGN.md §10)", sample, true)).toEqual([]);
  });
});
