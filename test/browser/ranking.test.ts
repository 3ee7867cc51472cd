/**
 * The console's ranking page (issue 37, contract §task-types) in Debian's Chromium against a real labelgate: a
 * batch of pairwise comparisons (`POST /v1/tasks/batch`) and a manifest job of them (lines with `data_url_b`, served
 * by a local http server), labeled through the labeler API so that p1 > p2 > p3 > p4; the batch's page and the
 * job's page link to `/console/ranking/:id`, which draws the ranking table (best first, each score with its 95%
 * interval, as the API answers it) and the plot (the console's uPlot chart: a drawn canvas, and its numbers in a
 * hidden table). A job of another type shows the API's 400 message.
 *
 * Every page: no console error or CSP violation, no serious or critical axe-core violation, no key in a URL.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { jobTasks, serveManifest, waitForStatus } from "../../services/manifest-worker/test/helpers";
import { scaled } from "../env";
import { createLabeler, registerCustomer, type System, startSystem } from "../system";
import * as web from "./browser";

let browser: Browser;
let sys: System;
let context: BrowserContext;
let page: Page;
let watch: web.PageWatch;
let customerKey: string;
let labelerKeys: string[];

beforeAll(async () => {
  [browser, sys] = await Promise.all([web.launchBrowser(), startSystem()]);
  customerKey = (await registerCustomer(sys, 5000)).key;
  labelerKeys = [];
  for (const name of ["Ana", "Ben"]) labelerKeys.push((await createLabeler(sys, name)).key);
  ({ context, page, watch } = await web.watchedPage(browser));
  await page.goto(`${sys.baseUrl}/console/`);
  await page.getByLabel("Customer API key").fill(customerKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
}, scaled(90_000));

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await sys?.close();
});

afterEach(() => {
  // the job of another type's ranking answers 400 on purpose
  expect(web.unexpectedProblems(watch, [400])).toEqual([]);
  expect(watch.urls.filter((u) => u.includes(customerKey))).toEqual([]);
});

const NAMES = ["p1", "p2", "p3", "p4"];
const img = (name: string) => `https://images.example/${name}.jpg`;
/** Every pair of NAMES once, a and b alternating. */
const PAIRS: [string, string][] = [];
for (let i = 0; i < NAMES.length; i++)
  for (let j = i + 1; j < NAMES.length; j++)
    PAIRS.push(PAIRS.length % 2 === 0 ? [NAMES[i] as string, NAMES[j] as string] : [NAMES[j] as string, NAMES[i] as string]);

type RankingBody = { items: { item: string; score: number; rank: number; ci_low: number; ci_high: number }[]; labels: number };

/** Both labelers answer each task with its true winner (the earlier name wins). */
async function labelTrueWinners(taskIds: string[], pairs: [string, string][]): Promise<void> {
  for (const [k, taskId] of taskIds.entries()) {
    const [a, b] = pairs[k] as [string, string];
    const winner = NAMES.indexOf(a) < NAMES.indexOf(b) ? "a" : "b";
    for (const key of labelerKeys) {
      const claim = await sys.api<{ claim_id: string }>("POST", "/v1/labeling/claims", { token: key, body: { task_id: taskId } });
      expect(claim.status).toBe(201);
      const labeled = await sys.api("POST", `/v1/labeling/claims/${claim.body.claim_id}/label`, { token: key, body: { winner } });
      expect(labeled.status).toBe(201);
    }
  }
}

