/**
 * The clients take their routes from the route catalog (packages/api/src/operations.ts; docs/decisions/0232):
 * the TS SDK, the CLI and the web apps import it and call operations by id; the Python client reads
 * clients/python/labelgate/_routes.py, generated from it by `pnpm gen:clients`. This test renders the generated
 * files again and fails when a checked-in one differs (as test/openapi.test.ts does for docs/api.md), and fails
 * when a client's code (comments and docstrings aside) holds a string literal with `/v1/` outside the generated
 * files: a path written by hand. It also checks that the Python `route` fills a path as the catalog's `pathOf` does.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { OPERATIONS, type OperationId, pathOf } from "@labelgate/api/operations";
import { clientRoutes } from "@labelgate/api/route-clients";
import ts from "typescript";
import { GENERATED_CLIENT_FILES } from "../scripts/gen-clients";

const ROOT = path.resolve(__dirname, "..");
const PYTHON = process.env.PYTHON ?? "python3";
/** The clients' source folders: TS (SDK, CLI, web apps) and Python (the package and its examples). */
const TS_ROOTS = ["packages/sdk/src", "packages/cli/src", "packages/web/app", "packages/web/src"];
const PY_ROOTS = ["clients/python/labelgate", "clients/python/examples"];
const GENERATED = new Set(GENERATED_CLIENT_FILES.map(([file]) => file));

/** The files under `dir` (relative to the repository root) whose name matches `pattern`. */
function filesUnder(dir: string, pattern: RegExp, out: string[] = []): string[] {
  for (const name of readdirSync(path.join(ROOT, dir))) {
    const rel = path.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) {
      if (name !== "node_modules" && name !== "dist") filesUnder(rel, pattern, out);
    } else if (pattern.test(name)) {
      out.push(rel);
    }
  }
  return out;
}

/**
 * The string and template literal parts of a TS source holding `/v1/`. Comments are not nodes, and JSX text (a
 * page's prose, e.g. "Manifest jobs (POST /v1/jobs)") is documentation like them: neither is counted.
 */
