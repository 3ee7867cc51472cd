/**
 * The Python client's tests (clients/python/tests, standard library `unittest`) as part of `pnpm test`:
 * `python3 -m unittest discover`, which starts its own standalone stack (scripts/standalone.ts: embedded
 * Postgres, anvil, a temporary data folder, free ports; never this run's database or Redis) and stops it.
 * Nothing is installed from a Python registry: the package needs only the standard library. Fails on any
 * failed or erroring Python test, with the unittest output in the message.
 */
import { spawn } from "node:child_process";
import path from "node:path";

const ROOT = path.resolve(__dirname, "..");
const PYTHON = process.env.PYTHON ?? "python3";

function run(cmd: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: ROOT,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", PYTHONUNBUFFERED: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-200_000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output }));
  });
}

it(
  "passes the Python client's unittest suite against a real stack",
  async () => {
    const { code, output } = await run(PYTHON, ["-m", "unittest", "discover", "-s", "clients/python/tests", "-t", "clients/python", "-v"]);
    if (code !== 0) throw new Error(`python3 -m unittest exited with ${code}:\n${output.slice(-20_000)}`);
    expect(output).toMatch(/\nOK( \(skipped=\d+\))?\s*$/);
  },
  30 * 60_000,
);
