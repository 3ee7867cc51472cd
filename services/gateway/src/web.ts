/**
 * The browser apps of contract §web-apps, served as static files: the labeler app at `/label/` and the customer
 * console at `/console/`, built by Vite from `packages/web` into `packages/web/dist/{label,console}`.
 *
 * - Hashed files under `assets/` are cached for a year (`immutable`); `index.html` is `no-cache`, so a
 *   new build is picked up on the next load.
 * - Single-page fallback: a GET of any other path without a file extension (a deep link such as
 *   `/console/tasks/tsk_…`) answers the app's `index.html`; a missing file with an extension falls through
 *   to the API's 404.
 * - Security headers by helmet, with a Content-Security-Policy that allows no inline script or style and
 *   nothing from elsewhere but images and recordings: `img-src` and `media-src` allow http(s) because the items labelers look at are the
 *   tasks' `data_url`s (and presigned `view_url`s), wherever the customer keeps them. `connect-src` is the
 *   gateway itself plus what {@link WebOptions.connectSrc} adds (the chain's RPC URL for verifying proofs).
 *   `Referrer-Policy: no-referrer`: image hosts learn nothing of the page.
 * - Without a build, both paths answer 503 with a page that says how to build.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import express, { type Request, type Response, Router } from "express";
import helmet from "helmet";

/** The apps and the path each is served at. */
export const WEB_APPS = ["label", "console"] as const;

export interface WebOptions {
  /** the Vite build output (default: packages/web/dist of this repository) */
  distDir?: string;
  /** origins the console may also call (e.g. an EVM RPC URL for verifying settlement proofs) */
  connectSrc?: string[];
  /**
   * EVM_RPC_URL: the chain the console's "verify" button reads. Its origin joins `connect-src`, and the
   * console learns the URL from `GET /console/config.json` (`{evm_rpc_url}`, null when unset). The URL is
   * shown to signed-in and anonymous visitors alike: use an RPC URL that is fit to be public.
   */
  evmRpcUrl?: string;
}

/** `GET /console/config.json`: what the console needs to know of this deployment. */
export interface ConsoleConfig {
  /** the EVM JSON-RPC URL settlement proofs are verified against, or null (no chain configured) */
  evm_rpc_url: string | null;
}

/** The origin of a URL for a CSP source list, or undefined when it has none (not http(s)/ws(s)). */
export function cspOrigin(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return /^(https?|wss?):$/.test(parsed.protocol) ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}

/** packages/web/dist, from services/gateway/src. */
export const DEFAULT_WEB_DIST_DIR = path.resolve(__dirname, "..", "..", "..", "packages", "web", "dist");

const FILE_EXTENSION = /\.[A-Za-z0-9]+$/;

/** The Content-Security-Policy directives of both apps (helmet's names). */
export function webCspDirectives(connectSrc: string[] = []): Record<string, string[]> {
  return {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", "https:", "http:"],
    // a free_text task's recording plays in the labeler app from wherever its data_url is (contract §task-types)
    mediaSrc: ["'self'", "https:", "http:"],
    fontSrc: ["'self'"],
    connectSrc: ["'self'", ...connectSrc],
    manifestSrc: ["'self'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    objectSrc: ["'none'"],
  };
}

function notBuiltPage(app: string, dir: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>labelgate: web apps not built</title></head>
<body><main><h1>The web apps are not built</h1>
<p>The gateway serves <code>/${app}/</code> from <code>${dir}</code>, which has no build.</p>
<p>Build them with <code>pnpm --filter @labelgate/web build</code> (also run by <code>pnpm install</code> and on the first
<code>pnpm start</code>), then reload this page.</p></main></body></html>
`;
}

function appRouter(app: string, distDir: string, connectSrc: string[], config: ConsoleConfig): Router {
  const dir = path.join(distDir, app);
  const index = path.join(dir, "index.html");
  const router = Router();
  router.use(
    helmet({
      contentSecurityPolicy: { useDefaults: false, directives: webCspDirectives(connectSrc) },
      referrerPolicy: { policy: "no-referrer" },
    }),
  );
  router.use((req, res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      next();
      return;
    }
    // `/label` → `/label/`: the app's relative routes and its base need the slash
    if (req.originalUrl.split("?")[0] === req.baseUrl) {
      res.redirect(301, `${req.baseUrl}/`);
      return;
    }
    if (existsSync(index)) {
      next();
      return;
    }
    res.status(503).setHeader("Retry-After", "30").setHeader("Cache-Control", "no-store").type("html").send(notBuiltPage(app, dir));
  });
  if (app === "console") {
    router.get("/config.json", (_req, res) => {
      res.setHeader("Cache-Control", "no-cache");
      res.json(config);
    });
  }
  router.use(
    express.static(dir, {
      index: false,
      redirect: false,
      dotfiles: "ignore",
      fallthrough: true,
      setHeaders: (res, file) => {
        res.setHeader(
          "Cache-Control",
          file.startsWith(path.join(dir, "assets") + path.sep) ? "public, max-age=31536000, immutable" : "no-cache",
        );
      },
    }),
  );
  router.get("/{*path}", (req: Request, res: Response, next) => {
    if (FILE_EXTENSION.test(req.path)) {
      next();
      return;
    }
    res.setHeader("Cache-Control", "no-cache");
    res.sendFile(index, (err) => {
      // a client that went away needs no answer
      if (err && !res.headersSent) next(err);
    });
  });
  return router;
}

/**
 * The router of both apps (mount it at the root: `app.use(webRouter())`). Requests other than GET and HEAD,
 * and missing files, fall through to the next handler (the API's JSON 404).
 */
export function webRouter(options: WebOptions = {}): Router {
  const distDir = options.distDir ?? DEFAULT_WEB_DIST_DIR;
  const rpcOrigin = options.evmRpcUrl ? cspOrigin(options.evmRpcUrl) : undefined;
  const connectSrc = [...(options.connectSrc ?? []), ...(rpcOrigin ? [rpcOrigin] : [])];
  const config: ConsoleConfig = { evm_rpc_url: rpcOrigin ? (options.evmRpcUrl ?? null) : null };
  const router = Router();
  for (const app of WEB_APPS) router.use(`/${app}`, appRouter(app, distDir, connectSrc, config));
  return router;
}
