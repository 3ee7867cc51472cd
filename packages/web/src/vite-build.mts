/**
 * Builds the two browser apps with Vite's JavaScript API, one after the other, into `dist/label/` (base
 * `/label/`) and `dist/console/` (base `/console/`), then writes `dist/.build-stamp`. Two builds rather than
 * one multi-page build: each app's asset URLs are absolute under its own prefix, so the gateway can serve
 * each app (and its deep links) from one directory. `pnpm --filter @labelgate/web build` runs this.
 *
 * Both apps' page is one template, `app/index.html` (`%APP%` stands for the app's name): {@link appPage} gives
 * it to Vite as each app's `index.html`, so the apps have no `index.html` of their own.
 *
 * The build is made in `dist.tmp-<pid>` and renamed to `dist` when complete, so a concurrent build (two
 * jest runs starting together) or a running gateway never sees half of one.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { build, type Plugin } from "vite";

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(pkg, "dist");
const out = `${dist}.tmp-${process.pid}`;
const started = Date.now();

/** Serves `app/index.html`, filled in for `app`, as the page `app/<app>/index.html` (its entry, `./main.tsx`, is the app's). */
function appPage(app: string): Plugin {
  const page = path.join(pkg, "app", app, "index.html");
  const html = readFileSync(path.join(pkg, "app", "index.html"), "utf8").replaceAll("%APP%", app);
  return {
    name: "labelgate:app-page",
    enforce: "pre",
    resolveId: (id) => (path.resolve(id) === page ? page : null),
    load: (id) => (id === page ? html : null),
  };
}

rmSync(out, { recursive: true, force: true });
for (const app of ["label", "console"] as const) {
  await build({
    configFile: false,
    root: path.join(pkg, "app", app),
    base: `/${app}/`,
    // the favicon (and any other unhashed file) of both apps
    publicDir: path.join(pkg, "app", "public"),
    logLevel: "warn",
    plugins: [appPage(app), react()],
    build: {
      outDir: path.join(out, app),
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
writeFileSync(path.join(out, ".build-stamp"), `${new Date().toISOString()}\n`);
// swap in the new build; another build finishing at the same moment may have put its own there first
for (let attempt = 1; ; attempt++) {
  rmSync(dist, { recursive: true, force: true });
  try {
    renameSync(out, dist);
    break;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (attempt >= 5 || (code !== "ENOTEMPTY" && code !== "EEXIST")) throw err;
  }
}
process.stdout.write(`web apps built in ${Date.now() - started} ms: ${dist}\n`);
