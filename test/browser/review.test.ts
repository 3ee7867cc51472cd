/**
 * The console's review page (contract §review) in Debian's Chromium against a real labelgate (gateway and
 * workers, a database of its own): a customer at `quality.audit_rate` 1 works through the audit queue by
 * keyboard (a accepts, c then 2 corrects a single-choice task with the labeler app's widget, n passes) and
 * by mouse (Reject reopens a single-choice task; Correct ticks a multi-label answer in its widget), while the
 * next audit's image is already loaded; then reviews a task from its own page. Checked through the API: each
 * stored review (verdict, answer, revised) and each audit closed by its review; a task no longer settled is
 * not reviewable from the page. Every page: no console error or CSP violation, no serious or critical axe-core
 * violation, and no key in a request URL.
 */
import type { AuditPage, Task } from "@labelgate/api/types";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { scaled } from "../env";
import { createLabeler, eventually, label, registerCustomer, type System, settledResult, startSystem, taskBody } from "../system";
import * as web from "./browser";

let browser: Browser;
let images: Awaited<ReturnType<typeof web.imageServer>>;
let sys: System;
let customer: { id: string; key: string };
let labeler: { id: string; key: string };
let context: BrowserContext;
let page: Page;
let watch: web.PageWatch;
const audited: string[] = [];
/** the tasks, in the order they settled (so in the audit queue's order) */
const ids: string[] = [];
const SPEC = { question: "Which animal is in the picture?", options: ["cat", "dog", "bird"] };
/** the image number of task i */
const imageOf = (i: number) => 300 + i;

async function audit(name: string): Promise<void> {
  expect({ page: name, violations: await web.accessibilityViolations(page) }).toEqual({ page: name, violations: [] });
  audited.push(name);
  await web.screenshot(page, name);
}

async function task(taskId: string): Promise<Task> {
  return (await sys.api<Task>("GET", `/v1/tasks/${taskId}`, { token: customer.key })).body;
}

async function audits(status: "open" | "done"): Promise<AuditPage["items"]> {
  return (await sys.api<AuditPage>("GET", `/v1/audits?status=${status}&per_page=100`, { token: customer.key })).body.items;
}

/** Waits until the review page shows task `i` of `ids`. */
async function showing(i: number): Promise<void> {
  await page.locator(`[data-testid="review-item"][data-task-id="${ids[i]}"]`).waitFor();
}

/** Waits until task `i` has `n` reviews, and returns the task. */
function reviewed(i: number, n = 1): Promise<Task> {
  return eventually(
    async () => {
      const t = await task(ids[i] as string);
      return (t.reviews?.length ?? 0) >= n ? t : undefined;
    },
    10_000,
    `review ${n} of task ${i}`,
  );
}

beforeAll(async () => {
  [browser, images] = await Promise.all([web.launchBrowser(), web.imageServer()]);
  sys = await startSystem();
  customer = await registerCustomer(sys, 5000);
  labeler = await createLabeler(sys, "Ana");
  const patched = await sys.api("PATCH", "/v1/customers/me/settings", { token: customer.key, body: { quality: { audit_rate: 1 } } });
  expect(patched.status).toBe(200);
  // five tasks settled one after the other on one label each: 0-2 and 4 single choice ("cat"), 3 multi-label (["cat"])
  for (let i = 0; i < 5; i++) {
    const multi = i === 3;
    const created = await sys.api<{ task_id: string }>("POST", "/v1/tasks", {
      token: customer.key,
      body: taskBody({
        ...(multi ? { type: "multi_label_classification" } : {}),
        label_spec: SPEC,
        consensus_threshold: 1,
        data_url: images.url(imageOf(i)),
      }),
    });
    expect(created.status).toBe(202);
    const id = created.body.task_id;
    if (multi) {
      const claim = await sys.api<{ claim_id: string }>("POST", "/v1/labeling/claims", { token: labeler.key, body: { task_id: id } });
      expect(claim.status).toBe(201);
      const labeled = await sys.api("POST", `/v1/labeling/claims/${claim.body.claim_id}/label`, {
        token: labeler.key,
        body: { labels: ["cat"] },
      });
      expect(labeled.status).toBe(201);
    } else expect((await label(sys, labeler.key, id, "cat")).status).toBe(201);
    await settledResult(sys, customer.key, id);
    ids.push(id);
  }
  await eventually(async () => ((await audits("open")).length === 5 ? true : undefined), 10_000, "five open audits");
  expect((await audits("open")).map((a) => a.task_id)).toEqual(ids);
  ({ context, page, watch } = await web.watchedPage(browser));
}, scaled(90_000));

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await images?.close();
  await sys?.close();
});

