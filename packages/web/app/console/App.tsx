/**
 * The customer console: sign in with a customer key (kept in sessionStorage), then the pages of DESIGN §11
 * under a shared layout (header, navigation, main). Pages read the API through TanStack Query over the
 * SDK's browser client.
 */
import { Alert, Button, Container, Group, PasswordInput, Stack, Text, Title } from "@mantine/core";
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { type FormEvent, useCallback, useMemo, useState } from "react";
import { BrowserRouter, NavLink, Route, Routes } from "react-router";
import { createClient, errorMessage, isAuthError } from "../shared/client";
import { forgetKey, looksLikeKey, storedKey, storeKey } from "../shared/session";
import { type Session, SessionContext } from "./auth";
import { BatchesPage } from "./pages/Batches";
import { BatchPage } from "./pages/BatchPage";
import { BillingPage } from "./pages/Billing";
import { JobPage } from "./pages/JobPage";
import { JobsPage } from "./pages/Jobs";
import { NotFoundPage } from "./pages/NotFound";
import { OverviewPage } from "./pages/Overview";
import { QualityPage } from "./pages/Quality";
import { TaskPage } from "./pages/TaskPage";
import { TasksPage } from "./pages/Tasks";
import { WebhookPage } from "./pages/WebhookPage";
import { WebhooksPage } from "./pages/Webhooks";

export function App() {
  const [key, setKey] = useState<string | null>(() => storedKey("customer"));
  const [reason, setReason] = useState<string | null>(null);
  const signOut = useCallback((why?: string) => {
    forgetKey("customer");
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
  const session = useMemo<Session>(() => ({ client: createClient({ apiKey }), signOut }), [apiKey, signOut]);
  const queryClient = useMemo(() => {
    const onError = (err: unknown) => {
      if (isAuthError(err)) signOut("The gateway refused this key (revoked or replaced). Sign in again.");
    };
    return new QueryClient({
      queryCache: new QueryCache({ onError }),
      mutationCache: new MutationCache({ onError }),
      defaultOptions: { queries: { retry: (n, err) => !isAuthError(err) && n < 1, refetchOnWindowFocus: false } },
    });
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
            </main>
          </div>
        </BrowserRouter>
      </QueryClientProvider>
    </SessionContext>
  );
}
