/**
 * `pnpm docs:api`: writes docs/api.md from the route catalog (@labelgate/api, markdown.ts).
 * `--check`: writes nothing, exits 1 when the file differs from what the catalog renders.
 */
import { renderApiMarkdown } from "@labelgate/api/markdown";
import { writeGenerated } from "./generated-files";

writeGenerated([["docs/api.md", renderApiMarkdown]], "pnpm docs:api");
