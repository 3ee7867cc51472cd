/**
 * The console's consensus views of the reserved task types (issue 30, contract §task-types) in Debian's Chromium
 * against a real labelgate: tasks of each type are created through `POST /v1/tasks`, labeled through the
 * labeler API until settled, and opened in the console, which must draw the consensus the API returns:
 *
 * - multi_label_classification: each option chosen or not, with its P(applies) as a named progress bar;
 * - bounding_box: one SVG rect per consensus box over the item's image, scaled to the drawn image, captioned
 *   with class, confidence and support, and a table row per box; an s3:// item (no viewable URL) draws the
 *   boxes on a blank canvas and says so;
 * - text_span: the spans highlighted in `data_text`, offsets in code points across emoji; a text of 100,000
 *   code points with 300 spans is drawn without freezing the page;
 * - free_text: the consensus words, those below the target marked, and the answers aligned slot by slot;
 * - gold tasks of the reserved types show their `gold_answer` the same way.
 *
 * Every page: no console error or CSP violation, no serious or critical axe-core violation, no key in a URL.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { scaled } from "../env";
import { createLabeler, eventually, registerCustomer, type System, settledResult, startSystem } from "../system";
import * as web from "./browser";

type Box = { label: string; x: number; y: number; w: number; h: number };
type Span = { start: number; end: number; label: string };
type Consensus = {
  labels?: string[];
  confidence?: Record<string, number>;
  boxes?: (Box & { confidence: number; support: number })[];
  spans?: (Span & { confidence: number })[];
};
type Result = { consensus?: Consensus; posterior: Record<string, number>; consensus_label: string };

let browser: Browser;
let sys: System;
let context: BrowserContext;
let page: Page;
let watch: web.PageWatch;
let customerKey: string;
let labelerKeys: string[];
let images: Awaited<ReturnType<typeof web.imageServer>>;

beforeAll(async () => {
  [browser, sys, images] = await Promise.all([web.launchBrowser(), startSystem(), web.imageServer()]);
  customerKey = (await registerCustomer(sys, 5000)).key;
  labelerKeys = [];
  for (const name of ["Ana", "Ben", "Cai"]) labelerKeys.push((await createLabeler(sys, name)).key);
  ({ context, page, watch } = await web.watchedPage(browser));
  await page.goto(`${sys.baseUrl}/console/`);
  await page.getByLabel("Customer API key").fill(customerKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
}, scaled(90_000));

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await images?.close();
  await sys?.close();
});

afterEach(() => {
  expect(web.unexpectedProblems(watch)).toEqual([]);
  expect(watch.urls.filter((u) => u.includes(customerKey))).toEqual([]);
});

/** Creates a task (`POST /v1/tasks`, 202) and returns its id. */
async function createTask(body: Record<string, unknown>): Promise<string> {
  const res = await sys.api<{ task_id: string }>("POST", "/v1/tasks", { token: customerKey, body });
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 202 });
  return res.body.task_id;
}

/**
 * Each labeler in turn claims `taskId` and labels it with `answer` until the task is decided; returns the
 * settled result. A claim refused once the task has enough labels ends the round.
 */
async function labelUntilSettled(taskId: string, answer: Record<string, unknown>): Promise<Result> {
  for (const key of labelerKeys) {
    const task = await sys.api<{ status: string }>("GET", `/v1/tasks/${taskId}`, { token: customerKey });
    if (task.body.status !== "pending" && task.body.status !== "labeling") break;
    const claim = await sys.api<{ claim_id: string }>("POST", "/v1/labeling/claims", { token: key, body: { task_id: taskId } });
    if (claim.status !== 201) break;
    const labeled = await sys.api("POST", `/v1/labeling/claims/${claim.body.claim_id}/label`, { token: key, body: answer });
    expect({ status: labeled.status, body: labeled.body }).toMatchObject({ status: 201 });
  }
  return (await settledResult(sys, customerKey, taskId)) as unknown as Result;
}

/** Opens a task's page in the console and waits for `testId` to be drawn. */
async function openTask(taskId: string, testId: string): Promise<void> {
  await page.goto(`${sys.baseUrl}/console/tasks/${taskId}`);
  await page
    .getByTestId(testId)
    .first()
    .waitFor({ timeout: scaled(20_000) });
}

