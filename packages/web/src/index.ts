/**
 * @labelgate/web, Node side: where the built apps are, whether the build is current, and building them.
 * The apps themselves (React, browser code) are under `app/` and built by Vite (`src/vite-build.mts`)
 * into `dist/label/` and `dist/console/`, which the gateway serves at `/label/` and `/console/`
 * (services/gateway/src/web.ts).
 *
 * The build runs on `pnpm install` (root postinstall), on the first `pnpm start` and in jest's global
 * setup whenever {@link webBuildState} says it is missing or older than its sources.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

/** packages/web */
export const WEB_PACKAGE_DIR = path.resolve(__dirname, "..");
/** The build output: `label/` and `console/`, each an `index.html` and hashed `assets/`. */
export const WEB_DIST_DIR = path.join(WEB_PACKAGE_DIR, "dist");
/** Written last by a successful build: its mtime is the build's time. */
export const BUILD_STAMP = path.join(WEB_DIST_DIR, ".build-stamp");
/** The two apps, by the path prefix the gateway serves each at. */
export const WEB_APPS = ["label", "console"] as const;
export type WebApp = (typeof WEB_APPS)[number];

/**
 * What a build is made from: the apps, the build script, the package manifest, the SDK's sources, and
 * those of @labelgate/api (the wire types and enums the SDK re-exports) and @labelgate/chain (the proof
 * verifier of the console's "verify" button).
 */
const SOURCES = [
  path.join(WEB_PACKAGE_DIR, "app"),
  path.join(WEB_PACKAGE_DIR, "src", "vite-build.mts"),
  path.join(WEB_PACKAGE_DIR, "package.json"),
  path.resolve(WEB_PACKAGE_DIR, "..", "sdk", "src"),
  path.resolve(WEB_PACKAGE_DIR, "..", "api", "src"),
  path.resolve(WEB_PACKAGE_DIR, "..", "chain", "src"),
];

function newestMtimeMs(p: string): number {
  if (!existsSync(p)) return 0;
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(p)) newest = Math.max(newest, newestMtimeMs(path.join(p, entry)));
  return newest;
}

/** `missing` (no complete build), `stale` (a source is newer than the build) or `current`. */
export function webBuildState(): "missing" | "stale" | "current" {
  if (!existsSync(BUILD_STAMP) || WEB_APPS.some((app) => !existsSync(path.join(WEB_DIST_DIR, app, "index.html")))) return "missing";
  const built = statSync(BUILD_STAMP).mtimeMs;
  return SOURCES.some((s) => newestMtimeMs(s) > built) ? "stale" : "current";
}

/**
 * Builds both apps (Vite, in a child process: `node --import tsx src/vite-build.mts`) unless the build is
 * current. Returns what was found before, and the build's wall time in ms (0 when nothing was built).
 * @throws Error with the build's output when it fails
 */
export function ensureWebBuild(log: (message: string) => void = () => undefined): { state: ReturnType<typeof webBuildState>; ms: number } {
  const state = webBuildState();
  if (state === "current") return { state, ms: 0 };
  log(`building the web apps (${state}): pnpm --filter @labelgate/web build`);
  const started = Date.now();
  const run = spawnSync(process.execPath, ["--import", "tsx", path.join(WEB_PACKAGE_DIR, "src", "vite-build.mts")], {
    cwd: WEB_PACKAGE_DIR,
    encoding: "utf8",
    env: { ...process.env, NODE_ENV: "production" },
  });
  if (run.status !== 0) {
    throw new Error(`web build failed (exit ${run.status ?? run.signal}):\n${run.stdout}\n${run.stderr}`);
  }
  return { state, ms: Date.now() - started };
}
