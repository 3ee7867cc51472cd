/**
 * Signing in, the same in both apps: the key is kept in sessionStorage (session.ts) by {@link useStoredKey}
 * and asked for by {@link SignIn}, which checks its shape and, where the app says so, asks the gateway.
 */
import { Alert, Button, Container, PasswordInput, Stack, Text, Title } from "@mantine/core";
import { type FormEvent, type ReactNode, useCallback, useState } from "react";
import { forgetKey, type KeyKind, looksLikeKey, storedKey, storeKey } from "./session";

/** The signed-in key of `kind` (null when signed out) and why the last sign-out happened (null: the user's own). */
export function useStoredKey(kind: KeyKind): {
  key: string | null;
  reason: string | null;
  signIn: (key: string) => void;
  signOut: (reason?: string | null) => void;
} {
  const [key, setKey] = useState<string | null>(() => storedKey(kind));
  const [reason, setReason] = useState<string | null>(null);
  const signIn = useCallback(
    (k: string) => {
      storeKey(kind, k);
      setReason(null);
      setKey(k);
    },
    [kind],
  );
  const signOut = useCallback(
    (why?: string | null) => {
      forgetKey(kind);
      setReason(why ?? null);
      setKey(null);
    },
    [kind],
  );
  return { key, reason, signIn, signOut };
}

/**
 * The sign-in page of an app: `intro` under the title, the reason of the last sign-out, and a key field.
 * A key of the wrong shape gets `shapeError`; then `verify` (optional) answers the key's problem or null.
 */
export function SignIn({
  kind,
  title,
  intro,
  reason,
  field,
  submit,
  shapeError,
  verify,
  onSignIn,
}: {
  kind: KeyKind;
  title: string;
  intro: ReactNode;
  reason: string | null;
  field: { label: string; placeholder: string };
  submit: string;
  shapeError: string;
  verify?: (key: string) => Promise<string | null>;
  onSignIn: (key: string) => void;
}) {
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const key = value.trim();
    if (!looksLikeKey(kind, key)) {
      setError(shapeError);
      return;
    }
    if (verify) {
      setBusy(true);
      let problem: string | null;
      try {
        problem = await verify(key);
      } finally {
        setBusy(false);
      }
      if (problem) {
        setError(problem);
        return;
      }
    }
    onSignIn(key);
  };
  return (
    <Container size="xs" py="xl" component="main">
      <Stack>
        <Title order={1}>{title}</Title>
        <Text>{intro}</Text>
        {reason && (
          <Alert color="red" title="Signed out" role="alert">
            {reason}
          </Alert>
        )}
        <form onSubmit={onSubmit}>
          <Stack>
            <PasswordInput
              label={field.label}
              placeholder={field.placeholder}
              autoComplete="off"
              autoFocus
              value={value}
              onChange={(e) => setValue(e.currentTarget.value)}
              error={error}
            />
            <Button type="submit" loading={busy}>
              {submit}
            </Button>
          </Stack>
        </form>
      </Stack>
    </Container>
  );
}
