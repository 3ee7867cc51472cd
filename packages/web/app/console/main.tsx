/**
 * Entry of the customer console (/console/). It is small on purpose: for a signed-in tab it starts the data
 * and the code chunk of the page being opened, then loads the app (boot.tsx: React, Mantine, the layout),
 * so the three load in parallel.
 */
import { storedKey } from "../shared/session";
import { preloadRoute } from "./routes";
import { prefetchFor, sessionFor } from "./session";

const key = storedKey("customer");
if (key) {
  prefetchFor(sessionFor(key), window.location);
  preloadRoute(window.location.pathname);
}
void import("./boot");
