/**
 * docs/api.md, rendered from the route catalog (operations.ts, routes.ts) and the OpenAPI document generated from it
 * (openapi.ts): an index of every operation by tag, then each operation with its credential, description,
 * parameters, request body (component and examples), responses with their examples, and the errors it can
 * answer (status and fixed message). Pure and deterministic: `pnpm docs:api` writes it
 * (scripts/docs-api.ts), test/api-catalog.test.ts fails when the checked-in file differs.
 */
import { ERRORS } from "./errors";
import { buildOpenApiDocument, errorKindsOf, type JsonSchema, schemaExample } from "./openapi";
import { REQUEST_DESCRIPTIONS, ROUTES, type RouteDoc, TAGS } from "./routes";

const AUTH_TEXT: Record<RouteDoc["auth"], string> = {
  none: "none",
  customer: "customer API key (`sk_sandbox_…` / `sk_live_…`)",
  labeler: "labeler key (`lk_…`)",
  admin: "`ADMIN_TOKEN`",
};

const SHORT_AUTH: Record<RouteDoc["auth"], string> = { none: "—", customer: "customer", labeler: "labeler", admin: "admin" };

/** `#post-v1tasksid`-style anchor of an operation heading (GitHub's slug of `POST /v1/tasks/{id}`). */
function anchor(route: RouteDoc): string {
  return `${route.method} ${route.path}`
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, "")
    .replace(/ /g, "-");
}

function json(value: unknown): string {
  return ["```json", JSON.stringify(value, null, 2), "```"].join("\n");
}

/** A table cell: pipes escaped, newlines folded. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

function operationSection(route: RouteDoc, parameters: JsonSchema[]): string[] {
  const out: string[] = [`### ${route.method.toUpperCase()} ${route.path}`, "", `**${route.summary}** (\`${route.operationId}\`)`, ""];
  out.push(`Auth: ${AUTH_TEXT[route.auth]}.`, "");
  if (route.description) out.push(route.description, "");
  const params = parameters.filter((p) => typeof p.name === "string");
  if (params.length > 0 || route.idempotencyKey) {
    out.push("| parameter | in | required | schema |", "|---|---|---|---|");
    for (const p of params) {
      out.push(`| \`${String(p.name)}\` | ${String(p.in)} | ${p.required ? "yes" : "no"} | \`${cell(JSON.stringify(p.schema))}\` |`);
    }
    if (route.idempotencyKey) out.push("| `Idempotency-Key` | header | no | 1..255 printable ASCII, no spaces |");
    out.push("");
  }
  if (route.body) {
    const { schema, required = true, limit = "1 MB" } = route.body;
    out.push(`Request body: \`${schema}\`, at most ${limit}${required ? "" : ", may be omitted (counts as `{}`)"}.`, "");
    out.push(REQUEST_DESCRIPTIONS[schema], "");
    for (const [name, example] of Object.entries(route.body.examples)) {
      out.push(`Example \`${name}\`: ${example.summary}`, "", json(example.value), "");
    }
  }
  out.push("| status | answer |", "|---|---|");
  for (const r of route.responses) {
    const body = r.schema ? ` \`${r.schema}\`${r.contentType === "application/x-ndjson" ? " per line (JSON Lines)" : ""}` : "";
    const alternatives = (r.alternatives ?? []).map((a) => `; \`${a.contentType}\`: ${a.description}`).join("");
    out.push(`| ${r.status} | ${cell(r.description)}${body}${cell(alternatives)} |`);
  }
  const errors = errorKindsOf(route).filter((k) => !route.responses.some((r) => r.status === ERRORS[k].status));
  for (const kind of [...errors].sort((a, b) => ERRORS[a].status - ERRORS[b].status)) {
    out.push(`| ${ERRORS[kind].status} | \`${ERRORS[kind].message}\` |`);
  }
  out.push("");
  for (const r of route.responses) {
    if (!r.schema) continue;
    out.push(`Example ${r.status}:`, "", json(schemaExample(r.schema)), "");
  }
  return out;
}

/** The whole of docs/api.md. */
export function renderApiMarkdown(): string {
  const doc = buildOpenApiDocument();
  const out: string[] = [
    "# labelgate HTTP API",
    "",
    "<!-- Generated from the route catalog (packages/api/src/operations.ts) by `pnpm docs:api`; do not edit. -->",
    "",
    "A running gateway serves the same contract as an OpenAPI 3.1 document at `GET /v1/openapi.json` and as a",
    "rendered reference at `/docs/`.",
    "",
    doc.info.description,
    "",
    "## Operations",
    "",
    "| method | path | auth | summary |",
    "|---|---|---|---|",
  ];
  for (const route of ROUTES) {
    out.push(
      `| ${route.method.toUpperCase()} | [\`${route.path}\`](#${anchor(route)}) | ${SHORT_AUTH[route.auth]} | ${cell(route.summary)} |`,
    );
  }
  out.push("");
  for (const [tag, description] of Object.entries(TAGS)) {
    out.push(`## ${tag}`, "", description, "");
    for (const route of ROUTES.filter((r) => r.tag === tag)) {
      const parameters = doc.paths[route.path]?.[route.method]?.parameters ?? [];
      out.push(...operationSection(route, parameters));
    }
  }
  return `${out.join("\n").trimEnd()}\n`;
}
