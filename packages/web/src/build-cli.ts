/**
 * Builds the web apps when they are missing or older than their sources (root `postinstall`, `pnpm start`);
 * `--force` builds them anyway. `pnpm --filter @labelgate/web build` always builds.
 */
import { rmSync } from "node:fs";
import { BUILD_STAMP, ensureWebBuild } from "./index";

if (process.argv.includes("--force")) rmSync(BUILD_STAMP, { force: true });
const { state, ms } = ensureWebBuild((m) => process.stderr.write(`${m}\n`));
process.stderr.write(ms > 0 ? `web apps built in ${ms} ms\n` : `web apps are ${state}: nothing to build\n`);
