/**
 * `pnpm gen:events`: writes the verifiers' event modules from the event catalog (@labelgate/api events.ts):
 * packages/webhook-verify/src/events.ts and clients/python/labelgate/events.py (packages/api/src/event-clients.ts).
 * `--check`: writes nothing, exits 1 when a file differs from what the catalog renders.
 */
import { renderPythonEvents, renderVerifierEvents } from "@labelgate/api/event-clients";
import { type GeneratedFile, writeGenerated } from "./generated-files";

/** Each generated file (relative to the repository root) and its renderer. */
export const GENERATED_EVENT_FILES: GeneratedFile[] = [
  ["packages/webhook-verify/src/events.ts", renderVerifierEvents],
  ["clients/python/labelgate/events.py", renderPythonEvents],
];

if (require.main === module) writeGenerated(GENERATED_EVENT_FILES, "pnpm gen:events");
