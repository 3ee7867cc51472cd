/**
 * The labeler app (/label/) in Debian's Chromium against a real labelgate (gateway and workers, a database
 * of its own: the app's generic claims must see only this file's tasks): a labeler signs in and labels 20
 * image tasks with the keyboard alone, the next items preloaded; "nothing to label" on 204; the 409s of a
 * claim that expired and of a task canceled meanwhile; a hostile label spec shown as text; a refused key
 * signs out; Skip (the S key) releases the claim; a private S3 item of a manifest job is shown through its
 * presigned `view_url` (s3rver). Throughout: no key in any URL, in localStorage or in the gateway's logs, no CSP violation or
 * console error, and no serious or critical axe-core violation.
 */
import type { Browser, Page } from "playwright-core";
import { createJob, jobTasks, jsonl, putS3, s3Client, waitForStatus } from "../../services/manifest-worker/test/helpers";
import { scaled } from "../env";
import { startS3 } from "../s3";
import { createLabeler, eventually, registerCustomer, type System, startSystem } from "../system";
import {
  accessibilityViolations,
  capturingLogger,
  imageServer,
  launchBrowser,
  type PageWatch,
  screenshot,
  storage,
  unexpectedProblems,
  watchedPage,
} from "./browser";

const OPTIONS = ["cat", "dog", "bird"];
const SPEC = { question: "What animal is this?", options: OPTIONS };

let browser: Browser;
let images: Awaited<ReturnType<typeof imageServer>>;

beforeAll(async () => {
  [browser, images] = await Promise.all([launchBrowser(), imageServer()]);
}, scaled(60_000));

afterAll(async () => {
  await browser?.close();
  await images?.close();
});

