/**
 * Both web apps on a phone (issue 28 item 10), in Debian's Chromium at 390 × 844 px against a real labelgate
 * settling on an anvil chain: no page is wider than the screen (`scrollWidth` of the document at most 390);
 * the console's sidebar collapses into a row above the page; a settlement's leaf, root and proof hashes are
 * cut with an ellipsis on one line, each with a copy button on screen; the labeler app's header shows "Keys"
 * and "Sign out" whole. Screenshots with `pnpm screenshots` (docs/screenshots/phone-*.png).
 */
import { type Anvil, startAnvil } from "@labelgate/chain/node";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { fundedKey } from "../../packages/chain/test/helpers";
import { scaled } from "../env";
import { createLabeler, eventually, label, registerCustomer, type System, startSystem, taskBody } from "../system";
import * as web from "./browser";

const WIDTH = 390;

let anvil: Anvil;
let sys: System;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let watch: web.PageWatch;
let images: Awaited<ReturnType<typeof web.imageServer>>;
let customer: { id: string; key: string };
let labelerKeys: string[] = [];

beforeAll(async () => {
  anvil = await startAnvil();
  const env = { LEDGER: "evm", EVM_RPC_URL: anvil.rpcUrl, EVM_PRIVATE_KEY: await fundedKey(anvil.rpcUrl), ANCHOR_INTERVAL_MS: "200" };
  [browser, sys, images] = await Promise.all([web.launchBrowser(), startSystem({ isolatedDatabase: true, env }), web.imageServer()]);
  customer = await registerCustomer(sys, 1000);
  labelerKeys = [(await createLabeler(sys, "Ana")).key, (await createLabeler(sys, "Ben")).key];
  ({ context, page, watch } = await web.watchedPage(browser));
  await page.setViewportSize({ width: WIDTH, height: 844 });
}, scaled(90_000));

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await images?.close();
  await sys?.close();
  await anvil?.stop();
});

/** The page's width beyond the screen, px (0: nothing to scroll sideways). */
async function overflow(p: Page): Promise<number> {
  return (await p.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")) as number;
}

/** Expects the element's box within the screen's width. */
async function onScreen(what: string, locator: ReturnType<Page["locator"]>): Promise<void> {
  const box = await locator.boundingBox();
  expect({ what, box: box !== null }).toEqual({ what, box: true });
  if (!box) return;
  expect({ what, left: box.x >= 0, right: box.x + box.width <= WIDTH }).toEqual({ what, left: true, right: true });
  // and not cut by its container: its whole content shows
  const cut = await locator.evaluate((e: { scrollWidth: number; clientWidth: number }) => e.scrollWidth > e.clientWidth);
  expect({ what, cut }).toEqual({ what, cut: false });
}

it(
  "the console at 390 px: collapsed navigation, no page wider than the screen, hashes cut with copy",
  async () => {
    const batch = await sys.api<{ batch_id: string; task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: customer.key,
      body: { tasks: [0, 1, 2].map((i) => taskBody({ consensus_threshold: 2, data_url: images.url(i) })) },
    });
    expect(batch.status).toBe(202);
    for (const taskId of batch.body.task_ids)
      for (const key of labelerKeys) expect((await label(sys, key, taskId, "cat")).status).toBe(201);
    const taskId = batch.body.task_ids[0] as string;
    await eventually(async () => {
      const r = await sys.api<{ settlement: { ledger: string; evm?: unknown } }>("GET", `/v1/tasks/${taskId}/result`, {
        token: customer.key,
      });
      return r.status === 200 && JSON.stringify(r.body).includes("merkle_root") ? true : undefined;
    }, 30_000);

    await page.goto(`${sys.baseUrl}/console/`);
    await page.getByLabel("Customer API key").fill(customer.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    // the navigation is a row under the header, above the page, not a column beside it
    const nav = page.getByRole("navigation", { name: "Console" });
    const main = page.locator("#main");
    const [navBox, mainBox] = [await nav.boundingBox(), await main.boundingBox()];
    expect(navBox && mainBox && navBox.y + navBox.height <= mainBox.y + 1).toBe(true);
    expect(mainBox && mainBox.width >= WIDTH - 2).toBe(true);

    const pages: [string, string][] = [
      ["overview", "/console/"],
      ["tasks", "/console/tasks"],
      ["batches", "/console/batches"],
      ["batch", `/console/batches/${batch.body.batch_id}`],
      ["webhooks", "/console/webhooks"],
      ["billing", "/console/billing"],
      ["quality", "/console/quality"],
      ["task", `/console/tasks/${taskId}`],
    ];
    for (const [name, path] of pages) {
      await page.goto(`${sys.baseUrl}${path}`);
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      if (name === "task") await page.getByRole("button", { name: "Copy leaf" }).waitFor();
      else await page.waitForLoadState("networkidle");
      expect({ page: name, overflow: await overflow(page) }).toEqual({ page: name, overflow: 0 });
      await web.screenshot(page, `phone-console-${name}`);
    }
    // on the task: the leaf hash is cut on one line, its copy button on screen
    const leaf = page.locator(".hex", { has: page.getByRole("button", { name: "Copy leaf" }) });
    const text = leaf.locator(".hex-text");
    const cut = await text.evaluate((e: { scrollWidth: number; clientWidth: number; getBoundingClientRect(): { height: number } }) => [
      e.scrollWidth,
      e.clientWidth,
      e.getBoundingClientRect().height,
    ]);
    expect(cut[0]).toBeGreaterThan(cut[1] as number);
    expect(cut[2]).toBeLessThan(30);
    await onScreen("Copy leaf", page.getByRole("button", { name: "Copy leaf" }));
    await onScreen("Copy Merkle root", page.getByRole("button", { name: "Copy Merkle root" }));
    expect(await web.accessibilityViolations(page)).toEqual([]);
    expect(web.unexpectedProblems(watch)).toEqual([]);
  },
  scaled(120_000),
);

it(
  "the labeler app at 390 px: the header shows Keys and Sign out whole; the item fits the screen",
  async () => {
    const res = await sys.api<{ task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: customer.key,
      body: { tasks: [3].map((i) => taskBody({ consensus_threshold: 1, data_url: images.url(i) })) },
    });
    expect(res.status).toBe(202);
    const labelerPage = await context.newPage();
    await labelerPage.setViewportSize({ width: WIDTH, height: 844 });
    await labelerPage.goto(`${sys.baseUrl}/label/`);
    await labelerPage.getByLabel("Labeler key").fill(labelerKeys[0] as string);
    await labelerPage.keyboard.press("Enter");
    await labelerPage.locator("article[data-task-id]").waitFor({ timeout: 15_000 });
    await labelerPage.locator("article[data-task-id] img").waitFor();
    for (const name of ["Keys", "Sign out"]) await onScreen(name, labelerPage.getByRole("button", { name, exact: true }));
    expect(await overflow(labelerPage)).toBe(0);
    await web.screenshot(labelerPage, "phone-label-item");
    await labelerPage.close();
  },
  scaled(60_000),
);
