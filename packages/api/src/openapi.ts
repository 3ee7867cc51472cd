/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the route catalog (operations.ts, joined with
 * its schemas in routes.ts) and the zod schemas it names, with zod's own JSON Schema output (`z.toJSONSchema`, draft 2020-12, the dialect of OpenAPI 3.1):
 * request components from REQUEST_SCHEMAS (input types), response components from RESPONSE_SCHEMAS (output
 * types), one operation per catalog entry with its path, query and header parameters, its success responses
 * and an error response per status of the error kinds it can answer (statuses and messages from errors.ts).
 * Pure and deterministic: the gateway serves it at `GET /v1/openapi.json`, scripts/docs-api.ts renders
 * docs/api.md from it, test/openapi.test.ts validates it.
 */
import { z } from "zod";
import { ERRORS, type ErrorKind } from "./errors";
import { idempotencyKey, pathId } from "./requests";
import { EXAMPLE, RESPONSE_SCHEMAS } from "./responses";
import { REQUEST_DESCRIPTIONS, REQUEST_SCHEMAS, type ResponseDoc, type ResponseSchemaName, ROUTES, type RouteDoc, TAGS } from "./routes";

export type JsonSchema = { [key: string]: unknown };

/** The OpenAPI 3.1 document (only the fields this module writes are typed). */
export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
    parameters: Record<string, JsonSchema>;
    headers: Record<string, JsonSchema>;
  };
}

export interface OpenApiMediaType {
  schema: JsonSchema;
  example?: unknown;
  examples?: Record<string, { summary: string; value: unknown }>;
  [extension: `x-${string}`]: unknown;
}

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, JsonSchema>;
  content?: Record<string, OpenApiMediaType>;
}

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters: JsonSchema[];
  requestBody?: { description: string; required: boolean; content: Record<string, OpenApiMediaType> };
  responses: Record<string, OpenApiResponse>;
}

const JSON_LIMIT = "1 MB" as const;
const E = EXAMPLE;

// --- errors -------------------------------------------------------------------------------------------

/** An example error body of a kind, as the error handler renders it. */
export function errorExample(kind: ErrorKind): Record<string, unknown> {
  const body: Record<string, unknown> = { error: ERRORS[kind].message };
  switch (kind) {
    case "validation":
      body.details = [{ path: "label_spec.options", message: "Too small: expected array to have >=2 items" }];
      break;
    case "taskCanceled":
      Object.assign(body, { task_id: E.taskId, status: "canceled" });
      break;
    case "taskNotCancelable":
    case "taskNotOpen":
      body.status = "settled";
      break;
    case "jobNotCompleted":
      body.status = "labeling";
      break;
    case "batchNotCompleted":
      body.status = "in_progress";
      break;
    case "webhookExists":
      body.webhook_id = E.webhookId;
      break;
    default:
      break;
  }
  if (ERRORS[kind].status >= 500) body.request_id = E.requestId;
  return body;
}

function spendsBudget(route: RouteDoc): boolean {
  return route.rateLimited ?? route.auth === "customer";
}

/** Every error kind a route can answer: its own, those of its auth, body and query, 500, and 503 unless offline. */
export function errorKindsOf(route: RouteDoc): ErrorKind[] {
  const kinds: ErrorKind[] = [...(route.errors ?? [])];
  if (route.auth !== "none") kinds.push("unauthorized");
  if (spendsBudget(route)) kinds.push("rateLimited");
  if (route.body) kinds.push("validation", "invalidJson", "payloadTooLarge", "unsupportedMediaType");
  if (route.query) kinds.push("validation");
  kinds.push("internal");
  if (!route.offline) kinds.push("unavailable");
  return [...new Set(kinds)];
}

// --- generation ---------------------------------------------------------------------------------------

const RATE_LIMIT_HEADERS = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"];

function ref(kind: "schemas" | "parameters" | "headers", name: string): JsonSchema {
  return { $ref: `#/components/${kind}/${name}` };
}

/** `format`s of JSON Schema 2020-12 that zod emits; others (zod's `starts_with`, ...) are dropped (the `pattern` stays). */
const STANDARD_FORMATS = new Set(["date-time", "date", "time", "duration", "email", "uri", "uuid", "ipv4", "ipv6", "hostname"]);

const generatorOptions = (io: "input" | "output") => ({
  target: "draft-2020-12" as const,
  io,
  override: ({ jsonSchema }: { jsonSchema: { format?: string } }) => {
    if (jsonSchema.format !== undefined && !STANDARD_FORMATS.has(jsonSchema.format)) delete jsonSchema.format;
  },
});

