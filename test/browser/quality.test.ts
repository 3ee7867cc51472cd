/**
 * Phase 2 of the customer console (/console/) in Debian's Chromium against a real labelgate (gateway and
 * workers, a database of its own): the batch list (GET /v1/batches, newest first); the quality page after
 * gold labels (the labelers table with gold and estimated accuracy, the calibration plot with its ECE); the
 * settings form (bad values answered 400 and their messages shown at their fields, min_gain among them,
 * then saved with min_gain and audit_rate and read back through the API, fields cleared); a settled task's
 * posterior and the "verify" button's local-ledger case (nothing on chain); a gold task's fields. Every page: no console error or CSP violation (but the
 * expected 400), no serious or critical axe-core violation, and no key in a request URL, in localStorage
 * or in the gateway's logs. The EVM case of "verify" runs in test/browser/verify.test.ts (its own chain).
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { scaled } from "../env";
import { createLabeler, eventually, label, registerCustomer, type System, startSystem, taskBody } from "../system";
import * as web from "./browser";

let browser: Browser;
let images: Awaited<ReturnType<typeof web.imageServer>>;
let sys: System;
const log = web.capturingLogger();
let customer: { id: string; key: string };
let labelers: { id: string; key: string }[];
let context: BrowserContext;
let page: Page;
let watch: web.PageWatch;
const audited: string[] = [];
const batchIds: string[] = [];
let goldIds: string[] = [];
let settledTask = "";

const SPEC = { question: "Which animal is in the picture?", options: ["cat", "dog"] };

async function audit(name: string): Promise<void> {
  expect({ page: name, violations: await web.accessibilityViolations(page) }).toEqual({ page: name, violations: [] });
  audited.push(name);
  await web.screenshot(page, name);
}

async function nav(name: string): Promise<void> {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name, exact: true }).click();
  await page.getByRole("heading", { level: 1, name }).waitFor();
}

beforeAll(async () => {
  [browser, images] = await Promise.all([web.launchBrowser(), web.imageServer()]);
  sys = await startSystem({ logger: log.logger });
  customer = await registerCustomer(sys, 5000);
  labelers = [await createLabeler(sys, "Ana"), await createLabeler(sys, "Ben"), await createLabeler(sys, "Coin")];

  // gold tasks answered by three labelers (two right, one right half the time), then two regular batches
  const truths = ["cat", "dog", "cat", "dog", "cat", "dog"];
  const gold = await sys.api<{ batch_id: string; task_ids: string[] }>("POST", "/v1/tasks/batch", {
    token: customer.key,
    body: { tasks: truths.map((g, i) => taskBody({ label_spec: SPEC, data_url: images.url(i), gold_label: g })) },
  });
  expect(gold.status).toBe(202);
  batchIds.push(gold.body.batch_id);
  goldIds = gold.body.task_ids;
  for (const [i, id] of goldIds.entries()) {
    const truth = truths[i] as string;
    await label(sys, labelers[0]?.key as string, id, truth);
    await label(sys, labelers[1]?.key as string, id, truth);
    await label(sys, labelers[2]?.key as string, id, i % 2 ? truth : truth === "cat" ? "dog" : "cat");
  }
  for (const n of [2, 3]) {
    const b = await sys.api<{ batch_id: string; task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: customer.key,
      body: {
        tasks: Array.from({ length: n }, (_, i) =>
          taskBody({ label_spec: SPEC, consensus_threshold: 2, data_url: images.url(10 * n + i) }),
        ),
      },
    });
    expect(b.status).toBe(202);
    batchIds.push(b.body.batch_id);
    if (n === 2) {
      settledTask = b.body.task_ids[0] as string;
      for (const l of labelers.slice(0, 2)) expect((await label(sys, l.key, settledTask, "dog")).status).toBe(201);
    }
  }
  // the label space is refitted in the background: wait until the gold labels are in the fit
  await eventually(
    async () => {
      const row = await sys.db.prisma.labelSpace.findFirst({ where: { customerId: customer.id, question: SPEC.question } });
      return row && row.fittedLabels >= 18 ? row : undefined;
    },
    30_000,
    "the label space's refit",
  );
  await eventually(
    async () => ((await sys.api("GET", `/v1/tasks/${settledTask}`, { token: customer.key })).body.status === "settled" ? true : undefined),
    20_000,
    "the task to settle",
  );
  ({ context, page, watch } = await web.watchedPage(browser));
}, scaled(90_000));

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await images?.close();
  await sys?.close();
});

describe("customer console, phase 2", () => {
  it("signs in and lists the batches newest first", async () => {
    await page.goto(`${sys.baseUrl}/console/`);
    await page.getByLabel("Customer API key").fill(customer.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    await nav("Batches");
    const table = page.getByRole("table", { name: "Batches" });
    await table.getByRole("link", { name: batchIds[0] as string }).waitFor();
    const listed = await table.getByRole("link").allTextContents();
    expect(listed).toEqual([...batchIds].reverse());
    await audit("console-batch-list");
  });

  it("shows the labelers table and the calibration plot after gold labels", async () => {
    await nav("Quality");
    const table = page.getByRole("table", { name: "Labelers by label space" });
    for (const l of labelers) await table.getByRole("row", { name: new RegExp(l.id) }).waitFor();
    const api = await sys.api<{ items: { labeler_id: string; gold_answers: number; gold_accuracy: number; status: string }[] }>(
      "GET",
      "/v1/dashboard/labelers",
      { token: customer.key },
    );
    const ana = table.getByRole("row", { name: new RegExp(labelers[0]?.id as string) });
    expect(await ana.getByRole("cell").allTextContents()).toEqual(
      expect.arrayContaining([labelers[0]?.id, "6", "100.0%", "active", expect.stringContaining(SPEC.question)]),
    );
    const coin = table.getByRole("row", { name: new RegExp(labelers[2]?.id as string) });
    expect(await coin.getByRole("cell").allTextContents()).toEqual(expect.arrayContaining(["6", "50.0%"]));
    expect(api.body.items.find((r) => r.labeler_id === labelers[2]?.id)).toMatchObject({ gold_answers: 6, gold_accuracy: 0.5 });

    const calibration = page.getByRole("figure", { name: /Calibration/ });
    await calibration.waitFor();
    // the chart draws its canvas after the figure mounts: wait for it (the page's deadline), not a count now
    await calibration.locator("canvas").first().waitFor();
    const quality = await sys.api<{ calibration: { ece: number; gold_tasks: number } }>("GET", "/v1/dashboard/quality", {
      token: customer.key,
    });
    await page
      .getByTestId("ece")
      .getByText(`${(quality.body.calibration.ece * 100).toFixed(1)}%`)
      .waitFor();
    await page.getByTestId("ece").getByText(`over ${quality.body.calibration.gold_tasks} gold tasks`).waitFor();
    // no review yet: the reviewed diagram beside it says how to get one
    await page.getByTestId("no-reviews").waitFor();
    await audit("console-quality-gold");
  });

  it("edits the settings: a bad value shows the API's 400 message at its field; a good one is saved", async () => {
    const form = page.getByRole("form", { name: "Settings" });
    await form.getByLabel("Gold rate").fill("1.5");
    await form.getByLabel("Consensus threshold").fill("3");
    await form.getByLabel("Min gain").fill("0.9");
    await form.getByRole("button", { name: "Save settings" }).click();
    // the field's error comes from the API's details (path quality.gold_rate)
    const goldRate = form.getByLabel("Gold rate");
    await eventually(async () => ((await goldRate.getAttribute("aria-invalid")) === "true" ? true : undefined), 10_000, "aria-invalid");
    // min_gain above its bound (0.5) is refused at its own field too (path task_defaults.min_gain)
    const minGain = form.getByLabel("Min gain");
    expect(await minGain.getAttribute("aria-invalid")).toBe("true");
    await form.getByText(/less than or equal to 1|<=\s*1|at most 1/i).waitFor();
    await form.getByRole("alert").first().waitFor();
    await audit("console-settings-400");
    expect((await sys.api("GET", "/v1/customers/me/settings", { token: customer.key })).body).toMatchObject({
      quality: { gold_rate: null },
      task_defaults: { consensus_threshold: null, min_gain: null },
    });

    await goldRate.fill("0.2");
    await minGain.fill("0.05");
    await form.getByLabel("Audit rate").fill("0.1");
    await form.getByLabel("Min labeler accuracy").fill("0.6");
    await form.getByRole("button", { name: "Save settings" }).click();
    await form.getByRole("status").getByText("Saved.").waitFor();
    expect(await goldRate.getAttribute("aria-invalid")).not.toBe("true");
    expect(await minGain.getAttribute("aria-invalid")).not.toBe("true");
    expect((await sys.api("GET", "/v1/customers/me/settings", { token: customer.key })).body).toEqual({
      task_defaults: { consensus_threshold: 3, confidence_target: null, min_labels: null, min_gain: 0.05, max_labels: null },
      quality: { gold_rate: 0.2, min_labeler_accuracy: 0.6, min_gold_answers: null, audit_rate: 0.1, qualification: null },
    });

    // an emptied field is cleared (null)
    await form.getByLabel("Consensus threshold").fill("");
    await minGain.fill("");
    await form.getByLabel("Audit rate").fill("");
    await form.getByRole("button", { name: "Save settings" }).click();
    await eventually(
      async () => {
        const s = await sys.api<{
          task_defaults: { consensus_threshold: number | null; min_gain: number | null };
          quality: { audit_rate: number | null };
        }>("GET", "/v1/customers/me/settings", { token: customer.key });
        const t = s.body.task_defaults;
        return t.consensus_threshold === null && t.min_gain === null && s.body.quality.audit_rate === null ? true : undefined;
      },
      10_000,
      "the cleared field",
    );
    await audit("console-settings-saved");
  });

  it("shows a settled task's posterior, and that a local-ledger settlement has nothing on chain to verify", async () => {
    await page.goto(`${sys.baseUrl}/console/tasks/${settledTask}`);
    await page.getByTestId("consensus-label").getByText("dog").waitFor();
    const result = await sys.api<{ posterior: Record<string, number>; resolution: string; settlement: { ledger: string } }>(
      "GET",
      `/v1/tasks/${settledTask}/result`,
      { token: customer.key },
    );
    expect(result.body.settlement.ledger).toBe("local");
    const table = page.getByRole("table", { name: "Labels by option" });
    await table.getByRole("columnheader", { name: "Posterior" }).waitFor();
    for (const option of SPEC.options) {
      const share = `${((result.body.posterior[option] ?? 0) * 100).toFixed(1)}%`;
      expect(
        await table
          .getByRole("row", { name: new RegExp(`^${option} `) })
          .getByRole("cell")
          .allTextContents(),
      ).toContain(share);
    }
    await page.getByText(result.body.resolution, { exact: true }).waitFor();
    await page.getByTestId("verify-local").getByText("Nothing on chain to verify").waitFor();
    expect(await page.getByTestId("verify-button").count()).toBe(0);
    await audit("console-task-local-ledger");
  });

  it("shows a gold task's gold label, answers and agreement", async () => {
    await page.goto(`${sys.baseUrl}/console/tasks/${goldIds[0]}`);
    const gold = page.getByTestId("gold");
    await gold.waitFor();
    expect(await gold.textContent()).toMatch(/gold label\s*cat · 3 answers · agreement\s*66\.7%/);
    await audit("console-task-gold");
  });

  it("draws the reliability diagram of reviewed results beside the gold one, with each label space's figures", async () => {
    const reviewed = await sys.api("POST", `/v1/tasks/${settledTask}/review`, { token: customer.key, body: { verdict: "accept" } });
    expect(reviewed.status).toBe(200);
    const quality = await sys.api<{ reviewed: { reviews: number; ece: number; mean_confidence_reviewed: number } }>(
      "GET",
      "/v1/dashboard/quality",
      { token: customer.key },
    );
    expect(quality.body.reviewed).toMatchObject({ reviews: 1, reviewed_accuracy: 1 });
    await page.goto(`${sys.baseUrl}/console/quality`);
    const figure = page.getByRole("figure", { name: /^Reviewed results/ });
    await figure.waitFor();
    await figure.locator("canvas").first().waitFor();
    // the gold diagram is still there, beside it
    await page.getByRole("figure", { name: /^Calibration/ }).waitFor();
    await page
      .getByTestId("reviewed-ece")
      .getByText(`${(quality.body.reviewed.ece * 100).toFixed(1)}%`)
      .waitFor();
    await page.getByTestId("reviewed-ece").getByText("over 1 reviewed results").waitFor();
    await page.getByTestId("reviewed-summary").getByText("100.0%").waitFor();
    const row = page.getByRole("table", { name: "Reviewed results by label space" }).getByRole("row", { name: new RegExp(SPEC.question) });
    expect(await row.getByRole("cell").allTextContents()).toEqual([
      SPEC.question,
      "1",
      "100.0%",
      `${(quality.body.reviewed.mean_confidence_reviewed * 100).toFixed(1)}%`,
      `${(quality.body.reviewed.ece * 100).toFixed(1)}%`,
    ]);
    await audit("console-quality-reviewed");
  });

  it("kept the key out of URLs, localStorage and the gateway's logs; no console error or CSP violation", async () => {
    expect(audited).toHaveLength(7);
    const { session, local } = await web.storage(page);
    expect(session.includes(customer.key)).toBe(true);
    expect(local.includes(customer.key)).toBe(false);
    for (const key of [customer.key, ...labelers.map((l) => l.key)]) {
      expect(watch.urls.filter((u) => u.includes(key))).toEqual([]);
      expect(log.lines.filter((l) => l.includes(key))).toEqual([]);
    }
    // the refused settings (400) are the only failed request
    expect(web.unexpectedProblems(watch, [400])).toEqual([]);
    expect(watch.problems.filter((p) => p.includes("status of 400"))).toHaveLength(1);
  });
});
