/**
 * The gateway's side of the route catalog (@labelgate/api/routes): one handler per operation id, registered
 * at the operation's method and path behind the middleware its declaration implies. `Handlers` is keyed by
 * every operation id, so an operation without a handler does not compile (as a queue without a handler
 * does not, @labelgate/queue `HandlersFor`).
 */
import { type OperationId, ROUTES, type RouteDoc } from "@labelgate/api/routes";
import type { Request, RequestHandler, Response, Router } from "express";

/** Handles one operation: parses its input, answers it, or throws an ApiError (express 5 forwards rejections). */
export type Handler = (req: Request, res: Response) => Promise<void> | void;

/** A handler for every operation of the catalog. */
export type Handlers = { [K in OperationId]: Handler };

/** The middleware an operation's declaration selects (all built by the app). */
export interface OperationMiddleware {
  /** authenticates a customer key and spends one unit of its rate-limit budget */
  customer: RequestHandler;
  labeler: RequestHandler;
  admin: RequestHandler;
  /** the per-client-address limit of an unauthenticated route that spends a budget (registration) */
  perAddress: RequestHandler;
  /** JSON body parsers: the 1 MB and the 10 MB limit */
  json: RequestHandler;
  jsonLarge: RequestHandler;
  /** express.json for an answer body (MAX_ANSWER_BYTES) */
  jsonAnswer: RequestHandler;
}

/** The express pattern of a catalog path under `mount`: `/v1/tasks/{id}` under `/v1` → `/tasks/:id`. */
export function expressPath(path: string, mount: string): string {
  if (!path.startsWith(`${mount}/`)) throw new Error(`${path} is not under ${mount}`);
  return path.slice(mount.length).replace(/\{(\w+)\}/g, ":$1");
}

/** The middleware chain of one operation: its credential (or address limit), then its body parser. */
function chainOf(route: RouteDoc, mw: OperationMiddleware): RequestHandler[] {
  const chain: RequestHandler[] = [];
  if (route.auth === "none") {
    if (route.rateLimited) chain.push(mw.perAddress);
  } else {
    chain.push(mw[route.auth]);
  }
  if (route.body) chain.push(route.body.limit === "10 MB" ? mw.jsonLarge : route.body.limit === "256 KB" ? mw.jsonAnswer : mw.json);
  return chain;
}

/**
 * Registers every operation of the catalog on `router` (mounted at `mount`), in catalog order.
 * @throws Error when an operation's path is not under `mount`
 */
export function registerOperations(router: Router, mount: string, handlers: Handlers, mw: OperationMiddleware): void {
  for (const route of ROUTES) {
    const handler = handlers[route.operationId as OperationId];
    router[route.method](expressPath(route.path, mount), ...chainOf(route, mw), handler as RequestHandler);
  }
}