/** JSON Schema (2020-12) of one zod schema, without `$schema`. */
export function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, generatorOptions(io)) as JsonSchema;
  return rest;
}

/**
 * Components from named zod schemas (one registry, so a named schema nested in another becomes a `$ref`).
 * Descriptions and examples come from each schema's `.meta()`; `descriptions` adds more by name.
 */
function componentsOf(
  named: Record<string, z.ZodType>,
  io: "input" | "output",
  descriptions: Record<string, string> = {},
): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { ...generatorOptions(io), uri: (id) => `#/components/schemas/${id}` });
  const out: Record<string, JsonSchema> = {};
  for (const [id, generated] of Object.entries(schemas)) {
    const { $schema: _dialect, $id: _id, ...rest } = generated as JsonSchema;
    const description = descriptions[id];
    out[id] = description ? { description, ...rest } : rest;
  }
  return out;
}

/** The example of a response component (its `.meta()` example). */
export function schemaExample(name: ResponseSchemaName): unknown {
  const examples = RESPONSE_SCHEMAS[name].meta()?.examples;
  return Array.isArray(examples) ? examples[0] : undefined;
}

/** Response headers: X-Request-Id always; the rate-limit headers once the budget was spent (not on a 401). */
function responseHeaders(route: RouteDoc, status: number, extra: readonly string[] = []): Record<string, JsonSchema> {
  const limited = spendsBudget(route) && status !== 401;
  const names = ["X-Request-Id", ...(limited ? RATE_LIMIT_HEADERS : []), ...extra];
  return Object.fromEntries([...new Set(names)].map((n) => [n, ref("headers", n)]));
}

function successResponse(route: RouteDoc, r: ResponseDoc): OpenApiResponse {
  const response: OpenApiResponse = { description: r.description, headers: responseHeaders(route, r.status, r.headers) };
  if (!r.schema) return response;
  const example = schemaExample(r.schema);
  if (r.contentType === "application/x-ndjson") {
    response.content = {
      "application/x-ndjson": {
        schema: { type: "string", description: `JSON Lines: one \`${r.schema}\` object per line` },
        example: `${JSON.stringify(example)}\n`,
        "x-item-schema": ref("schemas", r.schema),
      },
    };
  } else {
    response.content = { "application/json": { schema: ref("schemas", r.schema), example } };
  }
  for (const alt of r.alternatives ?? [])
    response.content[alt.contentType] = { schema: { type: "string", description: alt.description }, example: alt.example };
  return response;
}

