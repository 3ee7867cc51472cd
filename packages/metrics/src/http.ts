import type { NextFunction, Request, Response } from "express";
import type { Metrics } from "./metrics";

/** `route` label of requests that matched no route (404s, probes of random URLs): one series, not one per URL. */
export const UNMATCHED_ROUTE = "unmatched";

/**
 * Express middleware (mount first) counting every request into `labelgate_http_requests_total` and
 * `labelgate_http_request_duration_seconds` by method, route PATTERN (`/v1/tasks/:id`, never the raw URL)
 * and status. The pattern is taken when the router matches a route (`req.route` is assigned while
 * `req.baseUrl` is the mount path of that route's router), so it is right even when the response is
 * sent later by the error handler, after the routers restored `req.baseUrl`.
 */
export function httpMetrics(metrics: Pick<Metrics, "httpRequests" | "httpDuration">) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = process.hrtime.bigint();
    let route: unknown;
    let pattern: string | undefined;
    Object.defineProperty(req, "route", {
      configurable: true,
      enumerable: true,
      get: () => route,
      set: (value: unknown) => {
        route = value;
        const path = (value as { path?: unknown } | undefined)?.path;
        // a router's root route ("/" under /v1/tasks) is the mount path itself: /v1/tasks, not /v1/tasks/
        if (typeof path === "string") pattern = path === "/" && req.baseUrl !== "" ? req.baseUrl : `${req.baseUrl}${path}`;
      },
    });
    res.once("finish", () => {
      const labels = { method: req.method, route: pattern ?? UNMATCHED_ROUTE, status: String(res.statusCode) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}
