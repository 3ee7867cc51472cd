/** The start of both apps: the app rendered into the page's `#root`, in StrictMode, under the Mantine theme. */
import { type ReactNode, StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { Theme } from "./theme";

/** Renders `app` into `#root`. @throws Error when the page has no `#root` element */
export function renderApp(app: ReactNode): void {
  const root = document.getElementById("root");
  if (!root) throw new Error("the page has no #root element");
  createRoot(root).render(
    <StrictMode>
      <Theme>{app}</Theme>
    </StrictMode>,
  );
}
