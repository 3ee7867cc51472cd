/**
 * Pre-labels in the labeler app (docs/contract.md §prelabels), in Debian's Chromium against a real labelgate: a
 * task whose label spec says `show_prelabel` shows its model's answer pre-selected, with a note naming the model,
 * and Enter confirms it; a task with a pre-label not shown pre-selects nothing. No console error, no serious axe
 * violation.
 */
import type { Browser } from "playwright-core";
import { scaled } from "../env";
import { createLabeler, eventually, registerCustomer, type System, startSystem } from "../system";
import { accessibilityViolations, imageServer, launchBrowser, screenshot, unexpectedProblems, watchedPage } from "./browser";

const OPTIONS = ["cat", "dog", "bird"];
const QUESTION = "What animal is this?";

let browser: Browser;
let images: Awaited<ReturnType<typeof imageServer>>;
let sys: System;
let customerKey: string;
let labelerKey: string;
let taskIds: string[];

beforeAll(async () => {
  [browser, images] = await Promise.all([launchBrowser(), imageServer()]);
  sys = await startSystem();
  customerKey = (await registerCustomer(sys, 100)).key;
  labelerKey = (await createLabeler(sys, "Kim")).key;
  const prelabel = { answer: { label: "dog" }, model: "resnet-v2", score: 0.91 };
  const res = await sys.api<{ task_ids: string[] }>("POST", "/v1/tasks/batch", {
    token: customerKey,
    body: {
      tasks: [
        // shown: pre-selected; then the same pre-label not shown
        {
          type: "image_classification",
          data_url: images.url(0),
          label_spec: { question: QUESTION, options: OPTIONS, show_prelabel: true },
          consensus_threshold: 1,
          prelabel,
        },
        {
          type: "image_classification",
          data_url: images.url(1),
          label_spec: { question: QUESTION, options: OPTIONS },
          consensus_threshold: 1,
          prelabel,
        },
      ],
    },
  });
  expect(res.status).toBe(202);
  taskIds = res.body.task_ids;
}, scaled(60_000));

afterAll(async () => {
  await browser?.close();
  await images?.close();
  await sys?.close();
});

test(
  "show_prelabel pre-selects the model's answer, Enter confirms it; a pre-label not shown pre-selects nothing",
  async () => {
    const { context, page, watch } = await watchedPage(browser);
    try {
      await page.goto(`${sys.baseUrl}/label/`);
      await page.getByLabel("Labeler key").waitFor();
      await page.keyboard.type(labelerKey);
      await page.keyboard.press("Enter");
      const article = page.locator(`article[data-task-id="${taskIds[0]}"]`);
      await article.waitFor({ timeout: 15_000 });
      const suggested = page.locator('button[data-prelabel="true"]');
      await suggested.waitFor();
      expect((await suggested.textContent())?.trim()).toContain("dog");
      expect(await suggested.getAttribute("aria-pressed")).toBe("true");
      expect(await page.getByRole("button", { name: /cat/ }).getAttribute("aria-pressed")).toBe("false");
      expect(await page.getByTestId("prelabel-note").textContent()).toContain("resnet-v2");
      expect(await accessibilityViolations(page)).toEqual([]);
      await screenshot(page, "label-prelabel");
      await page.keyboard.press("Enter");
      // the next task: its pre-label is not shown, nothing is pre-selected
      await page.locator(`article[data-task-id="${taskIds[1]}"]`).waitFor({ timeout: 15_000 });
      expect(await page.locator('button[data-prelabel="true"]').count()).toBe(0);
      expect(await page.getByTestId("prelabel-note").count()).toBe(0);
      await page.keyboard.press("1");
      // the confirmed suggestion settled the first task (a person's label, the model's vote beside it)
      const first = await eventually(
        async () => {
          const r = await sys.api<{ status: string; consensus_label: string; labels_collected: number }>("GET", `/v1/tasks/${taskIds[0]}`, {
            token: customerKey,
          });
          return r.body.status === "settled" ? r.body : undefined;
        },
        20_000,
        "the pre-labelled task to settle",
      );
      expect(first).toMatchObject({ consensus_label: "dog", labels_collected: 1 });
      expect(unexpectedProblems(watch)).toEqual([]);
    } finally {
      await context.close();
    }
  },
  scaled(90_000),
);
