/**
 * The operator CLI (`pnpm admin <command>`): a thin client of the admin routes.
 *   upgrade <customer_id> [--keep-sandbox-key]   POST /v1/admin/customers/{id}/upgrade
 *   set-quota <customer_id> <labels>             PATCH /v1/admin/customers/{id}
 *   create-labeler <name>                        POST /v1/admin/labelers
 *   list-customers [--tier sandbox|production] [--page N] [--per-page N]   GET /v1/admin/customers
 *   follow-ups [--limit N]                       GET /v1/admin/follow-ups (the parked ones)
 *   retry-follow-ups [<id> ...]                  POST /v1/admin/follow-ups/retry (all parked when no id)
 * Paths come from the route catalog (@labelgate/api/routes). Prints the JSON answer. @throws AdminCliError with the server's error body on a non-2xx answer.
 */
import { pathOf } from "@labelgate/api/operations";

export class AdminCliError extends Error {
  override name = "AdminCliError";
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export const ADMIN_USAGE = `usage: pnpm admin <command> [options]
  upgrade <customer_id> [--keep-sandbox-key]
  set-quota <customer_id> <labels>
  create-labeler <name>
  list-customers [--tier sandbox|production] [--page N] [--per-page N]
  follow-ups [--limit N]            the follow-ups the relay parked, and why
  retry-follow-ups [<id> ...]       make parked follow-ups due again (every one when no id is given)
options: --base-url URL (default http://127.0.0.1:3000), --admin-token T (default ADMIN_TOKEN or .data/admin-token)`;

export interface AdminRequest {
  method: "GET" | "POST" | "PATCH";
  path: string;
  body?: Record<string, unknown>;
}

/** Turns CLI words into the admin request. @throws AdminCliError (exit 2) on bad usage. */
export function adminRequest(
  positionals: string[],
  flags: { keepSandboxKey?: boolean; tier?: string; page?: string; perPage?: string; limit?: string },
): AdminRequest {
  const [command, ...args] = positionals;
  const need = (n: number) => {
    if (args.length !== n) throw new AdminCliError(`${command} takes ${n} argument(s)\n${ADMIN_USAGE}`, 2);
  };
  switch (command) {
    case "upgrade":
      need(1);
      return {
        method: "POST",
        path: pathOf("upgradeCustomer", { id: args[0] as string }),
        body: { keep_sandbox_key: flags.keepSandboxKey === true },
      };
    case "set-quota": {
      need(2);
      const quota = Number(args[1]);
      if (!Number.isInteger(quota) || quota < 0) throw new AdminCliError(`labels must be a whole number >= 0, got ${args[1]}`, 2);
      return { method: "PATCH", path: pathOf("setCustomerQuota", { id: args[0] as string }), body: { label_quota: quota } };
    }
    case "create-labeler":
      need(1);
      return { method: "POST", path: pathOf("createLabeler", {}), body: { name: args[0] } };
    case "list-customers": {
      need(0);
      const q = new URLSearchParams();
      if (flags.tier) q.set("tier", flags.tier);
      if (flags.page) q.set("page", flags.page);
      if (flags.perPage) q.set("per_page", flags.perPage);
      const qs = q.toString();
      return { method: "GET", path: `${pathOf("listCustomers", {})}${qs ? `?${qs}` : ""}` };
    }
    case "follow-ups": {
      need(0);
      const q = new URLSearchParams();
      if (flags.limit) q.set("limit", flags.limit);
      const qs = q.toString();
      return { method: "GET", path: `${pathOf("listParkedFollowUps", {})}${qs ? `?${qs}` : ""}` };
    }
    case "retry-follow-ups": {
      const bad = args.find((id) => !/^[1-9][0-9]{0,18}$/.test(id));
      if (bad !== undefined) throw new AdminCliError(`a follow-up id is a whole number, got ${bad}\n${ADMIN_USAGE}`, 2);
      return { method: "POST", path: pathOf("retryFollowUps", {}), body: args.length > 0 ? { ids: args } : {} };
    }
    default:
      throw new AdminCliError(command ? `unknown command ${command}\n${ADMIN_USAGE}` : ADMIN_USAGE, 2);
  }
}

/** Sends the request; returns the parsed JSON body. @throws AdminCliError (exit 1) on a non-2xx answer. */
export async function sendAdmin(baseUrl: string, adminToken: string, request: AdminRequest): Promise<unknown> {
  const res = await fetch(new URL(request.path, baseUrl), {
    method: request.method,
    headers: { authorization: `Bearer ${adminToken}`, ...(request.body ? { "content-type": "application/json" } : {}) },
    body: request.body ? JSON.stringify(request.body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new AdminCliError(`${request.method} ${request.path} → ${res.status} ${text}`, 1);
  return text ? (JSON.parse(text) as unknown) : null;
}
