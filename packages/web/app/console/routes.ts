/**
 * The console's pages and routes. Each page is a module `pages/<Name>.tsx` exporting `<Name>Page`, loaded on
 * first use (its own chunk). `preloadRoute` starts the chunk of the page at a path early (main.tsx, while the
 * rest of the app loads), so a deep link loads in parallel rather than in a waterfall.
 */
import type { ComponentType } from "react";

const MODULES = import.meta.glob<Record<string, ComponentType | undefined>>("./pages/*.tsx");

/** The console's sections by first path segment: the list page and, with an id after it (`:id`), the item page. */
const SECTIONS = {
  "": ["Overview"],
  tasks: ["Tasks", "Task"],
  batches: ["Batches", "Batch"],
  jobs: ["Jobs", "Job"],
  webhooks: ["Webhooks", "Webhook"],
  billing: ["Billing"],
  quality: ["Quality"],
  review: ["Review", "Review"],
  // a batch's or a job's ranking (`/ranking/:id`); no list of its own
  ranking: ["NotFound", "Ranking"],
} as const;

export type PageName = (typeof SECTIONS)[keyof typeof SECTIONS][number] | "NotFound";

/** The routes of the app (paths under /console) and their pages; any other path is `NotFound`'s. */
export const ROUTES: { path: string; page: PageName }[] = Object.entries(SECTIONS).flatMap(([segment, pages]) =>
  pages.map((page, i) => ({ path: i === 0 ? `/${segment}` : `/${segment}/:id`, page })),
);

/** Which page serves `pathname` (a path under /console), as the app's routes do. */
export function pageOf(pathname: string): PageName {
  const parts = pathname
    .replace(/^\/console\/?/, "")
    .split("/")
    .filter(Boolean);
  const segment = parts[0] ?? "";
  if (!Object.hasOwn(SECTIONS, segment) || parts.length > 2) return "NotFound";
  const pages: readonly PageName[] = SECTIONS[segment as keyof typeof SECTIONS];
  return (parts.length < 2 ? pages[0] : pages[1]) ?? "NotFound";
}

/** The module of page `name` with its component as `default` (as React.lazy wants it). @throws Error for a page that is not there */
export async function loadPage(name: PageName): Promise<{ default: ComponentType }> {
  const load = MODULES[`./pages/${name}.tsx`];
  const component = load && (await load())[`${name}Page`];
  if (!component) throw new Error(`the console has no page ${name}`);
  return { default: component };
}

/** Starts loading the chunk of the page at `pathname`. */
export function preloadRoute(pathname: string): void {
  void loadPage(pageOf(pathname));
}
