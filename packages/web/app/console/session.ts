/**
 * One console session per customer key: the SDK client and the TanStack Query cache, made once per key
 * (module scope) so that main.tsx can start the data of a deep link before React renders, and the app
 * reuses it. A 401 from any query or mutation calls the sign-out handler the app registers.
 */
import type { LabelgateClient } from "@labelgate/sdk/browser";
import { MutationCache, QueryCache, QueryClient } from "@tanstack/react-query";
import { createClient, isAuthError } from "../shared/client";
import { taskListParams, taskListQuery } from "./queries";

export interface ConsoleSession {
  key: string;
  client: LabelgateClient;
  queryClient: QueryClient;
}

let current: ConsoleSession | null = null;
let onAuthError: () => void = () => undefined;

/** Registers what a 401 does (the app signs out). */
export function setAuthErrorHandler(handler: () => void): void {
  onAuthError = handler;
}

/** The session of `key`, made on first use; a new key ends the previous session's cache. */
export function sessionFor(key: string): ConsoleSession {
  if (current?.key === key) return current;
  current?.queryClient.clear();
  const onError = (err: unknown) => {
    if (isAuthError(err)) onAuthError();
  };
  current = {
    key,
    client: createClient({ apiKey: key }),
    queryClient: new QueryClient({
      queryCache: new QueryCache({ onError }),
      mutationCache: new MutationCache({ onError }),
      defaultOptions: { queries: { retry: (n, err) => !isAuthError(err) && n < 1, refetchOnWindowFocus: false } },
    }),
  };
  return current;
}

/** Forgets the session (sign-out). */
export function endSession(): void {
  current?.queryClient.clear();
  current = null;
}

/**
 * Starts the data of the page at `location` (a path under /console and its query) while the app loads:
 * today the first page of the task list.
 */
export function prefetchFor(session: ConsoleSession, location: Location): void {
  const path = location.pathname.replace(/\/+$/, "");
  if (path === "/console/tasks") {
    void session.queryClient.prefetchQuery(taskListQuery(session.client, taskListParams(new URLSearchParams(location.search))));
  }
}
