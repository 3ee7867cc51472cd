/**
 * Bench of the chain-free settlement checks (`pnpm bench:chain`): building the RFC 9162 tree of a full
 * batch (1,024 leaves: leaf bytes, leaf hashes, inner nodes), producing every proof, and
 * `verifySettlementLocal` per proof (record rebuilt from the result, canonical JSON, leaf comparison, fold of
 * 10 siblings): the part of `verifySettlement` that is not the RPC call. Target: < 10 ms per proof.
 * Prints one JSON line per figure (medians of `--runs`, default 7) to stdout.
 * Options: --leaves N (default 1024), --runs N. The records are the tests' sample records (test/helpers.ts).
 */
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { buildMerkleTree, evmSettlement, leafBytes, proofFromTree, verifySettlementLocal } from "../src/index";
import { resultOf, sampleRecords } from "../test/helpers";

const { values } = parseArgs({ options: { leaves: { type: "string", default: "1024" }, runs: { type: "string", default: "7" } } });
const leaves = Number(values.leaves);
const runs = Number(values.runs);
if (!Number.isSafeInteger(leaves) || leaves < 1 || !Number.isSafeInteger(runs) || runs < 1)
  throw new Error("--leaves and --runs must be positive whole numbers");

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const print = (figure: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(figure)}\n`);

const batch = sampleRecords(leaves);
const build: number[] = [];
const proofs: number[] = [];
const verify: number[] = [];
for (let run = 0; run < runs; run++) {
  let t = performance.now();
  const tree = buildMerkleTree(batch.map(leafBytes));
  build.push(performance.now() - t);

  t = performance.now();
  for (let i = 0; i < leaves; i++) proofFromTree(tree, i);
  proofs.push((performance.now() - t) / leaves);

  const anchor = { txid: `0x${"ab".repeat(32)}`, chainId: 31337, blockNumber: 10, contract: `0x${"cd".repeat(20)}` } as const;
  const results = batch.map((r, i) => resultOf(r, evmSettlement(r, tree, i, anchor)));
  t = performance.now();
  for (const result of results) {
    if (!verifySettlementLocal(result).ok) throw new Error(`leaf ${result.task_id} did not verify`);
  }
  verify.push((performance.now() - t) / leaves);
}
print({ bench: "merkle_build", leaves, ms: Number(median(build).toFixed(3)), runs });
print({ bench: "inclusion_proof", leaves, ms_per_proof: Number(median(proofs).toFixed(4)), runs });
print({ bench: "verify_settlement_local", leaves, ms_per_proof: Number(median(verify).toFixed(4)), target_ms: 10, runs });
