/**
 * A label space's instructions in the labeler app (/label/), in Debian's Chromium against a real labelgate (a
 * database of its own): shown before the labeler's first task of the space, never between two tasks of the
 * same version, again when the customer gives a new version, and on demand with the `i` key. Inside the panel
 * the keys are the panel's (an option key answers nothing; Enter closes). The Markdown is sanitized (no script
 * runs, a remote image becomes a link) and an example is drawn with its right answer and explanation.
 */
import type { Browser, Page } from "playwright-core";
import { scaled } from "../env";
import { createLabeler, eventually, registerCustomer, type System, startSystem } from "../system";
import { accessibilityViolations, imageServer, launchBrowser, screenshot, unexpectedProblems, watchedPage } from "./browser";

const OPTIONS = ["cat", "dog", "bird"];
const SPEC = { question: "What animal is this?", options: OPTIONS };
const V1 =
  '## How to answer\n\nPick **cat** for any cat, kittens included.\n\n<script>window.pwned = 1</script>\n<img src=x onerror="window.pwned = 2">\n\n![tracker](https://tracker.example/pixel.png)';
const V2 = "## Changed\n\nBirds too: pick **bird** for any bird, chickens included.";

let browser: Browser;
let images: Awaited<ReturnType<typeof imageServer>>;
let sys: System;
let customerKey: string;
let labelerKey: string;

beforeAll(async () => {
  [browser, images] = await Promise.all([launchBrowser(), imageServer()]);
  sys = await startSystem();
  customerKey = (await registerCustomer(sys, 1000)).key;
  labelerKey = (await createLabeler(sys, "Ines")).key;
}, scaled(60_000));

afterAll(async () => {
  await browser?.close();
  await images?.close();
  await sys?.close();
});

/** Submits tasks of the space with the given instructions, threshold 1 (one label settles each). */
async function submit(n: number, from: number, instructions: string): Promise<string[]> {
  const res = await sys.api<{ task_ids: string[] }>("POST", "/v1/tasks/batch", {
    token: customerKey,
    body: {
      tasks: Array.from({ length: n }, (_, i) => ({
        type: "image_classification",
        data_url: images.url(from + i),
        label_spec: {
          ...SPEC,
          instructions,
          examples: [{ data_url: images.url(99), answer: { label: "cat" }, explanation: "A *kitten* is a cat." }],
        },
        consensus_threshold: 1,
      })),
    },
  });
  expect(res.status).toBe(202);
  return res.body.task_ids;
}

const panel = (page: Page) => page.getByTestId("instructions");

/** The task id of the item on screen. */
async function currentTask(page: Page): Promise<string> {
  const article = page.locator("article[data-task-id]");
  await article.waitFor({ timeout: 10_000 });
  return (await article.getAttribute("data-task-id")) as string;
}

/** The labels recorded on `taskIds`, by task. */
async function labelsOn(taskIds: string[]): Promise<Map<string, string>> {
  const rows = await sys.db.prisma.label.findMany({ where: { taskId: { in: taskIds } }, select: { taskId: true, value: true } });
  return new Map(rows.map((r) => [r.taskId, r.value]));
}

it(
  "shows the instructions before the first task, never between tasks of one version, again for a new version",
  async () => {
    const first = await submit(4, 0, V1);
    const { context, page, watch } = await watchedPage(browser);
    try {
      await page.goto(`${sys.baseUrl}/label/`);
      await page.getByLabel("Labeler key").waitFor();
      await page.keyboard.type(labelerKey);
      await page.keyboard.press("Enter");

      // before the first task: the panel, not the item
      await panel(page).waitFor({ timeout: 15_000 });
      await page.getByTestId("instructions-version").getByText("version 1").waitFor();
      expect(await page.locator("article[data-task-id]").count()).toBe(0);
      // sanitized Markdown: bold rendered, raw HTML shown as text (no script ran), the remote image is a link
      expect(await panel(page).locator("strong", { hasText: "cat" }).count()).toBeGreaterThan(0);
      await panel(page).getByText("<script>window.pwned = 1</script>").waitFor();
      expect(await panel(page).locator("script").count()).toBe(0);
      expect(await panel(page).locator("[onerror]").count()).toBe(0);
      expect(await page.evaluate("window.pwned")).toBeUndefined();
      expect(await panel(page).locator('img[src*="tracker.example"]').count()).toBe(0);
      expect(await panel(page).getByRole("link", { name: "image: tracker" }).count()).toBe(1);
      // the example: its item, the right answer marked, the explanation
      const example = page.getByTestId("instructions-example");
      expect(await example.count()).toBe(1);
      await example.locator('li[data-right="true"]', { hasText: "cat" }).waitFor();
      await example.locator("em", { hasText: "kitten" }).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
      await screenshot(page, "label-instructions");

      // the keys are the panel's: an option key answers nothing, the skip key skips nothing
      await page.keyboard.press("1");
      await page.keyboard.press("s");
      expect(await panel(page).isVisible()).toBe(true);
      await page.keyboard.press("Enter");
      const shown = await currentTask(page);
      expect(first).toContain(shown);

      // four tasks of version 1: no panel between them
      const pressed = new Map<string, string>();
      let current = shown;
      for (let i = 0; i < 4; i++) {
        pressed.set(current, "dog");
        await page.keyboard.press("2");
        if (i === 3) break;
        await page.waitForFunction(
          `document.querySelector("article[data-task-id]")?.getAttribute("data-task-id") !== ${JSON.stringify(current)}`,
        );
        expect(await panel(page).count()).toBe(0);
        current = await currentTask(page);
        if (i === 1) {
          // on demand: `i` opens the panel on the current task and `i` closes it, the task unchanged
          await page.keyboard.press("i");
          await panel(page).waitFor();
          await page.getByRole("button", { name: "Back to the task" }).waitFor();
          await page.keyboard.press("i");
          expect(await currentTask(page)).toBe(current);
        }
      }
      await page.getByText("Nothing to label").waitFor({ timeout: 15_000 });
      // every label is the one pressed after the panel closed: the keys pressed inside it answered nothing
      const recorded = await eventually(async () => {
        const labels = await labelsOn(first);
        return labels.size === 4 ? labels : undefined;
      });
      expect(recorded).toEqual(pressed);

      // a new version: shown again before its first task, with a note that it changed
      const second = await submit(2, 10, V2);
      await page.getByRole("button", { name: "Check again now" }).click();
      await panel(page).waitFor({ timeout: 15_000 });
      await page.getByTestId("instructions-version").getByText("version 2").waitFor();
      await page.getByText("The instructions of this task changed").waitFor();
      await panel(page).getByText("Birds too").waitFor();
      await page.keyboard.press("Enter");
      const next = await currentTask(page);
      expect(second).toContain(next);
      await page.keyboard.press("3");
      await page.waitForFunction(
        `document.querySelector("article[data-task-id]")?.getAttribute("data-task-id") !== ${JSON.stringify(next)}`,
      );
      expect(await panel(page).count()).toBe(0);
      expect(second).toContain(await currentTask(page));
      expect(unexpectedProblems(watch)).toEqual([]);
    } finally {
      await context.close();
    }
  },
  scaled(120_000),
);
