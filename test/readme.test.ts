/**
 * The README runs as written (issue 29, "Docs a newcomer can follow"). Every fenced block of README.md is
 * one of the kinds below, and each kind is checked; a new block of another kind fails this test until it
 * is added here:
 * - the two commands (`pnpm install && pnpm start`, `pnpm test`): the scripts they name are the ones this
 *   test and CI run (`start` = scripts/standalone.ts, which this test starts; `.ci/run` ends in `pnpm test`);
 * - the curl quick start: run by bash (errexit, pipefail) against a standalone stack, as a user would run
 *   it, with LABELGATE_URL and DATA_DIR set and the admin token read from the file pnpm start keeps; and
 *   run where it must fail (no admin token, a wrong one, no server): it exits non-zero within 60 s with
 *   a message naming the cause;
 * - the SDK program (`ts`): type-checked as an ES module (`.mts`, strict) and run with `pnpm exec tsx`;
 * - `pnpm replay --limit 100`: run as written, on the dog sample shipped in data/crowd/dog;
 * - the Python client's pip line and example: run as written by clients/python/tests/test_docs.py (in a
 *   fresh venv, against a stack of its own; test/python-client.test.ts runs it), which this test checks;
 * - the layout (`text`): every path it names exists.
 * Besides: the README stays short, states the Node versions the code enforces, its relative links resolve,
 * and no document a user meets points out of the repository (`../shared`).
 *
 * The stack is `pnpm start`'s process (scripts/standalone.ts) on a database and Redis prefix of its own,
 * with its local chain (anvil) on a free port, as test/runtime.test.ts starts it, and without ADMIN_TOKEN:
 * it makes its own admin token and keeps it in DATA_DIR/admin-token, as on a newcomer's machine.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { assertSupportedNode, isSupportedNode, SUPPORTED_NODE } from "@labelgate/config";
import { dropDatabase } from "@labelgate/store";
import { parse } from "yaml";
import { runPrefix } from "./env";
import { ROOT, type ServiceProcess, startStandalone } from "./processes";
import { isolatedDatabaseUrl } from "./system";

jest.setTimeout(240_000);

interface Block {
  lang: string;
  code: string;
}

const README = readFileSync(path.join(ROOT, "README.md"), "utf8");

/** The fenced blocks of a markdown text, in order. */
function fencedBlocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```([\w-]*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1] ?? "", code: m[2] ?? "" }));
}

const blocks = fencedBlocks(README);
const KINDS = {
  twoCommands: (b: Block) => b.lang === "bash" && /^pnpm install && pnpm start\b/m.test(b.code),
  curl: (b: Block) => b.lang === "bash" && b.code.includes("curl ") && !b.code.includes('"bounding_box"'),
  typedCurl: (b: Block) => b.lang === "bash" && b.code.includes('"bounding_box"'),
  replay: (b: Block) => b.lang === "bash" && /^pnpm replay\b/m.test(b.code),
  pip: (b: Block) => b.lang === "bash" && /^pip install\b/m.test(b.code),
  python: (b: Block) => b.lang === "python",
  sdk: (b: Block) => b.lang === "ts",
  layout: (b: Block) => b.lang === "text",
} as const;

function only(kind: keyof typeof KINDS): Block {
  const found = blocks.filter(KINDS[kind]);
  if (found.length !== 1) throw new Error(`README.md: expected one ${kind} block, found ${found.length}`);
  return found[0] as Block;
}

/** Runs a command; resolves with its exit code and output (never rejects on a non-zero exit). */
function run(
  file: string,
  args: string[],
  options: { env?: Record<string, string>; timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd: ROOT, env: { ...process.env, ...options.env }, timeout: options.timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : null) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/** The last JSON object printed on stdout (pretty-printed by jq or one line). */
function lastJson(stdout: string): Record<string, unknown> {
  const start = stdout.lastIndexOf("\n{");
  return JSON.parse(start < 0 ? stdout : stdout.slice(start + 1)) as Record<string, unknown>;
}

describe("README.md, read", () => {
  it("has only blocks of a kind this test runs or checks", () => {
    const kinds = Object.values(KINDS);
    const unknown = blocks.filter((b) => !kinds.some((k) => k(b)));
    expect(unknown).toEqual([]);
    expect(blocks.length).toBeGreaterThanOrEqual(5);
  });

  it("leaves the Python client's blocks to the Python tests, which run them as written", () => {
    expect(only("pip").code.trim()).toBe("pip install --no-build-isolation ./clients/python");
    expect(only("python").code).toMatch(/^from labelgate import .*\bClient\b/m);
    // it labels its own task, so it finishes without anyone else (issue 40)
    expect(only("python").code).toContain("LabelerClient(");
    const pyTest = readFileSync(path.join(ROOT, "clients/python/tests/test_docs.py"), "utf8");
    expect(pyTest).toContain('python_blocks(REPO / "README.md", "## Python client")');
    expect(pyTest).toContain("pip install --no-build-isolation");
    expect(README).toMatch(/^## Python client$/m);
  });

  it("is at most about 260 lines (220 before issue 40's settings, stop and reset, and loud quick start)", () => {
    expect(README.split("\n").length).toBeLessThanOrEqual(260);
  });

  it("names pnpm start's settings, each in docs/operations.md's tables, and links to them", () => {
    const start = README.slice(README.indexOf("`pnpm start` runs the gateway"), README.indexOf("**Stop**"));
    const named = [...start.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1] as string);
    expect(named).toEqual(expect.arrayContaining(["PORT", "DATA_DIR", "ADMIN_TOKEN"]));
    const operations = readFileSync(path.join(ROOT, "docs/operations.md"), "utf8");
    for (const name of named) {
      expect({ name, documented: new RegExp(`^\\| [^|\\n]*\`${name}\``, "m").test(operations) }).toEqual({ name, documented: true });
    }
    expect(start).toContain("(docs/operations.md#configuration)");
    expect(operations).toMatch(/^## Configuration$/m);
  });

  it("names the two commands that CI and this test run", () => {
    const lines = only("twoCommands")
      .code.split("\n")
      .map((l) => l.replace(/#.*$/, "").trim())
      .filter(Boolean);
    expect(lines).toEqual(["pnpm install && pnpm start", "pnpm test"]);
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    // `pnpm start` relays signals to scripts/standalone.ts (scripts/start.ts), which startStandalone (below) runs
    expect(pkg.scripts.start).toBe("exec node --import tsx scripts/start.ts");
    expect(pkg.scripts.test).toMatch(/\bjest\b/);
    const ci = readFileSync(path.join(ROOT, ".ci/run"), "utf8").trim().split("\n");
    expect(ci[ci.length - 1]).toBe("pnpm test");
  });

  it("states the one Node range that package.json declares and the runtime enforces", () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(SUPPORTED_NODE);
    // and pnpm install refuses another Node
    expect(parse(readFileSync(path.join(ROOT, "pnpm-workspace.yaml"), "utf8"))).toMatchObject({ engineStrict: true });
    expect(README).toContain(`Node \`${SUPPORTED_NODE}\``);
    expect(isSupportedNode(process.versions.node)).toBe(true);
    for (const v of ["20.19.0", "20.20.2", "22.12.0", "23.0.0", "24.11.1"]) expect({ v, ok: isSupportedNode(v) }).toEqual({ v, ok: true });
    for (const v of ["18.20.0", "20.18.3", "21.7.3", "22.11.0", "garbage"]) expect({ v, ok: isSupportedNode(v) }).toEqual({ v, ok: false });
    // what pnpm start and every service say on another Node, before doing anything
    expect(() => assertSupportedNode("20.18.3")).toThrow(`labelgate needs Node ${SUPPORTED_NODE} (this is Node 20.18.3)`);
    expect(() => assertSupportedNode()).not.toThrow();
  });

  it("declares no Node range that a dependency refuses", () => {
    // every package of the lockfile (what a fresh install gets) must accept the lowest supported version of
    // each Node line
    const lock = parse(readFileSync(path.join(ROOT, "pnpm-lock.yaml"), "utf8")) as {
      packages: Record<string, { engines?: { node?: string }; cpu?: string[] }>;
      snapshots: Record<string, { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> }>;
    };
    // builds for other architectures only (rolldown's wasm32 fallback), never installed on x64 or arm64, and
    // the packages only they depend on
    const otherArch = new Set(
      Object.entries(lock.packages)
        .filter(([, e]) => e.cpu && !e.cpu.some((c) => c === "x64" || c === "arm64"))
        .map(([name]) => name),
    );
    const dependents = new Map<string, Set<string>>();
    const bare = (key: string) => key.replace(/\(.*$/, "");
    for (const [key, snap] of Object.entries(lock.snapshots)) {
      for (const [dep, version] of Object.entries({ ...snap.dependencies, ...snap.optionalDependencies })) {
        const id = `${dep}@${bare(version)}`;
        dependents.set(id, (dependents.get(id) ?? new Set()).add(bare(key)));
      }
    }
    const refused: string[] = [];
    for (const [name, entry] of Object.entries(lock.packages)) {
      const engines = entry.engines?.node;
      if (engines === undefined || otherArch.has(name)) continue;
      const by = [...(dependents.get(name) ?? [])];
      if (by.length > 0 && by.every((d) => otherArch.has(d))) continue;
      for (const v of ["20.19.0", "22.12.0"]) {
        if (!satisfies(v, engines)) refused.push(`${name} (engines.node ${engines}) refuses Node ${v}`);
      }
    }
    expect(Object.keys(lock.packages).length).toBeGreaterThan(100);
    expect(refused).toEqual([]);
    // the check itself refuses what it should
    expect([satisfies("20.19.0", ">=22"), satisfies("20.19.0", ">=22.12.0"), satisfies("20.19.0", "^20.19.0 || >=22.12.0")]).toEqual([
      false,
      false,
      true,
    ]);
  });

  it("lists only paths that exist in its layout, and links only to files that exist", () => {
    for (const line of only("layout").code.split("\n")) {
      const first = line.split(/\s{2,}/)[0]?.trim();
      if (!first) continue;
      // `packages/sdk, cli` and `deploy/, docker-compose.yml` name several paths
      const [head, ...more] = first.split(/,\s*/);
      const dir = path.dirname(head as string);
      for (const p of [head as string, ...more.map((m) => (m.includes("/") || m.includes(".") ? m : path.join(dir, m)))]) {
        expect({ path: p, exists: existsSync(path.join(ROOT, p)) }).toEqual({ path: p, exists: true });
      }
    }
    // docs/api.md is generated from the route catalog (issue 29, item 1) and lands with it
    const links = [...README.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1] as string).filter((l) => !/^https?:/.test(l));
    expect(links.length).toBeGreaterThan(5);
    for (const link of links.filter((l) => l !== "docs/api.md")) {
      expect({ link, exists: existsSync(path.join(ROOT, link)) }).toEqual({ link, exists: true });
    }
  });

  it("sends nobody out of the repository: no ../shared in the docs a user reads", () => {
    const files = ["README.md", "clients/python/README.md", "deploy/README.md"];
    for (const dir of ["docs", "docs/notes", "docs/decisions"]) {
      for (const f of readdirSync(path.join(ROOT, dir))) if (f.endsWith(".md")) files.push(path.join(dir, f));
    }
    for (const p of readdirSync(path.join(ROOT, "packages"))) {
      if (existsSync(path.join(ROOT, "packages", p, "README.md"))) files.push(path.join("packages", p, "README.md"));
    }
    const offending = files.filter(
      (f) => statSync(path.join(ROOT, f)).isFile() && /\.\.\/shared\b|\/work\/shared\b/.test(readFileSync(path.join(ROOT, f), "utf8")),
    );
    expect(offending).toEqual([]);
  });
});

