/**
 * Browser test harness: Debian's Chromium (/usr/bin/chromium, or CHROMIUM_PATH) driven by playwright-core,
 * against a real labelgate started by the test (test/system.ts), which serves the built apps at /label/ and
 * /console/. Every page is watched: console errors, uncaught exceptions and Content-Security-Policy
 * violations fail the test, and every request URL is kept (no key may ever appear in one). axe-core checks
 * accessibility; screenshots go to WEB_SCREENSHOTS (a directory, e.g. docs/screenshots) when it is set.
 */
import { mkdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { createLogger, type Logger } from "@labelgate/core";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Flags that work on this kind of machine (as root, no network but loopback): no sandbox, no GPU, and no
 * background connections (refused by the closed network, many at a time).
 */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Starts Chromium (playwright gives it a fresh, temporary --user-data-dir). */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

/** What a watched page did: problems (console errors, exceptions, CSP violations) and every URL requested. */
export interface PageWatch {
  problems: string[];
  urls: string[];
  /** answers of status >= 400: `<status> <method> <url>` */
  failed: string[];
}

/** A new page in its own context (own sessionStorage and localStorage), watched (see {@link PageWatch}). */
export async function watchedPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; watch: PageWatch }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
  const page = await context.newPage();
  const watch: PageWatch = { problems: [], urls: [], failed: [] };
  page.on("console", (msg) => {
    if (msg.type() === "error") watch.problems.push(`console error: ${msg.text()}`);
    if (/Content Security Policy/i.test(msg.text())) watch.problems.push(`CSP: ${msg.text()}`);
  });
  page.on("pageerror", (err) => watch.problems.push(`page error: ${err.message}`));
  page.on("request", (req) => watch.urls.push(req.url()));
  page.on("response", (res) => {
    if (res.status() >= 400) watch.failed.push(`${res.status()} ${res.request().method()} ${res.url()}`);
  });
  return { context, page, watch };
}

/**
 * The problems of a watched page, less those a test expects: a failed request's console line for the
 * statuses listed (e.g. the 401 of a refused key, the 409 of a label that came too late). The failed
 * answers are listed after the problems, to tell which request a console line was about.
 */
export function unexpectedProblems(watch: PageWatch, expectedStatuses: number[] = []): string[] {
  const problems = watch.problems.filter((p) => !expectedStatuses.some((s) => p.includes(`the server responded with a status of ${s}`)));
  return problems.length === 0 ? [] : [...problems, ...watch.failed.map((f) => `(answer ${f})`)];
}

/**
 * Serious or critical accessibility violations of the page as it is now (axe-core, WCAG 2.1 A and AA),
 * outside the elements matching `options.exclude` (CSS selectors).
 */
export async function accessibilityViolations(page: Page, options: { exclude?: string[] } = {}): Promise<string[]> {
  let builder = new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]);
  for (const selector of options.exclude ?? []) builder = builder.exclude(selector);
  const result = await builder.analyze();
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary ?? ""}`).join("; ")})`);
}

/** Saves a full-page screenshot as `<WEB_SCREENSHOTS>/<name>.png` when WEB_SCREENSHOTS is set. */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.WEB_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

/** The values of the page's sessionStorage and localStorage (JSON text of each). */
export async function storage(page: Page): Promise<{ session: string; local: string }> {
  const dump = (await page.evaluate(
    "JSON.stringify({ session: JSON.stringify(Object.entries(sessionStorage)), local: JSON.stringify(Object.entries(localStorage)) })",
  )) as string;
  return JSON.parse(dump) as { session: string; local: string };
}

/** A logger at level info whose lines are kept (to scan the gateway's logs for keys). */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger("test", "info", { write: (line: string) => lines.push(line) });
  return { logger, lines };
}

/** Distinct colors of the test images. */
const COLORS = ["#e03131", "#2f9e44", "#1971c2", "#f08c00", "#9c36b5", "#0c8599", "#5c940d", "#c2255c"];

/**
 * A local image host: `GET /img/<n>.svg` answers an SVG picture numbered n (a colored square with its
 * number), the stand-in for a customer's image bucket. Counts requests per path.
 */
export async function imageServer(): Promise<{ url: (n: number) => string; requests: Map<string, number>; close: () => Promise<void> }> {
  const requests = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const url = req.url ?? "/";
    requests.set(url, (requests.get(url) ?? 0) + 1);
    const n = /^\/img\/(\d+)\.svg$/.exec(url)?.[1];
    if (n === undefined) {
      res.writeHead(404).end();
      return;
    }
    const color = COLORS[Number(n) % COLORS.length];
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="360" viewBox="0 0 480 360"><rect width="480" height="360" fill="${color}"/><text x="240" y="200" font-size="96" text-anchor="middle" fill="white" font-family="sans-serif">${n}</text></svg>`;
    res.writeHead(200, { "content-type": "image/svg+xml", "cache-control": "public, max-age=3600" }).end(svg);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (n) => `http://127.0.0.1:${port}/img/${n}.svg`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