/** The ranking page's table rows as [rank, item, score, interval] texts, and the API's ranking drawn the same. */
async function expectRankingDrawn(path: string): Promise<void> {
  const api = await sys.api<RankingBody>("GET", `/v1/${path}/ranking`, { token: customerKey });
  expect(api.status).toBe(200);
  await page.getByTestId("ranking-table").waitFor({ timeout: scaled(20_000) });
  const rows = await Promise.all((await page.getByTestId("ranking-row").all()).map((tr) => tr.locator("td").allTextContents()));
  expect(rows.map((r) => [r[0], r[1], r[2], r[3]])).toEqual(
    api.body.items.map((i) => [String(i.rank), i.item, i.score.toFixed(2), `${i.ci_low.toFixed(2)} to ${i.ci_high.toFixed(2)}`]),
  );
  expect(rows.map((r) => r[1])).toEqual(NAMES.map(img));
  // the plot: the chart's canvas is drawn, and its hidden table holds each score's interval
  const plot = page.getByTestId("ranking-plot");
  await plot
    .locator("canvas")
    .first()
    .waitFor({ timeout: scaled(20_000) });
  expect(await plot.getByRole("figure").getAttribute("class")).toContain("chart");
  const hidden = await Promise.all((await plot.locator("table tbody tr").all()).map((tr) => tr.locator("td").count()));
  expect(hidden).toEqual(api.body.items.map(() => 3));
  await expect(page.getByTestId("ranking-summary").textContent()).resolves.toContain(`${api.body.labels} labels`);
  expect(await web.accessibilityViolations(page)).toEqual([]);
}

it(
  "a batch of pairwise comparisons: its page links to the ranking, drawn as the API answers it",
  async () => {
    const res = await sys.api<{ batch_id: string; task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: customerKey,
      body: {
        tasks: PAIRS.map(([a, b]) => ({
          type: "pairwise_comparison",
          data_url: img(a),
          data_url_b: img(b),
          label_spec: { question: "Which photo is older?" },
          consensus_threshold: 2,
        })),
      },
    });
    expect(res.status).toBe(202);
    await labelTrueWinners(res.body.task_ids, PAIRS);
    await page.goto(`${sys.baseUrl}/console/batches/${res.body.batch_id}`);
    await page.getByTestId("ranking-link").click();
    await page.waitForURL(`**/console/ranking/${res.body.batch_id}`);
    await expectRankingDrawn(`batches/${res.body.batch_id}`);
    await web.screenshot(page, "ranking-batch");
  },
  scaled(120_000),
);

it(
  "a pairwise manifest job: its page links to the ranking; a job of another type shows the API's refusal",
  async () => {
    const lines = PAIRS.map(([a, b]) => JSON.stringify({ data_url: img(a), data_url_b: img(b) }));
    const manifest = await serveManifest(`${lines.join("\n")}\n`);
    const other = await serveManifest(`${JSON.stringify({ data_url: img("s1") })}\n`);
    try {
      const job = await sys.api<{ job_id: string }>("POST", "/v1/jobs", {
        token: customerKey,
        body: {
          manifest_url: manifest.url(),
          type: "pairwise_comparison",
          label_spec: { question: "Which photo is older?" },
          consensus_threshold: 2,
        },
      });
      expect(job.status).toBe(202);
      const jobId = job.body.job_id;
      await waitForStatus(sys, customerKey, jobId, "labeling", scaled(30_000));
      const tasks = (await jobTasks(sys, jobId)).map((t) => t.id);
      expect(tasks).toHaveLength(PAIRS.length);
      await labelTrueWinners(tasks, PAIRS);
      await page.goto(`${sys.baseUrl}/console/jobs/${jobId}`);
      await page.getByTestId("ranking-link").click();
      await page.waitForURL(`**/console/ranking/${jobId}`);
      await expectRankingDrawn(`jobs/${jobId}`);

      const single = await sys.api<{ job_id: string }>("POST", "/v1/jobs", {
        token: customerKey,
        body: { manifest_url: other.url(), label_spec: { question: "What is it?", options: ["cat", "dog"] } },
      });
      expect(single.status).toBe(202);
      await page.goto(`${sys.baseUrl}/console/ranking/${single.body.job_id}`);
      await page
        .getByText("a ranking ranks the items of pairwise_comparison tasks")
        .first()
        .waitFor({ timeout: scaled(20_000) });
    } finally {
      await manifest.close();
      await other.close();
    }
  },
  scaled(120_000),
);
