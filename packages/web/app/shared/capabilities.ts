/**
 * What the running gateway can do, read from its OpenAPI document (`GET /v1/openapi.json`, no auth): the
 * apps show a feature only when the route behind it exists (the batch list, releasing a claim, settings,
 * the labelers table arrive with newer gateways), instead of failing with a 404 when it is used.
 */
import { useQuery } from "@tanstack/react-query";

/** `METHOD /path` as in the document, e.g. `DELETE /v1/labeling/claims/{claim_id}`. */
export type RouteKey = string;

export const ROUTE = {
  releaseClaim: "DELETE /v1/labeling/claims/{claimId}",
  listBatches: "GET /v1/batches",
  settings: "GET /v1/customers/me/settings",
  updateSettings: "PATCH /v1/customers/me/settings",
  labelers: "GET /v1/dashboard/labelers",
} as const;

/** The routes of the document as `METHOD /path` keys. @throws Error when the document cannot be read */
export async function fetchRoutes(): Promise<Set<RouteKey>> {
  const res = await fetch("/v1/openapi.json", { headers: { accept: "application/json" } });
  if (!res.ok) throw new Error(`GET /v1/openapi.json answered ${res.status}`);
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
