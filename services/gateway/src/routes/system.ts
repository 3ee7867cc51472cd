/** System routes: the health check (no auth) and the OpenAPI document. */
import type * as wire from "@labelgate/api/types";
import { serveOpenApi } from "../openapi";
import type { Handlers } from "../operations";

/** How long one check may take before it counts as unavailable, ms: a health request never hangs. */
const CHECK_TIMEOUT_MS = 2000;

export interface SystemRouteDeps {
  /** what the process needs to take and settle work, by name (the runtime's `checks`) */
  checks: Record<string, () => Promise<boolean>>;
  /** `service` of the health body */
  serviceName: string;
}

/** A check's answer within CHECK_TIMEOUT_MS; a throw or no answer in time is `false`. */
async function within(check: () => Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      check().catch(() => false),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export function systemHandlers(deps: SystemRouteDeps): Pick<Handlers, "getHealth" | "getOpenApiDocument"> {
  return {
    /**
     * 200 while every check passes (Postgres, the queue, and where the process has them the chain and its
     * workers); 503 `service unavailable` (Retry-After: 5) naming each check's state (decision 0202).
     */
    getHealth: async (_req, res) => {
      const names = Object.keys(deps.checks);
      const results = await Promise.all(names.map((n) => within(deps.checks[n] as () => Promise<boolean>)));
      const checks = Object.fromEntries(names.map((n, i) => [n, results[i] ? "ok" : "unavailable"])) as wire.Health["checks"];
      if (results.every(Boolean)) {
        const body: wire.Health = { ok: true, service: deps.serviceName, checks };
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
