/**
 * Deployment artifacts: docker-compose.yml, the Dockerfile and the Kubernetes base in deploy/.
 *
 * Nothing here needs Docker or a cluster:
 * - docker-compose.yml is parsed with `yaml` (merge keys resolved, as Compose does) and validated against the
 *   official Compose Specification JSON schema, draft-07, with ajv + ajv-formats. The schema is the file
 *   `schema/compose-spec.json` of github.com/compose-spec/compose-spec as shipped by the dev dependency
 *   dclint 3.1.0 (`node_modules/dclint/schemas/compose.schema.json`, refreshed from that repository by its
 *   `update-compose-schema` script; `$id` compose_spec.json). Then the structure: every service present,
 *   workers scalable, healthchecks on /readyz, start order, the S3 store, and every service's environment
 *   parsed by its zod schema from packages/config.
 * - deploy/ is rendered with `kubectl kustomize` when kubectl is installed, else from the kustomization's
 *   `resources`, `configMapGenerator`, `namespace` and `images` by `renderKustomization` below (both are
 *   compared when kubectl is there). Every object is validated by kubernetes-models in a child process
 *   (test/fixtures/k8s-validate.mts: the package is ESM-only, Jest runs CommonJS), then the structure:
 *   probes on the ops port, resources, Services, one HPA per worker, the migrate Job, Secrets, env keys.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { consensusWorkerEnv, gatewayEnv, manifestWorkerEnv, parseEnv, webhookWorkerEnv } from "@labelgate/config";
import Ajv from "ajv";
import draft07MetaSchema from "ajv/dist/refs/json-schema-draft-07.json";
import addFormats from "ajv-formats";
import { parse, parseAllDocuments } from "yaml";
import type { z } from "zod";

const ROOT = path.resolve(__dirname, "..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

/** Ops-port convention (METRICS_PORT defaults) and what each labelgate service needs in distributed mode. */
const SERVICES = {
  gateway: { schema: gatewayEnv, opsPort: 9100, main: "services/gateway/src/main.ts", worker: false },
  "consensus-worker": { schema: consensusWorkerEnv, opsPort: 9101, main: "services/consensus-worker/src/main.ts", worker: true },
  "webhook-worker": { schema: webhookWorkerEnv, opsPort: 9102, main: "services/webhook-worker/src/main.ts", worker: true },
  "manifest-worker": { schema: manifestWorkerEnv, opsPort: 9103, main: "services/manifest-worker/src/main.ts", worker: true },
} as const;
type ServiceName = keyof typeof SERVICES;
const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];
const WORKERS = SERVICE_NAMES.filter((s) => SERVICES[s].worker);

function shapeOf(service: ServiceName): Record<string, z.ZodType> {
  return SERVICES[service].schema.shape as unknown as Record<string, z.ZodType>;
}

/** Env keys a service accepts: its zod schema's keys. */
function knownKeys(service: ServiceName): Set<string> {
  return new Set(Object.keys(shapeOf(service)));
}

/**
 * Env keys a service must be given in distributed mode: keys its schema requires (no default, not optional),
 * DATABASE_URL and REDIS_URL (the runtime refuses to start without them: only standalone replaces them),
 * ENCRYPTION_KEY when its role opens the secret box (`ctx.secretBox()` in its src/role.ts), and the
 * gateway's ADMIN_TOKEN (optional, but without it the admin API is closed).
 */
function requiredKeys(service: ServiceName): string[] {
  const required = Object.entries(shapeOf(service))
    .filter(([, schema]) => !schema.safeParse(undefined).success)
    .map(([key]) => key);
  required.push("DATABASE_URL", "REDIS_URL");
  if (read(SERVICES[service].main.replace(/main\.ts$/, "role.ts")).includes("ctx.secretBox()")) required.push("ENCRYPTION_KEY");
  if (service === "gateway") required.push("ADMIN_TOKEN");
  return [...new Set(required)];
}

/** "30s", "1m30s", "500ms" → ms (the Compose duration format). */
function durationMs(value: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  for (const [, n, unit] of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) total += Number(n) * (units[unit as string] ?? Number.NaN);
  return total;
}

