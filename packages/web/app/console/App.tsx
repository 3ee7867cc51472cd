/**
 * The customer console: sign in with a customer key (kept in sessionStorage), then the pages of DESIGN §11
 * under a shared layout (header, navigation, main). Pages read the API through TanStack Query over the
 * SDK's browser client.
 */
import { Alert, Button, Container, Group, Loader, PasswordInput, Stack, Text, Title } from "@mantine/core";
import { QueryClientProvider } from "@tanstack/react-query";
import { type FormEvent, lazy, Suspense, useCallback, useEffect, useMemo, useState } from "react";
import { BrowserRouter, NavLink, Route, Routes } from "react-router";
import { createClient, errorMessage, isAuthError } from "../shared/client";
import { forgetKey, looksLikeKey, storedKey, storeKey } from "../shared/session";
import { type Session, SessionContext } from "./auth";
import { PAGES } from "./routes";
import { endSession, sessionFor, setAuthErrorHandler } from "./session";

// Each page is its own chunk (routes.ts), loaded when first shown: the first screen parses only what it needs.
const OverviewPage = lazy(() => PAGES.overview().then((m) => ({ default: m.OverviewPage })));
const TasksPage = lazy(() => PAGES.tasks().then((m) => ({ default: m.TasksPage })));
const TaskPage = lazy(() => PAGES.task().then((m) => ({ default: m.TaskPage })));
const BatchesPage = lazy(() => PAGES.batches().then((m) => ({ default: m.BatchesPage })));
const BatchPage = lazy(() => PAGES.batch().then((m) => ({ default: m.BatchPage })));
const JobsPage = lazy(() => PAGES.jobs().then((m) => ({ default: m.JobsPage })));
const JobPage = lazy(() => PAGES.job().then((m) => ({ default: m.JobPage })));
const WebhooksPage = lazy(() => PAGES.webhooks().then((m) => ({ default: m.WebhooksPage })));
const WebhookPage = lazy(() => PAGES.webhook().then((m) => ({ default: m.WebhookPage })));
const BillingPage = lazy(() => PAGES.billing().then((m) => ({ default: m.BillingPage })));
const QualityPage = lazy(() => PAGES.quality().then((m) => ({ default: m.QualityPage })));
const NotFoundPage = lazy(() => PAGES.notFound().then((m) => ({ default: m.NotFoundPage })));

export function App() {
  const [key, setKey] = useState<string | null>(() => storedKey("customer"));
  const [reason, setReason] = useState<string | null>(null);
  const signOut = useCallback((why?: string) => {
    forgetKey("customer");
    endSession();
    setReason(why ?? null);
    setKey(null);
  }, []);
  if (!key) {
    return (
      <SignIn
        reason={reason}
        onSignIn={(k) => {
          storeKey("customer", k);
          setReason(null);
          setKey(k);
        }}
      />
    );
  }
  return <SignedIn key={key} apiKey={key} signOut={signOut} />;
}

function SignIn({ onSignIn, reason }: { onSignIn: (key: string) => void; reason: string | null }) {
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const key = value.trim();
    if (!looksLikeKey("customer", key)) {
      setError("A customer key starts with sk_sandbox_ or sk_live_.");
      return;
    }
    setBusy(true);
    try {
      await createClient({ apiKey: key }).customers.me();
      onSignIn(key);
    } catch (err) {
      setError(isAuthError(err) ? "The gateway does not know this key." : errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Container size="xs" py="xl" component="main">
      <Stack>
        <Title order={1}>labelgate · console</Title>
        <Text>
          Sign in with your customer API key (<code>sk_sandbox_…</code> or <code>sk_live_…</code>). It stays in this tab only and is
          forgotten when the tab closes.
        </Text>
        {reason && (
          <Alert color="red" title="Signed out" role="alert">
            {reason}
          </Alert>
        )}
        <form onSubmit={submit}>
          <Stack>
            <PasswordInput
              label="Customer API key"
              placeholder="sk_sandbox_…"
              autoComplete="off"
              autoFocus
              value={value}
              onChange={(e) => setValue(e.currentTarget.value)}
              error={error}
            />
            <Button type="submit" loading={busy}>
              Sign in
            </Button>
          </Stack>
        </form>
      </Stack>
    </Container>
  );
}

const NAV = [
  { to: "/", label: "Overview", end: true },
  { to: "/tasks", label: "Tasks" },
  { to: "/batches", label: "Batches" },
  { to: "/jobs", label: "Jobs" },
  { to: "/webhooks", label: "Webhooks" },
  { to: "/billing", label: "Billing" },
  { to: "/quality", label: "Quality" },
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
                  <Route path="/" element={<OverviewPage />} />
                  <Route path="/tasks" element={<TasksPage />} />
                  <Route path="/tasks/:taskId" element={<TaskPage />} />
                  <Route path="/batches" element={<BatchesPage />} />
                  <Route path="/batches/:batchId" element={<BatchPage />} />
                  <Route path="/jobs" element={<JobsPage />} />
                  <Route path="/jobs/:jobId" element={<JobPage />} />
                  <Route path="/webhooks" element={<WebhooksPage />} />
                  <Route path="/webhooks/:webhookId" element={<WebhookPage />} />
                  <Route path="/billing" element={<BillingPage />} />
                  <Route path="/quality" element={<QualityPage />} />
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
