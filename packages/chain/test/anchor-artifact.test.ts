/**
 * The committed artifact packages/chain/contracts/Anchor.json is what Anchor.sol compiles to with the pinned
 * solc and the recorded settings (fails when the source changes without `pnpm contracts:build`), and the
 * typed ABI constant of @labelgate/chain is the artifact's ABI.
 */
import { readFileSync } from "node:fs";
import { ANCHOR_ABI } from "@labelgate/chain";
import { ARTIFACT_PATH, compileAnchor, SETTINGS, SOLC_VERSION, SOURCE_PATH } from "../contracts/build";

const committed = JSON.parse(readFileSync(ARTIFACT_PATH, "utf8")) as ReturnType<typeof compileAnchor>;

describe("contracts/Anchor.json", () => {
  const fresh = compileAnchor();

  it("holds the ABI and bytecode the source compiles to, with the recorded compiler and settings", () => {
    expect(committed.contractName).toBe("Anchor");
    expect(committed.compiler).toEqual({ version: SOLC_VERSION, settings: JSON.parse(JSON.stringify(SETTINGS)) });
    expect(committed.abi).toEqual(fresh.abi);
    expect(committed.bytecode).toBe(fresh.bytecode);
    expect(committed.deployedBytecode).toBe(fresh.deployedBytecode);
  });

  it("would not match a changed source", () => {
    const source = readFileSync(SOURCE_PATH, "utf8").replace("if (firstSequence > lastSequence)", "if (firstSequence >= lastSequence)");
    expect(compileAnchor(source).deployedBytecode).not.toBe(committed.deployedBytecode);
  });

  it("is the ABI exported as ANCHOR_ABI", () => {
    expect(JSON.parse(JSON.stringify(ANCHOR_ABI))).toEqual(committed.abi);
  });
});
