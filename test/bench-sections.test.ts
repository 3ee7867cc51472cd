/**
 * bench-lib's `replaceSection`: how every bench writes its section of docs/benchmarks.md (quality, types,
 * free_text). A section runs from its "## " heading to the next one; one blank line follows it.
 */

import { replaceSection } from "../bench/bench-lib";

const DOC = "# Benchmarks\n\n## A\n\nold a\n\n## B (`pnpm b`)\n\nold b\nmore b\n\n## C\n\nc\n";

test("a section between two others is replaced up to the next heading, the others untouched", () => {
  expect(replaceSection(DOC, "## B (`pnpm b`)", "## B (`pnpm b`)\n\nnew b\n")).toBe(
    "# Benchmarks\n\n## A\n\nold a\n\n## B (`pnpm b`)\n\nnew b\n\n## C\n\nc\n",
  );
});

test("the last section is replaced to the end of the file", () => {
  expect(replaceSection(DOC, "## C", "## C\n\nnew c")).toBe(
    "# Benchmarks\n\n## A\n\nold a\n\n## B (`pnpm b`)\n\nold b\nmore b\n\n## C\n\nnew c\n",
  );
});

test("a missing section is appended after one blank line", () => {
  expect(replaceSection(DOC, "## D", "## D\n\nd\n\n\n")).toBe(`${DOC}\n## D\n\nd\n`);
});

test("a body that ends in several newlines leaves exactly one blank line before the next heading", () => {
  expect(replaceSection(DOC, "## A", "## A\n\nnew a\n\n\n\n")).toContain("new a\n\n## B");
});

test("a ### heading inside the section is part of it", () => {
  const doc = "## A\n\nx\n\n### A.1\n\ny\n\n## B\n\nz\n";
  expect(replaceSection(doc, "## A", "## A\n\nnew")).toBe("## A\n\nnew\n\n## B\n\nz\n");
});