function operationOf(route: RouteDoc): OpenApiOperation {
  const parameters: JsonSchema[] = [];
  for (const p of route.pathParams ?? []) {
    parameters.push({
      name: p.name,
      in: "path",
      required: true,
      description: p.description,
      schema: jsonSchemaOf(pathId(p.prefix), "input"),
      example: p.example,
    });
  }
  if (route.query) {
    const query = jsonSchemaOf(route.query, "input");
    const required = new Set((query.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((query.properties as Record<string, JsonSchema> | undefined) ?? {})) {
      parameters.push({ name, in: "query", required: required.has(name), schema });
    }
  }
  if (route.idempotencyKey) parameters.push(ref("parameters", "Idempotency-Key"));
  parameters.push(ref("parameters", "X-Request-Id"));

  const responses: Record<string, OpenApiResponse> = {};
  for (const r of route.responses) responses[String(r.status)] = successResponse(route, r);
  const byStatus = new Map<number, ErrorKind[]>();
  for (const kind of errorKindsOf(route)) {
    const status = ERRORS[kind].status;
    if (route.responses.some((r) => r.status === status)) continue;
    byStatus.set(status, [...(byStatus.get(status) ?? []), kind]);
  }
  for (const [status, kinds] of [...byStatus].sort(([a], [b]) => a - b)) {
    const extra = status === 429 || status === 503 ? ["Retry-After"] : [];
    responses[String(status)] = {
      description: kinds.map((k) => `\`${ERRORS[k].message}\``).join(", "),
      headers: responseHeaders(route, status, extra),
      content: {
        "application/json": {
          schema: ref("schemas", "Error"),
          examples: Object.fromEntries(kinds.map((k) => [k, { summary: ERRORS[k].message, value: errorExample(k) }])),
        },
      },
    };
  }

  const security = { none: [], customer: [{ customerKey: [] }], labeler: [{ labelerKey: [] }], admin: [{ adminToken: [] }] }[route.auth];
  const operation: OpenApiOperation = {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    security,
    parameters,
    responses,
  };
  if (route.body) {
    const { schema, required = true, limit = JSON_LIMIT } = route.body;
    operation.requestBody = {
      description: `${REQUEST_DESCRIPTIONS[schema]} At most ${limit}.${required ? "" : " May be omitted (counts as `{}`)."}`,
      required,
      content: { "application/json": { schema: ref("schemas", schema), examples: route.body.examples } },
    };
  }
  return operation;
}

const DESCRIPTION = `labelgate: customers submit labeling tasks, labelers label them, consensus settles each task on a
hash-chained ledger, and the customer is told by polling, by a signed webhook or in a manifest job's export.

**Authentication**: \`Authorization: Bearer <secret>\`. Customer routes take an API key (\`sk_sandbox_…\` or
\`sk_live_…\`), labeler routes a labeler key (\`lk_…\`), operator routes (\`/v1/admin/*\`) the \`ADMIN_TOKEN\`.
Missing or wrong credentials: 401 \`invalid API key\`.

**Errors**: \`{"error": "<message>"}\`, one fixed message per error kind; validation failures (400) add
\`details: [{path, message}]\`; 5xx add \`request_id\`.

**Headers**: every response carries \`X-Request-Id\` (a valid incoming one is echoed). Customer routes spend one
unit of the key's rate-limit budget and answer \`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\`;
a 429 or 503 adds \`Retry-After\` (seconds). Task submissions take an \`Idempotency-Key\` header (or the
\`idempotency_key\` body field; the header wins); so do claims (the header), which makes a claim retry-safe.`;

const HEADER_COMPONENTS: Record<string, JsonSchema> = {
  "X-Request-Id": { description: "Id of the request (logged; quoted in 5xx bodies).", required: true, schema: { type: "string" } },
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 1 } },
  "Labelgate-Idle-Reason": {
    description: "Why a claim found nothing for this labeler: `failed_qualification` (contract §qualification).",
    schema: { type: "string", enum: ["failed_qualification"] },
  },
  "RateLimit-Limit": { description: "Requests per window of the key's tier.", schema: { type: "integer", minimum: 0 } },
  "RateLimit-Remaining": { description: "Requests left in the window.", schema: { type: "integer", minimum: 0 } },
  "RateLimit-Reset": { description: "Seconds until the window resets.", schema: { type: "integer", minimum: 0 } },
  "Content-Disposition": { description: '`attachment; filename="<job_id>.jsonl"`', schema: { type: "string" } },
};

/**
 * Builds the OpenAPI 3.1 document from ROUTES and the zod schemas. Pure and deterministic.
 * @throws Error when a request and a response component share a name.
 */
export function buildOpenApiDocument(): OpenApiDocument {
  const requests = componentsOf(REQUEST_SCHEMAS, "input", REQUEST_DESCRIPTIONS);
  const responses = componentsOf(RESPONSE_SCHEMAS, "output");
  for (const name of Object.keys(requests)) if (name in responses) throw new Error(`schema name ${name} is both a request and a response`);
  const paths: OpenApiDocument["paths"] = {};
  for (const route of ROUTES) {
    const item = paths[route.path] ?? {};
    item[route.method] = operationOf(route);
    paths[route.path] = item;
  }
  return {
    openapi: "3.1.0",
    info: { title: "labelgate API", version: "1.0.0", description: DESCRIPTION },
    servers: [{ url: "/", description: "this gateway" }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: { ...requests, ...responses },
      securitySchemes: {
        customerKey: {
          type: "http",
          scheme: "bearer",
          description: "A customer API key: `sk_sandbox_…` (sandbox) or `sk_live_…` (production).",
        },
        labelerKey: { type: "http", scheme: "bearer", description: "A labeler key: `lk_…` (issued by POST /v1/admin/labelers)." },
        adminToken: { type: "http", scheme: "bearer", description: "The operators' `ADMIN_TOKEN`." },
      },
      parameters: {
        "Idempotency-Key": {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description:
            "Task submissions: idempotent per customer (wins over the body's `idempotency_key`). Claims: the same labeler and key return the same live claim.",
          schema: jsonSchemaOf(idempotencyKey, "input"),
          example: "order-1001",
        },
        "X-Request-Id": {
          name: "X-Request-Id",
          in: "header",
          required: false,
          description: "Echoed in the response's `X-Request-Id` when it matches `^[A-Za-z0-9._:-]{1,128}$`; otherwise a UUID is assigned.",
          schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
        },
      },
      headers: HEADER_COMPONENTS,
    },
  };
}
