/** Entry of the labeler app (/label/). */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { renderApp } from "../shared/render";
import { App } from "./App";
import "./label.css";

renderApp(
  <QueryClientProvider client={new QueryClient()}>
    <App />
  </QueryClientProvider>,
);
