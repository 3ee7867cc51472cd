/**
 * The labeler app's task-type widgets (issue 30) in Debian's Chromium against a real labelgate: a
 * multi_label_classification, a bounding_box and a text_span task, each labeled once with the mouse and
 * once with the keyboard alone (threshold 1), and a free_text task with an audio item typed and sent with Enter; the answer the app posts is checked against what was done, and
 * the gateway's recorded answer and the settled task's consensus against it; also Skip on a typed task, the
 * CSP (no violation) and axe-core (no serious or critical violation) before and after each answer.
 *
 * One task is open at a time (the app claims ahead): each test creates its task, signs in, labels it.
 */
import type { Browser, Page } from "playwright-core";
import { scaled } from "../env";
import { createLabeler, eventually, registerCustomer, type System, startSystem } from "../system";
import { accessibilityViolations, imageServer, launchBrowser, screenshot, unexpectedProblems, watchedPage } from "./browser";

const COLORS = ["red", "green", "blue"];
const CLASSES = ["car", "truck"];
const ENTITY_TYPES = ["PER", "LOC"];
// code points: "Ann"0-3 "met"4-7 "😀"8-9 "Bob"10-13 "in"14-16 "Paris"17-22 "."22-23 (UTF-16 offsets differ by 1 after the emoji)
const TEXT = "Ann met 😀 Bob in Paris.";
// the image server's pictures are 480 × 360
const NATURAL = { width: 480, height: 360 };

let browser: Browser;
let images: Awaited<ReturnType<typeof imageServer>>;
let sys: System;
let customerKey: string;
let labelerKey: string;
let imageNo = 0;

beforeAll(async () => {
  [browser, images] = await Promise.all([launchBrowser(), imageServer()]);
  sys = await startSystem();
  customerKey = (await registerCustomer(sys, 1000)).key;
  labelerKey = (await createLabeler(sys, "Ty")).key;
}, scaled(60_000));

afterAll(async () => {
  await browser?.close();
  await images?.close();
  await sys?.close();
});

type TaskSpec =
  | { type: "multi_label_classification"; label_spec: { question: string; options: string[] } }
  | { type: "bounding_box"; label_spec: { question: string; classes: string[] } }
  | { type: "text_span"; label_spec: { question: string; entity_types: string[] }; data_text: string }
  | { type: "pairwise_comparison"; label_spec: { question: string; allow_tie: boolean }; data_url_b: string };

const MULTI: TaskSpec = {
  type: "multi_label_classification",
  label_spec: { question: "Which colors are in the picture?", options: COLORS },
};
const BOXES: TaskSpec = { type: "bounding_box", label_spec: { question: "Box every vehicle.", classes: CLASSES } };
const SPANS: TaskSpec = {
  type: "text_span",
  label_spec: { question: "Mark people and places.", entity_types: ENTITY_TYPES },
  data_text: TEXT,
};

/** Creates a typed task (threshold 1: one label decides it) and returns its id. */
async function createTypedTask(spec: TaskSpec): Promise<string> {
  const res = await sys.api<{ task_id: string }>("POST", "/v1/tasks", {
    token: customerKey,
    body: {
      ...spec,
      data_url: spec.type === "text_span" ? "https://docs.example/item.txt" : images.url(imageNo++),
      consensus_threshold: 1,
    },
  });
  expect(res.status).toBe(202);
  return res.body.task_id;
}

/** Signs in with the keyboard and waits for `taskId` on screen. */
async function signIn(page: Page, taskId: string): Promise<void> {
  await page.goto(`${sys.baseUrl}/label/`);
  await page.getByLabel("Labeler key").waitFor();
  await page.keyboard.type(labelerKey);
  await page.keyboard.press("Enter");
  await page.locator(`article[data-task-id="${taskId}"]`).waitFor({ timeout: 10_000 });
}

/**
 * Runs `act` and returns the answer body the app posted for the claim and the answer the gateway recorded
 * (the label response's `answer`, its parts in canonical order).
 */
async function postedAnswer(page: Page, act: () => Promise<void>): Promise<{ posted: unknown; recorded: unknown }> {
  const answered = page.waitForResponse((r) => r.request().method() === "POST" && /\/v1\/labeling\/claims\/[^/]+\/label$/.test(r.url()));
  await act();
  const response = await answered;
  expect(response.status()).toBe(201);
  const body = (await response.json()) as { answer?: unknown };
  return { posted: response.request().postDataJSON(), recorded: body.answer };
}