/** Axe-core finds no serious or critical violation; a screenshot when WEB_SCREENSHOTS is set. */
async function audit(name: string): Promise<void> {
  expect({ page: name, violations: await web.accessibilityViolations(page) }).toEqual({ page: name, violations: [] });
  await web.screenshot(page, name);
}

/** A share as the console writes it (format.ts `formatShare`). */
const pct = (p: number) => `${(p * 100).toFixed(1)}%`;

/** Code points `start..end` of `word`'s first occurrence in `text` (end exclusive). */
function spanOf(text: string, word: string, label: string): Span {
  const at = text.indexOf(word);
  if (at < 0) throw new Error(`"${word}" is not in the text`);
  const start = Array.from(text.slice(0, at)).length;
  return { start, end: start + Array.from(word).length, label };
}

describe("consensus views of the reserved task types", () => {
  it(
    "multi_label_classification: options chosen or not, with P(applies) bars",
    async () => {
      const options = ["cat", "dog", "outdoor"];
      const taskId = await createTask({
        type: "multi_label_classification",
        data_url: images.url(31),
        label_spec: { question: "What is in the picture?", options },
        consensus_threshold: 3,
      });
      const result = await labelUntilSettled(taskId, { labels: ["cat", "outdoor"] });
      const labels = result.consensus?.labels ?? [];
      expect(labels.sort()).toEqual(["cat", "outdoor"]);

      await openTask(taskId, "typed-consensus");
      const rows = page.getByTestId("consensus-option");
      expect(await rows.count()).toBe(options.length);
      for (const [i, o] of options.entries()) {
        const row = rows.nth(i);
        expect(await row.getAttribute("data-chosen")).toBe(String(labels.includes(o)));
        await row.getByText(labels.includes(o) ? "chosen" : "not chosen", { exact: true }).waitFor();
        const p = result.posterior[o];
        expect(p).toBeDefined();
        await page.getByRole("progressbar", { name: `P(${o} applies)` }).waitFor();
        expect(await row.textContent()).toContain(`P(applies) ${pct(p as number)}`);
        const c = result.consensus?.confidence?.[o];
        if (c !== undefined) expect(await row.textContent()).toContain(`confidence ${pct(c)}`);
      }
      await page.getByText("Consensus label (canonical JSON, without confidences)").click();
      expect(await page.getByTestId("consensus-label").textContent()).toBe(result.consensus_label);
      await audit("console-task-multi-label");
    },
    scaled(90_000),
  );

  it(
    "bounding_box: the consensus boxes over the image, with class, confidence and support, and a table",
    async () => {
      const boxes: Box[] = [
        { label: "cat", x: 48, y: 36, w: 120, h: 90 },
        { label: "dog", x: 240, y: 180, w: 200, h: 150 },
      ];
      const taskId = await createTask({
        type: "bounding_box",
        data_url: images.url(32),
        label_spec: { question: "Draw a box around every animal", classes: ["cat", "dog"] },
        consensus_threshold: 3,
      });
      const result = await labelUntilSettled(taskId, { boxes });
      const drawn = result.consensus?.boxes ?? [];
      expect(drawn.map((b) => b.label).sort()).toEqual(["cat", "dog"]);

      await openTask(taskId, "box-overlay");
      const rects = page.locator("[data-testid=box-overlay] rect.box-rect");
      await rects.nth(drawn.length - 1).waitFor();
      expect(await rects.count()).toBe(drawn.length);
      // the item image is 480 × 360: each rect is its box scaled to the image as drawn
      const [natural, shown] = (await page.evaluate(
        "(() => { const img = document.querySelector('.box-stage img'); return [img.naturalWidth, img.clientWidth]; })()",
      )) as [number, number];
      expect(natural).toBe(480);
      for (const [i, b] of drawn.entries()) {
        const rect = rects.nth(i);
        expect(await rect.getAttribute("data-label")).toBe(b.label);
        expect(Number(await rect.getAttribute("x"))).toBeCloseTo((b.x * shown) / natural, 1);
        expect(Number(await rect.getAttribute("width"))).toBeCloseTo((b.w * shown) / natural, 1);
        await page
          .locator("[data-testid=box-overlay] text")
          .filter({ hasText: `${b.label} ${pct(b.confidence)} ×${b.support}` })
          .waitFor();
      }
      expect(await page.getByTestId("box-table").locator("tbody tr").count()).toBe(drawn.length);
      // the item's image is shown once: the consensus drawing, no preview above it
      expect(await page.locator(".task-preview").count()).toBe(0);
      expect(await page.locator(`img[src="${images.url(32)}"]`).count()).toBe(1);
      await audit("console-task-bounding-box");
    },
    scaled(90_000),
  );

  it(
    "bounding_box of an s3 item: the boxes on a blank canvas of their extent, and a note",
    async () => {
      const taskId = await createTask({
        type: "bounding_box",
        data_url: "s3://labelgate-test-items/photos/0001.jpg",
        label_spec: { question: "Draw a box around every car", classes: ["car"] },
        consensus_threshold: 2,
      });
      const result = await labelUntilSettled(taskId, { boxes: [{ label: "car", x: 10, y: 20, w: 300, h: 200 }] });
      expect(result.consensus?.boxes).toHaveLength(1);
      await openTask(taskId, "image-not-viewable");
      expect(await page.locator("[data-testid=box-overlay] rect.box-rect").count()).toBe(1);
      expect(await page.locator(".box-stage img").count()).toBe(0);
      await audit("console-task-bounding-box-s3");
    },
    scaled(90_000),
  );

  it(
    "text_span: the consensus spans highlighted per entity type, offsets in code points across emoji",
    async () => {
      const text = "😀 Ana met 👩‍💻 Bob in Zürich 🇨🇭 on Friday.";
      const spans = [spanOf(text, "Ana", "PER"), spanOf(text, "👩‍💻 Bob", "PER"), spanOf(text, "Zürich 🇨🇭", "LOC")];
      const taskId = await createTask({
        type: "text_span",
        data_url: "https://texts.example/0001.txt",
        data_text: text,
        label_spec: { question: "Mark people and places", entity_types: ["PER", "LOC"] },
        consensus_threshold: 3,
      });
      const result = await labelUntilSettled(taskId, { spans });
      const decided = [...(result.consensus?.spans ?? [])].sort((p, q) => p.start - q.start);
      expect(decided.map(({ start, end, label }) => ({ start, end, label }))).toEqual(spans);

      await openTask(taskId, "consensus-span");
      const marks = page.getByTestId("consensus-span");
      await marks.nth(decided.length - 1).waitFor();
      expect(await page.locator("[data-testid=consensus-span] .tt-span-text").allTextContents()).toEqual(["Ana", "👩‍💻 Bob", "Zürich 🇨🇭"]);
      for (const [i, s] of decided.entries()) {
        expect(await marks.nth(i).getAttribute("title")).toBe(`${s.label}, confidence ${pct(s.confidence)}`);
        expect(await marks.nth(i).getAttribute("data-label")).toBe(s.label);
      }
      expect(await page.getByTestId("span-text").textContent()).toContain("😀 Ana");
      const rows = page.getByTestId("span-table").locator("tbody tr");
      expect(await rows.count()).toBe(decided.length);
      expect(await rows.nth(1).textContent()).toContain(pct(decided[1]?.confidence as number));
      await page.getByRole("list", { name: "Entity types" }).getByText("PER (2)").waitFor();
      await audit("console-task-text-span");
    },
    scaled(90_000),
  );

  it(
    "text_span of 100,000 code points with 300 spans is drawn without freezing",
    async () => {
      const unit = "words 😀 "; // 8 code points: the emoji is code point 6 of each
      const text = unit.repeat(12_500);
      const spans = Array.from({ length: 300 }, (_, i) => ({ start: i * 320 + 6, end: i * 320 + 7, label: i % 2 ? "A" : "B" }));
      const taskId = await createTask({
        type: "text_span",
        data_url: "https://texts.example/long.txt",
        data_text: text,
        label_spec: { question: "Mark the emoji", entity_types: ["A", "B"] },
        consensus_threshold: 3,
      });
      const result = await labelUntilSettled(taskId, { spans });
      expect(result.consensus?.spans).toHaveLength(300);
      const started = Date.now();
      await openTask(taskId, "consensus-span");
      await page.getByTestId("consensus-span").nth(299).waitFor();
      const ms = Date.now() - started;
      expect(ms).toBeLessThan(scaled(10_000));
      // the page still answers at once
      const ping = Date.now();
      expect(await page.evaluate("document.querySelectorAll('[data-testid=consensus-span]').length")).toBe(300);
      expect(Date.now() - ping).toBeLessThan(scaled(2_000));
      expect(new Set(await page.locator("[data-testid=consensus-span] .tt-span-text").allTextContents())).toEqual(new Set(["😀"]));
      await page.getByText("100,000 code points · 300 spans").waitFor();
    },
    scaled(120_000),
  );

  it(
    "gold tasks of the reserved types show their gold_answer the same way",
    async () => {
      const boxTask = await createTask({
        type: "bounding_box",
        data_url: images.url(33),
        label_spec: { question: "Draw a box around every animal", classes: ["cat", "dog"] },
        gold_answer: { boxes: [{ label: "dog", x: 100, y: 100, w: 80, h: 60 }] },
      });
      await openTask(boxTask, "gold-answer");
      await page.locator("[data-testid=gold-answer] rect.box-rect").first().waitFor();
      expect(await page.locator("[data-testid=gold-answer] rect.box-rect").count()).toBe(1);
      await page.getByTestId("gold").getByText("gold answer below", { exact: false }).waitFor();
      expect(await page.locator(`img[src="${images.url(33)}"]`).count()).toBe(1);
      expect(await page.locator(".task-preview").count()).toBe(0);
      await audit("console-task-gold-bounding-box");

      const text = "Grace 🎉 visited Oslo.";
      const spanTask = await createTask({
        type: "text_span",
        data_url: "https://texts.example/gold.txt",
        data_text: text,
        label_spec: { question: "Mark people and places", entity_types: ["PER", "LOC"] },
        gold_answer: { spans: [spanOf(text, "Grace", "PER"), spanOf(text, "Oslo", "LOC")] },
      });
      await openTask(spanTask, "gold-answer");
      expect(await page.locator("[data-testid=gold-answer] [data-testid=consensus-span] .tt-span-text").allTextContents()).toEqual([
        "Grace",
        "Oslo",
      ]);

      const multiTask = await createTask({
        type: "multi_label_classification",
        data_url: images.url(34),
        label_spec: { question: "What is in the picture?", options: ["cat", "dog"] },
        gold_answer: { labels: ["dog"] },
      });
      await openTask(multiTask, "gold-answer");
      await eventually(async () => ((await page.locator("[data-testid=gold-answer] [data-chosen=true]").count()) === 1 ? true : undefined));
      expect(await page.locator("[data-testid=gold-answer] [data-chosen=true]").textContent()).toContain("dog");
      await audit("console-task-gold-multi-label");
    },
    scaled(90_000),
  );

  it(
    "free_text: the consensus text with its low-confidence words marked, and the answers aligned beside it",
    async () => {
      const taskId = await createTask({
        type: "free_text",
        data_url: "https://audio.example/console-1.wav",
        label_spec: { question: "Transcribe the recording" },
        // three answers, then: 0.99 marks the word two of three wrote
        confidence_target: 0.99,
        min_labels: 3,
        max_labels: 3,
      });
      const answers = ["The quick brown fox.", "the quick brawn fox", "The quick brown fox"];
      for (const [i, key] of labelerKeys.entries()) {
        const claim = await sys.api<{ claim_id: string }>("POST", "/v1/labeling/claims", { token: key, body: { task_id: taskId } });
        expect(claim.status).toBe(201);
        const labeled = await sys.api("POST", `/v1/labeling/claims/${claim.body.claim_id}/label`, {
          token: key,
          body: { text: answers[i] },
        });
        expect(labeled.status).toBe(201);
      }
      const result = (await settledResult(sys, customerKey, taskId)) as unknown as {
        consensus: { text: string; words: { word: string; confidence: number }[] };
      };
      expect(result.consensus.text).toBe("the quick brown fox");
      const low = result.consensus.words.filter((w) => w.confidence < 0.99).map((w) => w.word);
      expect(low).toContain("brown");

      await openTask(taskId, "free-text-consensus");
      const words = page.getByTestId("free-text-word");
      expect(await words.allTextContents()).toEqual(["the", "quick", "brown", "fox"]);
      for (const [i, w] of result.consensus.words.entries()) {
        expect(await words.nth(i).getAttribute("data-low")).toBe(String(w.confidence < 0.99));
        expect(await words.nth(i).getAttribute("title")).toBe(`confidence ${pct(w.confidence)}`);
      }
      const table = page.getByTestId("free-text-alignment");
      expect(await table.getByTestId("free-text-alignment-answer").count()).toBe(3);
      expect(await table.getByTestId("free-text-alignment-answer").nth(1).textContent()).toBe("Answer 2thequickbrawnfox");
      expect(await table.locator(".ft-differs").allTextContents()).toEqual(["brawn"]);
      expect(await page.getByText("Options:").count()).toBe(0);
      await audit("console-task-free-text");
    },
    scaled(90_000),
  );

  it(
    "bounding_box not yet settled: the item's image once, as the preview",
    async () => {
      const taskId = await createTask({
        type: "bounding_box",
        data_url: images.url(35),
        label_spec: { question: "Draw a box around every animal", classes: ["cat"] },
        consensus_threshold: 3,
      });
      await openTask(taskId, "task-policy");
      await page.locator(".task-preview").waitFor();
      expect(await page.locator(`img[src="${images.url(35)}"]`).count()).toBe(1);
    },
    scaled(60_000),
  );

  it(
    "text_span whose text cannot be fetched: canceled, and the task page says why",
    async () => {
      const missing = images.url(0).replace(/\/img\/0\.svg$/, "/texts/missing.txt");
      const taskId = await createTask({
        type: "text_span",
        data_url: missing,
        label_spec: { question: "Mark people and places", entity_types: ["PER", "LOC"] },
      });
      const error = await eventually(async () => {
        const r = await sys.api<{ status: string; item_error?: string }>("GET", `/v1/tasks/${taskId}`, { token: customerKey });
        return r.body.status === "canceled" ? r.body.item_error : undefined;
      });
      expect(error).toMatch(/^the text at data_url could not be read: /);
      await openTask(taskId, "item-error");
      expect(await page.getByTestId("item-error").textContent()).toBe(`Canceled: ${error}`);
      await audit("console-task-item-error");
    },
    scaled(60_000),
  );

  it(
    "the task list summarizes a reserved type's consensus; a single-choice label as it is",
    async () => {
      const multi = await createTask({
        type: "multi_label_classification",
        data_url: images.url(36),
        label_spec: { question: "Which colors?", options: ["red", "round", "blue"] },
        consensus_threshold: 3,
      });
      const boxes = await createTask({
        type: "bounding_box",
        data_url: images.url(37),
        label_spec: { question: "Box every road user", classes: ["car", "person"] },
        consensus_threshold: 3,
      });
      const text = "Ana took aspirin.";
      const spanTask = await createTask({
        type: "text_span",
        data_url: "https://texts.example/list.txt",
        data_text: text,
        label_spec: { question: "Mark drugs and people", entity_types: ["DRUG", "PERSON"] },
        consensus_threshold: 3,
      });
      const single = await createTask({
        type: "image_classification",
        data_url: images.url(38),
        label_spec: { question: "Cat or dog?", options: ["cat", "dog"] },
        consensus_threshold: 3,
      });
      await labelUntilSettled(multi, { labels: ["red", "round"] });
      await labelUntilSettled(boxes, {
        boxes: [
          { label: "car", x: 10, y: 10, w: 100, h: 80 },
          { label: "person", x: 200, y: 40, w: 50, h: 120 },
          { label: "car", x: 300, y: 200, w: 120, h: 90 },
        ],
      });
      await labelUntilSettled(spanTask, { spans: [spanOf(text, "aspirin", "DRUG"), spanOf(text, "Ana", "PERSON")] });
      const singleResult = await labelUntilSettled(single, { label: "dog" });

      await page.goto(`${sys.baseUrl}/console/tasks?status=settled`);
      const summaryOf = async (taskId: string) => {
        const row = page.locator("tr").filter({ has: page.getByRole("link", { name: taskId, exact: true }) });
        await row.waitFor({ timeout: scaled(20_000) });
        return row;
      };
      const expected: [string, string][] = [
        [multi, "red, round"],
        [boxes, "3 boxes: car ×2, person"],
        [spanTask, "2 spans: DRUG, PERSON"],
      ];
      for (const [taskId, summary] of expected) {
        const row = await summaryOf(taskId);
        expect(await row.getByTestId("consensus-summary").textContent()).toBe(summary);
        // the canonical JSON stays at hand, in the cell's title
        expect(await row.getByTestId("consensus-summary").getAttribute("title")).toMatch(/^\{"/);
      }
      const singleRow = await summaryOf(single);
      expect(await singleRow.getByTestId("consensus-summary").textContent()).toBe(singleResult.consensus_label);
      expect(singleResult.consensus_label).toBe("dog");
      await audit("console-tasks-summaries");
    },
    scaled(120_000),
  );
});