describe("requiredKeys", () => {
  it("derives each service's distributed-mode env from its schema and main.ts", () => {
    expect(requiredKeys("gateway").sort()).toEqual(["ADMIN_TOKEN", "DATABASE_URL", "ENCRYPTION_KEY", "REDIS_URL"]);
    expect(requiredKeys("consensus-worker").sort()).toEqual(["DATABASE_URL", "REDIS_URL"]);
    expect(requiredKeys("webhook-worker").sort()).toEqual(["DATABASE_URL", "ENCRYPTION_KEY", "REDIS_URL"]);
  });
});

// ---------------------------------------------------------------------------------------------------------
// docker-compose.yml

interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string[];
  environment?: Record<string, string | number | boolean | null>;
  ports?: unknown[];
  container_name?: string;
  hostname?: string;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[] | string; interval?: string; start_period?: string };
  stop_grace_period?: string;
  restart?: string;
  volumes?: string[];
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** The Compose Specification schema (see the header of this file). */
function composeValidator() {
  const schema = JSON.parse(readFileSync(path.join(ROOT, "node_modules/dclint/schemas/compose.schema.json"), "utf8")) as {
    $schema: string;
  };
  expect(schema.$schema).toMatch(/draft-07/);
  // strictTypes off: ajv's schema-style lint (union types, `oneOf` branches without `type`) warns about valid
  // draft-07 the official schema uses; unknown keywords (strictSchema) still fail.
  const ajv = new Ajv({ allErrors: true, strictTypes: false });
  addFormats(ajv);
  // The schema names draft-07 as https://json-schema.org/draft-07/schema; ajv knows it as http://...#.
  if (!ajv.getSchema(schema.$schema)) ajv.addMetaSchema({ ...draft07MetaSchema, $id: schema.$schema });
  return ajv.compile(schema);
}

/** Compose interpolation with an empty environment: `${VAR:-default}`, `${VAR-default}` → default, `${VAR}` → "". */
function interpolate(value: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/g, (_m, _name: string, def?: string) => def ?? "");
}

function composeEnv(service: ComposeService): Record<string, string> {
  return Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v ?? ""))]));
}