describe("docs/decisions", () => {
  it("has one file per decision, each with a status and a date, all in the index and nothing else there", () => {
    const dir = path.join(ROOT, "docs", "decisions");
    const files = readdirSync(dir).filter((f) => /^\d{4}-[a-z0-9-]+\.md$/.test(f));
    expect(files.length).toBeGreaterThan(100);
    const index = readFileSync(path.join(dir, "README.md"), "utf8");
    const linked = [...index.matchAll(/\]\((\d{4}-[a-z0-9-]+\.md)\)/g)].map((m) => m[1]);
    expect([...linked].sort()).toEqual([...files].sort());
    const numbers = files.map((f) => f.slice(0, 4));
    expect(new Set(numbers).size).toBe(numbers.length);
    for (const f of files) {
      const text = readFileSync(path.join(dir, f), "utf8");
      expect({ f, heading: text.startsWith(`# ${f.slice(0, 4)}. `) }).toEqual({ f, heading: true });
      expect({ f, status: /^- Status: (Accepted|Superseded|Rejected)\b/m.test(text) }).toEqual({ f, status: true });
      expect({ f, date: /^- Date: \d{4}-\d{2}-\d{2}\b/m.test(text) }).toEqual({ f, date: true });
    }
  });
});

describe("README.md, run against pnpm start's process", () => {
  let databaseUrl = "";
  let dataDir = "";
  let stack: ServiceProcess | undefined;
  let url = "";
  /** the admin token pnpm start made and kept in DATA_DIR/admin-token */
  let adminToken = "";
  const scratch: string[] = [];

  beforeAll(async () => {
    databaseUrl = await isolatedDatabaseUrl();
    dataDir = mkdtempSync(path.join(os.tmpdir(), "lg-readme-"));
    stack = await startStandalone({
      databaseUrl,
      prefix: `${runPrefix()}:${randomBytes(4).toString("hex")}`,
      env: { DATA_DIR: dataDir, LOG_LEVEL: "info", ADMIN_TOKEN: undefined },
    });
    url = `http://127.0.0.1:${stack.port}`;
    adminToken = readFileSync(path.join(dataDir, "admin-token"), "utf8").trim();
  });

  afterAll(async () => {
    // SIGTERM: the process shuts down as on Ctrl-C, its local chain (anvil) with it; SIGKILL after 20 s
    if (stack) {
      stack.signal("SIGTERM");
      const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 20_000).unref());
      if ((await Promise.race([stack.exited, timer])) === "timeout") await stack.kill();
    }
    if (databaseUrl) await dropDatabase(databaseUrl);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    for (const f of scratch) rmSync(f, { force: true });
  });

  it("prints a banner that points nowhere outside the repository", () => {
    const banner = (stack as ServiceProcess).output.join("");
    expect(banner).toContain("labelgate is running (standalone)");
    expect(banner).toContain("pnpm replay");
    // the URLs the README says it prints
    for (const part of ["/console/", "/label/", "/docs/", "admin token"]) expect(banner).toContain(part);
    // the token and the absolute path of the file that keeps it (the quick start reads it from there)
    expect(banner).toContain(`admin token  ${adminToken}   (kept in ${path.join(dataDir, "admin-token")})`);
    expect(banner).not.toMatch(/\.\.\/shared/);
  });

  it("says how to stop and reset, naming every file pnpm start keeps in DATA_DIR", () => {
    const reset = README.slice(README.indexOf("**Reset**"), README.indexOf("`pnpm test` needs"));
    // this stack has no embedded Postgres (DATABASE_URL) nor an encryption-key file (ENCRYPTION_KEY)
    const kept = readdirSync(dataDir);
    expect(kept).toEqual(expect.arrayContaining(["admin-token", "anvil", "evm-key"]));
    for (const name of [...kept, "pg", "encryption-key"])
      expect({ name, named: reset.includes(`\`${name}`) }).toEqual({ name, named: true });
    expect(reset).toContain("`rm -rf .data`");
    expect(README).toMatch(/^\*\*Stop\*\* it with Ctrl-C \(or SIGTERM to its pid\)/m);
  });

  // what a newcomer meets when the quick start cannot work: a message naming the cause and a non-zero exit,
  // within 60 s (it used to print `cat: .data/admin-token: No such file or directory` and poll forever)
  // (the environment and the messages are functions: dataDir and url are known once the stack started)
  const failures: [string, () => Record<string, string>, () => RegExp[]][] = [
    [
      "no admin token (DATA_DIR elsewhere, no ADMIN_TOKEN)",
      () => ({ LABELGATE_URL: url, ADMIN_TOKEN: "", DATA_DIR: path.join(dataDir, "nowhere") }),
      () => [new RegExp(`no admin token: set ADMIN_TOKEN, or run this where ${dataDir}/nowhere/admin-token is`)],
    ],
    [
      "a wrong admin token",
      () => ({ LABELGATE_URL: url, ADMIN_TOKEN: `adm_${"x".repeat(32)}`, DATA_DIR: dataDir }),
      () => [/POST \/v1\/admin\/labelers: 401 \{"error":"invalid API key"\}/, new RegExp(`admin token is in ${dataDir}/admin-token`)],
    ],
    [
      "no server",
      () => ({ LABELGATE_URL: "http://127.0.0.1:9", ADMIN_TOKEN: adminToken, DATA_DIR: dataDir }),
      () => [/no answer from http:\/\/127\.0\.0\.1:9: is pnpm start running\?/],
    ],
  ];
  it.each(failures)("fails the curl quick start at once with a message naming the cause: %s", async (_what, env, messages) => {
    const out = await run("bash", ["-e", "-o", "pipefail", "-c", only("curl").code], { env: env(), timeoutMs: 60_000 });
    // null: killed by the 60 s deadline
    expect(out.code).not.toBeNull();
    expect(out.code).not.toBe(0);
    for (const message of messages()) expect(out.stderr).toMatch(message);
  });

  it("runs the curl quick start: register, submit, claim, label, settled result", async () => {
    // the admin token from the file pnpm start keeps in DATA_DIR, as on a newcomer's machine
    const out = await run("bash", ["-e", "-o", "pipefail", "-c", only("curl").code], {
      env: { LABELGATE_URL: url, ADMIN_TOKEN: "", DATA_DIR: dataDir },
      timeoutMs: 120_000,
    });
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: "" });
    const result = lastJson(out.stdout);
    expect(result).toMatchObject({ status: "settled", consensus_label: "cat", resolution: "consensus", labels_collected: 1 });
    expect((result.settlement as { ledger: string; ledger_txid: string }).ledger).toBe("evm");
    expect((result.settlement as { ledger_txid: string }).ledger_txid).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it("runs the box task of the task types' section in the shell of the quick start", async () => {
    const out = await run("bash", ["-e", "-o", "pipefail", "-c", `${only("curl").code}\n${only("typedCurl").code}`], {
      env: { LABELGATE_URL: url, ADMIN_TOKEN: adminToken },
      timeoutMs: 120_000,
    });
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = out.stdout.trim().split("\n");
    expect(JSON.parse(lines[lines.length - 2] as string)).toEqual({ boxes: [{ label: "car", x: 100, y: 50, w: 200, h: 100 }] });
    expect(JSON.parse(lines[lines.length - 1] as string)).toEqual({
      boxes: [{ label: "car", x: 100, y: 50, w: 200, h: 100, confidence: expect.any(Number), support: 1 }],
    });
  });

  it("type-checks the SDK program as an ES module and runs it with pnpm exec tsx", async () => {
    const file = path.join(ROOT, `.readme-quickstart-${randomBytes(4).toString("hex")}.mts`);
    scratch.push(file);
    writeFileSync(file, only("sdk").code);
    const tsc = await run(
      path.join(ROOT, "node_modules", ".bin", "tsc"),
      [
        "--noEmit",
        "--strict",
        "--module",
        "nodenext",
        "--moduleResolution",
        "nodenext",
        "--target",
        "es2022",
        "--skipLibCheck",
        "--types",
        "node",
        file,
      ],
      { timeoutMs: 120_000 },
    );
    expect({ code: tsc.code, out: tsc.stdout }).toEqual({ code: 0, out: "" });

    const reg = await fetch(`${url}/v1/customers`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Readme", email: `readme-${randomBytes(4).toString("hex")}@example.com` }),
    });
    expect(reg.status).toBe(201);
    const { api_key } = (await reg.json()) as { api_key: string };
    const out = await run("pnpm", ["exec", "tsx", path.basename(file)], {
      env: { LABELGATE_URL: url, LABELGATE_API_KEY: api_key, ADMIN_TOKEN: adminToken },
      timeoutMs: 120_000,
    });
    expect({ code: out.code, stderr: out.stderr }).toMatchObject({ code: 0 });
    const [settled, ...details] = out.stdout.trim().split("\n");
    expect(settled).toMatch(/^dog (0|1|0\.\d+) 0x[0-9a-f]{64}$/);
    // the caught ValidationError's details name the field
    expect(details.join("\n")).toMatch(/path: 'data_url'/);
  });

  it("runs pnpm replay --limit 100 on the shipped dog sample", async () => {
    const command = only("replay")
      .code.split("\n")
      .map((l) => l.replace(/#.*$/, "").trim())
      .filter(Boolean);
    expect(command).toEqual(["pnpm replay --limit 100"]);
    const [file, ...args] = (command[0] as string).split(" ");
    const out = await run(file as string, args, { env: { LABELGATE_URL: url, ADMIN_TOKEN: adminToken }, timeoutMs: 200_000 });
    expect({ code: out.code, tail: out.stderr.slice(-2000) }).toMatchObject({ code: 0 });
    const summary = lastJson(out.stdout);
    expect(summary).toMatchObject({ dataset: "dog", tasks: 100, settled: 100 });
    expect(summary.accuracy).toBeGreaterThan(0.5);
  });
});

