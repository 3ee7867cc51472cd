/**
 * The console's page modules, each loaded on first use (its own chunk). `preloadRoute` starts the chunk of
 * the page at a path early (main.tsx, while the rest of the app loads), so a deep link loads in parallel
 * rather than in a waterfall.
 */
export const PAGES = {
  overview: () => import("./pages/Overview"),
  tasks: () => import("./pages/Tasks"),
  task: () => import("./pages/TaskPage"),
  batches: () => import("./pages/Batches"),
  batch: () => import("./pages/BatchPage"),
  jobs: () => import("./pages/Jobs"),
  job: () => import("./pages/JobPage"),
  webhooks: () => import("./pages/Webhooks"),
  webhook: () => import("./pages/WebhookPage"),
  billing: () => import("./pages/Billing"),
  quality: () => import("./pages/Quality"),
  notFound: () => import("./pages/NotFound"),
};

type PageName = keyof typeof PAGES;

/** The page of each first path segment: its list page and, with an id after it, its item page. */
const SECTIONS: Record<string, [PageName, PageName?]> = {
  "": ["overview"],
  tasks: ["tasks", "task"],
  batches: ["batches", "batch"],
  jobs: ["jobs", "job"],
  webhooks: ["webhooks", "webhook"],
  billing: ["billing"],
  quality: ["quality"],
};

/** Which page serves `pathname` (a path under /console), as the app's routes do. */
export function pageOf(pathname: string): PageName {
  const parts = pathname
    .replace(/^\/console\/?/, "")
    .split("/")
    .filter(Boolean);
  const entry = SECTIONS[parts[0] ?? ""];
  if (!entry || parts.length > 2) return "notFound";
  return parts.length < 2 ? entry[0] : (entry[1] ?? "notFound");
}

/** Starts loading the chunk of the page at `pathname`. */
export function preloadRoute(pathname: string): void {
  void PAGES[pageOf(pathname)]();
}