/** Signs in on /label/ with the keyboard only: the key field has the focus, Enter submits. */
async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/label/`);
  await page.getByLabel("Labeler key").waitFor();
  await page.keyboard.type(key);
  await page.keyboard.press("Enter");
}

/** The task id of the item on screen, once its image (if any) is in the page. */
async function currentTask(page: Page): Promise<string> {
  const article = page.locator("article[data-task-id]");
  await article.waitFor({ timeout: 10_000 });
  return (await article.getAttribute("data-task-id")) as string;
}

/** No key of `keys` in a request URL, in localStorage, or in a gateway log line. */
async function expectNoKeyLeak(page: Page, watch: PageWatch, logLines: string[], keys: string[]): Promise<void> {
  const { local } = await storage(page);
  for (const key of keys) {
    expect(watch.urls.filter((u) => u.includes(key))).toEqual([]);
    expect(local.includes(key)).toBe(false);
    expect(logLines.filter((l) => l.includes(key))).toEqual([]);
  }
  // the gateway did log (the scan above saw real lines)
  expect(logLines.length).toBeGreaterThan(10);
}

describe("labeler app: 20 tasks with the keyboard alone", () => {
  let sys: System;
  const log = capturingLogger();
  let customerKey: string;
  let labelerKey: string;
  const taskIds: string[] = [];

  beforeAll(async () => {
    sys = await startSystem({ logger: log.logger });
    customerKey = (await registerCustomer(sys, 1000)).key;
    labelerKey = (await createLabeler(sys, "Kim")).key;
    const res = await sys.api<{ task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: customerKey,
      body: {
        tasks: Array.from({ length: 20 }, (_, i) => ({
          type: "image_classification",
          data_url: images.url(i),
          label_spec: SPEC,
          consensus_threshold: 1,
        })),
      },
    });
    expect(res.status).toBe(202);
    taskIds.push(...res.body.task_ids);
  }, scaled(60_000));

  afterAll(() => sys?.close());

  it(
    "signs in, labels 20 tasks with keys 1-3 (next 3 items preloaded), then says nothing to label",
    async () => {
      const { context, page, watch } = await watchedPage(browser);
      try {
        await page.goto(`${sys.baseUrl}/label/`);
        await page.getByLabel("Labeler key").waitFor();
        expect(await accessibilityViolations(page)).toEqual([]);
        await screenshot(page, "label-sign-in");
        await signIn(page, sys.baseUrl, labelerKey);
        const first = await currentTask(page);
        expect(taskIds).toContain(first);
        // the current item and the 3 after it are claimed and their images requested before any key is pressed
        await eventually(async () => (images.requests.size >= 4 ? true : undefined), 10_000, "4 images preloaded");
        await page.locator("img.item-image").waitFor();
        expect(await page.getByRole("heading", { name: SPEC.question }).isVisible()).toBe(true);
        expect(await accessibilityViolations(page)).toEqual([]);
        await screenshot(page, "label-item");

        const expected = new Map<string, string>();
        let shown = first;
        for (let i = 0; i < 20; i++) {
          const option = i % OPTIONS.length;
          expected.set(shown, OPTIONS[option] as string);
          await page.keyboard.press(String(option + 1));
          if (i < 19) {
            // the next item is on screen at once: a different task, its image already decoded
            await page.waitForFunction(
              `document.querySelector("article[data-task-id]")?.getAttribute("data-task-id") !== ${JSON.stringify(shown)}`,
            );
            shown = await currentTask(page);
            expect(expected.has(shown)).toBe(false);
          }
        }
        await page.getByText("Nothing to label").waitFor({ timeout: 15_000 });
        await page.getByText("Labeled this session: 20").waitFor({ timeout: 15_000 });
        expect(await accessibilityViolations(page)).toEqual([]);
        await screenshot(page, "label-nothing-to-label");

        // every label reached the gateway as pressed: threshold 1, so each task settled with that label
        expect(new Set(expected.keys())).toEqual(new Set(taskIds));
        for (const [taskId, value] of expected) {
          const task = await eventually(
            async () => {
              const r = await sys.api<{ status: string; consensus_label: string | null; labels_collected: number }>(
                "GET",
                `/v1/tasks/${taskId}`,
                {
                  token: customerKey,
                },
              );
              return r.body.status === "settled" ? r.body : undefined;
            },
            20_000,
            `task ${taskId} settled`,
          );
          expect(task).toMatchObject({ consensus_label: value, labels_collected: 1 });
        }
        // every image was fetched once: preloading never fetched an item twice
        for (let i = 0; i < 20; i++) expect(images.requests.get(`/img/${i}.svg`)).toBe(1);

        const { session } = await storage(page);
        expect(session.includes(labelerKey)).toBe(true);
        await expectNoKeyLeak(page, watch, log.lines, [labelerKey, customerKey]);

        // signing out forgets the key
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.getByLabel("Labeler key").waitFor();
        expect((await storage(page)).session.includes(labelerKey)).toBe(false);
        expect(unexpectedProblems(watch)).toEqual([]);
      } finally {
        await context.close();
      }
    },
    scaled(120_000),
  );

  it("lets the labeler choose other keys (kept in localStorage, without the labeler key)", async () => {
    const res = await sys.api<{ task_ids: string[] }>("POST", "/v1/tasks/batch", {
      token: customerKey,
      body: {
        tasks: [0, 1].map((i) => ({
          type: "image_classification",
          data_url: images.url(50 + i),
          label_spec: SPEC,
          consensus_threshold: 1,
        })),
      },
    });
    expect(res.status).toBe(202);
    const { context, page, watch } = await watchedPage(browser);
    try {
      await signIn(page, sys.baseUrl, labelerKey);
      const first = await currentTask(page);
      await page.getByRole("button", { name: "Keys" }).click();
      await page.getByLabel("Keys of options 1-9, in order").fill("jkl");
      await page.getByRole("button", { name: "Save keys" }).click();
      await page.getByText("Keys j k l pick an option").waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
      await page.keyboard.press("1"); // no longer a key: nothing happens
      await page.keyboard.press("l"); // the third option
      await page.getByText("Labeled this session: 1").waitFor();
      const task = await eventually(async () => {
        const r = await sys.api<{ status: string; consensus_label: string | null }>("GET", `/v1/tasks/${first}`, { token: customerKey });
        return r.body.status === "settled" ? r.body : undefined;
      });
      expect(task.consensus_label).toBe("bird");
      const { local } = await storage(page);
      expect(local).toContain("jkl");
      expect(local.includes(labelerKey)).toBe(false);
      expect(unexpectedProblems(watch)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("a refused key signs out with a message", async () => {
    const { context, page, watch } = await watchedPage(browser);
    try {
      await signIn(page, sys.baseUrl, "lk_notAValidKey0123456789");
      await page.getByText("The gateway refused this labeler key").waitFor();
      expect((await storage(page)).session).toBe("[]");
      expect(unexpectedProblems(watch, [401])).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe("labeler app: hostile label spec, expired claim, task canceled meanwhile", () => {
  let sys: System;
  const log = capturingLogger();
  let customerKey: string;
  let labelerKey: string;

  beforeAll(async () => {
    sys = await startSystem({ logger: log.logger, claimTtlSeconds: 3 });
    customerKey = (await registerCustomer(sys, 100)).key;
    labelerKey = (await createLabeler(sys, "Lou")).key;
  }, scaled(60_000));

  afterAll(() => sys?.close());

  it(
    "shows markup in a label spec as text, and explains the 409s of an expired claim and a canceled task",
    async () => {
      const hostile = {
        question: `<img src=x onerror="window.__xss='question'"> Which one?`,
        options: [`<img src=x onerror="window.__xss='option'">`, "<b>bold</b>", "plain"],
      };
      const created = await sys.api<{ task_id: string }>("POST", "/v1/tasks", {
        token: customerKey,
        body: { type: "text_classification", data_url: "https://docs.example/item.txt", label_spec: hostile, consensus_threshold: 1 },
      });
      expect(created.status).toBe(202);
      const taskId = created.body.task_id;
      const { context, page, watch } = await watchedPage(browser);
      try {
        await signIn(page, sys.baseUrl, labelerKey);
        expect(await currentTask(page)).toBe(taskId);
        // the markup is text: no <img src=x> and no <b>, the handlers never ran
        await page.getByRole("heading", { name: hostile.question }).waitFor();
        for (const o of hostile.options) expect(await page.getByRole("button", { name: o }).count()).toBe(1);
        expect(await page.locator('img[src="x"], b').count()).toBe(0);
        expect(await page.evaluate("typeof window.__xss")).toBe("undefined");
        // not an image: a link to the item
        expect(await page.getByRole("link", { name: "https://docs.example/item.txt" }).count()).toBe(1);
        await screenshot(page, "label-hostile-spec");

        // the claim expires (3 s) before the key press: the label is refused and the labeler told why
        const expiresAt = await eventually(async () => {
          const r = await sys.db.pool.query<{ expires_at: Date }>(
            "SELECT expires_at FROM claims WHERE task_id = $1 ORDER BY expires_at DESC LIMIT 1",
            [taskId],
          );
          return r.rows[0]?.expires_at.getTime();
        });
        await eventually(async () => (Date.now() > expiresAt + 300 ? true : undefined), 10_000, "the claim's expiry");
        await page.keyboard.press("3");
        await page.getByText(`Your claim on task ${taskId} expired`).waitFor();

        // the slot came back: the task is claimed again and shown; the customer cancels it meanwhile
        expect(await currentTask(page)).toBe(taskId);
        const canceled = await sys.api("POST", `/v1/tasks/${taskId}/cancel`, { token: customerKey });
        expect(canceled.status).toBe(200);
        await page.keyboard.press("3");
        await page.getByText(`Task ${taskId} was canceled by its owner`).waitFor();
        expect(await page.evaluate("typeof window.__xss")).toBe("undefined");
        expect(await accessibilityViolations(page)).toEqual([]);
        expect(unexpectedProblems(watch, [409])).toEqual([]);
        await expectNoKeyLeak(page, watch, log.lines, [labelerKey, customerKey]);
      } finally {
        await context.close();
      }
    },
    scaled(90_000),
  );
});

describe("labeler app: private S3 items and Skip", () => {
  let sys: System;
  const log = capturingLogger();
  let s3: Awaited<ReturnType<typeof startS3>>;
  let customerKey: string;
  let labelerKey: string;

  const svg = (fill: string) =>
    `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><rect width="400" height="300" fill="${fill}"/></svg>`;

  beforeAll(async () => {
    s3 = await startS3(["manifests", "private-images"]);
    sys = await startSystem({ logger: log.logger });
    customerKey = (await registerCustomer(sys, 1000)).key;
    labelerKey = (await createLabeler(sys, "Lee")).key;
  }, scaled(60_000));

  afterAll(async () => {
    await sys?.close();
    await s3?.close();
  });

  it(
    "shows a private S3 image through its presigned view_url, and S skips it (the claim is released)",
    async () => {
      const client = s3Client(s3.endpoint);
      try {
        for (const [key, fill] of [
          ["pets/a.svg", "#2b8a3e"],
          ["pets/b.svg", "#1971c2"],
        ] as const) {
          await putS3(client, "private-images", key, svg(fill), "image/svg+xml");
        }
        await putS3(
          client,
          "manifests",
          "private.jsonl",
          jsonl([
            JSON.stringify({ "source-ref": "s3://private-images/pets/a.svg" }),
            JSON.stringify({ "source-ref": "s3://private-images/pets/b.svg" }),
          ]),
        );
      } finally {
        client.destroy();
      }
      const jobId = await createJob(sys, customerKey, {
        manifest_url: "s3://manifests/private.jsonl",
        label_spec: SPEC,
        type: "image_classification",
        consensus_threshold: 1,
        credentials: s3.credentials,
      });
      await waitForStatus(sys, customerKey, jobId, "labeling");
      const tasks = (await jobTasks(sys, jobId)).map((t) => t.id);

      const { context, page, watch } = await watchedPage(browser);
      try {
        await signIn(page, sys.baseUrl, labelerKey);
        const first = await currentTask(page);
        expect(tasks).toContain(first);
        // the image is the object itself, loaded from the store through the presigned URL (no credentials in the page)
        const img = page.locator("article[data-task-id] img.item-image");
        await img.waitFor();
        const src = (await img.getAttribute("src")) as string;
        expect(src.startsWith(`${s3.endpoint}/private-images/pets/`)).toBe(true);
        expect(new URL(src).searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);
        expect(Number(new URL(src).searchParams.get("X-Amz-Expires"))).toBeLessThanOrEqual(900);
        expect(
          await page.evaluate(
            `(() => { const el = document.querySelector("article[data-task-id] img.item-image"); return el.complete && el.naturalWidth; })()`,
          ),
        ).toBe(400);
        expect(await accessibilityViolations(page)).toEqual([]);
        await screenshot(page, "label-private-s3");

        // S skips: the next item is shown and the first task's claim is released (its slot is free again)
        await page.keyboard.press("s");
        await page.waitForFunction(
          `document.querySelector("article[data-task-id]")?.getAttribute("data-task-id") !== ${JSON.stringify(first)}`,
        );
        expect(tasks).toContain(await currentTask(page));
        await eventually(
          async () => {
            const r = await sys.db.pool.query<{ status: string }>("SELECT status::text AS status FROM claims WHERE task_id = $1", [first]);
            return r.rows.length > 0 && r.rows.every((row) => row.status === "expired") ? true : undefined;
          },
          10_000,
          "the skipped claim released",
        );
        expect((await sys.api("GET", `/v1/tasks/${first}`, { token: customerKey })).body).toMatchObject({ labels_collected: 0 });
        expect(unexpectedProblems(watch)).toEqual([]);
        // (s3rver's secret equals its access key id, which a presigned URL names by design: not checked here;
        // the signing itself is checked in services/gateway/test/view-url.test.ts)
        await expectNoKeyLeak(page, watch, log.lines, [labelerKey, customerKey]);
      } finally {
        await context.close();
      }
    },
    scaled(90_000),
  );
});
