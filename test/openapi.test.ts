/**
 * The OpenAPI document (services/gateway/src/openapi.ts) is valid OpenAPI 3.1, covers exactly the routes the
 * express app registers, its examples validate against their schemas (the generated JSON Schema with ajv,
 * and the zod schema itself), and the responses of a running system validate against the schema documented
 * for their status. `/docs/` serves the reference page and its assets.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { pathId, RESPONSE_SCHEMAS } from "@labelgate/api";
import {
  buildOpenApiDocument,
  jsonSchemaOf,
  type Method,
  type OpenApiDocument,
  type OpenApiMediaType,
  type OpenApiOperation,
  pathParamsOf,
  REQUEST_SCHEMAS,
  ROUTES,
  UNDOCUMENTED_MOUNTS,
} from "@labelgate/gateway/openapi";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { serveManifest } from "../services/manifest-worker/test/helpers";
import { registeredRoutes } from "./routes";
import { ADMIN_TOKEN, eventually, type System, settledResult, startSystem } from "./system";
import { receivers } from "./webhooks";

const run = promisify(execFile);
const doc: OpenApiDocument = buildOpenApiDocument();

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
ajv.addKeyword("components");
ajv.addSchema({ components: doc.components }, "openapi.json");

/** The ajv validator of a component schema. */
function component(name: string): ValidateFunction {
  const validate = ajv.getSchema(`openapi.json#/components/schemas/${name}`);
  if (!validate) throw new Error(`no component schema ${name}`);
  return validate;
}

/** The component a `{$ref}` schema points to. */
function refName(schema: unknown): string {
  const ref = (schema as { $ref?: unknown }).$ref;
  if (typeof ref !== "string" || !ref.startsWith("#/components/schemas/"))
    throw new Error(`not a component $ref: ${JSON.stringify(schema)}`);
  return ref.slice("#/components/schemas/".length);
}

/** Validates `value` against a component with ajv AND with the zod schema it was generated from. */
function expectValid(name: string, value: unknown, what: string): void {
  const validate = component(name);
  if (!validate(value))
    throw new Error(`${what}: not a valid ${name} (JSON Schema): ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`);
  const zodSchema =
    (RESPONSE_SCHEMAS as Record<string, (typeof RESPONSE_SCHEMAS)[keyof typeof RESPONSE_SCHEMAS]>)[name] ??
    (REQUEST_SCHEMAS as Record<string, (typeof REQUEST_SCHEMAS)[keyof typeof REQUEST_SCHEMAS]>)[name];
  if (!zodSchema) throw new Error(`no zod schema named ${name}`);
  const parsed = zodSchema.safeParse(value);
  if (!parsed.success) throw new Error(`${what}: not a valid ${name} (zod): ${parsed.error.message}\n${JSON.stringify(value)}`);
}

function operations(): { method: Method; path: string; op: OpenApiOperation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method: method as Method, path, op })),
  );
}

// --- the routes the app registers -----------------------------------------------------------------

const underUndocumentedMount = (path: string) => Object.keys(UNDOCUMENTED_MOUNTS).some((m) => path === m || path.startsWith(`${m}/`));

// --- the running system ---------------------------------------------------------------------------

let sys: System;
const hooks = receivers();
/** `METHOD /path STATUS` of every response checked against the document */
const seen = new Set<string>();

beforeAll(async () => {
  // a database of its own: no other test file's generic claim can take a slot of these tasks
  sys = await startSystem();
});
afterAll(async () => {
  await hooks.closeAll();
  await sys.close();
});

interface CallOptions {
  params?: Record<string, string>;
  query?: string;
  token?: string;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}

/**
 * Calls a documented operation and checks the response against the document: its status is documented,
 * required headers are present, and its body validates against the schema of that status (ajv and zod).
 */
