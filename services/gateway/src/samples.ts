/**
 * The sample items (docs/decisions/0221), served read-only at `/samples/<name>` from data/samples: drawn
 * pictures (SVG) and short texts that the README's examples and the apps' empty states point at, so a task
 * made from the quick start shows a real picture in the labeler app.
 *
 * GET and HEAD only (anything else falls through to the API's 404); no directory listings, no dotfiles;
 * cached for an hour. Each answer carries `Content-Security-Policy: default-src 'none'; style-src
 * 'unsafe-inline'; sandbox` and `X-Content-Type-Options: nosniff`: a picture opened on its own runs nothing.
 */
import { SAMPLES_DIR } from "@labelgate/core";
import express, { Router } from "express";

/** The router of `/samples/` (mount it at the root: `app.use(samplesRouter())`). */
export function samplesRouter(dir: string = SAMPLES_DIR): Router {
  const router = Router();
  router.use(
    "/samples",
    express.static(dir, {
      index: false,
      redirect: false,
      dotfiles: "ignore",
      fallthrough: true,
      setHeaders: (res) => {
        res.setHeader("Cache-Control", "public, max-age=3600");
        res.setHeader("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox");
        res.setHeader("X-Content-Type-Options", "nosniff");
      },
    }),
  );
  return router;
}