describe("docker-compose.yml", () => {
  const text = read("docker-compose.yml");
  const compose = parse(text, { merge: true }) as ComposeFile;
  const services = compose.services;

  it("is valid against the Compose Specification schema (and the validator rejects a broken file)", () => {
    const validate = composeValidator();
    const ok = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);

    const broken = parse(text, { merge: true }) as ComposeFile & Record<string, unknown>;
    (broken.services.gateway as Record<string, unknown>).depends_on = { migrate: { condition: "service_done" } };
    (broken.services.redis as Record<string, unknown>).helthcheck = {};
    expect(validate(broken)).toBe(false);
  });

  it("has postgres, redis, an S3 store, migrations, the gateway and every worker, all labelgate ones from one image", () => {
    expect(Object.keys(services).sort()).toEqual(
      ["anvil", "consensus-worker", "gateway", "manifest-worker", "migrate", "postgres", "redis", "s3", "webhook-worker"].sort(),
    );
    for (const name of [...SERVICE_NAMES, "migrate", "s3", "anvil"]) {
      const s = services[name] as ComposeService;
      expect({ name, image: s.image, build: s.build }).toEqual({ name, image: "labelgate:latest", build: "." });
    }
    expect(existsSync(path.join(ROOT, "Dockerfile"))).toBe(true);
  });

  it("runs each service's entry point directly with node (no pnpm or tsx CLI between tini and node)", () => {
    for (const name of SERVICE_NAMES) {
      const command = services[name]?.command ?? [];
      expect(command[0]).toBe("node");
      expect(command.slice(-3)).toEqual(["--import", "tsx", SERVICES[name].main]);
      expect(existsSync(path.join(ROOT, SERVICES[name].main))).toBe(true);
    }
    expect(services.migrate?.command).toEqual(["node", "--import", "tsx", "scripts/migrate.ts"]);
    expect(existsSync(path.join(ROOT, "scripts/migrate.ts"))).toBe(true);
  });

  it("workers scale with --scale: no container_name, hostname or published port", () => {
    for (const name of WORKERS) {
      const s = services[name] as ComposeService;
      expect({ name, container_name: s.container_name, hostname: s.hostname, ports: s.ports }).toEqual({ name });
    }
    expect(services.gateway?.ports).toEqual(["3000:3000"]);
  });

  it("starts in order: postgres/redis healthy, then migrations completed, then the services", () => {
    expect(services.migrate?.depends_on).toEqual({ postgres: { condition: "service_healthy" } });
    expect(services.migrate?.restart).toBe("no");
    for (const name of SERVICE_NAMES) {
      expect(services[name]?.depends_on).toMatchObject({
        migrate: { condition: "service_completed_successfully" },
        postgres: { condition: "service_healthy" },
        redis: { condition: "service_healthy" },
      });
    }
    for (const dep of ["postgres", "redis", "s3"]) expect(services[dep]?.healthcheck?.test).toBeDefined();
  });

  it("every labelgate service has a healthcheck on /readyz of its ops port and a grace period above its shutdown bound", () => {
    for (const name of SERVICE_NAMES) {
      const s = services[name] as ComposeService;
      const test = s.healthcheck?.test;
      expect(Array.isArray(test) ? test[0] : test).toBe("CMD");
      const check = Array.isArray(test) ? test.join(" ") : "";
      expect(check).toContain("/readyz");
      expect(check).toContain("process.env.METRICS_PORT");
      const env = composeEnv(s);
      expect({ name, METRICS_PORT: env.METRICS_PORT }).toEqual({ name, METRICS_PORT: String(SERVICES[name].opsPort) });
      // Compose's default grace period is 10 s; the shutdown bound is the parsed SHUTDOWN_TIMEOUT_MS (or its default).
      expect(durationMs(s.stop_grace_period ?? "10s")).toBeGreaterThan(parseEnv(SERVICES[name].schema, env).SHUTDOWN_TIMEOUT_MS);
    }
  });

  it("every env var a service sets is a key of its zod schema, the required ones are set, and the values parse", () => {
    for (const name of SERVICE_NAMES) {
      const env = composeEnv(services[name] as ComposeService);
      const known = knownKeys(name);
      expect({ name, unknown: Object.keys(env).filter((k) => !known.has(k)) }).toEqual({ name, unknown: [] });
      expect({ name, missing: requiredKeys(name).filter((k) => !env[k]) }).toEqual({ name, missing: [] });
      expect(() => parseEnv(SERVICES[name].schema, env)).not.toThrow();
    }
    expect(Object.keys(composeEnv(services.migrate as ComposeService))).toContain("DATABASE_URL");
  });

  it("has an S3-compatible store with its buckets created at start, and the manifest worker can reach it", () => {
    const s3 = services.s3 as ComposeService;
    const command = s3.command ?? [];
    expect(command.slice(0, 2)).toEqual(["node", "node_modules/s3rver/bin/s3rver.js"]);
    expect(existsSync(path.join(ROOT, "node_modules/s3rver/bin/s3rver.js"))).toBe(true);
    const buckets = command.flatMap((arg, i) => (arg === "--configure-bucket" ? [command[i + 1]] : []));
    expect(buckets).toEqual(["manifests", "exports"]);
    expect(command[command.indexOf("--port") + 1]).toBe("4568");
    expect(String(s3.healthcheck?.test)).toContain("4568/manifests");
    expect(s3.volumes).toEqual(["s3-data:/data/s3"]);
    expect(compose.volumes).toHaveProperty("s3-data");

    const worker = services["manifest-worker"] as ComposeService;
    expect(worker.depends_on?.s3).toEqual({ condition: "service_healthy" });
    // s3 resolves to a private address on the compose network: the worker's outbound URL policy must allow it.
    expect(parseEnv(manifestWorkerEnv, composeEnv(worker)).ALLOW_PRIVATE_URLS).toBe(true);
    expect(parseEnv(webhookWorkerEnv, composeEnv(services["webhook-worker"] as ComposeService)).ALLOW_PRIVATE_URLS).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Dockerfile

describe("Dockerfile", () => {
  const lines = read("Dockerfile")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const stages = lines.filter((l) => l.startsWith("FROM "));
  const final = lines.slice(lines.lastIndexOf(stages[stages.length - 1] as string));

  it("installs pnpm 12 and the workspace offline from the lockfile (prisma generate and the web build run as the postinstall)", () => {
    expect(stages[0]).toMatch(/^FROM node:20-/);
    expect(lines.some((l) => l.includes("pnpm@12"))).toBe(true);
    expect(lines).toContain("RUN pnpm fetch");
    expect(lines).toContain("RUN pnpm install --offline --frozen-lockfile");
    expect(JSON.parse(read("package.json")).scripts.postinstall).toBe("prisma generate && tsx packages/web/src/build-cli.ts");
  });

  it("runs as a non-root user under tini, exposes the API and ops ports, defaults to the gateway", () => {
    expect(final).toContain("USER node");
    expect(final).toContain('ENTRYPOINT ["/usr/bin/tini", "--"]');
    const exposed = final.filter((l) => l.startsWith("EXPOSE ")).flatMap((l) => l.split(/\s+/).slice(1));
    expect(exposed).toEqual(expect.arrayContaining(["3000", ...SERVICE_NAMES.map((s) => String(SERVICES[s].opsPort))]));
    expect(final).toContain('CMD ["node", "--import", "tsx", "services/gateway/src/main.ts"]');
  });

  it(".dockerignore keeps node_modules, local state and secrets out of the build context", () => {
    const ignored = read(".dockerignore").split("\n");
    for (const entry of ["**/node_modules", ".data", ".git", ".env"]) expect(ignored).toContain(entry);
  });
});

// ---------------------------------------------------------------------------------------------------------
// deploy/ (Kubernetes, kustomize base)

type Labels = Record<string, string>;
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet?: { path?: string; port: number | string };
}
interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  lifecycle?: { preStop?: { exec?: { command?: string[] } } };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodTemplate {
  metadata?: { labels?: Labels; annotations?: Labels };
  spec: {
    containers: Container[];
    terminationGracePeriodSeconds?: number;
    restartPolicy?: string;
    securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  };
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Labels };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}
interface Kustomization {
  namespace?: string;
  resources: string[];
  labels?: { pairs: Labels }[];
  configMapGenerator?: { name: string; literals?: string[]; options?: { labels?: Labels } }[];
  images?: { name: string; newName?: string; newTag?: string }[];
}

const DEPLOY = path.join(ROOT, "deploy");
const parseDocs = (text: string) =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);

