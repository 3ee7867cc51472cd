/**
 * Builds the anchor contract (`packages/chain/contracts/Anchor.sol`) with the pinned `solc` npm compiler (no download:
 * the npm package bundles soljson) and writes the committed artifact `Anchor.json` beside it
 * ({contractName, abi, bytecode, deployedBytecode, compiler: {version, settings}}).
 * Run: `pnpm contracts:build`. `packages/chain/test/anchor-artifact.test.ts` recompiles and compares, so a
 * source change without a rebuild fails the tests.
 * Compiler input: Solidity standard JSON (https://docs.soliditylang.org/en/v0.8.37/using-the-compiler.html).
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import solc from "solc";

/** The compiler version the artifact must be built with (the `solc` package pinned in packages/chain/package.json). */
export const SOLC_VERSION = "0.8.37+commit.f401782d.Emscripten.clang";
export const SOURCE_PATH = path.join(__dirname, "Anchor.sol");
export const ARTIFACT_PATH = path.join(__dirname, "Anchor.json");

/**
 * Optimizer on with many runs (the contract is deployed once and called for every anchor, so call gas is
 * what counts); EVM version pinned so the bytecode does not change with the compiler's default and runs on
 * any chain at or after Cancun.
 */
export const SETTINGS = {
  optimizer: { enabled: true, runs: 1_000_000 },
  evmVersion: "cancun",
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
} as const;

export interface AnchorArtifact {
  contractName: "Anchor";
  abi: unknown[];
  bytecode: `0x${string}`;
  deployedBytecode: `0x${string}`;
  compiler: { version: string; settings: typeof SETTINGS };
}

interface SolcOutput {
  errors?: { severity: "error" | "warning" | "info"; formattedMessage: string }[];
  contracts?: Record<
    string,
    Record<string, { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
  >;
}

/**
 * Compiles `source` (default: the committed Anchor.sol) and returns the artifact.
 * @throws Error when the `solc` package is not the pinned version or the compiler reports an error.
 */
export function compileAnchor(source = readFileSync(SOURCE_PATH, "utf8")): AnchorArtifact {
  const version = solc.version() as string;
  if (version !== SOLC_VERSION) throw new Error(`solc ${version} installed, the artifact is built with ${SOLC_VERSION}`);
  const input = { language: "Solidity", sources: { "Anchor.sol": { content: source } }, settings: SETTINGS };
  const output = JSON.parse(solc.compile(JSON.stringify(input)) as string) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
  const contract = output.contracts?.["Anchor.sol"]?.Anchor;
  if (!contract) throw new Error("solc output has no Anchor contract");
  return {
    contractName: "Anchor",
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
    deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
    compiler: { version, settings: SETTINGS },
  };
}

if (require.main === module) {
  const artifact = compileAnchor();
  writeFileSync(ARTIFACT_PATH, `${JSON.stringify(artifact, null, 2)}\n`);
  process.stdout.write(`wrote ${path.relative(process.cwd(), ARTIFACT_PATH)} (solc ${artifact.compiler.version})\n`);
}
