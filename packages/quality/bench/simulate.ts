/**
 * Offline simulator of the `pnpm replay` protocol (see sim-lib.ts): prints one JSON line per run.
 *
 * Usage (from the repository root):
 *   pnpm exec tsx packages/quality/bench/simulate.ts [options] <dataset folder>...
 * Options:
 *   --policy confidence,threshold,onecoin   policies to run (default: all three)
 *   --target 0.95                            T of the confidence policy (comma list allowed)
 *   --gold-share 0.05                        S
 *   --seed 1                                 N (comma list allowed, or a range "1-5")
 *   --refit 50,200,1000                      R: refit after every R accepted labels (comma list); "system" = the
 *                                            service's cadence (1 s sweeps, refit at 5% new labels)
 *   --rate 180                               labels per second of the replay (sweep spacing of --refit system)
 *   --synthetic                              also run the synthetic scenarios of synthetic.ts
 *   --references                             print the MV and DS references of each dataset first
 *   --stop-rule optimistic:0.05              an extra stopping rule of the confidence policy, tried and not in the
 *                                            service (sim-lib.ts `SimConfig.stopRule`): optimistic:EPS,
 *                                            expected:EPS or futile
 */
import path from "node:path";
import { type Dataset, loadDataset } from "./dataset";
import {
  DEFAULT_SIM,
  type OverlapPoint,
  overlapAccuracyAt,
  pickGold,
  references,
  type SimConfig,
  type SimPolicy,
  simulate,
  uniformOverlap,
} from "./sim-lib";
import { SCENARIOS, syntheticDataset } from "./synthetic";

function list(value: string | undefined, fallback: string): string[] {
  return (value ?? fallback).split(",").flatMap((v) => {
    const range = /^(\d+)-(\d+)$/.exec(v);
    if (!range) return [v];
    const out: string[] = [];
    for (let i = Number(range[1]); i <= Number(range[2]); i++) out.push(String(i));
    return out;
  });
}

/** `--stop-rule`: "optimistic:0.05", "expected:0.01" or "futile". @throws Error on anything else */
function parseStopRule(value: string | undefined): SimConfig["stopRule"] {
  if (value === undefined) return undefined;
  if (value === "futile") return { kind: "futile" };
  const m = /^(optimistic|expected):([0-9.]+)$/.exec(value);
  if (!m) throw new Error(`--stop-rule: expected optimistic:EPS, expected:EPS or futile, got ${value}`);
  return { kind: m[1] as "optimistic" | "expected", epsilon: Number(m[2]) };
}

function parseArgs(argv: readonly string[]): { flags: Map<string, string>; folders: string[] } {
  const flags = new Map<string, string>();
  const folders: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--synthetic" || arg === "--references" || arg === "--overlap") flags.set(arg.slice(2), "true");
    else if (arg.startsWith("--")) {
      const value = argv[i + 1];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      flags.set(arg.slice(2), value);
      i++;
    } else folders.push(arg);
  }
  return { flags, folders };
}

function main(): void {
  const { flags, folders } = parseArgs(process.argv.slice(2));
  const policies = list(flags.get("policy"), "confidence,threshold,onecoin") as SimPolicy[];
  for (const p of policies) if (!["confidence", "threshold", "onecoin"].includes(p)) throw new Error(`unknown policy ${p}`);
  const targets = list(flags.get("target"), "0.95").map(Number);
  const seeds = list(flags.get("seed"), "1").map(Number);
  const refits = list(flags.get("refit"), "50,200,1000").map((v) => (v === "system" ? 0 : Number(v)));
  const labelsPerSecond = Number(flags.get("rate") ?? DEFAULT_SIM.labelsPerSecond);
  const goldShare = Number(flags.get("gold-share") ?? DEFAULT_SIM.goldShare);
  const datasets: Dataset[] = folders.map((f) => loadDataset(path.resolve(f)));
  if (flags.has("synthetic")) for (const s of SCENARIOS) datasets.push(syntheticDataset(s));
  if (datasets.length === 0) throw new Error("usage: simulate.ts [options] <dataset folder>... (or --synthetic)");
  for (const ds of datasets) {
    const curves = new Map<string, OverlapPoint[]>();
    if (flags.has("references")) console.log(JSON.stringify({ dataset: ds.name, ...references(ds) }));
    for (const policy of policies) {
      for (const refitEvery of refits) {
        // The threshold policies have no gold and no target: one run per R and seed is enough.
        for (const target of policy === "confidence" ? targets : [DEFAULT_SIM.confidenceTarget]) {
          for (const seed of policy === "confidence" ? seeds : [seeds[0] ?? 1]) {
            const refitMode = flags.get("refit-mode") as "refit" | "unguarded" | undefined;
            const stopRule = parseStopRule(flags.get("stop-rule"));
            const result = simulate(ds, {
              ...DEFAULT_SIM,
              policy,
              confidenceTarget: target,
              goldShare,
              seed,
              refitEvery,
              labelsPerSecond,
              refitMode,
              ...(stopRule ? { stopRule } : {}),
            });
            if (flags.has("overlap")) {
              const gold = policy === "confidence" ? pickGold(ds, goldShare, seed) : new Set<string>();
              const key = [...gold].sort().join(",");
              let curve = curves.get(key);
              if (!curve) {
                curve = uniformOverlap(ds, gold);
                curves.set(key, curve);
              }
              const overlap = overlapAccuracyAt(curve, result.label_share, ds.options.length);
              console.log(JSON.stringify({ ...result, overlap: Math.round(overlap * 1e4) / 1e4 }));
            } else console.log(JSON.stringify(result));
          }
        }
      }
    }
  }
}

main();
