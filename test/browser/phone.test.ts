/**
 * Both web apps on a phone (issue 28 item 10, issue 40 items 5 to 7), in Debian's Chromium at 390 × 844 px
 * against a real labelgate settling on an anvil chain, with the repository's sample items (data/samples):
 * - every page of the console: the page is never wider than the screen (`scrollWidth` of the document at
 *   most 390), wide tables scroll in their own box, every navigation label shows whole without scrolling,
 *   task ids stay on one line, the task list's consensus column is reachable, and every figure carries its
 *   definition (a `title` a hover away);
 * - every widget of the labeler app (single choice, multi-label, bounding box, text span with a long text):
 *   no page-level overflow, and the question, the item, every button and the task id within the screen;
 * - a box item whose picture does not load: the alert shows, without the broken picture's alt text over it;
 * - a settlement's leaf, root and proof hashes cut with an ellipsis on one line, each with a copy button.
 * Screenshots with `pnpm screenshots` (docs/screenshots/phone-*.png).
 */
import { type Anvil, startAnvil } from "@labelgate/chain/node";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { fundedKey } from "../../packages/chain/test/helpers";
import { serveManifest } from "../../services/manifest-worker/test/helpers";
import { scaled } from "../env";
import { createLabeler, eventually, label, registerCustomer, type System, startSystem, taskBody } from "../system";
import { receivers } from "../webhooks";
import * as web from "./browser";

const WIDTH = 390;

/** A long text for the span widget: a paragraph, then an unbroken 160-character token (a URL). */
const LONG_TEXT = `${"Marta Okafor sailed from Lisbon to Porto Santo, where her brother Tomas had opened a bakery beside the lighthouse. ".repeat(6)}See https://example.org/${"a".repeat(140)} for the harbor's records.`;

let anvil: Anvil;
let sys: System;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let watch: web.PageWatch;
let customer: { id: string; key: string };
let labelerKeys: string[] = [];
const { rx, closeAll } = receivers();

/** A sample's URL on the test's gateway (data/samples). */
const sample = (name: string) => `${sys.baseUrl}/samples/${name}`;

beforeAll(async () => {
  anvil = await startAnvil();
  const env = { LEDGER: "evm", EVM_RPC_URL: anvil.rpcUrl, EVM_PRIVATE_KEY: await fundedKey(anvil.rpcUrl), ANCHOR_INTERVAL_MS: "200" };
  [browser, sys] = await Promise.all([web.launchBrowser(), startSystem({ env })]);
  customer = await registerCustomer(sys, 1000);
  labelerKeys = [(await createLabeler(sys, "Ana")).key, (await createLabeler(sys, "Ben")).key];
  ({ context, page, watch } = await web.watchedPage(browser));
  await page.setViewportSize({ width: WIDTH, height: 844 });
}, scaled(90_000));

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await closeAll();
  await sys?.close();
  await anvil?.stop();
});

/** The page's width beyond the screen, px (0: nothing to scroll sideways). */
async function overflow(p: Page): Promise<number> {
  return ((await p.evaluate("(document.scrollingElement ?? document.documentElement).scrollWidth")) as number) - WIDTH;
}

/** Expects the element's box within the screen's width. */
async function onScreen(what: string, locator: Locator): Promise<void> {
  const box = await locator.boundingBox();
  expect({ what, box: box !== null }).toEqual({ what, box: true });
  if (!box) return;
  expect({ what, left: box.x >= -0.5, right: box.x + box.width <= WIDTH + 0.5 }).toEqual({ what, left: true, right: true });
}

/** Expects the element's box within the screen and its content not cut by its own box. */
async function wholeOnScreen(what: string, locator: Locator): Promise<void> {
  await onScreen(what, locator);
  const cut = await locator.evaluate((e: { scrollWidth: number; clientWidth: number }) => e.scrollWidth > e.clientWidth + 1);
  expect({ what, cut }).toEqual({ what, cut: false });
}

/** The height of the element, px. */
async function height(locator: Locator): Promise<number> {
  return ((await locator.boundingBox())?.height ?? 0) as number;
}

/** Claims `taskId` for `labelerKey` and posts `body` as its answer. */
async function answer(labelerKey: string, taskId: string, body: Record<string, unknown>): Promise<void> {
  const claim = await sys.api<{ claim_id: string }>("POST", "/v1/labeling/claims", { token: labelerKey, body: { task_id: taskId } });
  expect(claim.status).toBe(201);
  const res = await sys.api("POST", `/v1/labeling/claims/${claim.body.claim_id}/label`, { token: labelerKey, body });
  expect(res.status).toBe(201);
}