describe("review page", () => {
  it("opens the oldest open audit with its item, consensus and confidence, the next one's image already loaded", async () => {
    await page.goto(`${sys.baseUrl}/console/`);
    await page.getByLabel("Customer API key").fill(customer.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Review", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Review" }).waitFor();
    await page.getByText("5 open audits").waitFor();
    await showing(0);
    expect(await page.getByTestId("review-consensus").textContent()).toBe("cat");
    expect(await page.getByTestId("review-confidence").textContent()).toMatch(/^\d+(\.\d)?\s?%$/);
    await page.locator(`img[src="${images.url(imageOf(0))}"]`).waitFor();
    // the next audit's item is requested while the first is on screen
    await eventually(async () => ((images.requests.get(`/img/${imageOf(1)}.svg`) ?? 0) > 0 ? true : undefined), 10_000, "the next image");
    await audit("console-review");
  });

  it("accepts by key a, and corrects by key c then an option key, moving to the next audit each time", async () => {
    await page.keyboard.press("a");
    await showing(1);
    await page.getByTestId("review-outcome").getByText("Accepted: the result stays revision 1.").waitFor();
    const first = await reviewed(0);
    expect(first.reviews).toEqual([expect.objectContaining({ verdict: "accept", answer: null, revision: 1, revised: false })]);

    await page.keyboard.press("c");
    await page.getByTestId("correct-widget").getByRole("button", { name: /dog/ }).waitFor();
    await audit("console-review-correct");
    // Escape leaves the widget without reviewing; c opens it again
    await page.keyboard.press("Escape");
    await page.getByTestId("correct-widget").waitFor({ state: "detached" });
    await page.keyboard.press("c");
    await page.getByTestId("correct-widget").waitFor();
    await page.keyboard.press("2");
    await showing(2);
    await page.getByTestId("review-outcome").getByText("Corrected: revision 2 records your answer.").waitFor();
    const second = await reviewed(1);
    expect(second.reviews).toEqual([expect.objectContaining({ verdict: "reject", answer: { label: "dog" }, revision: 1, revised: true })]);
    const revised = await eventually(
      async () => {
        const t = await task(ids[1] as string);
        return t.revision === 2 && t.status === "settled" ? t : undefined;
      },
      20_000,
      "revision 2",
    );
    expect(revised).toMatchObject({ consensus_label: "dog", resolution: "review" });
  });

  it("rejects by mouse (the task reopens), and corrects a multi-label task in its widget by mouse", async () => {
    await page.getByRole("button", { name: /^Reject/ }).click();
    await showing(3);
    await page
      .getByTestId("review-outcome")
      .getByText(/Rejected: the task reopened/)
      .waitFor();
    const third = await reviewed(2);
    expect(third.reviews).toEqual([expect.objectContaining({ verdict: "reject", answer: null, revised: true })]);
    expect(third.status).toBe("labeling");

    // a multi-label result: no reject alone (the API takes it for single choice only), its options drawn by its view
    expect(await page.getByTestId("review-item").getAttribute("data-task-type")).toBe("multi_label_classification");
    expect(await page.getByRole("button", { name: /^Reject/ }).count()).toBe(0);
    await page.getByTestId("typed-consensus").getByTestId("consensus-option").first().waitFor();
    await page.getByRole("button", { name: /^Correct/ }).click();
    const widget = page.getByTestId("correct-widget");
    await widget.getByRole("checkbox", { name: "cat" }).check();
    await widget.getByRole("checkbox", { name: "dog" }).check();
    await audit("console-review-correct-multi");
    await widget.getByRole("button", { name: /^Submit/ }).click();
    await showing(4);
    const fourth = await reviewed(3);
    expect(fourth.reviews).toEqual([expect.objectContaining({ verdict: "reject", answer: { labels: ["cat", "dog"] }, revised: true })]);
  });

  it("passes an audit with n, leaving it open", async () => {
    await page.keyboard.press("n");
    await page.getByTestId("no-audit").getByText("You passed every open audit.").waitFor();
    expect((await task(ids[4] as string)).reviews ?? []).toEqual([]);
    // the four reviews closed their audits; the passed one stays open
    const done = await audits("done");
    expect(done.map((a) => a.task_id).sort()).toEqual(ids.slice(0, 4).sort());
    for (const a of done) expect(a.review_id).toBe((await task(a.task_id)).reviews?.at(-1)?.review_id);
    expect((await audits("open")).map((a) => a.task_id)).toEqual([ids[4]]);
  });

  it("reviews a task from its page, and does not offer a task that is no longer settled", async () => {
    await page.goto(`${sys.baseUrl}/console/tasks/${ids[4]}`);
    await page.getByTestId("review-link").click();
    await page.waitForURL(new RegExp(`/console/review/${ids[4]}$`));
    await showing(4);
    await page.getByRole("button", { name: /^Accept/ }).click();
    await page.getByTestId("review-outcome").getByText("Accepted: the result stays revision 1.").waitFor();
    expect((await reviewed(4)).reviews).toEqual([expect.objectContaining({ verdict: "accept" })]);
    await eventually(async () => ((await audits("open")).length === 0 ? true : undefined), 10_000, "the last audit to close");

    // the reopened task: the page says so, offers no verdict, and its keys send nothing
    await page.goto(`${sys.baseUrl}/console/review/${ids[2]}`);
    await page.getByTestId("not-settled").getByText("This task is labeling").waitFor();
    expect(await page.getByRole("button", { name: /^Accept/ }).count()).toBe(0);
    await page.keyboard.press("a");
    await page.keyboard.press("r");
    await page.goto(`${sys.baseUrl}/console/review`);
    await page
      .getByTestId("no-audit")
      .getByText(/^No open audit/)
      .waitFor();
    expect((await task(ids[2] as string)).reviews).toHaveLength(1);
    await audit("console-review-empty");
  });

  it("kept the key out of URLs; no console error or CSP violation", () => {
    expect(audited.length).toBe(4);
    expect(watch.urls.filter((u) => u.includes(customer.key))).toEqual([]);
    expect(web.unexpectedProblems(watch)).toEqual([]);
  });
});
