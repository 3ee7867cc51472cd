/**
 * The on-call queue dashboard (bull-board) at `/admin/queues`: every queue of the catalog, its jobs by
 * state, failed jobs retried by hand. Behind the admin token, accepted two ways (browsers cannot add a
 * bearer header, but they do HTTP Basic natively):
 * - `Authorization: Bearer <ADMIN_TOKEN>` (scripts, curl), or
 * - HTTP Basic with the token as the password (any user name): a browser prompts for it on the 401's
 *   `WWW-Authenticate: Basic` challenge and then sends it with every request of the board (page, assets, API).
 */
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import { ApiError } from "@labelgate/api";
import { secretsEqual } from "@labelgate/core";
import { catalog, type QueueClient, type QueueKey } from "@labelgate/queue";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { bearerToken } from "./auth";

/** Mount path of the dashboard. Its JSON API is under `${QUEUE_DASHBOARD_PATH}/api` (e.g. `/api/queues`). */
export const QUEUE_DASHBOARD_PATH = "/admin/queues";

/** The password of an `Authorization: Basic` header, or undefined. */
export function basicPassword(req: Request): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.authorization ?? "");
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon >= 0 ? decoded.slice(colon + 1) : undefined;
}

/**
 * Requires the admin token as a bearer token or a Basic password; a 401 carries a Basic challenge.
 * An unset admin token locks the dashboard (every call is 401), like the admin routes.
 */
export function requireAdminOrBasic(adminToken: string | undefined) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const token = bearerToken(req) ?? basicPassword(req);
    if (!adminToken || !token || !secretsEqual(token, adminToken)) {
      res.setHeader("WWW-Authenticate", 'Basic realm="labelgate queues", charset="UTF-8"');
      throw new ApiError("unauthorized");
    }
    next();
  };
}

/**
 * The dashboard router: bull-board over the BullMQ `Queue` of every catalog queue (`QueueClient.bullmqQueue`,
 * on Redis or BullMQ's Postgres backend). Mount it at QUEUE_DASHBOARD_PATH behind `requireAdminOrBasic`.
 * The queues are attached on the first request (a BullMQ queue made before its Redis connection is ready
 * would stay broken: the shared connection has no offline queue); if the backend is down then, that request
 * fails like any other queue outage (503) and the next one tries again.
 */
export function queueDashboard(queue: QueueClient, basePath = QUEUE_DASHBOARD_PATH): RequestHandler {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(basePath);
  const board = createBullBoard({ queues: [], serverAdapter, options: { uiConfig: { boardTitle: "labelgate queues" } } });
  let attached: Promise<void> | undefined;
  const attach = () =>
    Promise.all((Object.keys(catalog) as QueueKey[]).map((key) => queue.bullmqQueue(key))).then((queues) => {
      board.setQueues(queues.map((q) => new BullMQAdapter(q)));
    });
  const router = serverAdapter.getRouter() as RequestHandler;
  return async (req, res, next) => {
    attached ??= attach().catch((err: unknown) => {
      attached = undefined;
      throw err;
    });
    await attached;
    router(req, res, next);
  };
}
