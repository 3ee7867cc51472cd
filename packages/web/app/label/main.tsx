/** Entry of the labeler app (/label/). */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { Theme } from "../shared/theme";
import { App } from "./App";
import "./label.css";

const root = document.getElementById("root");
if (!root) throw new Error("the page has no #root element");
const queryClient = new QueryClient();
createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <Theme>
        <App />
      </Theme>
    </QueryClientProvider>
  </StrictMode>,
);