/** The task once settled (GET /v1/tasks/{id}). */
async function settledTask(taskId: string): Promise<Record<string, unknown>> {
  return eventually(
    async () => {
      const r = await sys.api<Record<string, unknown>>("GET", `/v1/tasks/${taskId}`, { token: customerKey });
      return r.body.status === "settled" ? r.body : undefined;
    },
    20_000,
    `task ${taskId} settled`,
  );
}

/**
 * Labels one task of `spec` in a fresh page with `act` (threshold 1: the answer decides it). Returns the
 * answer the app posted, after checking that the gateway recorded that answer and settled the task with it
 * as its consensus (parts compared without their confidence, in any order). axe-core skips the elements of
 * `axeExclude` (selectors).
 */
async function labelOne(spec: TaskSpec, shot: string, act: (page: Page) => Promise<void>, axeExclude: string[] = []): Promise<unknown> {
  const taskId = await createTypedTask(spec);
  const { context, page, watch } = await watchedPage(browser);
  try {
    await signIn(page, taskId);
    await page.getByRole("heading", { name: spec.label_spec.question }).waitFor();
    if (spec.type === "bounding_box") await page.locator("svg.bbox-overlay").waitFor();
    expect(await accessibilityViolations(page, { exclude: axeExclude })).toEqual([]);
    const { posted, recorded } = await postedAnswer(page, async () => {
      await act(page);
      await screenshot(page, shot);
      expect(await accessibilityViolations(page, { exclude: axeExclude })).toEqual([]);
    });
    expect(sortedParts(recorded)).toEqual(sortedParts(posted));
    await page.getByText("Labeled this session: 1").waitFor({ timeout: 10_000 });
    expect(unexpectedProblems(watch)).toEqual([]);
    const task = await settledTask(taskId);
    expect(task.labels_collected).toBe(1);
    expect(sortedParts(task.consensus)).toEqual(sortedParts(posted));
    return posted;
  } finally {
    await context.close();
  }
}

/** A part as JSON with its keys sorted (the gateway's key order may differ from the app's). */
function sortKey(part: unknown): string {
  return typeof part === "object" && part !== null ? JSON.stringify(part, Object.keys(part).sort()) : JSON.stringify(part);
}

/** An answer or consensus as comparable data: each list of parts without confidence and support, sorted. */
function sortedParts(answer: unknown): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const [key, value] of Object.entries(answer as Record<string, unknown>)) {
    if (!Array.isArray(value)) continue;
    out[key] = value
      .map((part) => {
        if (typeof part !== "object" || part === null) return part;
        const { confidence: _c, support: _s, ...rest } = part as Record<string, unknown>;
        return rest;
      })
      .sort((a, b) => sortKey(a).localeCompare(sortKey(b)));
  }
  return out;
}

/** Where a natural-pixel point of the item is on the page (the overlay is the displayed image). */
async function pagePoint(page: Page, x: number, y: number): Promise<{ x: number; y: number }> {
  const box = await page.locator("svg.bbox-overlay").boundingBox();
  if (!box) throw new Error("the box overlay is not displayed");
  return { x: box.x + (x * box.width) / NATURAL.width, y: box.y + (y * box.height) / NATURAL.height };
}

async function drag(page: Page, from: { x: number; y: number }, to: { x: number; y: number }): Promise<void> {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 3 });
  await page.mouse.move(to.x, to.y, { steps: 3 });
  await page.mouse.up();
}

/** Each coordinate within `tolerance` pixels (the displayed image is scaled: a pixel of screen is more of the item). */
function expectBoxNear(actual: unknown, expected: { label: string; x: number; y: number; w: number; h: number }, tolerance: number): void {
  const a = actual as Record<string, unknown>;
  expect(a.label).toBe(expected.label);
  for (const k of ["x", "y", "w", "h"] as const) {
    expect(Number.isInteger(a[k])).toBe(true);
    expect(Math.abs((a[k] as number) - expected[k])).toBeLessThanOrEqual(tolerance);
  }
}

