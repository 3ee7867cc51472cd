import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Anvil, createAnchorClient, startAnvil } from "@labelgate/chain/node";
import { type AnchoredBatch, anchorBatch, fundedKey, LOCAL_SETTLEMENT, sampleRecords } from "../../chain/test/helpers";
import { type CliRun, runCli } from "./run-cli";

const API_KEY = "sk_test_verify_cli";

let anvil: Anvil;
let batch: AnchoredBatch;
let server: Server;
let baseUrl: string;
const answers = new Map<string, { status: number; body: unknown }>();
const seenKeys: string[] = [];

beforeAll(async () => {
  anvil = await startAnvil();
  const client = await createAnchorClient({ rpcUrl: anvil.rpcUrl, privateKey: await fundedKey(anvil.rpcUrl) });
  await client.deploy();
  batch = await anchorBatch(client, sampleRecords(3, 1));
  const [good, tampered] = [batch.results[1], { ...batch.results[2], confidence: 0.5 }];
  answers.set("tsk_good", { status: 200, body: { ...good, task_id: good?.task_id } });
  answers.set("tsk_tampered", { status: 200, body: tampered });
  answers.set("tsk_local", { status: 200, body: { ...good, settlement: LOCAL_SETTLEMENT } });
  answers.set("tsk_labeling", {
    status: 202,
    body: { task_id: "tsk_labeling", status: "labeling", labels_collected: 1, consensus_threshold: 3 },
  });
  server = createServer((req, res) => {
    seenKeys.push(String(req.headers.authorization));
    const m = /^\/v1\/tasks\/([^/]+)\/result$/.exec(req.url ?? "");
    const answer = m ? answers.get(m[1] as string) : undefined;
    if (!answer) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "task not found" }));
      return;
    }
    res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await anvil?.stop();
});

/** The CLI as a process against the fake gateway (its key and URL), `env` added. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(args, { LABELGATE_API_KEY: API_KEY, LABELGATE_URL: baseUrl, ...env });
}

describe("labelgate verify", () => {
  it("prints an ok verdict and exits 0 for an anchored result (RPC URL from LABELGATE_RPC_URL)", async () => {
    const ran = await cli(["verify", "tsk_good"], { LABELGATE_RPC_URL: anvil.rpcUrl });
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({
      task_id: "tsk_good",
      ok: true,
      ledger_txid: batch.txid,
      leaf_index: 1,
      tree_size: 3,
      sequence: 2,
      confirmations: 1,
    });
    expect(seenKeys).toContain(`Bearer ${API_KEY}`);
  });

  it("exits 1 with the reason for a tampered result, a local settlement and an unsettled task", async () => {
    const tampered = await cli(["verify", "tsk_tampered", "--rpc-url", anvil.rpcUrl]);
    expect(tampered.code).toBe(1);
    expect(JSON.parse(tampered.stdout)).toMatchObject({ task_id: "tsk_tampered", ok: false, reason: "leaf_mismatch" });
    expect(tampered.stderr).toMatch(/does not verify: leaf_mismatch/);
    const local = await cli(["verify", "tsk_local", "--rpc-url", anvil.rpcUrl]);
    expect(local.code).toBe(1);
    expect(JSON.parse(local.stdout)).toMatchObject({ ok: false, reason: "not_anchored" });
    const labeling = await cli(["verify", "tsk_labeling", "--rpc-url", anvil.rpcUrl]);
    expect(labeling.code).toBe(1);
    expect(JSON.parse(labeling.stdout)).toMatchObject({ ok: false, reason: "not_settled" });
    const more = await cli(["verify", "tsk_good", "--rpc-url", anvil.rpcUrl, "--confirmations", "5"]);
    expect(more.code).toBe(1);
    expect(JSON.parse(more.stdout)).toMatchObject({ ok: false, reason: "insufficient_confirmations", required: 5 });
  });

  it("exits 2 without an RPC URL, 1 for an unknown task", async () => {
    const noRpc = await cli(["verify", "tsk_good"]);
    expect(noRpc.code).toBe(2);
    expect(noRpc.stderr).toMatch(/--rpc-url or set LABELGATE_RPC_URL/);
    const unknown = await cli(["verify", "tsk_nope", "--rpc-url", anvil.rpcUrl]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
  });
});
