/**
 * Qualification in the labeler app (/label/, contract §qualification), in Debian's Chromium against a real
 * labelgate (a database of its own): a labeler in training gets the space's gold tasks, and after each answer
 * the app shows whether it was right, the right answer and the gold task's explanation; a labeler that fails
 * the exam sees "Qualification not passed" instead of "Nothing to label".
 */
import type { Browser, Page } from "playwright-core";
import { scaled } from "../env";
import { createLabeler, registerCustomer, type System, startSystem } from "../system";
import { imageServer, launchBrowser, unexpectedProblems, watchedPage } from "./browser";

const SPEC = { question: "What animal is this?", options: ["cat", "dog"] };

let browser: Browser;
let images: Awaited<ReturnType<typeof imageServer>>;
let sys: System;

beforeAll(async () => {
  [browser, images] = await Promise.all([launchBrowser(), imageServer()]);
  sys = await startSystem();
}, scaled(60_000));

afterAll(async () => {
  await browser?.close();
  await images?.close();
  await sys?.close();
});

async function signIn(page: Page, key: string): Promise<void> {
  await page.goto(`${sys.baseUrl}/label/`);
  await page.getByLabel("Labeler key").waitFor();
  await page.keyboard.type(key);
  await page.keyboard.press("Enter");
}

/** The task id of the item on screen. */
async function currentTask(page: Page): Promise<string> {
  const article = page.locator("article[data-task-id]");
  await article.waitFor({ timeout: 15_000 });
  return (await article.getAttribute("data-task-id")) as string;
}

it(
  "shows the right answer and the explanation after each training answer, and says when the exam is failed",
  async () => {
    const customerKey = (await registerCustomer(sys, 1000)).key;
    await sys.api("PATCH", "/v1/customers/me/settings", {
      token: customerKey,
      body: { quality: { gold_rate: 0, qualification: { gold_tasks: 2, min_accuracy: 0.6 } } },
    });
    const res = await sys.api<{ task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: customerKey,
      body: {
        tasks: [
          { type: "image_classification", data_url: images.url(0), label_spec: SPEC },
          {
            type: "image_classification",
            data_url: images.url(1),
            label_spec: SPEC,
            gold_label: "cat",
            gold_explanation: "Pointed ears and whiskers: a cat.",
          },
          { type: "image_classification", data_url: images.url(2), label_spec: SPEC, gold_label: "dog" },
        ],
      },
    });
    expect(res.status).toBe(202);
    const [regular, gold1, gold2] = res.body.task_ids as [string, string, string];
    const labelerKey = (await createLabeler(sys, "Trainee")).key;

    const { context, page, watch } = await watchedPage(browser);
    try {
      await signIn(page, labelerKey);
      // training: the gold task, not the older regular one
      expect(await currentTask(page)).toBe(gold1);
      await page.keyboard.press("2"); // dog: wrong
      const feedback = page.getByTestId("training-feedback");
      await feedback.waitFor({ timeout: 15_000 });
      await feedback.getByText("Not quite").waitFor();
      expect(await feedback.getByTestId("training-answer").textContent()).toBe("cat");
      expect(await feedback.getByTestId("training-explanation").textContent()).toBe("Pointed ears and whiskers: a cat.");
      await feedback.getByText("1 of 2 answered, 0 right").waitFor();

      expect(await currentTask(page)).toBe(gold2);
      await page.keyboard.press("1"); // cat: wrong again; (0 + 1) / (2 + 2) = 0.25 < 0.6
      await feedback.getByText("Qualification not passed").waitFor({ timeout: 15_000 });
      expect(await feedback.getByTestId("training-answer").textContent()).toBe("dog");

      // the regular task is never served; the app says why
      await page.getByRole("heading", { name: "Qualification not passed" }).waitFor({ timeout: 30_000 });
      expect(await page.locator(`article[data-task-id="${regular}"]`).count()).toBe(0);
      await feedback.getByRole("button", { name: "Close feedback" }).click();
      expect(await feedback.count()).toBe(0);
      expect(unexpectedProblems(watch)).toEqual([]);
    } finally {
      await context.close();
    }
  },
  scaled(120_000),
);