describe("multi_label_classification", () => {
  it("ticks two options with the mouse and submits", async () => {
    const answer = await labelOne(MULTI, "label-multi-mouse", async (page) => {
      await page.getByRole("checkbox", { name: "red" }).click();
      await page.getByRole("checkbox", { name: "green" }).click();
      await page.getByRole("checkbox", { name: "blue" }).click();
      await page.getByRole("checkbox", { name: "green" }).click(); // untick
      expect(await page.getByRole("checkbox", { name: "red" }).isChecked()).toBe(true);
      await page.getByRole("button", { name: /^Submit/ }).click();
    });
    expect(answer).toEqual({ labels: ["red", "blue"] });
  });

  it("ticks two options with keys 1-9 and submits with Enter", async () => {
    const answer = await labelOne(MULTI, "label-multi-keys", async (page) => {
      for (const key of ["3", "1", "2", "2"]) await page.keyboard.press(key);
      await page.getByRole("checkbox", { name: "blue" }).and(page.locator(":checked")).waitFor();
      await page.keyboard.press("Enter");
    });
    expect(answer).toEqual({ labels: ["red", "blue"] });
  });
});

describe("pairwise_comparison", () => {
  const pair = (): TaskSpec => ({
    type: "pairwise_comparison",
    label_spec: { question: "Which photo is sharper?", allow_tie: true },
    data_url_b: images.url(imageNo++),
  });

  it("shows both items side by side and answers with the mouse", async () => {
    const answer = await labelOne(pair(), "label-pairwise-mouse", async (page) => {
      const a = await page.getByTestId("pairwise-item-a").boundingBox();
      const b = await page.getByTestId("pairwise-item-b").boundingBox();
      expect(b?.x as number).toBeGreaterThan((a?.x as number) + 10);
      await page.getByRole("button", { name: /^A wins/ }).click();
    });
    expect(answer).toEqual({ winner: "a" });
  });

  it("stacks the items on a phone and answers with keys 1 / 2 / 0", async () => {
    const answer = await labelOne(pair(), "label-pairwise-keys", async (page) => {
      await page.setViewportSize({ width: 375, height: 800 });
      const a = await page.getByTestId("pairwise-item-a").boundingBox();
      const b = await page.getByTestId("pairwise-item-b").boundingBox();
      expect(b?.y as number).toBeGreaterThan((a?.y as number) + 10);
      await page.keyboard.press("0");
    });
    expect(answer).toEqual({ winner: "tie" });
  });
});

describe("bounding_box", () => {
  it("draws, moves and resizes a box with the mouse, deletes another, and submits", async () => {
    const answer = await labelOne(BOXES, "label-boxes-mouse", async (page) => {
      await page.getByRole("button", { name: "truck" }).click();
      // draw a truck from (120, 90) to (240, 270), then a second box to delete
      await drag(page, await pagePoint(page, 120, 90), await pagePoint(page, 240, 270));
      await page.getByRole("button", { name: /^Box 1: truck/ }).waitFor();
      await drag(page, await pagePoint(page, 300, 30), await pagePoint(page, 400, 100));
      await page.getByRole("button", { name: "Delete box 2" }).click();
      // move the first box by (+60, -30): drag from inside it
      await drag(page, await pagePoint(page, 180, 180), await pagePoint(page, 240, 150));
      // resize it from its corner handle (now at 300, 240) to (340, 300); its class becomes car
      await drag(page, await pagePoint(page, 300, 240), await pagePoint(page, 340, 300));
      await page.getByRole("button", { name: "car" }).click();
      await page.getByRole("button", { name: /^Box 1: car/ }).waitFor();
      await page.getByRole("button", { name: /^Submit/ }).click();
    });
    const boxes = (answer as { boxes: unknown[] }).boxes;
    expect(boxes).toHaveLength(1);
    expectBoxNear(boxes[0], { label: "car", x: 180, y: 60, w: 160, h: 240 }, 3);
  });

  it("adds, moves, resizes, cycles and deletes boxes with the keyboard alone", async () => {
    const answer = await labelOne(BOXES, "label-boxes-keys", async (page) => {
      const k = page.keyboard;
      await k.press("2"); // class truck for the next box
      await k.press("n"); // box 1 at the center: (180, 135) 120 × 90
      await k.press("ArrowRight");
      await k.press("ArrowRight"); // moved 2 steps of 5 px
      await k.press("Shift+ArrowDown"); // 5 px higher
      await k.press("n"); // box 2, selected
      await k.press("1"); // box 2 is a car
      await k.press("n"); // box 3, a car
      await k.press("Backspace"); // deleted
      await page.getByRole("button", { name: /^Box 3/ }).waitFor({ state: "detached" });
      await k.press("Tab"); // selects box 1
      await page.getByRole("button", { name: /^Box 1: truck/, pressed: true }).waitFor();
      await k.press("Shift+ArrowRight"); // 5 px wider
      await k.press("Enter");
    });
    expect(answer).toEqual({
      boxes: [
        { label: "truck", x: 190, y: 135, w: 125, h: 95 },
        { label: "car", x: 180, y: 135, w: 120, h: 90 },
      ],
    });
  });
});

