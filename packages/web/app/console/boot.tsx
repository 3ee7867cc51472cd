/** Renders the console (loaded by main.tsx after it has started the first page's data and chunk). */
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { Theme } from "../shared/theme";
import { App } from "./App";
import "uplot/dist/uPlot.min.css";
import "./console.css";

const root = document.getElementById("root");
if (!root) throw new Error("the page has no #root element");
createRoot(root).render(
  <StrictMode>
    <Theme>
      <App />
    </Theme>
  </StrictMode>,
);
