/**
 * The gateway's side of the OpenAPI document: it is generated from the route catalog by @labelgate/api
 * (packages/api/src/openapi.ts, re-exported here with the catalog's types for the tests), built once per
 * process and served at `GET /v1/openapi.json`; `docsRouter()` serves the reference page (swagger-ui-dist,
 * offline) at `/docs/`. test/openapi.test.ts checks the catalog against the routes the express app really
 * registers, validates the document and every example, and validates real responses against it.
 */

import { buildOpenApiDocument, type OpenApiDocument } from "@labelgate/api/openapi";
import { OPERATIONS } from "@labelgate/api/routes";
import { type Request, type Response, Router } from "express";
import swaggerUi from "swagger-ui-express";

export * from "@labelgate/api/openapi";
export {
  type Auth,
  type BodyDoc,
  type Method,
  type PathParamDoc,
  pathParamsOf,
  REQUEST_SCHEMAS,
  type ResponseDoc,
  ROUTES,
  type RouteDoc,
} from "@labelgate/api/routes";

/** Where the document and the reference page are served. */
export const OPENAPI_PATH = OPERATIONS.getOpenApiDocument.path;
export const DOCS_PATH = "/docs";

/**
 * Routes of the app that are not part of the HTTP API and so are not in the document, by mount path, with
 * the reason. The coverage test accepts an undocumented route only under one of these.
 */
export const UNDOCUMENTED_MOUNTS: Record<string, string> = {
  [DOCS_PATH]: "the API reference page itself (HTML and swagger-ui assets)",
  "/admin/queues": "the operators' queue dashboard (bull-board HTML UI and its private JSON API)",
  "/label": "the labeler app (static files of packages/web, web.ts)",
  "/console": "the customer console (static files of packages/web, web.ts)",
  "/samples": "the sample pictures and texts of data/samples, read-only (samples.ts)",
};

let cached: OpenApiDocument | undefined;

/** The document, built once per process. */
export function openApiDocument(): OpenApiDocument {
  cached ??= buildOpenApiDocument();
  return cached;
}

/** `GET /v1/openapi.json` */
export const serveOpenApi = (_req: Request, res: Response): void => {
  res.json(openApiDocument());
};

/**
 * The reference page: swagger-ui (from swagger-ui-dist, no network needed) at `/docs/`, loading the
 * document from OPENAPI_PATH. `/docs` redirects to `/docs/` so the page's relative asset URLs resolve.
 * Mount at DOCS_PATH.
 */
export function docsRouter(): Router {
  const router = Router();
  const options = { swaggerUrl: OPENAPI_PATH, customSiteTitle: "labelgate API reference" };
  const page = swaggerUi.setup(undefined, options);
  router.get("/", (req, res, next) => {
    const path = req.originalUrl.split("?")[0] ?? "";
    if (!path.endsWith("/")) {
      res.redirect(301, `${req.baseUrl}/`);
      return;
    }
    page(req, res, next);
  });
  router.use(swaggerUi.serveFiles(undefined, options));
  return router;
}