describe("text_span", () => {
  it("marks spans selected with the mouse (code-point offsets past an emoji) and submits", async () => {
    const answer = await labelOne(SPANS, "label-spans-mouse", async (page) => {
      const text = page.getByTestId("span-text");
      // double-click selects the word Bob, key 1 marks it PER
      await text.locator('[data-start="10"]').dblclick();
      await page.keyboard.press("1");
      await page.getByText("PER: “Bob” (10–13)").waitFor();
      // drag across "Paris", then the LOC button marks it
      const paris = await text.locator('[data-start="17"]').boundingBox();
      if (!paris) throw new Error("Paris is not displayed");
      await drag(page, { x: paris.x + 1, y: paris.y + paris.height / 2 }, { x: paris.x + paris.width - 1, y: paris.y + paris.height / 2 });
      await page.getByRole("button", { name: "LOC" }).click();
      await page.getByText("LOC: “Paris” (17–22)").waitFor();
      await page.getByRole("button", { name: /^Submit/ }).click();
    });
    expect(answer).toEqual({
      spans: [
        { start: 10, end: 13, label: "PER" },
        { start: 17, end: 22, label: "LOC" },
      ],
    });
  });

  it("marks and removes spans with the keyboard alone", async () => {
    const answer = await labelOne(SPANS, "label-spans-keys", async (page) => {
      const k = page.keyboard;
      await k.press("ArrowRight"); // caret on Ann
      await k.press("1"); // Ann: PER
      for (let i = 0; i < 3; i++) await k.press("ArrowRight"); // caret on Bob
      await k.press("Shift+ArrowRight");
      await k.press("Shift+ArrowRight"); // Bob in Paris
      await k.press("2"); // LOC
      await page.getByText("LOC: “Bob in Paris” (10–22)").waitFor();
      await k.press("ArrowLeft"); // caret on "in"
      await k.press("Delete"); // removes the span under it
      await page.getByText("LOC: “Bob in Paris” (10–22)").waitFor({ state: "detached" });
      await k.press("ArrowRight"); // Paris
      await k.press("2");
      await k.press("Enter");
    });
    expect(answer).toEqual({
      spans: [
        { start: 0, end: 3, label: "PER" },
        { start: 17, end: 22, label: "LOC" },
      ],
    });
  });
});

describe("text_span of 100,000 code points", () => {
  // 12,500 units of 8 code points ("words", space, an emoji, a space or, every 100th, a line feed): tokens
  // alternate "words" (even) and the emoji (odd); token 2k starts at code point 8k, the emoji of unit k is 8k+6
  const LONG = Array.from({ length: 12_500 }, (_, i) => (i % 100 === 99 ? "words 😀\n" : "words 😀 ")).join("");
  const LONG_SPANS: TaskSpec = {
    type: "text_span",
    label_spec: { question: "Mark the words and the emoji.", entity_types: ENTITY_TYPES },
    data_text: LONG,
  };

  it("marks a span across two paragraphs with the keyboard alone and submits (offsets in code points)", async () => {
    expect(Array.from(LONG)).toHaveLength(100_000);
    // axe-core skips the text's 125 paragraphs (its runs are those of the short text, audited above: a scan of
    // their 37,500 elements takes about a minute)
    const answer = await labelOne(
      LONG_SPANS,
      "label-spans-long",
      async (page) => {
        const k = page.keyboard;
        await page.locator('[data-testid=span-text] [data-start="99992"]').waitFor();
        await k.press("ArrowRight"); // caret on the first "words"
        await k.press("1"); // PER
        await page.getByText("PER: “words” (0–5)").waitFor();
        for (let i = 0; i < 197; i++) await k.press("ArrowRight"); // caret on the emoji of unit 98 (790)
        for (let i = 0; i < 4; i++) await k.press("Shift+ArrowRight"); // to the emoji of unit 100 (807), past the line feed at 799
        await k.press("2"); // LOC
        await page.getByText("(790–807)").waitFor();
        // both paragraphs draw their part of the span
        for (const at of [790, 792, 799, 800, 806])
          expect(await page.locator(`[data-testid=span-text] [data-start="${at}"]`).getAttribute("class")).toContain("span-mark");
        expect(await page.locator('[data-testid=span-text] [data-start="808"]').getAttribute("class")).not.toContain("span-mark");
        await page.getByRole("button", { name: "Submit (2)" }).waitFor();
        await k.press("Enter");
      },
      ["[data-testid=span-text] .span-chunk"],
    );
    expect(answer).toEqual({
      spans: [
        { start: 0, end: 5, label: "PER" },
        { start: 790, end: 807, label: "LOC" },
      ],
    });
  });
});