async function call<T = Record<string, unknown>>(method: Method, template: string, o: CallOptions = {}) {
  const op = doc.paths[template]?.[method];
  if (!op) throw new Error(`${method.toUpperCase()} ${template} is not documented`);
  const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = o.params?.[name];
    if (value === undefined) throw new Error(`no value for {${name}}`);
    return encodeURIComponent(value);
  });
  const res = await sys.api<T>(method.toUpperCase(), path + (o.query ?? ""), {
    token: o.token,
    body: o.body,
    raw: o.raw,
    headers: o.headers,
  });
  const what = `${method.toUpperCase()} ${template} ${res.status}`;
  const response = op.responses[String(res.status)];
  if (!response) throw new Error(`${what} is not documented: ${JSON.stringify(res.body)}`);
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const required = (doc.components.headers[name] ?? header).required === true;
    if (required && !res.headers.get(name)) throw new Error(`${what}: documented header ${name} is missing`);
  }
  const media = response.content?.["application/json"];
  if (!response.content) {
    expect(res.body).toBeNull();
  } else {
    if (!media) throw new Error(`${what}: no application/json schema`);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expectValid(refName(media.schema), res.body, what);
  }
  seen.add(`${method} ${template} ${res.status}`);
  return res;
}

// --- tests ------------------------------------------------------------------------------------------

