/**
 * Security (docs/reliability.md) against a REAL gateway process, every route taken from the app's route
 * table (`sys.app`, ROUTES): another customer's ids (tasks, batches, webhooks, deliveries, jobs, exports)
 * answer 404 with the resource's message and none of the owner's data (contract §wire: "ids of others do not exist
 * for you"); a labeler key on customer routes, a customer key on labeler routes, no key, a revoked key (a
 * sandbox key after the upgrade to production) and a missing or wrong admin token answer 401
 * `invalid API key`. Then every response body of the whole file and every line the gateway logged are
 * scanned for the secrets in play: API keys (customer, revoked, live, labeler) outside the one response that
 * issues each, webhook secrets, the admin token, ENCRYPTION_KEY, the database password (trust auth here, so
 * any password connects) and the S3/GCS credentials of job bodies.
 */
import { randomBytes } from "node:crypto";
import { ERRORS, type ErrorKind } from "@labelgate/api";
import { newId } from "@labelgate/core";
import type { RouteDoc } from "@labelgate/gateway/openapi";
import { createDb, type Db, withDatabase } from "@labelgate/store";
import { runPrefix, testDatabaseUrl } from "./env";
import { apiOf, type ServiceProcess, startService } from "./processes";
import { errorBodySchema, routeTable } from "./routes";
import { ADMIN_TOKEN, type ApiResponse, startSystem, TEST_ENCRYPTION_KEY, taskBody } from "./system";

const DB_PASSWORD = `dbpw-${randomBytes(12).toString("hex")}`;
const WEBHOOK_SECRET = `whsec-${randomBytes(16).toString("hex")}`;
const S3_ACCESS_KEY_ID = `AKIA${randomBytes(8).toString("hex").toUpperCase()}`;
const S3_SECRET = `s3secret-${randomBytes(16).toString("hex")}`;
const S3_SESSION_TOKEN = `s3session-${randomBytes(16).toString("hex")}`;
const GCS_PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----\\n${randomBytes(24).toString("base64")}\\n-----END PRIVATE KEY-----\\n`;
const GCS_JSON = JSON.stringify({ type: "service_account", client_email: "sa@proj.iam.gserviceaccount.com", private_key: GCS_PRIVATE_KEY });

let gateway: ServiceProcess;
let routes: RouteDoc[];
let db: Db;
/** every response of this file, with the secrets it may legitimately carry (the key it issues) */
const responses: { what: string; text: string; issues?: string; trusted: boolean }[] = [];

interface Customer {
  id: string;
  key: string;
  email: string;
}

const fx = {} as {
  a: Customer;
  b: Customer;
  /** sandbox key revoked by the upgrade to production, and the live key it issued */
  revokedKey: string;
  liveKey: string;
  labelerKey: string;
  otherLabelerKey: string;
  /** A's resources by path-parameter prefix */
  ids: Record<string, string>;
  /** strings only A's data contains */
  aData: string[];
};

async function call(
  method: string,
  path: string,
  opts: { body?: unknown; token?: string; headers?: Record<string, string>; issues?: string; trusted?: boolean } = {},
): Promise<ApiResponse> {
  const res = await apiOf(`http://127.0.0.1:${gateway.port}`)(method, path, opts);
  // A itself, the operator and the labeler working on A's task may see A's data; nobody else
  const trusted = opts.trusted ?? (opts.token !== undefined && [fx.a?.key, ADMIN_TOKEN, fx.labelerKey].includes(opts.token));
  responses.push({ what: `${method} ${path} ${res.status}`, text: JSON.stringify(res.body), issues: opts.issues, trusted });
  return res;
}

function fill(route: RouteDoc, ids: Record<string, string>): string {
  return route.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const param = route.pathParams?.find((p) => p.name === name);
    const value = param ? ids[param.prefix] : undefined;
    if (value === undefined) throw new Error(`no id for ${route.path} {${name}}`);
    return value;
  });
}

/** A body the route accepts (its first example), so only the credentials decide. */
function exampleBody(route: RouteDoc): unknown {
  return Object.values(route.body?.examples ?? {})[0]?.value;
}