/** An object's `spec`, typed by the caller. @throws when it has none */
function specOf<T>(o: K8sObject): T {
  if (!o.spec) throw new Error(`${o.kind} ${o.metadata.name} has no spec`);
  return o.spec as T;
}

/** Pod template containers of a workload (Deployment or Job). */
function podContainers(o: K8sObject): Container[] {
  return specOf<{ template: PodTemplate }>(o).template.spec.containers;
}

/**
 * Renders deploy/kustomization.yaml without kustomize: its resources, its generated ConfigMaps (without the
 * content-hash suffix), `namespace` on every namespaced object, `labels` on every object's metadata, and
 * `images` on containers.
 */
function renderKustomization(dir: string): K8sObject[] {
  const k = parse(readFileSync(path.join(dir, "kustomization.yaml"), "utf8")) as Kustomization;
  const objects = k.resources.flatMap((file) => parseDocs(readFileSync(path.join(dir, file), "utf8")));
  for (const g of k.configMapGenerator ?? []) {
    const data = Object.fromEntries((g.literals ?? []).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
    objects.push({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: g.name, labels: { ...g.options?.labels } }, data });
  }
  for (const o of objects) {
    if (k.namespace && o.kind !== "Namespace") o.metadata.namespace = k.namespace;
    for (const l of k.labels ?? []) o.metadata.labels = { ...o.metadata.labels, ...l.pairs };
    if (o.kind === "Deployment" || o.kind === "Job") {
      for (const c of podContainers(o)) {
        const image = (k.images ?? []).find((i) => i.name === c.image);
        if (image) c.image = `${image.newName ?? image.name}:${image.newTag ?? "latest"}`;
      }
    }
  }
  return objects;
}

/** `kubectl kustomize deploy/` when kubectl is installed, else undefined. */
function kubectlKustomize(): K8sObject[] | undefined {
  const out = spawnSync("kubectl", ["kustomize", DEPLOY], { encoding: "utf8", timeout: 60_000 });
  if (out.error || out.status !== 0) return undefined;
  return parseDocs(out.stdout);
}