function tsLiteralsWithRoute(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) {
      if (node.text.includes("/v1/")) found.push(node.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Python: each file's string constants holding `/v1/` (f-string parts included), by file; a string that is a
 * statement of its own (a docstring) is documentation and not counted. Read with Python's own `ast`.
 */
const PY_SCAN = `
import ast, json, sys
out = {}
for name, text in json.load(sys.stdin).items():
    tree = ast.parse(text, name)
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and "/v1/" in n.value and id(n) not in docs]
    hits = [n.value for n in sorted(nodes, key=lambda n: (n.lineno, n.col_offset))]
    if hits:
        out[name] = hits
print(json.dumps(out))
`;

function python(code: string, input: string): string {
  const res = spawnSync(PYTHON, ["-c", code], {
    cwd: ROOT,
    input,
    encoding: "utf8",
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
  });
  if (res.status !== 0) throw new Error(`${PYTHON} exited with ${res.status}: ${res.stderr}`);
  return res.stdout;
}

function pyLiteralsWithRoute(files: Record<string, string>): Record<string, string[]> {
  return JSON.parse(python(PY_SCAN, JSON.stringify(files))) as Record<string, string[]>;
}

describe("the clients' generated route modules", () => {
  it.each(GENERATED_CLIENT_FILES.map(([file, render]) => [file, render] as const))(
    "%s is what pnpm gen:clients renders",
    (file, render) => {
      const current = readFileSync(path.join(ROOT, file), "utf8");
      // on a mismatch: run `pnpm gen:clients` and commit the result
      expect(current === render()).toBe(true);
    },
  );

  it("list every operation of the catalog, in its order", () => {
    expect(clientRoutes().map((r) => r.operationId)).toEqual(Object.keys(OPERATIONS));
    const listed = python(
      "import json, sys; sys.path.insert(0, 'clients/python'); from labelgate._routes import ROUTES; print(json.dumps([[k, *v] for k, v in ROUTES.items()]))",
      "",
    );
    expect(JSON.parse(listed)).toEqual(clientRoutes().map((r) => [r.operationId, r.method, r.path, r.auth]));
  });

  it("Python's route fills and encodes each path as the catalog's pathOf does", () => {
    const value = "a/b c?é";
    const cases = Object.entries(OPERATIONS).map(([id, decl]) => {
      const params = Object.fromEntries([...decl.path.matchAll(/\{(\w+)\}/g)].map(([, name = ""]) => [name, value]));
      return { id, params, expected: [decl.method.toUpperCase(), pathOf(id as OperationId, params as never)] };
    });
    const filled = python(
      "import json, sys; sys.path.insert(0, 'clients/python'); from labelgate._routes import route; print(json.dumps([route(c['id'], **c['params']) for c in json.load(sys.stdin)]))",
      JSON.stringify(cases),
    );
    expect(JSON.parse(filled)).toEqual(cases.map((c) => c.expected));
    expect(cases.find((c) => c.id === "redeliverWebhookDelivery")?.expected[1]).toBe(
      "/v1/webhooks/a%2Fb%20c%3F%C3%A9/deliveries/a%2Fb%20c%3F%C3%A9/redeliver",
    );
    // a missing or unknown parameter is the caller's mistake, never a path with a hole
    const errors = python(
      [
        "import json, sys; sys.path.insert(0, 'clients/python'); from labelgate._routes import route",
        "out = []",
        "for op, params in [('getTask', {}), ('getTask', {'id': 't', 'x': 'y'}), ('listBatches', {'id': 't'})]:",
        "    try:",
        "        route(op, **params); out.append('ok')",
        "    except ValueError as err:",
        "        out.append(type(err).__name__)",
        "print(json.dumps(out))",
      ].join("\n"),
      "",
    );
    expect(JSON.parse(errors)).toEqual(["ValueError", "ValueError", "ValueError"]);
  });
});

describe("a route path is written in the catalog only", () => {
  it("no TS client source (SDK, CLI, web apps) holds a `/v1/` literal", () => {
    const files = TS_ROOTS.flatMap((dir) => filesUnder(dir, /\.(ts|tsx|mts)$/));
    expect(files.length).toBeGreaterThan(40);
    const hits = files.flatMap((file) =>
      tsLiteralsWithRoute(file, readFileSync(path.join(ROOT, file), "utf8")).map((s) => `${file}: ${s}`),
    );
    // use the catalog instead: OPERATIONS[id].path, pathOf(id, params), or a namespace's op(id, ...)
    expect(hits).toEqual([]);
  });

  it("no Python client source holds a `/v1/` string outside the generated module", () => {
    const files = PY_ROOTS.flatMap((dir) => filesUnder(dir, /\.py$/)).filter((file) => !GENERATED.has(file));
    expect(files).toEqual(expect.arrayContaining(["clients/python/labelgate/client.py", "clients/python/labelgate/labeler.py"]));
    const texts = Object.fromEntries(files.map((file) => [file, readFileSync(path.join(ROOT, file), "utf8")]));
    // use the generated module instead: `self._t.request(*route("getTask", id=task_id))`
    expect(pyLiteralsWithRoute(texts)).toEqual({});
  });

  it("the scans find a planted path and pass over comments and docstrings", () => {
    expect(
      tsLiteralsWithRoute(
        "planted.tsx",
        [
          "/** `GET /v1/tasks/{id}` */",
          "// GET /v1/jobs",
          'const a = "/v1/tasks";',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the planted source is text
          "const b = `${base}/v1/jobs/${id}`;",
          "const c = <p>POST /v1/batches</p>;",
          'const d = <a href="/v1/audits">audits</a>;',
        ].join("\n"),
      ),
    ).toEqual(["/v1/tasks", "/v1/jobs/", "/v1/audits"]);
    const planted = [
      '"""Module: ``/v1/tasks``."""',
      "# GET /v1/jobs",
      "def f(task_id):",
      '    """``GET /v1/tasks/{id}``."""',
      '    return t.request("GET", f"/v1/tasks/{task_id}/result")',
      "X = '/v1/labeling/claims'",
      "",
    ].join("\n");
    expect(pyLiteralsWithRoute({ "planted.py": planted })).toEqual({ "planted.py": ["/v1/tasks/", "/v1/labeling/claims"] });
  });
});
