/**
 * The console's "verify" button on a real chain (contract §settlement, §web-apps): a real labelgate with
 * LEDGER=evm on an anvil chain started here (the anchorer deploys the contract on first start), a batch
 * submitted through the API and labeled until settled on chain; in Debian's Chromium the customer opens the
 * settled task in the console and presses "verify", which runs the SDK's `verifySettlement` in the browser
 * against the chain's RPC URL (the gateway's CSP allows that origin in connect-src). The page must say the
 * proof holds, naming the anchor transaction the result carries; no key in a URL, in localStorage or in the
 * gateway's logs; no serious or critical axe-core violation.
 */
import { type Anvil, startAnvil } from "@labelgate/chain/node";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { fundedKey } from "../../packages/chain/test/helpers";
import { scaled } from "../env";
import { createLabeler, eventually, label, registerCustomer, type System, startSystem, taskBody } from "../system";
import * as web from "./browser";

let anvil: Anvil;
let sys: System;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let watch: web.PageWatch;
const log = web.capturingLogger();
let customer: { id: string; key: string };
let labelerKeys: string[] = [];
let images: Awaited<ReturnType<typeof web.imageServer>>;

beforeAll(async () => {
  anvil = await startAnvil();
  const env = { LEDGER: "evm", EVM_RPC_URL: anvil.rpcUrl, EVM_PRIVATE_KEY: await fundedKey(anvil.rpcUrl), ANCHOR_INTERVAL_MS: "200" };
  [browser, sys, images] = await Promise.all([web.launchBrowser(), startSystem({ env, logger: log.logger }), web.imageServer()]);
  customer = await registerCustomer(sys, 1000);
  labelerKeys = [(await createLabeler(sys, "Ana")).key, (await createLabeler(sys, "Ben")).key];
  ({ context, page, watch } = await web.watchedPage(browser));
}, scaled(90_000));

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await images?.close();
  await sys?.close();
  await anvil?.stop();
});

it(
  "a customer follows a batch to settled on chain and verifies a task's proof in the browser",
  async () => {
    const batch = await sys.api<{ batch_id: string; task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: customer.key,
      body: { tasks: [0, 1].map((i) => taskBody({ consensus_threshold: 2, data_url: images.url(i) })) },
    });
    expect(batch.status).toBe(202);
    for (const taskId of batch.body.task_ids) {
      for (const key of labelerKeys) expect((await label(sys, key, taskId, "cat")).status).toBe(201);
    }
    const taskId = batch.body.task_ids[0] as string;

    await page.goto(`${sys.baseUrl}/console/`);
    await page.getByLabel("Customer API key").fill(customer.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    // the batch page follows the batch until every task is settled (anchored and confirmed)
    await page.goto(`${sys.baseUrl}/console/batches/${batch.body.batch_id}`);
    await page.getByText("batch completed").waitFor({ timeout: 30_000 });
    const result = await eventually(async () => {
      const r = await sys.api<{ status: string; settlement: { ledger: string; ledger_txid: string } }>(
        "GET",
        `/v1/tasks/${taskId}/result`,
        {
          token: customer.key,
        },
      );
      return r.status === 200 ? r.body : undefined;
    }, 30_000);
    expect(result.settlement.ledger).toBe("evm");

    await page.goto(`${sys.baseUrl}/console/tasks/${taskId}`);
    const button = page.getByTestId("verify-button");
    await button.waitFor();
    await button.click();
    const verdict = page.getByTestId("verify-result");
    await verdict.waitFor({ timeout: 20_000 });
    expect(await verdict.getAttribute("role")).toBe("status");
    expect(await verdict.textContent()).toContain(result.settlement.ledger_txid);
    expect(await web.accessibilityViolations(page)).toEqual([]);
    await web.screenshot(page, "console-task-verified");

    expect(web.unexpectedProblems(watch)).toEqual([]);
    const stored = await web.storage(page);
    expect(stored.local).not.toContain(customer.key);
    expect(watch.urls.some((u) => u.includes(customer.key))).toBe(false);
    expect(log.lines.some((l) => l.includes(customer.key))).toBe(false);
  },
  scaled(120_000),
);