describe("free_text", () => {
  it("types an answer over two lines (Shift+Enter), refuses an empty one, and submits with Enter; an audio item plays", async () => {
    const question = "Transcribe the recording.";
    // an audio URL (by its extension) on the test server: it answers 404, the player is still drawn
    const audioUrl = images.url(imageNo++).replace(/\.svg$/, ".wav");
    const res = await sys.api<{ task_id: string }>("POST", "/v1/tasks", {
      token: customerKey,
      body: { type: "free_text", data_url: audioUrl, label_spec: { question, max_length: 40 }, consensus_threshold: 1 },
    });
    expect(res.status).toBe(202);
    const taskId = res.body.task_id;
    const { context, page, watch } = await watchedPage(browser);
    try {
      await signIn(page, taskId);
      await page.getByRole("heading", { name: question }).waitFor();
      expect(await page.getByTestId("free-text-audio").getAttribute("src")).toBe(audioUrl);
      await page.getByTestId("free-text-limits").getByText("0 / 40 characters").waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
      const input = page.getByRole("textbox", { name: "Your answer" });
      // the text area has the focus: Enter on an empty answer sends nothing and says why
      await page.keyboard.press("Enter");
      await page.getByText("Write the answer first (or skip the item).").waitFor();
      const { posted, recorded } = await postedAnswer(page, async () => {
        await page.keyboard.type("Hello,");
        await page.keyboard.press("Shift+Enter");
        await page.keyboard.type("World.");
        expect(await input.inputValue()).toBe("Hello,\nWorld.");
        await page.getByTestId("free-text-limits").getByText("13 / 40 characters").waitFor();
        await screenshot(page, "label-free-text");
        expect(await accessibilityViolations(page)).toEqual([]);
        await page.keyboard.press("Enter");
      });
      expect(posted).toEqual({ text: "Hello,\nWorld." });
      expect(recorded).toEqual({ text: "Hello,\nWorld." });
      await page.getByText("Labeled this session: 1").waitFor({ timeout: 10_000 });
      // the recording's 404 is the only problem
      expect(unexpectedProblems(watch, [404])).toEqual([]);
      const task = await settledTask(taskId);
      expect(task.consensus_label).toBe('{"text":"hello world"}');
      expect((task.consensus as { words: { word: string }[] }).words.map((w) => w.word)).toEqual(["hello", "world"]);
    } finally {
      await context.close();
    }
  });
});

describe("every type", () => {
  it("skips a typed task with S (its claim is released)", async () => {
    const taskId = await createTypedTask(BOXES);
    const { context, page, watch } = await watchedPage(browser);
    try {
      await signIn(page, taskId);
      await page.keyboard.press("s");
      await page.getByText("Nothing to label").waitFor({ timeout: 15_000 });
      // released: the task can be claimed again at once
      const claim = await eventually(async () => {
        const r = await sys.api<{ task_id: string }>("POST", "/v1/labeling/claims", { token: labelerKey, body: { task_id: taskId } });
        return r.status === 201 ? r.body : undefined;
      });
      expect(claim.task_id).toBe(taskId);
      expect(unexpectedProblems(watch)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
