/**
 * What the running gateway can do, read from its OpenAPI document (`GET /v1/openapi.json`, no auth): the
 * apps show a feature only when the route behind it exists (the batch list, releasing a claim, settings,
 * the labelers table arrive with newer gateways), instead of failing with a 404 when it is used.
 */
import { OPERATIONS, type OperationId } from "@labelgate/sdk/browser";
import { useQuery } from "@tanstack/react-query";

/** `METHOD /path` as in the document, e.g. `DELETE /v1/labeling/claims/{claimId}`. */
export type RouteKey = string;

/** The `METHOD /path` key of a catalog operation. */
function routeKey(id: OperationId): RouteKey {
  return `${OPERATIONS[id].method.toUpperCase()} ${OPERATIONS[id].path}`;
}

export const ROUTE = {
  releaseClaim: routeKey("releaseClaim"),
  listBatches: routeKey("listBatches"),
  settings: routeKey("getSettings"),
  updateSettings: routeKey("updateSettings"),
  labelers: routeKey("getDashboardLabelers"),
} as const;

/** The routes of the document as `METHOD /path` keys. @throws Error when the document cannot be read */
export async function fetchRoutes(): Promise<Set<RouteKey>> {
  const path = OPERATIONS.getOpenApiDocument.path;
  const res = await fetch(path, { headers: { accept: "application/json" } });
  if (!res.ok) throw new Error(`GET ${path} answered ${res.status}`);
  const doc = (await res.json()) as { paths?: Record<string, Record<string, unknown>> };
  const keys = new Set<RouteKey>();
  for (const [path, ops] of Object.entries(doc.paths ?? {}))
    for (const method of Object.keys(ops)) keys.add(`${method.toUpperCase()} ${path}`);
  return keys;
}

/** `has(route)`: whether the gateway has the route (false while the document loads or if it failed). */
export function useCapabilities(): { has: (route: RouteKey) => boolean; loaded: boolean } {
  const q = useQuery({ queryKey: ["capabilities"], queryFn: fetchRoutes, staleTime: Number.POSITIVE_INFINITY, retry: 1 });
  return { has: (route) => q.data?.has(route) ?? false, loaded: q.isSuccess };
}