interface ValidationResult {
  kind: string;
  name: string;
  error: string | null;
}

/** Validates objects with kubernetes-models in a child process (see test/fixtures/k8s-validate.mts). */
function validateWithModels(objects: unknown[]): ValidationResult[] {
  const out = spawnSync(process.execPath, ["--import", "tsx", path.join(ROOT, "test/fixtures/k8s-validate.mts")], {
    cwd: ROOT,
    input: JSON.stringify(objects),
    encoding: "utf8",
    timeout: 60_000,
  });
  if (out.status !== 0) throw new Error(`k8s-validate.mts exited ${out.status}: ${out.stderr}`);
  return JSON.parse(out.stdout) as ValidationResult[];
}

describe("deploy/ (Kubernetes)", () => {
  const kustomization = parse(readFileSync(path.join(DEPLOY, "kustomization.yaml"), "utf8")) as Kustomization;
  const fallback = renderKustomization(DEPLOY);
  const kubectl = kubectlKustomize();
  const objects = kubectl ?? fallback;
  const secretExample = parseDocs(readFileSync(path.join(DEPLOY, "secret.example.yaml"), "utf8"));

  const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
  const get = (kind: string, name: string) => {
    const o = find(kind, name);
    if (!o) throw new Error(`no ${kind} ${name}`);
    return o;
  };
  const deployment = (name: string) => get("Deployment", name);
  const template = (o: K8sObject) => specOf<{ template: PodTemplate }>(o).template;
  const container = (o: K8sObject) => {
    const c = podContainers(o)[0];
    if (!c) throw new Error(`${o.kind} ${o.metadata.name} has no container`);
    return c;
  };
  const configMap = (name: string) => objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === name);

  /** The environment a container gets: its `env` values (secrets from the example) plus `envFrom` ConfigMaps. */
  function containerEnv(c: Container): Record<string, string> {
    const env: Record<string, string> = {};
    for (const from of c.envFrom ?? []) {
      if (from.configMapRef) Object.assign(env, configMap(from.configMapRef.name)?.data);
      if (from.secretRef) throw new Error("envFrom secretRef hands every key to every service: use secretKeyRef per key");
    }
    for (const e of c.env ?? []) {
      const ref = e.valueFrom?.secretKeyRef;
      env[e.name] = ref ? String(secretExample.find((s) => s.metadata.name === ref.name)?.stringData?.[ref.key]) : String(e.value);
    }
    return env;
  }

  it("renders the same objects with and without kubectl", () => {
    const ids = (list: K8sObject[]) =>
      list.map((o) => `${o.kind}/${o.kind === "ConfigMap" ? o.metadata.name.replace(/-[a-z0-9]{10}$/, "") : o.metadata.name}`).sort();
    if (kubectl) expect(ids(fallback)).toEqual(ids(kubectl));
    expect(ids(objects)).toEqual(
      [
        "Namespace/labelgate",
        "ConfigMap/labelgate-config",
        "ConfigMap/labelgate-chain",
        "Job/migrate",
        "Deployment/gateway",
        "Service/gateway",
        "PodDisruptionBudget/gateway",
        ...WORKERS.flatMap((w) => [`Deployment/${w}`, `Service/${w}`, `HorizontalPodAutoscaler/${w}`]),
      ].sort(),
    );
    for (const o of objects) {
      if (o.kind !== "Namespace") expect(o.metadata.namespace).toBe("labelgate");
      expect(o.metadata.labels?.["app.kubernetes.io/part-of"]).toBe("labelgate");
    }
  });

  it("every object (and the example Secret) is valid for kubernetes-models; the validator rejects a broken one", () => {
    const broken = structuredClone(deployment("gateway"));
    (container(broken).ports as { containerPort: unknown }[])[0] = { containerPort: "http" };
    const results = validateWithModels([...objects, ...secretExample, broken]);
    const last = results.pop();
    expect(results.filter((r) => r.error !== null)).toEqual([]);
    expect(results).toHaveLength(objects.length + secretExample.length);
    expect(last?.error).toMatch(/containerPort must be integer/);
  });

  it("each service has a Deployment running its entry point under tini (args, not command), non-root", () => {
    for (const name of SERVICE_NAMES) {
      const d = deployment(name);
      const c = container(d);
      expect(c.image).toBe("labelgate:latest");
      expect(c.command).toBeUndefined();
      expect(c.args?.[0]).toBe("node");
      expect(c.args?.slice(-3)).toEqual(["--import", "tsx", SERVICES[name].main]);
      expect(template(d).spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
      expect(c.volumeMounts).toContainEqual({ name: "tmp", mountPath: "/tmp" });
      const selector = specOf<{ selector: { matchLabels: Labels } }>(d).selector.matchLabels;
      expect(template(d).metadata?.labels).toMatchObject(selector);
    }
  });

  it("the command of each Deployment matches docker-compose.yml", () => {
    const compose = parse(read("docker-compose.yml"), { merge: true }) as ComposeFile;
    for (const name of SERVICE_NAMES) expect(container(deployment(name)).args).toEqual(compose.services[name]?.command);
    expect(container(get("Job", "migrate")).args).toEqual(compose.services.migrate?.command);
  });

  it("probes: startup and liveness on /healthz, readiness on /readyz, all on the named ops port", () => {
    for (const name of SERVICE_NAMES) {
      const c = container(deployment(name));
      const metrics = c.ports?.find((p) => p.name === "metrics");
      expect({ name, port: metrics?.containerPort }).toEqual({ name, port: SERVICES[name].opsPort });
      const onOpsPort = (p: Probe | undefined) => p?.httpGet?.port === "metrics" || p?.httpGet?.port === SERVICES[name].opsPort;
      expect(c.livenessProbe?.httpGet?.path).toBe("/healthz");
      expect(c.readinessProbe?.httpGet?.path).toBe("/readyz");
      expect(c.startupProbe?.httpGet?.path).toBe("/healthz");
      expect([onOpsPort(c.livenessProbe), onOpsPort(c.readinessProbe), onOpsPort(c.startupProbe)]).toEqual([true, true, true]);
      const env = containerEnv(c);
      expect(env.METRICS_PORT).toBe(String(SERVICES[name].opsPort));
      // The schema's default is the same port, so the service listens there even without the env var.
      expect(shapeOf(name).METRICS_PORT?.parse(undefined)).toBe(SERVICES[name].opsPort);
    }
    expect(container(deployment("gateway")).ports?.find((p) => p.name === "http")?.containerPort).toBe(3000);
  });

  it("Prometheus scrape annotations point at the metrics port", () => {
    for (const name of SERVICE_NAMES) {
      expect(template(deployment(name)).metadata?.annotations).toEqual({
        "prometheus.io/scrape": "true",
        "prometheus.io/port": String(SERVICES[name].opsPort),
        "prometheus.io/path": "/metrics",
      });
    }
  });

  it("resource requests (cpu, memory) and a memory limit on every workload", () => {
    for (const o of objects.filter((x) => x.kind === "Deployment" || x.kind === "Job")) {
      const r = container(o).resources;
      expect({ name: o.metadata.name, cpu: !!r?.requests?.cpu, memory: !!r?.requests?.memory, limit: !!r?.limits?.memory }).toEqual({
        name: o.metadata.name,
        cpu: true,
        memory: true,
        limit: true,
      });
    }
  });

  it("terminationGracePeriodSeconds exceeds preStop + SHUTDOWN_TIMEOUT_MS", () => {
    for (const name of SERVICE_NAMES) {
      const d = deployment(name);
      const c = container(d);
      const shutdownMs = parseEnv(SERVICES[name].schema, containerEnv(c)).SHUTDOWN_TIMEOUT_MS;
      const preStop = c.lifecycle?.preStop?.exec?.command;
      const preStopMs = preStop?.[0] === "sleep" ? Number(preStop[1]) * 1000 : 0;
      expect(Number.isFinite(shutdownMs) && Number.isFinite(preStopMs)).toBe(true);
      expect((template(d).spec.terminationGracePeriodSeconds ?? 30) * 1000).toBeGreaterThan(preStopMs + shutdownMs);
    }
  });

  it("a Service per service: the gateway's API and metrics ports, each worker's metrics port", () => {
    for (const name of SERVICE_NAMES) {
      const spec = specOf<{ selector: Labels; ports: { name: string; port: number; targetPort: string | number }[] }>(get("Service", name));
      expect(template(deployment(name)).metadata?.labels).toMatchObject(spec.selector);
      expect(spec.ports).toContainEqual({ name: "metrics", port: SERVICES[name].opsPort, targetPort: "metrics" });
    }
    expect(specOf<{ ports: unknown[] }>(get("Service", "gateway")).ports).toContainEqual({ name: "http", port: 80, targetPort: "http" });
  });

  it("every worker has its own HPA targeting its Deployment, which leaves the replica count to it", () => {
    for (const name of WORKERS) {
      const spec = specOf<{
        scaleTargetRef: { apiVersion: string; kind: string; name: string };
        minReplicas: number;
        maxReplicas: number;
        metrics: { type: string; resource?: { name: string } }[];
      }>(get("HorizontalPodAutoscaler", name));
      expect(spec.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name });
      expect(spec.minReplicas).toBeGreaterThanOrEqual(1);
      expect(spec.maxReplicas).toBeGreaterThan(spec.minReplicas);
      expect(spec.metrics).toContainEqual(
        expect.objectContaining({ type: "Resource", resource: expect.objectContaining({ name: "cpu" }) }),
      );
      expect(deployment(name).spec?.replicas).toBeUndefined();
    }
    expect(objects.filter((o) => o.kind === "HorizontalPodAutoscaler")).toHaveLength(WORKERS.length);
  });

  it("the migrate Job runs the migrations once, with only DATABASE_URL", () => {
    const job = get("Job", "migrate");
    expect(template(job).spec.restartPolicy).toBe("Never");
    expect(container(job).args).toEqual(["node", "--import", "tsx", "scripts/migrate.ts"]);
    expect(Object.keys(containerEnv(container(job)))).toEqual(["DATABASE_URL"]);
  });

  it("every Secret referenced exists in secret.example.yaml, which holds placeholders only and is not applied", () => {
    expect(kustomization.resources).not.toContain("secret.example.yaml");
    expect(secretExample.map((s) => `${s.kind}/${s.metadata.name}`)).toEqual(["Secret/labelgate-secrets"]);
    const example = secretExample[0] as K8sObject;
    expect(Object.keys(example.stringData ?? {}).sort()).toEqual([
      "ADMIN_TOKEN",
      "DATABASE_URL",
      "ENCRYPTION_KEY",
      "EVM_PRIVATE_KEY",
      "EVM_RPC_URL",
      "REDIS_URL",
    ]);
    for (const value of Object.values(example.stringData ?? {})) expect(value).toContain("REPLACE_ME");
    expect(example.data).toBeUndefined();

    const refs = objects
      .filter((o) => o.kind === "Deployment" || o.kind === "Job")
      .flatMap((o) => (container(o).env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef] : [])));
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(secretExample.find((s) => s.metadata.name === ref.name)?.stringData).toHaveProperty(ref.key);
  });

  it("every env var a Deployment sets is a key of the service's zod schema, the required ones are set, and they parse", () => {
    for (const name of SERVICE_NAMES) {
      const env = containerEnv(container(deployment(name)));
      const known = knownKeys(name);
      expect({ name, unknown: Object.keys(env).filter((k) => !known.has(k)) }).toEqual({ name, unknown: [] });
      expect({ name, missing: requiredKeys(name).filter((k) => !env[k]) }).toEqual({ name, missing: [] });
      expect(() => parseEnv(SERVICES[name].schema, env)).not.toThrow();
    }
    // Least privilege: only the gateway gets the admin token; the consensus worker seals nothing.
    for (const name of WORKERS) expect(containerEnv(container(deployment(name)))).not.toHaveProperty("ADMIN_TOKEN");
    expect(containerEnv(container(deployment("consensus-worker")))).not.toHaveProperty("ENCRYPTION_KEY");
    // the chain's key goes to the consensus worker (the anchorer) only
    for (const name of SERVICE_NAMES.filter((n) => n !== "consensus-worker")) {
      expect(containerEnv(container(deployment(name)))).not.toHaveProperty("EVM_PRIVATE_KEY");
    }
  });
});
