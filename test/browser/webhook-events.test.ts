/**
 * The console's webhooks page and the event catalog (contract §events; docs/decisions/0231) in Debian's
 * Chromium against a real labelgate: a customer creates a webhook choosing its events from the catalog (each
 * with its description; `task.settled` checked by default), the table shows each webhook's events, and the
 * events are edited in place (PATCH /v1/webhooks/{id}); a cancellation is then delivered to the webhook because
 * it subscribed to `task.canceled`. Every page: no console error or CSP violation, no serious or critical
 * axe-core violation, no key in a URL.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { scaled } from "../env";
import { createTask, eventually, registerCustomer, type System, startSystem } from "../system";
import { json, receivers } from "../webhooks";
import * as web from "./browser";

let browser: Browser;
let sys: System;
let context: BrowserContext;
let page: Page;
let watch: web.PageWatch;
let customerKey: string;
const { rx, closeAll } = receivers();

beforeAll(async () => {
  [browser, sys] = await Promise.all([web.launchBrowser(), startSystem()]);
  customerKey = (await registerCustomer(sys)).key;
  ({ context, page, watch } = await web.watchedPage(browser));
  await page.goto(`${sys.baseUrl}/console/`);
  await page.getByLabel("Customer API key").fill(customerKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
}, scaled(90_000));

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await closeAll();
  await sys?.close();
});

afterEach(() => {
  expect(web.unexpectedProblems(watch)).toEqual([]);
  expect(watch.urls.filter((u) => u.includes(customerKey))).toEqual([]);
});

/** The customer's webhooks as the API lists them. */
async function listed(): Promise<{ webhook_id: string; callback_url: string; events: string[] }[]> {
  const res = await sys.api<{ webhook_id: string; callback_url: string; events: string[] }[]>("GET", "/v1/webhooks", {
    token: customerKey,
  });
  expect(res.status).toBe(200);
  return res.body;
}

it(
  "creates a webhook with chosen events, shows them, edits them, and the new subscription is what gets delivered",
  async () => {
    const r = await rx();
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Webhooks", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor();

    // the form offers every event of the catalog, task.settled checked by default
    const form = page.getByRole("group", { name: "Events" });
    await expect(form.getByRole("checkbox", { name: "task.settled" }).isChecked()).resolves.toBe(true);
    for (const name of ["task.revised", "task.canceled", "job.completed", "job.failed"]) {
      await expect(form.getByRole("checkbox", { name }).isChecked()).resolves.toBe(false);
    }
    await form.getByText("A manifest job ended: every task of it settled or was canceled.").waitFor();
    await page.getByLabel("Callback URL").fill(r.url);
    await page.getByLabel("Signing secret").fill("whsec-console-events-0123456789");
    await form.getByRole("checkbox", { name: "job.completed" }).check();
    await page.getByRole("button", { name: "Create webhook" }).click();
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: r.url }) });
    await row.getByText("task.settled, job.completed").waitFor();
    expect((await listed())[0]?.events).toEqual(["task.settled", "job.completed"]);
    await web.screenshot(page, "console-webhook-events");
    expect({ violations: await web.accessibilityViolations(page) }).toEqual({ violations: [] });

    // edit: drop task.settled and job.completed, add task.canceled
    await row.getByRole("button", { name: `Edit events of ${r.url}` }).click();
    const edit = row.getByRole("group", { name: `Events of ${r.url}` });
    await edit.getByRole("checkbox", { name: "task.settled" }).uncheck();
    await edit.getByRole("checkbox", { name: "job.completed" }).uncheck();
    // none chosen: saving is not offered
    await expect(row.getByRole("button", { name: "Save events" }).isDisabled()).resolves.toBe(true);
    await row.getByText("Choose at least one event.").waitFor();
    await edit.getByRole("checkbox", { name: "task.canceled" }).check();
    expect({ violations: await web.accessibilityViolations(page) }).toEqual({ violations: [] });
    await web.screenshot(page, "console-webhook-events-edit");
    await row.getByRole("button", { name: "Save events" }).click();
    // the form closes once the update is accepted; until then its own checkbox is labelled "task.canceled"
    await edit.waitFor({ state: "hidden" });
    await row.getByText("task.canceled", { exact: true }).waitFor();
    expect((await listed())[0]?.events).toEqual(["task.canceled"]);

    // the new subscription routes a cancellation to the webhook
    const taskId = await createTask(sys, customerKey, {});
    expect((await sys.api("POST", `/v1/tasks/${taskId}/cancel`, { token: customerKey })).status).toBe(200);
    const delivered = await eventually(async () => r.forTask(taskId)[0], 20_000, "the task.canceled delivery");
    expect(json(delivered)).toMatchObject({ event: "task.canceled", task_id: taskId, reason: "customer" });

    // the delivery log names the event and its task
    await row.getByRole("link", { name: r.url }).click();
    await page.getByRole("heading", { level: 1, name: "Webhook deliveries" }).waitFor();
    const card = page.getByTestId("delivery").filter({ hasText: taskId });
    await card.getByText("task.canceled of task").waitFor();
    await card.getByText("delivered", { exact: true }).first().waitFor();
    expect({ violations: await web.accessibilityViolations(page) }).toEqual({ violations: [] });
  },
  scaled(90_000),
);
