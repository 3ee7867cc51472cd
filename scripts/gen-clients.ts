/**
 * `pnpm gen:clients`: writes the clients' generated route modules from the route catalog (@labelgate/api
 * operations.ts, rendered by packages/api/src/route-clients.ts): clients/python/labelgate/_routes.py. The TS SDK
 * and the CLI import the catalog itself (docs/decisions/0232). `--check`: writes nothing, exits 1 when a file
 * differs from what the catalog renders.
 */
import { renderPythonRoutes } from "@labelgate/api/route-clients";
import { type GeneratedFile, writeGenerated } from "./generated-files";

/** Each generated file (relative to the repository root) and its renderer. */
export const GENERATED_CLIENT_FILES: GeneratedFile[] = [["clients/python/labelgate/_routes.py", renderPythonRoutes]];

if (require.main === module) writeGenerated(GENERATED_CLIENT_FILES, "pnpm gen:clients");
