/**
 * Builds the two browser apps with Vite's JavaScript API, one after the other, into `dist/label/` (base
 * `/label/`) and `dist/console/` (base `/console/`), then writes `dist/.build-stamp`. Two builds rather than
 * one multi-page build: each app's asset URLs are absolute under its own prefix, so the gateway can serve
 * each app (and its deep links) from one directory. `pnpm --filter @labelgate/web build` runs this.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { build } from "vite";

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(pkg, "dist");
const started = Date.now();
rmSync(dist, { recursive: true, force: true });
for (const app of ["label", "console"] as const) {
  await build({
    configFile: false,
    root: path.join(pkg, "app", app),
    base: `/${app}/`,
    // the favicon (and any other unhashed file) of both apps
    publicDir: path.join(pkg, "app", "public"),
    logLevel: "warn",
    plugins: [react()],
    build: {
      outDir: path.join(dist, app),
      emptyOutDir: true,
      target: "es2022",
      // every script is a file (the gateway's CSP allows no inline script); no source maps in the package
      modulePreload: { polyfill: false },
      assetsInlineLimit: 0,
      sourcemap: false,
      chunkSizeWarningLimit: 2000,
    },
  });
}
mkdirSync(dist, { recursive: true });
writeFileSync(path.join(dist, ".build-stamp"), `${new Date().toISOString()}\n`);
process.stdout.write(`web apps built in ${Date.now() - started} ms: ${dist}\n`);
