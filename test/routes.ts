/**
 * The routes an express 5 app registers (read from `sys.app`, like test/openapi.test.ts), the spec's error
 * body as a zod schema, and a raw HTTP client that sends exactly the bytes of a path (no URL normalisation
 * of `../` or `%2e%2e`), for the fuzz and security suites.
 */
import http from "node:http";
import { ERRORS } from "@labelgate/api";
import { ROUTES, type RouteDoc, UNDOCUMENTED_MOUNTS } from "@labelgate/gateway/openapi";
import { z } from "zod";

interface StackLayer {
  route?: { path: unknown; methods: Record<string, boolean> };
  handle: unknown;
  rawPath?: unknown;
}

function joinPath(prefix: string, path: string): string {
  const joined = `${prefix}/${path}`.replace(/\/+/g, "/");
  return joined.length > 1 ? joined.replace(/\/$/, "") : joined;
}

/**
 * Every route of an express 5 app as `{method, path}` (`path` with `{param}` for `:param`), and the mount
 * paths of plain middleware (the docs page and the queue dashboard).
 */
export function registeredRoutes(app: unknown): { routes: { method: string; path: string }[]; mounts: string[] } {
  const routes = new Map<string, { method: string; path: string }>();
  const mounts = new Set<string>();
  const walk = (stack: StackLayer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        if (typeof layer.route.path !== "string") throw new Error(`a route under ${prefix} has a non-string path`);
        const path = joinPath(prefix, layer.route.path).replace(/:(\w+)/g, "{$1}");
        for (const [method, on] of Object.entries(layer.route.methods))
          if (on && method !== "_all") routes.set(`${method} ${path}`, { method, path });
        continue;
      }
      const nested = (layer.handle as { stack?: unknown }).stack;
      const mount = typeof layer.rawPath === "string" ? layer.rawPath : undefined;
      if (Array.isArray(nested)) {
        if (mount === undefined) throw new Error(`a router under ${prefix} is mounted at a non-string path`);
        walk(nested as StackLayer[], joinPath(prefix, mount));
      } else if (mount !== undefined && mount !== "/") {
        mounts.add(joinPath(prefix, mount));
      }
    }
  };
  walk((app as { router: { stack: StackLayer[] } }).router.stack, "/");
  return { routes: [...routes.values()], mounts: [...mounts] };
}

/**
 * The registered routes joined with their ROUTES entry.
 * @throws Error when a registered route is missing from ROUTES (or a mount from UNDOCUMENTED_MOUNTS).
 */
export function routeTable(app: unknown): { routes: RouteDoc[]; mounts: string[] } {
  const { routes, mounts } = registeredRoutes(app);
  const undocumented = Object.keys(UNDOCUMENTED_MOUNTS);
  const under = (path: string) => undocumented.find((m) => path === m || path.startsWith(`${m}/`));
  for (const r of routes) {
    const mount = under(r.path);
    if (mount && !mounts.includes(mount)) mounts.push(mount);
  }
  const docs = routes
    .filter((r) => !under(r.path))
    .map(({ method, path }) => {
      const doc = ROUTES.find((r) => r.method === method && r.path === path);
      if (!doc) throw new Error(`${method.toUpperCase()} ${path} is registered but not in ROUTES`);
      return doc;
    });
  for (const m of mounts) if (!(m in UNDOCUMENTED_MOUNTS)) throw new Error(`unknown mount ${m}`);
  return { routes: docs, mounts };
}

const MESSAGES = Object.values(ERRORS).map((e) => e.message) as [string, ...string[]];

/**
 * The error body of contract §errors, §wire: `{"error": <one of the gateway's messages>}`, validation failures
 * with `details: [{path, message}]`, 5xx with `request_id`; the few documented extras (the task or job status
 * on a 409, the clashing webhook id).
 */
export const errorBodySchema = z
  .object({
    error: z.enum(MESSAGES),
    details: z
      .array(z.object({ path: z.string(), message: z.string().min(1) }).strict())
      .min(1)
      .optional(),
    request_id: z.string().min(1).optional(),
    task_id: z.string().startsWith("tsk_").optional(),
    webhook_id: z.string().startsWith("whk_").optional(),
    status: z.string().optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    if ((b.error === ERRORS.validation.message) !== (b.details !== undefined))
      ctx.addIssue({ code: "custom", path: ["details"], message: "details go with validation failures, and only with them" });
  });

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** the body parsed as JSON, or undefined when it is not JSON */
  json: unknown;
}

/** `text` parsed as JSON, or undefined when it is empty or not JSON. */
export function jsonOrUndefined(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

export interface RawRequest {
  method: string;
  /** sent as given: only characters Node refuses in a request line (<= 0x20, > 0xff) are percent-encoded */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** Percent-encodes what an HTTP request line cannot carry, keeping `../`, `%2e` and the rest as they are. */
export function sendablePath(path: string): string {
  return path.replace(/[^\u0021-\u007e]/gu, (c) => {
    try {
      return encodeURIComponent(c);
    } catch {
      return "%ED%A0%80"; // a lone surrogate: its CESU-8 bytes (invalid UTF-8)
    }
  });
}

/**
 * One HTTP request with node:http (keep-alive through `agent`), the body read to its end.
 * @throws Error on a connection error or after `timeoutMs` without an answer.
 */
export function rawRequest(base: { port: number; agent?: http.Agent }, req: RawRequest, timeoutMs = 15000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        host: "127.0.0.1",
        port: base.port,
        method: req.method,
        path: sendablePath(req.path),
        // always a length: Node's client sends the body of a GET, DELETE, OPTIONS or TRACE without one,
        // which the server rightly parses as a second (garbage) request
        headers: req.body === undefined ? req.headers : { ...req.headers, "content-length": String(Buffer.byteLength(req.body)) },
        agent: base.agent,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        const done = () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: jsonOrUndefined(text) });
        };
        res.on("data", (c: Buffer) => chunks.push(c));
        // the server may answer before reading a body it refuses, and close: the answer counts
        res.on("error", done);
        res.on("aborted", done);
        res.on("end", done);
      },
    );
    r.on("timeout", () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    r.on("error", reject);
    r.end(req.body);
  });
}