describe("OpenAPI document", () => {
  it("is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator)", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const dir = await mkdtemp(join(tmpdir(), "lg-openapi-"));
    try {
      const file = join(dir, "openapi.json");
      await writeFile(file, JSON.stringify(doc));
      // The validator is ESM only (jest runs CommonJS): its own CLI runs it in a child process.
      const cli = join(__dirname, "..", "node_modules", "@seriousme", "openapi-schema-validator", "bin", "validate-api-cli.js");
      const { stdout } = await run(process.execPath, [cli, file]).catch((err: { stdout?: string }) => {
        throw new Error(`invalid OpenAPI document: ${err.stdout ?? String(err)}`);
      });
      expect(JSON.parse(stdout)).toEqual({ valid: true });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("documents every route the app registers, and nothing else (coverage)", () => {
    const registered = registeredRoutes(sys.app);
    const routes = new Set(registered.routes.map((r) => `${r.method} ${r.path}`));
    const mounts = registered.mounts;
    const api = [...routes].filter((r) => !underUndocumentedMount(r.split(" ")[1] ?? ""));
    const documented = operations().map(({ method, path }) => `${method} ${path}`);
    // Sanity: the walk found the routers' routes (mounted under /v1/...).
    expect(api).toEqual(
      expect.arrayContaining(["get /v1/health", "post /v1/webhooks", "get /v1/jobs/{id}/export", "patch /v1/admin/customers/{id}"]),
    );
    expect(api.filter((r) => !documented.includes(r))).toEqual([]); // a route without a schema
    expect(documented.filter((r) => !routes.has(r))).toEqual([]); // a documented route the app does not have
    // Anything outside the API must be declared as such.
    expect(api.filter((r) => !(r.split(" ")[1] ?? "").startsWith("/v1/"))).toEqual([]);
    expect([...mounts].filter((m) => !underUndocumentedMount(m))).toEqual([]);
    expect(routes.has("get /docs")).toBe(true);
  });

  it("gives every operation an id, a success response with a schema, and the errors of its auth", () => {
    const ids = new Set<string>();
    for (const { method, path, op } of operations()) {
      const what = `${method.toUpperCase()} ${path}`;
      expect(ids.has(op.operationId)).toBe(false);
      ids.add(op.operationId);
      const statuses = Object.keys(op.responses);
      const success = statuses.filter((s) => s.startsWith("2"));
      expect({ what, success: success.length > 0 }).toEqual({ what, success: true });
      for (const s of success) {
        const r = op.responses[s];
        if (s !== "204") expect({ what, s, content: Object.keys(r?.content ?? {}).length > 0 }).toEqual({ what, s, content: true });
      }
      for (const s of statuses.filter((x) => !x.startsWith("2"))) {
        expect({ what, s, schema: errorSchemaOf(op, s) }).toEqual({
          what,
          s,
          schema: expect.stringMatching(/^(Error|HealthUnavailable)$/),
        });
      }
      const secured = op.security.length > 0;
      expect({ what, has401: statuses.includes("401") }).toEqual({ what, has401: secured });
      for (const p of op.parameters) if (p.in === "path") expect(path).toContain(`{${String(p.name)}}`);
      expect(statuses).toEqual(expect.arrayContaining(path === "/v1/openapi.json" ? ["500"] : ["500", "503"]));
    }
  });

  it("documents the task body and the answer as oneOf by task type (contract §task-types)", () => {
    const schemas = (doc.components as { schemas: Record<string, { oneOf?: { properties: Record<string, { const?: string }> }[] }> })
      .schemas;
    const task = schemas.TaskInput?.oneOf ?? [];
    expect(task.map((b) => b.properties.type?.const)).toEqual([
      undefined,
      "multi_label_classification",
      "bounding_box",
      "text_span",
      "free_text",
      "pairwise_comparison",
    ]);
    expect(task.map((b) => Object.keys(b.properties).filter((k) => k.startsWith("gold_")))).toEqual([
      // every type's gold task may carry the explanation shown in qualification training (contract §qualification)
      ["gold_explanation", "gold_label"],
      ["gold_explanation", "gold_answer"],
      ["gold_explanation", "gold_answer"],
      ["gold_explanation", "gold_answer"],
      ["gold_explanation", "gold_answer"],
      ["gold_explanation", "gold_answer"],
    ]);
    expect((schemas.LabelInput?.oneOf ?? []).map((b) => Object.keys(b.properties))).toEqual([
      ["label"],
      ["labels"],
      ["boxes"],
      ["spans"],
      ["text"],
      ["winner"],
    ]);
  });

  it("derives path parameters from the path, by resource or by name, and refuses an unknown one", () => {
    const params = pathParamsOf("/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver");
    expect(params.map((p) => [p.name, p.prefix])).toEqual([
      ["id", "whk_"],
      ["deliveryId", "dlv_"],
    ]);
    expect(pathParamsOf("/v1/admin/customers/{id}").map((p) => p.prefix)).toEqual(["cust_"]);
    expect(pathParamsOf("/v1/health")).toEqual([]);
    expect(() => pathParamsOf("/v1/things/{id}")).toThrow("no path parameter doc for {id} in /v1/things/{id}");
  });

  it("has examples that validate against their schemas (JSON Schema with ajv, and the zod schema)", () => {
    let checked = 0;
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      for (const example of (schema.examples as unknown[] | undefined) ?? []) {
        expectValid(name, example, `example of ${name}`);
        checked++;
      }
    }
    // every response schema has its example
    for (const name of Object.keys(RESPONSE_SCHEMAS))
      expect({ name, examples: doc.components.schemas[name]?.examples }).toEqual({ name, examples: [expect.anything()] });
    for (const { method, path, op } of operations()) {
      const what = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters) {
        if (p.in !== "path") continue;
        const route = ROUTES.find((r) => r.method === method && r.path === path);
        const param = route?.pathParams?.find((x) => x.name === p.name);
        expect(param).toBeDefined();
        expect(pathId(param?.prefix ?? "").safeParse(p.example).success).toBe(true);
        expect(ajv.validate(jsonSchemaOf(pathId(param?.prefix ?? ""), "input"), p.example)).toBe(true);
        checked++;
      }
      const body = op.requestBody?.content["application/json"];
      if (body) {
        expect(Object.keys(body.examples ?? {}).length).toBeGreaterThan(0);
        for (const [k, ex] of Object.entries(body.examples ?? {})) {
          expectValid(refName(body.schema), ex.value, `${what} request example ${k}`);
          checked++;
        }
      }
      for (const [status, response] of Object.entries(op.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          checked += checkMediaExamples(media, type, `${what} ${status}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(150);
  });
});

function errorSchemaOf(op: OpenApiOperation, status: string): string {
  const media = op.responses[status]?.content?.["application/json"];
  return media ? refName(media.schema) : "none";
}

/** Validates the `example` and `examples` of a media type; JSON Lines examples line by line. Returns the count. */
function checkMediaExamples(media: OpenApiMediaType, type: string, what: string): number {
  const values = [...(media.example !== undefined ? [media.example] : []), ...Object.values(media.examples ?? {}).map((e) => e.value)];
  expect({ what, examples: values.length > 0 }).toEqual({ what, examples: true });
  for (const value of values) {
    if (!("$ref" in (media.schema ?? {}))) {
      // an export's other formats (format=label-studio, coco, conll): a text body, JSON for application/json
      expect({ what, schema: media.schema, example: typeof value }).toMatchObject({ what, schema: { type: "string" }, example: "string" });
      if (type === "application/json") expect(() => JSON.parse(String(value))).not.toThrow();
    } else if (type === "application/x-ndjson") {
      const item = refName(media["x-item-schema"]);
      const lines = String(value).split("\n").filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expectValid(item, JSON.parse(line), `${what} example line`);
    } else {
      expectValid(refName(media.schema), value, `${what} example`);
    }
  }
  return values.length;
}

describe("responses of a running system match the document", () => {
  const state: Record<string, string> = {};
  const email = `openapi-${Date.now()}@example.com`;
  const task = {
    type: "image_classification",
    data_url: "https://images.example/1.jpg",
    label_spec: { question: "Which?", options: ["cat", "dog"] },
  };

  it("customers, admin and labelers", async () => {
    expect((await call("get", "/v1/health")).status).toBe(200);
    const openapi = await call("get", "/v1/openapi.json");
    expect(openapi.body).toEqual(JSON.parse(JSON.stringify(doc)));

    const reg = await call<{ customer_id: string; api_key: string }>("post", "/v1/customers", { body: { name: "OpenAPI Co", email } });
    expect(reg.status).toBe(201);
    state.customer = reg.body.customer_id;
    state.key = reg.body.api_key;
    expect((await call("post", "/v1/customers", { body: { name: "Again", email } })).status).toBe(409);
    expect((await call("post", "/v1/customers", { body: { name: "" } })).status).toBe(400);
    expect((await call("post", "/v1/customers", { raw: "{not json" })).status).toBe(400);
    expect((await call("post", "/v1/customers", { raw: JSON.stringify({ name: "x".repeat(1_100_000) }) })).status).toBe(413);
    expect((await call("get", "/v1/customers/me", { token: state.key })).status).toBe(200);
    expect((await call("get", "/v1/customers/me", { token: "sk_sandbox_nope" })).status).toBe(401);

    const admin = ADMIN_TOKEN;
    expect(
      (await call("patch", "/v1/admin/customers/{id}", { params: { id: state.customer }, token: admin, body: { label_quota: 1000 } }))
        .status,
    ).toBe(200);
    expect(
      (await call("patch", "/v1/admin/customers/{id}", { params: { id: "cust_missing" }, token: admin, body: { label_quota: 1 } })).status,
    ).toBe(404);
    expect((await call("get", "/v1/admin/customers", { token: admin, query: "?per_page=5" })).status).toBe(200);
    expect((await call("get", "/v1/admin/customers", { token: "wrong-token" })).status).toBe(401);
    // the parked follow-ups (none here) and their retry, checked against the document like every response
    expect((await call("get", "/v1/admin/follow-ups", { token: admin, query: "?limit=10" })).status).toBe(200);
    expect((await call("post", "/v1/admin/follow-ups/retry", { token: admin, body: { ids: ["1"] } })).status).toBe(200);
    expect((await call("post", "/v1/admin/follow-ups/retry", { token: admin, body: { ids: "1" } })).status).toBe(400);
    const labeler = await call<{ api_key: string }>("post", "/v1/admin/labelers", { token: admin, body: { name: "openapi labeler" } });
    expect(labeler.status).toBe(201);
    state.labeler = labeler.body.api_key;

    const other = await call<{ customer_id: string; api_key: string }>("post", "/v1/customers", {
      body: { name: "Upgraded Co", email: `up-${email}` },
    });
    const up = await call("post", "/v1/admin/customers/{id}/upgrade", { params: { id: other.body.customer_id }, token: admin, body: {} });
    expect(up.status).toBe(200);
    expect((await call("post", "/v1/admin/customers/{id}/upgrade", { params: { id: other.body.customer_id }, token: admin })).status).toBe(
      409,
    );
    const broke = await call<{ customer_id: string; api_key: string }>("post", "/v1/customers", {
      body: { name: "No Quota Co", email: `zero-${email}` },
    });
    await call("patch", "/v1/admin/customers/{id}", { params: { id: broke.body.customer_id }, token: admin, body: { label_quota: 0 } });
    expect((await call("post", "/v1/tasks", { token: broke.body.api_key, body: task })).status).toBe(403);
  });

  it("tasks, labeling, results, webhooks and deliveries", async () => {
    const key = state.key as string;
    const rx = await hooks.rx();
    const hook = await call<{ webhook_id: string }>("post", "/v1/webhooks", {
      token: key,
      body: { callback_url: rx.url, secret: "openapi-secret-0123456789" },
    });
    expect(hook.status).toBe(201);
    expect(
      (await call("post", "/v1/webhooks", { token: key, body: { callback_url: rx.url, secret: "openapi-secret-0123456789" } })).status,
    ).toBe(409);
    expect((await call("post", "/v1/webhooks", { token: key, body: { callback_url: rx.url, secret: "short" } })).status).toBe(400);

    const created = await call<{ task_id: string }>("post", "/v1/tasks", {
      token: key,
      body: { ...task, consensus_threshold: 1, metadata: { n: 1 } },
      headers: { "Idempotency-Key": "openapi-1" },
    });
    expect(created.status).toBe(202);
    const taskId = created.body.task_id;
    expect((await call("post", "/v1/tasks", { token: key, body: task, headers: { "Idempotency-Key": "openapi-1" } })).status).toBe(422);
    expect(
      (await call("post", "/v1/tasks", { token: key, body: { ...task, label_spec: { question: "?", options: ["one"] } } })).status,
    ).toBe(400);
    expect((await call("get", "/v1/tasks/{id}", { params: { id: taskId }, token: key })).status).toBe(200);
    expect((await call("get", "/v1/tasks/{id}", { params: { id: taskId } })).status).toBe(401);
    expect((await call("get", "/v1/tasks/{id}", { params: { id: "tsk_doesnotexist" }, token: key })).status).toBe(404);
    expect((await call("get", "/v1/tasks/{id}/result", { params: { id: taskId }, token: key })).status).toBe(202);

    // a claim released (skip): 204, its slot free again; an unknown claim: 404
    const skipped = await call<{ claim_id: string }>("post", "/v1/labeling/claims", { token: state.labeler, body: { task_id: taskId } });
    expect(skipped.status).toBe(201);
    const release = { params: { claimId: skipped.body.claim_id }, token: state.labeler };
    expect((await call("delete", "/v1/labeling/claims/{claimId}", release)).status).toBe(204);
    expect((await call("delete", "/v1/labeling/claims/{claimId}", { ...release, params: { claimId: "clm_missing" } })).status).toBe(404);
    const claim = await call<{ claim_id: string }>("post", "/v1/labeling/claims", { token: state.labeler, body: { task_id: taskId } });
    expect(claim.status).toBe(201);
    expect(
      (
        await call("post", "/v1/labeling/claims/{claimId}/label", {
          params: { claimId: claim.body.claim_id },
          token: state.labeler,
          body: { label: "bird" },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call("post", "/v1/labeling/claims/{claimId}/label", {
          params: { claimId: claim.body.claim_id },
          token: state.labeler,
          body: { label: "cat" },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await call("post", "/v1/labeling/claims/{claimId}/label", {
          params: { claimId: claim.body.claim_id },
          token: state.labeler,
          body: { label: "cat" },
        })
      ).status,
    ).toBe(409);
    expect(
      (await call("delete", "/v1/labeling/claims/{claimId}", { params: { claimId: claim.body.claim_id }, token: state.labeler })).status,
    ).toBe(409);
    expect(
      (
        await call("post", "/v1/labeling/claims/{claimId}/label", {
          params: { claimId: "clm_missing" },
          token: state.labeler,
          body: { label: "cat" },
        })
      ).status,
    ).toBe(404);
    expect((await call("post", "/v1/labeling/claims", { token: key, body: {} })).status).toBe(401);
    // a label space's instructions: 200 once a task gave them, 404 for a space without
    const guided = await call<{ task_id: string }>("post", "/v1/tasks", {
      token: key,
      body: { ...task, label_spec: { ...task.label_spec, instructions: "Answer **cat** for kittens." } },
    });
    expect(guided.status).toBe(202);
    const guidedClaim = await call<{ claim_id: string; label_space: string }>("post", "/v1/labeling/claims", {
      token: state.labeler,
      body: { task_id: guided.body.task_id },
    });
    expect(guidedClaim.status).toBe(201);
    const space = { params: { id: guidedClaim.body.label_space }, token: state.labeler };
    expect((await call("get", "/v1/labeling/spaces/{id}/instructions", space)).status).toBe(200);
    expect((await call("get", "/v1/labeling/spaces/{id}/instructions", { ...space, params: { id: "lsp_none" } })).status).toBe(404);
    await settledResult(sys, key, taskId);
    expect((await call("get", "/v1/tasks/{id}/result", { params: { id: taskId }, token: key })).status).toBe(200);
    expect((await call("get", "/v1/tasks/{id}", { params: { id: taskId }, token: key })).status).toBe(200);
    expect((await call("post", "/v1/tasks/{id}/cancel", { params: { id: taskId }, token: key })).status).toBe(409);
    // a review of the settled result (docs/decisions/0260), the audit queue (0262)
    expect((await call("post", "/v1/tasks/{id}/review", { params: { id: taskId }, token: key, body: { verdict: "accept" } })).status).toBe(
      200,
    );
    expect((await call("post", "/v1/tasks/{id}/review", { params: { id: taskId }, token: key, body: { verdict: "no" } })).status).toBe(400);
    expect((await call("get", "/v1/audits", { token: key, query: "?status=done" })).status).toBe(200);
    expect((await call("get", "/v1/audits", { token: key, query: "?status=closed" })).status).toBe(400);
    // a settled task is no longer claimable: 204; an unknown one: 404
    expect((await call("post", "/v1/labeling/claims", { token: state.labeler, body: { task_id: taskId } })).status).toBe(204);
    expect((await call("post", "/v1/labeling/claims", { token: state.labeler, body: { task_id: "tsk_missing" } })).status).toBe(404);

    const webhookId = hook.body.webhook_id;
    const delivered = await eventually(
      async () => {
        const page = await call<{ items: { delivery_id: string; task_id: string; status: string }[] }>(
          "get",
          "/v1/webhooks/{id}/deliveries",
          {
            params: { id: webhookId },
            token: key,
            query: "?status=delivered&per_page=100",
          },
        );
        return page.body.items.find((d) => d.task_id === taskId);
      },
      20_000,
      "the delivery of the settled task",
    );
    expect(
      (await call("get", "/v1/webhooks/{id}/deliveries", { params: { id: webhookId }, token: key, query: "?per_page=0" })).status,
    ).toBe(400);
    expect((await call("get", "/v1/webhooks/{id}/deliveries", { params: { id: "whk_missing" }, token: key })).status).toBe(404);
    const redeliver = { params: { id: webhookId, deliveryId: delivered.delivery_id }, token: key };
    expect((await call("post", "/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver", redeliver)).status).toBe(202);
    expect(
      (
        await call("post", "/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver", {
          ...redeliver,
          params: { id: webhookId, deliveryId: "dlv_missing" },
        })
      ).status,
    ).toBe(404);
    expect((await call("get", "/v1/webhooks", { token: key })).status).toBe(200);
    const events = { params: { id: webhookId }, token: key, body: { events: ["task.settled", "job.completed"] } };
    expect((await call("patch", "/v1/webhooks/{id}", events)).status).toBe(200);
    expect((await call("patch", "/v1/webhooks/{id}", { ...events, body: { events: ["task.expired"] } })).status).toBe(400);
    expect((await call("patch", "/v1/webhooks/{id}", { ...events, params: { id: "whk_missing" } })).status).toBe(404);
    expect((await call("delete", "/v1/webhooks/{id}", { params: { id: webhookId }, token: key })).status).toBe(200);
    expect((await call("patch", "/v1/webhooks/{id}", events)).status).toBe(409);
    expect((await call("delete", "/v1/webhooks/{id}", { params: { id: "whk_missing" }, token: key })).status).toBe(404);
    expect((await call("post", "/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver", redeliver)).status).toBe(409);
    expect((await call("get", "/v1/webhooks", { token: key })).status).toBe(200);

    const batch = await call<{ batch_id: string; task_ids: string[] }>("post", "/v1/tasks/batch", {
      token: key,
      body: { tasks: [task, task] },
    });
    expect(batch.status).toBe(202);
    expect((await call("post", "/v1/tasks/batch", { token: key, body: { tasks: [task, { ...task, data_url: "ftp://x" }] } })).status).toBe(
      400,
    );
    expect((await call("get", "/v1/batches/{id}", { params: { id: batch.body.batch_id }, token: key })).status).toBe(200);
    expect((await call("get", "/v1/batches/{id}", { params: { id: "bat_missing" }, token: key })).status).toBe(404);
    // a batch without pairwise tasks ranks nothing
    expect((await call("get", "/v1/batches/{id}/ranking", { params: { id: batch.body.batch_id }, token: key })).status).toBe(200);
    expect((await call("get", "/v1/batches", { token: key })).status).toBe(200);
    expect((await call("get", "/v1/batches", { token: key, query: "?page=2&per_page=1" })).status).toBe(200);
    // the batch's export: 409 until completed, 400 for a format that does not fit, then one ExportLine per task
    const batchExport = { params: { id: batch.body.batch_id }, token: key };
    expect((await call("get", "/v1/batches/{id}/export", batchExport)).status).toBe(409);
    for (const id of batch.body.task_ids)
      expect((await call("post", "/v1/tasks/{id}/cancel", { params: { id }, token: key })).status).toBe(200);
    expect((await call("get", "/v1/batches/{id}/export", { ...batchExport, query: "?format=coco" })).status).toBe(400);
    const batchLines = await fetch(`${sys.baseUrl}/v1/batches/${batch.body.batch_id}/export`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect([batchLines.status, batchLines.headers.get("content-type")]).toEqual([200, "application/x-ndjson; charset=utf-8"]);
    const batchMedia = doc.paths["/v1/batches/{id}/export"]?.get?.responses["200"]?.content?.["application/x-ndjson"];
    const exportedLines = (await batchLines.text()).split("\n").filter(Boolean);
    expect(exportedLines).toHaveLength(2);
    for (const line of exportedLines) expectValid(refName(batchMedia?.["x-item-schema"]), JSON.parse(line), "batch export line");
    seen.add("get /v1/batches/{id}/export 200");
    expect((await call("get", "/v1/batches", { token: key, query: "?per_page=0" })).status).toBe(400);
    const first = batch.body.task_ids[0] as string;
    expect((await call("post", "/v1/tasks/{id}/cancel", { params: { id: first }, token: key })).status).toBe(200);
    expect((await call("get", "/v1/tasks/{id}/result", { params: { id: first }, token: key })).status).toBe(409);
    expect((await call("post", "/v1/tasks/{id}/cancel", { params: { id: "tsk_missing" }, token: key })).status).toBe(404);
  });

  it("manifest jobs, their export, billing and the dashboard", async () => {
    const key = state.key as string;
    const manifest = await serveManifest(`${JSON.stringify({ data_url: "https://images.example/m1.jpg", item: 1 })}\n`);
    try {
      const job = await call<{ job_id: string }>("post", "/v1/jobs", {
        token: key,
        body: { manifest_url: manifest.url(), label_spec: { question: "Which?", options: ["cat", "dog"] }, consensus_threshold: 1 },
      });
      expect(job.status).toBe(202);
      const jobId = job.body.job_id;
      expect(
        (await call("post", "/v1/jobs", { token: key, body: { manifest_url: "ftp://nope", label_spec: task.label_spec } })).status,
      ).toBe(400);
      expect((await call("get", "/v1/jobs", { token: key })).status).toBe(200);
      expect((await call("get", "/v1/jobs", { token: key, query: "?page=0" })).status).toBe(400);
      expect((await call("get", "/v1/jobs/{id}", { params: { id: "job_missing" }, token: key })).status).toBe(404);
      // a job's ranking: a pairwise job's (empty before labels), 400 for a job of another type, 404 for none
      const pairs = await serveManifest(
        `${JSON.stringify({ data_url: "https://images.example/r1.jpg", data_url_b: "https://images.example/r2.jpg" })}\n`,
      );
      try {
        const pairwise = await call<{ job_id: string }>("post", "/v1/jobs", {
          token: key,
          body: { manifest_url: pairs.url(), type: "pairwise_comparison", label_spec: { question: "Which is older?" } },
        });
        expect(pairwise.status).toBe(202);
        expect((await call("get", "/v1/jobs/{id}/ranking", { params: { id: pairwise.body.job_id }, token: key })).status).toBe(200);
      } finally {
        await pairs.close();
      }
      expect((await call("get", "/v1/jobs/{id}/ranking", { params: { id: jobId }, token: key })).status).toBe(400);
      expect((await call("get", "/v1/jobs/{id}/ranking", { params: { id: "job_missing" }, token: key })).status).toBe(404);
      const labeling = await eventually(async () => {
        const res = await call<{ status: string }>("get", "/v1/jobs/{id}", { params: { id: jobId }, token: key });
        return res.body.status === "labeling" ? res : undefined;
      });
      expect(labeling.status).toBe(200);
      expect((await call("get", "/v1/jobs/{id}/export", { params: { id: jobId }, token: key })).status).toBe(409);

      const page = await call<{ items: { task_id: string; data_url: string }[] }>("get", "/v1/dashboard/tasks", {
        token: key,
        query: "?status=pending&per_page=100",
      });
      const jobTask = page.body.items.find((t) => t.data_url === "https://images.example/m1.jpg");
      if (!jobTask) throw new Error("the job's task is not listed");
      const claim = await call<{ claim_id: string }>("post", "/v1/labeling/claims", {
        token: state.labeler,
        body: { task_id: jobTask.task_id },
      });
      await call("post", "/v1/labeling/claims/{claimId}/label", {
        params: { claimId: claim.body.claim_id },
        token: state.labeler,
        body: { label: "dog" },
      });
      await eventually(async () => {
        const res = await call<{ status: string }>("get", "/v1/jobs/{id}", { params: { id: jobId }, token: key });
        return res.body.status === "completed" ? true : undefined;
      }, 30_000);

      // The export is JSON Lines: each line validates against the documented item schema.
      const exported = await fetch(`${sys.baseUrl}/v1/jobs/${jobId}/export`, { headers: { authorization: `Bearer ${key}` } });
      expect(exported.status).toBe(200);
      const media = doc.paths["/v1/jobs/{id}/export"]?.get?.responses["200"]?.content?.["application/x-ndjson"];
      expect(exported.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
      const lines = (await exported.text()).split("\n").filter(Boolean);
      expect(lines).toHaveLength(1);
      for (const line of lines) expectValid(refName(media?.["x-item-schema"]), JSON.parse(line), "export line");
      seen.add("get /v1/jobs/{id}/export 200");
    } finally {
      await manifest.close();
    }

    const month = new Date().toISOString().slice(0, 7);
    expect((await call("get", "/v1/billing/usage", { token: key, query: `?month=${month}` })).status).toBe(200);
    expect((await call("get", "/v1/billing/usage", { token: key })).status).toBe(400);
    expect((await call("get", "/v1/billing/invoices", { token: key })).status).toBe(200);
    expect((await call("get", "/v1/dashboard/overview", { token: key })).status).toBe(200);
    expect((await call("get", "/v1/dashboard/overview", { token: key, query: "?x=1" })).status).toBe(400);
    expect((await call("get", "/v1/dashboard/tasks", { token: key, query: "?sort=settled_at_desc" })).status).toBe(200);
    expect((await call("get", "/v1/dashboard/quality", { token: key })).status).toBe(200);
    expect((await call("get", "/v1/dashboard/usage", { token: key })).status).toBe(200);
    expect((await call("get", "/v1/dashboard/labelers", { token: key })).status).toBe(200);
    expect((await call("get", "/v1/customers/me/settings", { token: key })).status).toBe(200);
    const patched = await call("patch", "/v1/customers/me/settings", {
      token: key,
      body: { task_defaults: { confidence_target: 0.9 }, quality: { gold_rate: 0.2 } },
    });
    expect(patched.status).toBe(200);
    expect((await call("patch", "/v1/customers/me/settings", { token: key, body: { quality: { gold_rate: 2 } } })).status).toBe(400);
  });

  it("exercised every documented success response", () => {
    const successes = operations().flatMap(({ method, path, op }) =>
      Object.keys(op.responses)
        .filter((s) => s.startsWith("2"))
        .map((s) => `${method} ${path} ${s}`),
    );
    const notSeen = successes.filter((s) => !seen.has(s));
    expect(notSeen).toEqual([]);
  });
});

describe("reference page", () => {
  it("serves swagger-ui at /docs/ loading the document, with its static assets", async () => {
    const bare = await fetch(`${sys.baseUrl}/docs`, { redirect: "manual" });
    expect(bare.status).toBe(301);
    expect(bare.headers.get("location")).toBe("/docs/");
    const page = await fetch(`${sys.baseUrl}/docs/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="\.\/([^"?]+)"/g)].map((m) => m[1] as string);
    expect(assets).toEqual(
      expect.arrayContaining(["swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui-init.js"]),
    );
    for (const asset of assets) {
      const res = await fetch(new URL(asset, `${sys.baseUrl}/docs/`));
      expect({ asset, status: res.status }).toEqual({ asset, status: 200 });
      const text = await res.text();
      if (asset === "swagger-ui-init.js") expect(text).toContain('"swaggerUrl": "/v1/openapi.json"');
      else expect(text.length).toBeGreaterThan(100);
    }
  });
});
