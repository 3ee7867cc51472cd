/** Renders the console (loaded by main.tsx after it has started the first page's data and chunk). */
import { renderApp } from "../shared/render";
import { App } from "./App";
import "uplot/dist/uPlot.min.css";
import "./console.css";

renderApp(<App />);