function expectError(res: ApiResponse, kind: ErrorKind, what: string): void {
  expect({ what, status: res.status, body: res.body }).toEqual({
    what,
    status: ERRORS[kind].status,
    body: { error: ERRORS[kind].message },
  });
  expect(errorBodySchema.safeParse(res.body).success).toBe(true);
}

beforeAll(async () => {
  const sys = await startSystem({ workers: false });
  try {
    ({ routes } = routeTable(sys.app));
  } finally {
    await sys.close();
  }
  const url = new URL(testDatabaseUrl());
  url.password = DB_PASSWORD; // trust auth: any password connects; it must never be printed
  gateway = await startService("gateway", {
    databaseUrl: url.toString(),
    prefix: `${runPrefix()}:sec:${randomBytes(3).toString("hex")}`,
    env: { LOG_LEVEL: "info", RATE_LIMIT_SANDBOX: "1000000", RATE_LIMIT_REGISTRATIONS_PER_HOUR: "1000000" },
  });
  db = createDb({ url: withDatabase(testDatabaseUrl(), url.pathname.slice(1)), poolMax: 2 });

  const register = async (tag: string): Promise<Customer> => {
    const email = `sec-${tag}-${randomBytes(4).toString("hex")}@example.com`;
    const res = await call("POST", "/v1/customers", { body: { name: `Security ${tag}`, email }, trusted: true });
    if (res.status !== 201) throw new Error(`registration ${res.status}`);
    const customer = { id: String(res.body.customer_id), key: String(res.body.api_key), email };
    (responses.at(-1) as (typeof responses)[number]).issues = customer.key;
    const quota = await call("PATCH", `/v1/admin/customers/${customer.id}`, { token: ADMIN_TOKEN, body: { label_quota: 100_000 } });
    if (quota.status !== 200) throw new Error(`quota ${quota.status}`);
    return customer;
  };
  fx.a = await register("victim");
  fx.b = await register("attacker");
  const r = await register("upgraded");
  const upgrade = await call("POST", `/v1/admin/customers/${r.id}/upgrade`, { token: ADMIN_TOKEN, body: {} });
  if (upgrade.status !== 200) throw new Error(`upgrade ${upgrade.status} ${JSON.stringify(upgrade.body)}`);
  fx.revokedKey = r.key;
  fx.liveKey = String(upgrade.body.api_key);
  (responses.at(-1) as (typeof responses)[number]).issues = fx.liveKey;
  const labeler = async () => {
    const res = await call("POST", "/v1/admin/labelers", { token: ADMIN_TOKEN, body: { name: "sec labeler" } });
    if (res.status !== 201) throw new Error(`labeler ${res.status}`);
    (responses.at(-1) as (typeof responses)[number]).issues = String(res.body.api_key);
    return String(res.body.api_key);
  };
  fx.labelerKey = await labeler();
  fx.otherLabelerKey = await labeler();

  const hookUrl = `http://127.0.0.1:9/hooks/victim-${randomBytes(4).toString("hex")}`;
  const dataUrl = `https://images.example/victim-${randomBytes(4).toString("hex")}.jpg`;
  const hook = await call("POST", "/v1/webhooks", { token: fx.a.key, body: { callback_url: hookUrl, secret: WEBHOOK_SECRET } });
  const task = await call("POST", "/v1/tasks", {
    token: fx.a.key,
    body: taskBody({ data_url: dataUrl, callback_url: hookUrl, idempotency_key: "shared-key-1", metadata: { victim: "yes" } }),
  });
  const batch = await call("POST", "/v1/tasks/batch", { token: fx.a.key, body: { tasks: [taskBody({ data_url: dataUrl })] } });
  const job = await call("POST", "/v1/jobs", {
    token: fx.a.key,
    body: {
      manifest_url: "s3://victim-bucket/manifest.jsonl",
      label_spec: { question: "victim question?", options: ["a", "b"] },
      credentials: { access_key_id: S3_ACCESS_KEY_ID, secret_access_key: S3_SECRET, region: "eu-west-1", session_token: S3_SESSION_TOKEN },
    },
  });
  const gcsJob = await call("POST", "/v1/jobs", {
    token: fx.a.key,
    body: {
      manifest_url: "gs://victim-bucket/m.jsonl",
      label_spec: { question: "q?", options: ["a", "b"] },
      credentials: { service_account_json: GCS_JSON },
    },
  });
  const claim = await call("POST", "/v1/labeling/claims", { token: fx.labelerKey, body: { task_id: task.body.task_id } });
  for (const [what, res, status] of [
    ["webhook", hook, 201],
    ["task", task, 202],
    ["batch", batch, 202],
    ["job", job, 202],
    ["gcs job", gcsJob, 202],
    ["claim", claim, 201],
  ] as const) {
    if (res.status !== status) throw new Error(`fixture ${what}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  // a delivery of A's webhook (the webhook worker is not running: the row is written as routing would)
  const deliveryId = newId("delivery");
  await db.prisma.delivery.create({
    data: {
      id: deliveryId,
      eventId: newId("event"),
      webhookId: String(hook.body.webhook_id),
      customerId: fx.a.id,
      taskId: String(task.body.task_id),
    },
  });
  fx.ids = {
    tsk_: String(task.body.task_id),
    bat_: String(batch.body.batch_id),
    whk_: String(hook.body.webhook_id),
    dlv_: deliveryId,
    job_: String(job.body.job_id),
    clm_: String(claim.body.claim_id),
    // the claimed task's label space (its instructions route is a labeler's)
    lsp_: String(claim.body.label_space),
    cust_: fx.a.id,
  };
  fx.aData = [
    ...Object.values(fx.ids).filter((v) => !v.startsWith("cust_")),
    String(gcsJob.body.job_id),
    hookUrl,
    dataUrl,
    fx.a.email,
    "victim-bucket",
    "victim question?",
  ];
}, 60_000);

afterAll(async () => {
  await db?.close();
  await gateway?.kill();
});

const customerRoutes = () => routes.filter((r) => r.auth === "customer");

describe("security: a real gateway process, every route of the route table", () => {
  it("answers another customer's ids with 404 and its message, never the owner's data", async () => {
    const notFound: Record<string, ErrorKind> = {
      tsk_: "taskNotFound",
      bat_: "batchNotFound",
      whk_: "webhookNotFound",
      job_: "jobNotFound",
    };
    const withIds = customerRoutes().filter((r) => (r.pathParams ?? []).length > 0);
    expect(withIds.map((r) => r.path)).toEqual(
      expect.arrayContaining([
        "/v1/tasks/{id}",
        "/v1/batches/{id}",
        "/v1/webhooks/{id}",
        "/v1/jobs/{id}/export",
        "/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver",
      ]),
    );
    for (const route of withIds) {
      const first = route.pathParams?.[0]?.prefix as string;
      const res = await call(route.method.toUpperCase(), fill(route, fx.ids), { token: fx.b.key, body: exampleBody(route) });
      expectError(res, notFound[first] as ErrorKind, `${route.method} ${route.path} with B's key`);
    }
    // B's own webhook with A's delivery id
    const own = await call("POST", "/v1/webhooks", {
      token: fx.b.key,
      body: { callback_url: "http://127.0.0.1:9/b", secret: "b-secret-0123456789" },
    });
    expect(own.status).toBe(201);
    const cross = await call("POST", `/v1/webhooks/${own.body.webhook_id}/deliveries/${fx.ids.dlv_}/redeliver`, { token: fx.b.key });
    expectError(cross, "deliveryNotFound", "A's delivery under B's webhook");
    // the owner still sees everything (the 404s are about ownership, not broken ids)
    for (const path of [
      `/v1/tasks/${fx.ids.tsk_}`,
      `/v1/batches/${fx.ids.bat_}`,
      `/v1/jobs/${fx.ids.job_}`,
      `/v1/webhooks/${fx.ids.whk_}/deliveries`,
    ]) {
      expect({ path, status: (await call("GET", path, { token: fx.a.key })).status }).toEqual({ path, status: 200 });
    }
  });

  it("never shows B any of A's data on B's lists, dashboards, idempotency keys and webhook URLs", async () => {
    for (const route of customerRoutes().filter((r) => (r.pathParams ?? []).length === 0 && r.method === "get")) {
      const query = route.path === "/v1/billing/usage" ? `?month=${new Date().toISOString().slice(0, 7)}` : "";
      const res = await call("GET", route.path + query, { token: fx.b.key });
      expect({ route: route.path, status: res.status }).toEqual({ route: route.path, status: 200 });
    }
    // the same idempotency key and body as A's task: B gets a task of its own
    const sameKey = await call("POST", "/v1/tasks", {
      token: fx.b.key,
      body: taskBody({ idempotency_key: "shared-key-1", data_url: "https://images.example/b.jpg" }),
    });
    expect(sameKey.status).toBe(202);
    expect(sameKey.body.task_id).not.toBe(fx.ids.tsk_);
    // A's callback URL is not B's: a task of B naming it is refused; a webhook of B on it is B's own
    const hookUrl = fx.aData.find((d) => d.includes("/hooks/victim-")) as string;
    const refused = await call("POST", "/v1/tasks", { token: fx.b.key, body: taskBody({ callback_url: hookUrl }) });
    expect(refused.status).toBe(400);
    // (B gave the URL itself: only the id is checked)
    const sameUrl = await call("POST", "/v1/webhooks", {
      token: fx.b.key,
      body: { callback_url: hookUrl, secret: "b-secret-0123456789" },
      trusted: true,
    });
    expect(sameUrl.status).toBe(201);
    expect(sameUrl.body.webhook_id).not.toBe(fx.ids.whk_);
    // a labeler cannot label another labeler's claim
    const foreignClaim = await call("POST", `/v1/labeling/claims/${fx.ids.clm_}/label`, {
      token: fx.otherLabelerKey,
      body: { label: "cat" },
    });
    expectError(foreignClaim, "claimNotFound", "another labeler's claim");

    const checked = responses.filter((r) => !r.trusted);
    const leaks = checked.flatMap((r) => fx.aData.filter((d) => r.text.includes(d)).map((d) => `${r.what}: ${d}`));
    expect(leaks).toEqual([]);
    expect(checked.length).toBeGreaterThan(20);
  });

  it("answers 401 invalid API key for the wrong kind of key, no key, a revoked key and a wrong admin token", async () => {
    const attempts: [string, string | undefined, string][] = [];
    for (const route of routes) {
      const path = fill(route, { ...fx.ids, cust_: fx.b.id });
      const creds: [string, string | undefined, string?][] = [];
      if (route.auth === "customer")
        creds.push(
          ["labeler key", `Bearer ${fx.labelerKey}`],
          ["admin token", `Bearer ${ADMIN_TOKEN}`],
          ["revoked key", `Bearer ${fx.revokedKey}`],
        );
      if (route.auth === "labeler")
        creds.push(["customer key", `Bearer ${fx.a.key}`], ["live key", `Bearer ${fx.liveKey}`], ["admin token", `Bearer ${ADMIN_TOKEN}`]);
      if (route.auth === "admin")
        creds.push(
          ["customer key", `Bearer ${fx.a.key}`],
          ["labeler key", `Bearer ${fx.labelerKey}`],
          ["wrong admin token", `Bearer ${ADMIN_TOKEN}x`],
          ["admin token prefix", `Bearer ${ADMIN_TOKEN.slice(0, -1)}`],
          ["admin token as Basic", `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString("base64")}`],
          ["empty bearer", "Bearer "],
        );
      if (route.auth !== "none")
        creds.push(["no key", undefined], ["unknown key of the right form", `Bearer sk_sandbox_${"A".repeat(43)}`]);
      for (const [what, authorization] of creds) {
        const res = await call(route.method.toUpperCase(), path, {
          body: exampleBody(route),
          headers: authorization === undefined ? {} : { authorization },
        });
        expectError(res, "unauthorized", `${route.method.toUpperCase()} ${route.path} with ${what}`);
        attempts.push([route.path, authorization, what]);
      }
    }
    expect(attempts.length).toBeGreaterThan(100);
    // the revoked key is dead everywhere, the live key that replaced it works
    expect((await call("GET", "/v1/customers/me", { token: fx.liveKey })).status).toBe(200);
    // the queue dashboard (an admin surface outside /v1) too
    for (const authorization of [undefined, `Bearer ${fx.a.key}`, `Bearer ${ADMIN_TOKEN}x`, "Basic YWRtaW46d3Jvbmc="]) {
      const res = await call("GET", "/admin/queues/api/queues", { headers: authorization === undefined ? {} : { authorization } });
      expectError(res, "unauthorized", `queue dashboard with ${authorization ?? "no key"}`);
    }
  });

  it("keeps secrets out of every response and every log line", async () => {
    // secrets in bodies that are refused: they must not be echoed in the details nor logged
    await call("POST", "/v1/jobs", {
      token: fx.a.key,
      body: {
        manifest_url: `https://${S3_ACCESS_KEY_ID}:${S3_SECRET}@s3.example.com/m.jsonl`,
        label_spec: { question: "q?", options: ["a", "b"] },
      },
    });
    await call("POST", "/v1/jobs", {
      token: fx.a.key,
      body: {
        manifest_url: "s3://b/k",
        label_spec: { question: "q?", options: ["a"] },
        credentials: { access_key_id: S3_ACCESS_KEY_ID, secret_access_key: S3_SECRET },
      },
    });
    await call("POST", "/v1/jobs", {
      token: fx.a.key,
      body: { manifest_url: "s3://b/k", label_spec: { question: "q?", options: ["a", "b"] }, s3_credentials: S3_SECRET },
    });
    await call("POST", "/v1/webhooks", { token: fx.a.key, body: { callback_url: "ftp://x", secret: WEBHOOK_SECRET } });
    await call("POST", "/v1/webhooks", {
      token: fx.a.key,
      body: { callback_url: `http://127.0.0.1:9/x?${WEBHOOK_SECRET}`, secret: "short" },
    });
    await call("GET", `/v1/jobs/${fx.ids.job_}`, { token: fx.a.key });
    await call("GET", "/v1/jobs", { token: fx.a.key });
    await call("GET", "/v1/webhooks", { token: fx.a.key });
    await call("GET", "/v1/customers/me", { token: fx.a.key });
    await call("POST", "/v1/customers", { body: { name: fx.a.key, email: `${ADMIN_TOKEN}@example.com`, api_key: fx.a.key } });

    const secrets: Record<string, string> = {
      "customer key A": fx.a.key,
      "customer key B": fx.b.key,
      "revoked key": fx.revokedKey,
      "live key": fx.liveKey,
      "labeler key": fx.labelerKey,
      "other labeler key": fx.otherLabelerKey,
      "admin token": ADMIN_TOKEN,
      ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      "database password": DB_PASSWORD,
      "webhook secret": WEBHOOK_SECRET,
      "S3 secret_access_key": S3_SECRET,
      "S3 session_token": S3_SESSION_TOKEN,
      "GCS private key": GCS_PRIVATE_KEY.slice(30, 60),
    };
    // the random part of each key (a key echoed without its prefix is still a leak)
    for (const [name, key] of Object.entries(secrets))
      if (/^(sk_sandbox_|sk_live_|lk_)/.test(key)) secrets[`${name} (random part)`] = key.replace(/^(sk_sandbox_|sk_live_|lk_)/, "");

    const found: string[] = [];
    for (const r of responses)
      for (const [name, secret] of Object.entries(secrets))
        if (r.text.includes(secret) && !(r.issues && (r.issues === secret || r.issues.endsWith(secret))))
          found.push(`response ${r.what}: ${name}`);
    const log = gateway.output.join("");
    for (const [name, secret] of Object.entries(secrets)) if (log.includes(secret)) found.push(`gateway log: ${name}`);
    expect(found).toEqual([]);
    // the scan saw real traffic: every request was logged, and each issued key was in its response
    expect(gateway.logs.filter((l) => l.msg === "request completed").length).toBeGreaterThan(150);
    const issuing = responses.filter((r) => r.issues !== undefined);
    expect(issuing.map((r) => r.text.includes(r.issues as string))).toEqual([true, true, true, true, true, true]);
    expect(gateway.logs.filter((l) => typeof l.level === "number" && (l.level as number) >= 50)).toEqual([]);
  });
});
