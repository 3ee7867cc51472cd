/**
 * The customer console: sign in with a customer key (kept in sessionStorage), then the pages of contract §web-apps
 * under a shared layout (header, navigation, main). Pages read the API through TanStack Query over the
 * SDK's browser client.
 */
import { Button, Group, Loader, Text } from "@mantine/core";
import { QueryClientProvider } from "@tanstack/react-query";
import { lazy, Suspense, useCallback, useEffect, useMemo } from "react";
import { BrowserRouter, NavLink, Route, Routes } from "react-router";
import { createClient, errorMessage, isAuthError } from "../shared/client";
import { SignIn, useStoredKey } from "../shared/SignIn";
import { type Session, SessionContext } from "./auth";
import { loadPage, ROUTES } from "./routes";
import { endSession, sessionFor, setAuthErrorHandler } from "./session";

// Each page is its own chunk (routes.ts), loaded when first shown: the first screen parses only what it needs.
const PAGES = ROUTES.map(({ path, page }) => ({ path, Page: lazy(() => loadPage(page)) }));
const NotFoundPage = lazy(() => loadPage("NotFound"));

export function App() {
  const { key, reason, signIn, signOut: forget } = useStoredKey("customer");
  const signOut = useCallback(
    (why?: string) => {
      forget(why);
      endSession();
    },
    [forget],
  );
  if (!key) {
    return (
      <SignIn
        kind="customer"
        title="labelgate · console"
        intro={
          <>
            Sign in with your customer API key (<code>sk_sandbox_…</code> or <code>sk_live_…</code>). It stays in this tab only and is
            forgotten when the tab closes.
          </>
        }
        reason={reason}
        field={{ label: "Customer API key", placeholder: "sk_sandbox_…" }}
        submit="Sign in"
        shapeError="A customer key starts with sk_sandbox_ or sk_live_, followed by letters and digits."
        verify={knownKey}
        onSignIn={signIn}
      />
    );
  }
  return <SignedIn key={key} apiKey={key} signOut={signOut} />;
}

/** Null when the gateway knows the customer key, else why it cannot be used. */
async function knownKey(key: string): Promise<string | null> {
  try {
    await createClient({ apiKey: key }).customers.me();
    return null;
  } catch (err) {
    return isAuthError(err) ? "The gateway does not know this key." : errorMessage(err);
  }
}

const NAV = [
  { to: "/", label: "Overview", end: true },
  { to: "/tasks", label: "Tasks" },
  { to: "/batches", label: "Batches" },
  { to: "/jobs", label: "Jobs" },
  { to: "/webhooks", label: "Webhooks" },
  { to: "/billing", label: "Billing" },
  { to: "/quality", label: "Quality" },
  { to: "/review", label: "Review" },
];

function SignedIn({ apiKey, signOut }: { apiKey: string; signOut: (reason?: string) => void }) {
  const { client, queryClient } = sessionFor(apiKey);
  const session = useMemo<Session>(() => ({ client, signOut }), [client, signOut]);
  useEffect(() => {
    setAuthErrorHandler(() => signOut("The gateway refused this key (revoked or replaced). Sign in again."));
  }, [signOut]);
  return (
    <SessionContext value={session}>
      <QueryClientProvider client={queryClient}>
        <BrowserRouter basename="/console">
          <a href="#main" className="skip-link">
            Skip to content
          </a>
          <div className="console-layout">
            <header className="console-header">
              <Group justify="space-between" wrap="nowrap">
                <Text fw={700}>labelgate · console</Text>
                <Button variant="default" size="xs" onClick={() => signOut()}>
                  Sign out
                </Button>
              </Group>
            </header>
            <nav className="console-nav" aria-label="Console">
              <ul>
                {NAV.map((n) => (
                  <li key={n.to}>
                    <NavLink to={n.to} end={n.end} className="console-nav-link">
                      {n.label}
                    </NavLink>
                  </li>
                ))}
              </ul>
            </nav>
            <main id="main" className="console-main" tabIndex={-1}>
              <Suspense fallback={<Loader aria-label="Loading the page" />}>
                <Routes>
                  {PAGES.map(({ path, Page }) => (
                    <Route key={path} path={path} element={<Page />} />
                  ))}
                  <Route path="*" element={<NotFoundPage />} />
                </Routes>
              </Suspense>
            </main>
          </div>
        </BrowserRouter>
      </QueryClientProvider>
    </SessionContext>
  );
}
