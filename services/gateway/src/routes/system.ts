/** System routes: the health check (no auth) and the OpenAPI document. */
import type * as wire from "@labelgate/api/types";
import type { QueueClient } from "@labelgate/queue";
import type { Store } from "@labelgate/store";
import { serveOpenApi } from "../openapi";
import type { Handlers } from "../operations";

export interface SystemRouteDeps {
  store: Store;
  queue: QueueClient;
  /** `service` of the health body */
  serviceName: string;
}

export function systemHandlers(deps: SystemRouteDeps): Pick<Handlers, "getHealth" | "getOpenApiDocument"> {
  return {
    /** 200 while Postgres and the queue answer; 503 `service unavailable` (Retry-After: 5) naming the failing check. */
    getHealth: async (_req, res) => {
      const [database, queueOk] = await Promise.all([deps.store.ping(), deps.queue.ping()]);
      const checks = { database: database ? "ok" : "unavailable", queue: queueOk ? "ok" : "unavailable" } as const;
      if (database && queueOk) {
        const body: wire.Health = { ok: true, service: deps.serviceName, checks: { database: "ok", queue: "ok" } };
        res.json(body);
      } else {
        res.setHeader("Retry-After", "5");
        res.status(503).json({ error: "service unavailable", ok: false, service: deps.serviceName, checks });
      }
    },
    // the OpenAPI 3.1 document (no auth); its rendered reference is at /docs/
    getOpenApiDocument: serveOpenApi,
  };
}
