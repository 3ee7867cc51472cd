/**
 * A revision on a chain (docs/decisions/0261): LEDGER=evm on an anvil started here. A settled task's result is
 * rejected with the right answer; revision 2 is anchored as a new ledger leaf, and both the new result and the
 * revision 1 it lists verify with the chain alone, with the TypeScript verifier and with the Python client's
 * `verify_settlement` (the earlier anchor stays valid). The `task.revised` event carries the anchor transaction.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { type Anvil, startAnvil } from "@labelgate/chain/node";
import { type ReviewOutcome, type SettledResult, verifySettlement } from "@labelgate/sdk";
import { fundedKey } from "../../../packages/chain/test/helpers";
import * as harness from "../../../test/system";

let anvil: Anvil;
let s: harness.System;

beforeAll(async () => {
  anvil = await startAnvil();
  const env = { LEDGER: "evm", EVM_RPC_URL: anvil.rpcUrl, EVM_PRIVATE_KEY: await fundedKey(anvil.rpcUrl), ANCHOR_INTERVAL_MS: "200" };
  s = await harness.startSystem({ env });
});
afterAll(async () => {
  await s?.close();
  await anvil?.stop();
});

/** Python's verdict (`labelgate.settlement.verify_settlement`) on `result`: `{ok, reason}`. */
function pythonVerdict(result: unknown): Promise<{ ok: boolean; reason: string | null }> {
  const script =
    "import json, sys\nfrom labelgate.settlement import verify_settlement\n" +
    "v = verify_settlement(json.load(sys.stdin), sys.argv[1])\nprint(json.dumps({'ok': v.ok, 'reason': v.reason}))";
  return new Promise((resolve, reject) => {
    const child = spawn(process.env.PYTHON ?? "python3", ["-c", script, anvil.rpcUrl], {
      env: { ...process.env, PYTHONPATH: path.join(__dirname, "../../../clients/python") },
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`python exited ${code}: ${err}`))));
    child.stdin.end(JSON.stringify(result));
  });
}

it("anchors revision 2 as a new leaf; the new result and revision 1 both verify with the chain alone", async () => {
  const customer = await harness.registerCustomer(s);
  const labeler = await harness.createLabeler(s, "anchored-reviewer");
  const taskId = await harness.createTask(s, customer.key, { consensus_threshold: 1 });
  expect((await harness.label(s, labeler.key, taskId, "cat")).status).toBe(201);
  const first = (await harness.settledResult(s, customer.key, taskId)) as unknown as SettledResult;
  expect(first.settlement.ledger).toBe("evm");

  const reviewed = await s.api<ReviewOutcome>("POST", `/v1/tasks/${taskId}/review`, {
    token: customer.key,
    body: { verdict: "reject", answer: { label: "dog" } },
  });
  expect(reviewed.status).toBe(200);
  // not settled until its anchor is confirmed: the result waits (202), it never changes in place
  const revised = await harness.eventually(
    async () => {
      const res = await s.api<SettledResult>("GET", `/v1/tasks/${taskId}/result`, { token: customer.key });
      return res.status === 200 && res.body.revision === 2 ? res.body : undefined;
    },
    30_000,
    "revision 2 anchored",
  );
  expect(revised).toMatchObject({ consensus_label: "dog", resolution: "review", settlement: { ledger: "evm" } });
  expect(revised.settlement.ledger_txid).not.toBe(first.settlement.ledger_txid);
  const earlier = revised.revisions[0] as SettledResult["revisions"][number];
  expect(earlier.settlement).toEqual(first.settlement);

  for (const result of [revised, earlier]) {
    expect(await verifySettlement(result, { rpcUrl: anvil.rpcUrl })).toMatchObject({ ok: true });
    expect(await pythonVerdict(result)).toEqual({ ok: true, reason: null });
  }
  // the revision's result with the earlier revision's figures does not verify
  expect(await verifySettlement({ ...revised, consensus_label: "cat" }, { rpcUrl: anvil.rpcUrl })).toMatchObject({
    ok: false,
    reason: "leaf_mismatch",
  });
  const event = await s.db.prisma.event.findFirstOrThrow({ where: { taskId, type: "task.revised" } });
  expect(event.payload).toMatchObject({ revision: 2, ledger_txid: revised.settlement.ledger_txid, previous: { consensus_label: "cat" } });
});
