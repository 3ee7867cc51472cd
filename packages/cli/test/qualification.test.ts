/**
 * Qualification from the CLI (docs/contract.md §qualification, docs/decisions/0318): `labelgate settings set
 * --qualification 10,0.65` sets the exam, `settings get` shows it, `none` clears it, a malformed value exits 2
 * before any request; a CSV of `labelgate submit` takes a `gold_explanation` column, stored on its gold task
 * and refused by the gateway on a task that is not gold. The CLI runs as a process against this run's real
 * gateway, Postgres and Redis.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { registerCustomer, type System, startSystem } from "../../../test/system";
import { runCli } from "./run-cli";

let sys: System;
let env: Record<string, string>;
const dir = mkdtempSync(path.join(tmpdir(), "cli-qualification-"));

beforeAll(async () => {
  sys = await startSystem();
  const c = await registerCustomer(sys);
  env = { LABELGATE_URL: sys.baseUrl, LABELGATE_API_KEY: c.key };
});
afterAll(async () => {
  await sys.close();
  rmSync(dir, { recursive: true, force: true });
});

test("settings set --qualification sets, shows and clears the exam; a malformed value exits 2", async () => {
  const set = await runCli(["settings", "set", "--qualification", "10,0.65", "--min-labeler-accuracy", "0.6"], env);
  expect(set.code).toBe(0);
  expect(JSON.parse(set.stdout).quality).toMatchObject({
    min_labeler_accuracy: 0.6,
    qualification: { gold_tasks: 10, min_accuracy: 0.65 },
  });
  const got = await runCli(["settings", "get"], env);
  expect(JSON.parse(got.stdout).quality.qualification).toEqual({ gold_tasks: 10, min_accuracy: 0.65 });
  for (const bad of ["10", "0,0.5", "10,1.5", "ten,0.5"]) {
    const refused = await runCli(["settings", "set", "--qualification", bad], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--qualification");
  }
  // the gateway's bound (1 to 100 gold tasks) is its own 400
  const over = await runCli(["settings", "set", "--qualification", "101,0.65"], env);
  expect(over.code).not.toBe(0);
  expect(over.stderr).toContain("qualification.gold_tasks");
  const cleared = await runCli(["settings", "set", "--qualification", "none"], env);
  expect(JSON.parse(cleared.stdout).quality).toMatchObject({ min_labeler_accuracy: 0.6 });
  expect(JSON.parse(cleared.stdout).quality.qualification ?? null).toBeNull();
});

test("submit: a CSV gold_explanation column is stored on its gold task; on a task that is not gold it is refused", async () => {
  const file = path.join(dir, "gold.csv");
  writeFileSync(
    file,
    "data_url,question,options,gold_label,gold_explanation\n" +
      'https://img.example/g1.jpg,Ripe?,yes|no,yes,"Uniform colour, no green: ripe."\n' +
      "https://img.example/g2.jpg,Ripe?,yes|no,,\n",
  );
  const ran = await runCli(["submit", file], env);
  expect(ran.code).toBe(0);
  const ids = ran.stdout
    .trim()
    .split("\n")
    .map((l) => String((JSON.parse(l) as { task_id: string }).task_id));
  const rows = await sys.db.prisma.task.findMany({ where: { id: { in: ids } }, orderBy: { dataUrl: "asc" } });
  expect(rows.map((r) => [r.goldLabel, r.goldExplanation])).toEqual([
    ["yes", "Uniform colour, no green: ripe."],
    [null, null],
  ]);
  const notGold = path.join(dir, "not-gold.csv");
  writeFileSync(notGold, "data_url,question,options,gold_explanation\nhttps://img.example/g3.jpg,Ripe?,yes|no,why\n");
  const refused = await runCli(["submit", notGold], env);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain("gold_explanation");
});
