/**
 * The settlement verifier runs in a browser: `@labelgate/sdk/verify` bundles for the browser platform with
 * no Node built-in in its import graph (esbuild fails on one), and the bundle, served by a local HTTP server
 * to a real Chromium, verifies a batch anchored on a real anvil here (and rejects a tampered result).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { type Anvil, createAnchorClient, startAnvil } from "@labelgate/chain/node";
import { build } from "esbuild";
import { type Browser, chromium } from "playwright-core";
import { type AnchoredBatch, anchorBatch, fundedKey, sampleRecords } from "../../chain/test/helpers";

const ENTRY = path.resolve(__dirname, "../src/verify-settlement.ts");

let anvil: Anvil;
let batch: AnchoredBatch;
let server: Server;
let browser: Browser;
let bundle: string;
let inputs: string[];

beforeAll(async () => {
  const built = await build({
    entryPoints: [ENTRY],
    bundle: true,
    platform: "browser",
    format: "iife",
    globalName: "labelgateVerify",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  bundle = built.outputFiles[0]?.text ?? "";
  inputs = Object.keys(built.metafile.inputs);
  anvil = await startAnvil();
  const client = await createAnchorClient({ rpcUrl: anvil.rpcUrl, privateKey: await fundedKey(anvil.rpcUrl) });
  await client.deploy();
  batch = await anchorBatch(client, sampleRecords(5, 1));
  server = createServer((req, res) => {
    if (req.url === "/verify.js") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(bundle);
      return;
    }
    res.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><title>verify</title><script src="/verify.js"></script>');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu"],
  });
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await anvil?.stop();
});

describe("verifySettlement in a browser", () => {
  it("bundles without Node built-ins", () => {
    expect(inputs.length).toBeGreaterThan(10);
    expect(inputs.filter((i) => i.startsWith("node:") || /(^|\/)(crypto|fs|net|http|child_process)$/.test(i))).toEqual([]);
    expect(inputs.some((i) => i.includes("packages/chain/src/merkle.ts"))).toBe(true);
  });

  it("verifies an anchored result in Chromium and rejects a tampered one", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      const verdicts = await page.evaluate(
        async ({ result, rpcUrl }) => {
          const lg = (globalThis as unknown as { labelgateVerify: typeof import("../src/verify-settlement") }).labelgateVerify;
          const good = await lg.verifySettlement(result, { rpcUrl });
          const tampered = await lg.verifySettlement({ ...result, consensus_label: "x" }, { rpcUrl });
          return { good, tampered };
        },
        { result: batch.results[2], rpcUrl: anvil.rpcUrl },
      );
      expect(verdicts.good).toMatchObject({ ok: true, leaf_index: 2, tree_size: 5, sequence: 3 });
      expect(verdicts.tampered).toMatchObject({ ok: false, reason: "leaf_mismatch" });
    } finally {
      await page.close();
    }
  });
});