/** Creates a task (threshold 1) and returns its id. */
async function createTask(body: Record<string, unknown>): Promise<string> {
  const res = await sys.api<{ task_id: string }>("POST", "/v1/tasks", { token: customer.key, body: { consensus_threshold: 1, ...body } });
  expect(res.status).toBe(202);
  return res.body.task_id;
}

/** Waits until `taskId` is settled. */
async function settled(taskId: string): Promise<void> {
  await eventually(async () => {
    const r = await sys.api<{ status: string }>("GET", `/v1/tasks/${taskId}`, { token: customer.key });
    return r.body.status === "settled" ? true : undefined;
  }, 30_000);
}

const BOX_SPEC = { question: "Box every car and every person.", classes: ["car", "person"] };
const SPAN_SPEC = { question: "Mark the people and the places.", entity_types: ["person", "place"] };
const MULTI_SPEC = { question: "Which fruits are on the table?", options: ["apple", "banana", "grapes", "pear"] };

it(
  "the console at 390 px: every page fits, nav labels whole, ids on one line, consensus reachable, every figure defined",
  async () => {
    const batch = await sys.api<{ batch_id: string; task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: customer.key,
      body: { tasks: ["cat.svg", "dog.svg", "cat.svg"].map((name) => taskBody({ consensus_threshold: 2, data_url: sample(name) })) },
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
    // a task of each reserved type, settled by one answer
    const box = await createTask({ type: "bounding_box", data_url: sample("street.svg"), label_spec: BOX_SPEC });
    await answer(labelerKeys[0] as string, box, {
      boxes: [
        { label: "car", x: 100, y: 250, w: 200, h: 100 },
        { label: "person", x: 340, y: 200, w: 40, h: 130 },
      ],
    });
    const span = await createTask({ type: "text_span", data_url: sample("texts/harbor.txt"), data_text: LONG_TEXT, label_spec: SPAN_SPEC });
    await answer(labelerKeys[0] as string, span, {
      spans: [
        { start: 0, end: 12, label: "person" },
        { start: 25, end: 31, label: "place" },
      ],
    });
    const multi = await createTask({ type: "multi_label_classification", data_url: sample("fruit.svg"), label_spec: MULTI_SPEC });
    await answer(labelerKeys[0] as string, multi, { labels: ["apple", "banana", "grapes"] });
    for (const id of [box, span, multi]) await settled(id);
    // a webhook and a manifest job, for their pages
    const hook = await rx();
    const created = await sys.api<{ webhook_id: string }>("POST", "/v1/webhooks", {
      token: customer.key,
      body: { callback_url: hook.url, secret: "whsec_0123456789abcdef", events: ["task.settled"] },
    });
    expect(created.status).toBe(201);
    const manifest = await serveManifest(`${JSON.stringify({ data_url: sample("dog.svg") })}\n`);
    const job = await sys.api<{ job_id: string }>("POST", "/v1/jobs", {
      token: customer.key,
      body: { manifest_url: manifest.url(), label_spec: { question: "Which animal?", options: ["cat", "dog"] }, consensus_threshold: 1 },
    });
    expect(job.status).toBe(202);

    await page.goto(`${sys.baseUrl}/console/`);
    await page.getByLabel("Customer API key").fill(customer.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    // the navigation is above the page, not a column beside it; every label whole, without scrolling it
    const nav = page.getByRole("navigation", { name: "Console" });
    const main = page.locator("#main");
    const [navBox, mainBox] = [await nav.boundingBox(), await main.boundingBox()];
    expect(navBox && mainBox && navBox.y + navBox.height <= mainBox.y + 1).toBe(true);
    expect(mainBox && mainBox.width >= WIDTH - 2).toBe(true);
    for (const name of ["Overview", "Tasks", "Batches", "Jobs", "Webhooks", "Billing", "Quality", "Review"])
      await wholeOnScreen(`nav ${name}`, nav.getByRole("link", { name, exact: true }));

    const pages: [string, string, string][] = [
      ["overview", "/console/", "Labels this month"],
      ["tasks", "/console/tasks", ""],
      ["batches", "/console/batches", ""],
      ["batch", `/console/batches/${batch.body.batch_id}`, ""],
      ["jobs", "/console/jobs", ""],
      ["job", `/console/jobs/${job.body.job_id}`, ""],
      ["webhooks", "/console/webhooks", ""],
      ["webhook", `/console/webhooks/${created.body.webhook_id}`, ""],
      ["billing", "/console/billing", "Labels collected"],
      ["quality", "/console/quality", "Agreement"],
      ["task-bounding-box", `/console/tasks/${box}`, "Whole answer right"],
      ["task-text-span", `/console/tasks/${span}`, "Whole answer right"],
      ["task-multi-label", `/console/tasks/${multi}`, "Whole answer right"],
      ["task", `/console/tasks/${taskId}`, "Confidence"],
    ];
    const defined = new Set<string>();
    for (const [name, path, figure] of pages) {
      await page.goto(`${sys.baseUrl}${path}`);
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      if (name === "task") await page.getByRole("button", { name: "Copy leaf" }).waitFor();
      else if (name.startsWith("task-")) await page.getByTestId("typed-consensus").waitFor();
      else await page.waitForLoadState("networkidle");
      if (figure) await page.locator(`[data-figure="${figure}"]`).first().waitFor();
      expect({ page: name, overflow: await overflow(page) }).toEqual({ page: name, overflow: 0 });
      // every figure says what it counts
      const figures = (await page
        .locator("[data-figure]")
        .evaluateAll((els) =>
          els.map((e) => [e.getAttribute("data-figure"), e.querySelector("[data-definition]")?.getAttribute("title") ?? ""]),
        )) as [string, string][];
      for (const [label, definition] of figures) {
        expect({ page: name, figure: label, defined: definition.length >= 10 }).toEqual({ page: name, figure: label, defined: true });
        defined.add(label);
      }
      await web.screenshot(page, `phone-console-${name}`);
    }
    for (const figure of ["Agreement", "Mean confidence", "Labels this month", "Whole answer right", "Parts' confidence", "Confidence"])
      expect({ figure, defined: defined.has(figure) }).toEqual({ figure, defined: true });

    // the task list: ids on one line, the consensus column reachable by scrolling the table's own box
    await page.goto(`${sys.baseUrl}/console/tasks`);
    const firstId = page.getByRole("link", { name: taskId });
    await firstId.waitFor();
    expect(await height(firstId)).toBeLessThan(30);
    const consensus = page.getByRole("columnheader", { name: "Consensus" });
    await consensus.scrollIntoViewIfNeeded();
    await onScreen("the Consensus column", consensus);
    expect(await overflow(page)).toBe(0);

    // the typed task: the whole answer's confidence beside its parts'
    await page.goto(`${sys.baseUrl}/console/tasks/${box}`);
    await page.getByTestId("typed-consensus").waitFor();
    expect(await page.getByTestId("parts-confidence").textContent()).toMatch(/^lowest \d+(\.\d)?% · mean \d+(\.\d)?%$/);
    await onScreen("whole answer", page.getByTestId("whole-confidence"));

    // on the task: the leaf hash is cut on one line, its copy button on screen
    await page.goto(`${sys.baseUrl}/console/tasks/${taskId}`);
    await page.getByRole("button", { name: "Copy leaf" }).waitFor();
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
    await manifest.close();
  },
  scaled(180_000),
);

/** Cancels every open task of the customer (one task open at a time: the app shows the one under test). */
async function cancelOpen(): Promise<void> {
  for (const status of ["pending", "labeling"]) {
    const list = await sys.api<{ items: { task_id: string }[] }>("GET", `/v1/dashboard/tasks?status=${status}&per_page=100`, {
      token: customer.key,
    });
    for (const t of list.body.items) await sys.api("POST", `/v1/tasks/${t.task_id}/cancel`, { token: customer.key });
  }
}

/** A labeler's page at 390 px, signed in with a new labeler's key, showing `taskId`. */
async function labelerPage(taskId: string): Promise<Page> {
  const key = (await createLabeler(sys, `phone-${taskId.slice(-6)}`)).key;
  const p = await context.newPage();
  await p.setViewportSize({ width: WIDTH, height: 844 });
  await p.goto(`${sys.baseUrl}/label/`);
  await p.getByLabel("Labeler key").fill(key);
  await p.keyboard.press("Enter");
  await p.locator(`article[data-task-id="${taskId}"]`).waitFor({ timeout: 15_000 });
  return p;
}

/** Expects the labeler app's item of `taskId` to fit the screen: question, item, buttons, task id. */
async function itemFits(p: Page, taskId: string, item: Locator, name: string): Promise<void> {
  const article = p.locator(`article[data-task-id="${taskId}"]`);
  expect({ widget: name, overflow: await overflow(p) }).toEqual({ widget: name, overflow: 0 });
  await onScreen(`${name}: question`, p.locator("#question"));
  await onScreen(`${name}: item`, item);
  for (const button of await article.getByRole("button").all()) await onScreen(`${name}: button ${await button.textContent()}`, button);
  for (const name2 of ["Keys", "Sign out"]) await wholeOnScreen(`${name}: ${name2}`, p.getByRole("button", { name: name2, exact: true }));
  const id = article.getByText(`Task ${taskId}`);
  await onScreen(`${name}: task id`, id);
  expect({ widget: name, idLines: (await height(id)) < 40 }).toEqual({ widget: name, idLines: true });
  await web.screenshot(p, `phone-label-${name}`);
}

it(
  "the labeler app at 390 px: every widget fits the screen, long text included",
  async () => {
    const widgets: [string, Record<string, unknown>, string][] = [
      ["single-choice", taskBody({ consensus_threshold: 1, data_url: sample("cat.svg") }), "article img"],
      ["multi-label", { type: "multi_label_classification", data_url: sample("fruit.svg"), label_spec: MULTI_SPEC }, "article img"],
      ["bounding-box", { type: "bounding_box", data_url: sample("street.svg"), label_spec: BOX_SPEC }, "svg.bbox-overlay"],
      ["text-span", { type: "text_span", data_url: sample("texts/harbor.txt"), data_text: LONG_TEXT, label_spec: SPAN_SPEC }, ".span-text"],
    ];
    for (const [name, body, itemSelector] of widgets) {
      await cancelOpen();
      const taskId = await createTask(body);
      const p = await labelerPage(taskId);
      try {
        const item = p.locator(itemSelector).first();
        await item.waitFor();
        if (itemSelector === "article img")
          await eventually(async () => ((await item.evaluate((i: { naturalWidth: number }) => i.naturalWidth)) > 0 ? true : undefined));
        await itemFits(p, taskId, item, name);
        if (name === "single-choice") {
          // the keyboard layout editor, open above the item
          await p.getByRole("button", { name: "Keys", exact: true }).click();
          await p.getByRole("button", { name: "Save keys" }).waitFor();
          expect({ editor: await overflow(p) }).toEqual({ editor: 0 });
          await onScreen("Save keys", p.getByRole("button", { name: "Save keys" }));
          await onScreen("Default keys", p.getByRole("button", { name: "Default keys" }));
        }
      } finally {
        await p.close();
        expect((await sys.api("POST", `/v1/tasks/${taskId}/cancel`, { token: customer.key })).status).toBe(200);
      }
    }
  },
  scaled(120_000),
);

it(
  "a box item whose picture does not load: the alert shows whole, with no alt text over it",
  async () => {
    await cancelOpen();
    const taskId = await createTask({
      type: "bounding_box",
      data_url: sample(`no-such-picture-${"long".repeat(30)}.svg`),
      label_spec: BOX_SPEC,
    });
    const p = await labelerPage(taskId);
    try {
      const alert = p.getByRole("alert").filter({ hasText: "The image did not load" });
      await alert.waitFor();
      await onScreen("the alert", alert);
      expect(await height(alert)).toBeGreaterThan(40);
      // the broken picture (its alt text) is not shown beside or under the alert
      expect(await p.locator("article img").isVisible()).toBe(false);
      expect(await overflow(p)).toBe(0);
      await web.screenshot(p, "phone-label-image-error");
    } finally {
      await p.close();
      await sys.api("POST", `/v1/tasks/${taskId}/cancel`, { token: customer.key });
    }
  },
  scaled(60_000),
);

it(
  "the empty states show a sample item that loads: the labeler app's nothing to label, the console's first task",
  async () => {
    await cancelOpen();
    const key = (await createLabeler(sys, "phone-empty")).key;
    const p = await context.newPage();
    await p.setViewportSize({ width: WIDTH, height: 844 });
    try {
      await p.goto(`${sys.baseUrl}/label/`);
      await p.getByLabel("Labeler key").fill(key);
      await p.keyboard.press("Enter");
      await p.getByRole("heading", { name: "Nothing to label" }).waitFor({ timeout: 15_000 });
      const labelerSample = p.getByRole("img", { name: "A sample item: a drawn cat" });
      await eventually(async () =>
        (await labelerSample.evaluate((i: { naturalWidth: number }) => i.naturalWidth)) > 0 ? true : undefined,
      );
      await onScreen("the labeler app's sample", labelerSample);
      await p.getByText(`data_url: ${sys.baseUrl}/samples/cat.svg`).waitFor();
      expect(await overflow(p)).toBe(0);
      await web.screenshot(p, "phone-label-nothing-to-label");

      const fresh = await registerCustomer(sys, 10);
      await p.goto(`${sys.baseUrl}/console/tasks`);
      await p.getByLabel("Customer API key").fill(fresh.key);
      await p.getByRole("button", { name: "Sign in" }).click();
      const first = p.getByTestId("first-task");
      await first.waitFor();
      const consoleSample = first.getByRole("img", { name: "A sample item: a drawn cat" });
      await eventually(async () =>
        (await consoleSample.evaluate((i: { naturalWidth: number }) => i.naturalWidth)) > 0 ? true : undefined,
      );
      await onScreen("the console's sample", consoleSample);
      expect(await first.textContent()).toContain(`"data_url":"${sys.baseUrl}/samples/cat.svg"`);
      expect(await overflow(p)).toBe(0);
      await web.screenshot(p, "phone-console-first-task");
    } finally {
      await p.close();
    }
  },
  scaled(60_000),
);