// --- a minimal semver range check (npm's `engines` grammar as used by our dependencies) ---------------

type Version = [number, number, number];

function parseVersion(text: string): { v: Version; parts: number } | undefined {
  const m = /^v?(\d+|x|\*)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?/.exec(text.trim());
  if (!m) return undefined;
  const nums = [m[1], m[2], m[3]].filter((p) => p !== undefined && p !== "x" && p !== "*").map(Number);
  return { v: [nums[0] ?? 0, nums[1] ?? 0, nums[2] ?? 0], parts: nums.length };
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** True when version `v` satisfies an npm range such as `^20.19.0 || >=22.12.0`, `>= 18`, `20 || >=22`. */
function satisfies(version: string, range: string): boolean {
  const v = (parseVersion(version) as { v: Version }).v;
  return range.split("||").some((alt) => {
    const comparators = alt
      .trim()
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, "$1")
      .split(/\s+/)
      .filter(Boolean);
    if (comparators.length === 0 || comparators.includes("*")) return true;
    return comparators.every((c) => {
      const op = /^(>=|<=|>|<|=|\^|~)?/.exec(c)?.[1] ?? "";
      const parsed = parseVersion(c.slice(op.length));
      if (!parsed) return true;
      const { v: b, parts } = parsed;
      const upper = (i: number): Version => (i === 0 ? [b[0] + 1, 0, 0] : [b[0], b[1] + 1, 0]);
      switch (op) {
        case ">=":
          return compare(v, b) >= 0;
        case ">":
          return compare(v, b) > 0;
        case "<=":
          return compare(v, b) <= 0;
        case "<":
          return compare(v, b) < 0;
        case "^":
          return compare(v, b) >= 0 && compare(v, b[0] === 0 ? upper(1) : upper(0)) < 0;
        case "~":
          return compare(v, b) >= 0 && compare(v, parts <= 1 ? upper(0) : upper(1)) < 0;
        default:
          // `20`, `20.x`, `=20.1.2`
          return parts === 3 ? compare(v, b) === 0 : compare(v, b) >= 0 && compare(v, parts <= 1 ? upper(0) : upper(1)) < 0;
      }
    });
  });
}
